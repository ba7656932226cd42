//! The three-d crystal viewer: instanced atoms coloured by element, bonds, the unit cell,
//! orbit controls (drag to rotate, wheel to zoom). Renders on demand, not every frame.

mod bake;
mod impostor;
mod scene;

pub use scene::Viewer;

use engine::Element;

/// Element colours: Jmol's (the usual default of viewers) or VESTA's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorScheme {
    /// Jmol's CPK-derived colours.
    #[default]
    Jmol,
    /// VESTA's colours.
    Vesta,
}

impl ColorScheme {
    /// The colour of `element` in this scheme.
    pub fn color(self, element: Element) -> [u8; 3] {
        match self {
            ColorScheme::Jmol => element.jmol_color(),
            ColorScheme::Vesta => element.vesta_color(),
        }
    }

    /// The scheme's name as the page shows it.
    pub fn name(self) -> &'static str {
        match self {
            ColorScheme::Jmol => "Jmol",
            ColorScheme::Vesta => "VESTA",
        }
    }

    /// The other scheme.
    pub fn toggled(self) -> Self {
        match self {
            ColorScheme::Jmol => ColorScheme::Vesta,
            ColorScheme::Vesta => ColorScheme::Jmol,
        }
    }
}

/// How a structure is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Element colours.
    pub scheme: ColorScheme,
    /// Draw bonds (engine::bonds' rule) as two half-cylinders in the colours of their atoms.
    pub bonds: bool,
    /// Atom spheres relative to their usual size.
    pub atom_scale: f32,
    /// Cells drawn along a, b, c (periodic images; [1, 1, 1] draws the cell itself).
    pub cells: [u32; 3],
}

impl Default for Style {
    fn default() -> Self {
        Self {
            scheme: ColorScheme::Jmol,
            bonds: true,
            atom_scale: 1.0,
            cells: [1, 1, 1],
        }
    }
}

/// A model's answer drawn over the target: for each target site, the vector (Å) to the
/// answer's site the matcher paired with it (common shift removed).
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    /// Per target site, in the order the target is drawn.
    pub displacements: Vec<[f64; 3]>,
    /// How the answer's sites were paired with the target's (shown under the viewer).
    pub pairing: &'static str,
}

/// Longest displacement (Å) that still counts as none: it reads 0.000 Å, so no site is marked
/// as the worst when every site is this close (the ground truth pasted as the answer).
pub const OVERLAY_ZERO: f64 = 5e-4;

impl Overlay {
    /// The site that moved furthest and by how much (Å), whatever the distance.
    pub fn largest(&self) -> Option<(usize, f64)> {
        self.displacements
            .iter()
            .map(|d| (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt())
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The site that moved furthest and by how much (Å); `None` when no site moved more than
    /// [`OVERLAY_ZERO`] (then there is no worst site to mark).
    pub fn worst(&self) -> Option<(usize, f64)> {
        self.largest().filter(|&(_, d)| d > OVERLAY_ZERO)
    }
}

/// Length (Å) at which an overlay arrow is fully red; shorter ones run from green to yellow.
pub const OVERLAY_FULL_SCALE: f64 = 1.0;

/// The colour of a displacement of `length` Å: green (0) → yellow (half scale) → red (full).
pub fn displacement_color(length: f64) -> [u8; 3] {
    let t = (length / OVERLAY_FULL_SCALE).clamp(0.0, 1.0);
    let lerp = |a: [f64; 3], b: [f64; 3], u: f64| -> [u8; 3] {
        std::array::from_fn(|k| (a[k] + (b[k] - a[k]) * u).round() as u8)
    };
    let (green, yellow, red) = (
        [46.0, 160.0, 67.0],
        [240.0, 200.0, 0.0],
        [214.0, 39.0, 40.0],
    );
    if t < 0.5 {
        lerp(green, yellow, t * 2.0)
    } else {
        lerp(yellow, red, (t - 0.5) * 2.0)
    }
}
