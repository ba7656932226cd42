//! Instance lists of the scene's meshes: atom spheres and halos, bond halves and the cell's
//! edges.

use engine::bonds::bonds;
use engine::Structure;
use three_d::*;

use super::{v3, ATOM_SCALE, BOND_RADIUS, CELL_COLOR, EDGE_RADIUS, HALO_SCALE, MAX_BONDS};
use crate::Style;

/// Instances of atom spheres, or with `halo = Some(indices)`, of halos around those sites.
pub(super) fn atom_instances(
    s: &Structure,
    halo: Option<&[usize]>,
    style: Style,
    scale: f32,
) -> Instances {
    let mut transformations = Vec::with_capacity(s.len());
    let mut colors = Vec::with_capacity(s.len());
    for (i, (site, p)) in s.sites.iter().zip(s.cartesian_positions()).enumerate() {
        let r = site.element.covalent_radius() as f32 * ATOM_SCALE * style.atom_scale * scale;
        match halo {
            None => {
                transformations.push(Mat4::from_translation(v3(p)) * Mat4::from_scale(r));
                let [cr, cg, cb] = style.scheme.color(site.element);
                colors.push(Srgba::new(cr, cg, cb, 255));
            }
            Some(h) if h.contains(&i) => {
                transformations
                    .push(Mat4::from_translation(v3(p)) * Mat4::from_scale(r * HALO_SCALE));
                colors.push(Srgba::WHITE);
            }
            Some(_) => {}
        }
    }
    Instances {
        transformations,
        colors: Some(colors),
        ..Default::default()
    }
}

/// Subdivisions of the (sphere, cylinder) meshes for a picture of `n` atoms: fewer triangles per
/// atom for the larger meshed structures (above [`IMPOSTOR_SITES`](super::IMPOSTOR_SITES) atoms are
/// impostors; frame times are measured by `e2e/tests/performance.test.mjs`).
pub(super) fn detail_for(n: usize) -> (u32, u32) {
    if n <= 300 {
        (24, 10)
    } else {
        (8, 6)
    }
}

/// A cylinder of `radius` from `p` along `d` (three-d's unit cylinder runs along x).
pub(super) fn cylinder(p: Vec3, d: Vec3, radius: f32) -> Mat4 {
    let rot = Quat::from_arc(vec3(1.0, 0.0, 0.0), d.normalize(), None);
    Mat4::from_translation(p)
        * Mat4::from(rot)
        * Mat4::from_nonuniform_scale(d.magnitude(), radius, radius)
}

/// Each bond as two halves (start, vector, colour), one from each atom's drawn position, in
/// its colour; a bond to a periodic image outside the cell shows as a stub from each end.
pub(super) fn half_bonds(s: &Structure, style: Style) -> Vec<(Vec3, Vec3, Srgba)> {
    let list = bonds(s);
    if list.len() > MAX_BONDS {
        return Vec::new();
    }
    let positions = s.cartesian_positions();
    let mut out = Vec::with_capacity(2 * list.len());
    for b in &list {
        let half = v3(b.vector) * 0.5;
        for (site, dir) in [(b.from, half), (b.to, -half)] {
            let [r, g, bl] = style.scheme.color(s.sites[site].element);
            out.push((v3(positions[site]), dir, Srgba::new(r, g, bl, 255)));
        }
    }
    out
}

/// Cylinders for bond halves (start, vector, colour).
pub(super) fn bond_instances(halves: &[(Vec3, Vec3, Srgba)]) -> Instances {
    Instances {
        transformations: halves
            .iter()
            .map(|&(p, d, _)| cylinder(p, d, BOND_RADIUS))
            .collect(),
        colors: Some(halves.iter().map(|h| h.2).collect()),
        ..Default::default()
    }
}

pub(super) fn cell_instances(corners: &[Vec3]) -> Instances {
    let mut transformations = Vec::new();
    for i in 0..8usize {
        for bit in [1usize, 2, 4] {
            if i & bit == 0 {
                let (p, q) = (corners[i], corners[i | bit]);
                transformations.push(cylinder(p, q - p, EDGE_RADIUS));
            }
        }
    }
    let colors = Some(vec![CELL_COLOR; transformations.len()]);
    Instances {
        transformations,
        colors,
        ..Default::default()
    }
}
