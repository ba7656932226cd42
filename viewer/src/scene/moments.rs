//! Magnetic moments (read from magnetic CIFs, `Site::magmom`) drawn as arrows through their
//! sites, as crystal viewers such as VESTA draw them: centred on the atom, along the moment,
//! through the atom's sphere and beyond it by a length proportional to the moment's size.

use three_d::*;

use super::instances::cylinder;
use super::v3;

/// Arrow length beyond the atom's sphere per Bohr magneton (Å).
const LENGTH_PER_MUB: f32 = 0.6;
/// The most an arrow reaches beyond the sphere (Å), so a large moment does not cross the
/// cell.
const MAX_LENGTH: f32 = 3.0;
/// Arrow radius at its head (Å); the shaft is half as thick.
const RADIUS: f32 = 0.16;
/// Arrow colour.
const COLOR: Srgba = Srgba::new(200, 30, 160, 255);

/// The arrow mesh: along x from 0 to 1, radius 1 at the head (three-d's arrow).
pub(super) fn arrow_mesh() -> CpuMesh {
    CpuMesh::arrow(0.7, 0.5, 12)
}

/// The site's moment if it gets an arrow: finite and at least 1e-6 μB.
pub(super) fn drawn_moment(site: &engine::Site) -> Option<Vec3> {
    let m = v3(site.magmom?);
    let size = m.magnitude();
    (size.is_finite() && size >= 1e-6).then_some(m)
}

/// One arrow per site with a moment of at least 1e-6 μB, in `structure`'s own frame;
/// `radius` gives each site's drawn sphere radius (Å).
pub(super) fn moment_instances(
    structure: &engine::Structure,
    radius: impl Fn(&engine::Site) -> f32,
) -> Instances {
    let mut transformations = Vec::new();
    for (site, p) in structure.sites.iter().zip(structure.cartesian_positions()) {
        let Some(m) = drawn_moment(site) else {
            continue;
        };
        let size = m.magnitude();
        let length = 2.0 * radius(site) + (size * LENGTH_PER_MUB).min(MAX_LENGTH);
        let d = m / size * length;
        transformations.push(cylinder(v3(p) - d / 2.0, d, RADIUS));
    }
    let colors = Some(vec![COLOR; transformations.len()]);
    Instances {
        transformations,
        colors,
        ..Default::default()
    }
}
