//! The answer overlay drawn over the shown structure: displacement arrows, the answer's
//! sites and the marker on the worst site.

use three_d::*;

use super::instances::cylinder;
use super::{v3, Viewer, ANSWER_SCALE, ARROW_RADIUS, ATOM_SCALE, OVERLAY_ATOM_SCALE};
use crate::{displacement_color, Overlay};

impl Viewer {
    /// Draw `overlay` over the shown structure (or remove it): an arrow from each site to
    /// where the answer put it, a small sphere there, both coloured by the distance, and a
    /// translucent red marker on the worst site.
    pub fn set_overlay(&mut self, overlay: Option<&Overlay>) {
        let mut arrows = Instances::default();
        let mut answer = Instances::default();
        let mut worst = Instances::default();
        self.overlay_data = overlay.cloned();
        if let (Some(o), Some((s, _))) = (overlay, self.shown.as_ref()) {
            // Drawn on the structure's own cell (the first `home` drawn sites).
            if o.displacements.len() == self.home && self.home <= s.len() {
                let mut arrow_t = Vec::new();
                let mut arrow_c = Vec::new();
                let mut site_t = Vec::new();
                let mut site_c = Vec::new();
                for ((site, p), d) in s
                    .sites
                    .iter()
                    .zip(s.cartesian_positions())
                    .take(self.home)
                    .zip(&o.displacements)
                {
                    let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    let [r, g, b] = displacement_color(len);
                    let colour = Srgba::new(r, g, b, 255);
                    let (from, dir) = (v3(p), v3(*d));
                    if len > 1e-6 {
                        arrow_t.push(cylinder(from, dir, ARROW_RADIUS));
                        arrow_c.push(colour);
                    }
                    let radius = site.element.covalent_radius() as f32
                        * ATOM_SCALE
                        * ANSWER_SCALE
                        * self.style.atom_scale;
                    site_t.push(Mat4::from_translation(from + dir) * Mat4::from_scale(radius));
                    site_c.push(colour);
                }
                arrows = Instances {
                    transformations: arrow_t,
                    colors: Some(arrow_c),
                    ..Default::default()
                };
                answer = Instances {
                    transformations: site_t,
                    colors: Some(site_c),
                    ..Default::default()
                };
                if let Some((i, _)) = o.worst() {
                    let r = s.sites[i].element.covalent_radius() as f32
                        * ATOM_SCALE
                        * self.style.atom_scale;
                    worst = Instances {
                        transformations: vec![
                            Mat4::from_translation(v3(s.cartesian(i))) * Mat4::from_scale(r),
                        ],
                        colors: Some(vec![Srgba::WHITE]),
                        ..Default::default()
                    };
                }
            }
        }
        let on = !answer.transformations.is_empty();
        self.overlay.geometry.set_instances(&arrows);
        self.answer_sites.geometry.set_instances(&answer);
        self.worst.geometry.set_instances(&worst);
        // Under an overlay the target's atoms shrink and lose their bonds, so the arrows and
        // the answer's sites show.
        if on == self.overlay_on {
            self.render();
            return;
        }
        self.overlay_on = on;
        if let Some((s, h)) = self.shown.take() {
            let (scale, bonds) = if on {
                (OVERLAY_ATOM_SCALE, false)
            } else {
                (1.0, self.style.bonds)
            };
            self.draw_atoms(&s, &h, scale, bonds);
            self.shown = Some((s, h));
        }
        self.render();
    }
}
