//! The camera: default and axis views, orbit and zoom, and mapping between sites and canvas
//! positions (picking, projected labels).

use three_d::*;

use super::Viewer;

impl Viewer {
    /// Look at the whole structure from the default direction, far enough away that it fits
    /// the canvas whatever its aspect ratio (drawn by the caller or the next render).
    pub fn reset_view(&mut self) {
        let w = self.canvas.client_width().max(1) as f32;
        let h = self.canvas.client_height().max(1) as f32;
        let aspect = (w / h).min(1.0);
        // Half the vertical field of view is 17.5°: tan(17.5°) ≈ 0.315.
        let distance = 0.95 * self.extent / (0.315 * aspect);
        self.camera.set_view(
            self.target + vec3(0.9, -2.2, 1.1).normalize() * distance,
            self.target,
            vec3(0.0, 0.0, 1.0),
        );
    }

    /// Look down lattice vector `axis` (0 = a, 1 = b, 2 = c) onto the structure's centre,
    /// with the next lattice vector pointing up on screen.
    pub fn view_along(&mut self, axis: usize) {
        let k = axis.min(2);
        let dir = self.axes[k].normalize();
        let next = self.axes[(k + 1) % 3];
        // The part of the next vector perpendicular to the view direction points up.
        let mut up = next - dir * next.dot(dir);
        if up.magnitude() < 1e-6 {
            up = vec3(0.0, 0.0, 1.0);
        }
        let w = self.canvas.client_width().max(1) as f32;
        let h = self.canvas.client_height().max(1) as f32;
        let distance = 0.95 * self.extent / (0.315 * (w / h).min(1.0));
        self.camera
            .set_view(self.target + dir * distance, self.target, up.normalize());
        self.render();
    }

    /// Start or end an interaction (a drag). Ending it redraws at full resolution.
    pub fn set_moving(&mut self, moving: bool) {
        if moving != self.moving {
            self.moving = moving;
            if !moving {
                self.render();
            }
        }
    }

    /// Rotate the camera around the structure's centre by a pointer drag of (dx, dy) pixels.
    pub fn orbit(&mut self, dx: f32, dy: f32) {
        let speed = 0.01 * self.extent;
        self.camera
            .rotate_around_with_fixed_up(self.target, speed * dx, speed * dy);
        self.render();
    }

    /// Zoom towards the centre by a wheel delta (positive = away).
    pub fn zoom(&mut self, delta: f32) {
        let step = -delta * 0.002 * self.extent;
        self.camera
            .zoom_towards(self.target, step, 0.5 * self.extent, 20.0 * self.extent);
        self.render();
    }

    /// The site drawn under the point (CSS pixels from the canvas's top-left corner): the
    /// nearest sphere the view ray through that point hits.
    pub fn pick(&self, css_x: f64, css_y: f64) -> Option<usize> {
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio());
        let h = self.canvas.client_height() as f64;
        let pixel = ((css_x * dpr) as f32, ((h - css_y) * dpr) as f32);
        let origin = self.camera.position_at_pixel(pixel);
        let dir = self.camera.view_direction_at_pixel(pixel).normalize();
        let mut best: Option<(f32, usize)> = None;
        for (i, (c, r)) in self.spheres.iter().enumerate() {
            // Ray-sphere intersection: |origin + t·dir − c|² = r², nearest t > 0.
            let oc = origin - c;
            let b = oc.dot(dir);
            let disc = b * b - (oc.magnitude2() - r * r);
            if disc < 0.0 {
                continue;
            }
            let t = -b - disc.sqrt();
            if t > 0.0 && best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, i));
            }
        }
        best.map(|(_, i)| if self.home > 0 { i % self.home } else { i })
    }

    /// Where each site's centre is drawn, in CSS pixels from the canvas's top-left corner
    /// (the scene description browser tests read).
    pub fn projected_sites(&self) -> Vec<[f32; 2]> {
        let dpr = web_sys::window().map_or(1.0, |w| w.device_pixel_ratio()) as f32;
        let h = self.canvas.client_height() as f32;
        self.spheres
            .iter()
            .take(self.home)
            .map(|(c, _)| {
                let p = self.camera.pixel_at_position(*c);
                [p.x / dpr, h - p.y / dpr]
            })
            .collect()
    }
}
