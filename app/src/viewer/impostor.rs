//! Sphere impostors: each atom of a large structure drawn as one camera-facing square whose
//! fragment shader shades the disc as a lit sphere. Two triangles per atom instead of
//! hundreds, which is what keeps 10,000 atoms drawable under software WebGL.
//!
//! Written here because three-d has no sphere impostor; its `Material` trait takes our
//! fragment shader. The depth is the square's, not the sphere's, so touching spheres
//! intersect along straight lines: invisible at the few pixels an atom covers at that size.

use three_d::*;

/// The shading of the impostor squares.
#[derive(Clone, Copy, Default)]
pub struct SphereImpostorMaterial;

/// A shader id in three-d's public range (below its internal ids).
const ID: u16 = 0x0A70;

impl Material for SphereImpostorMaterial {
    fn fragment_shader_source(&self, _lights: &[&dyn Light]) -> String {
        format!(
            "{}
            in vec2 uvs;
            in vec4 col;
            layout (location = 0) out vec4 outColor;
            void main() {{
                vec2 p = uvs * 2.0 - 1.0;
                float r2 = dot(p, p);
                if (r2 > 1.0) {{ discard; }}
                // The normal of the sphere point seen here, in view space (z towards the eye).
                vec3 n = vec3(p, sqrt(1.0 - r2));
                vec3 l = normalize(vec3(-0.45, 0.55, 0.75));
                float diffuse = max(dot(n, l), 0.0);
                float specular = pow(max(dot(reflect(-l, n), vec3(0.0, 0.0, 1.0)), 0.0), 24.0);
                vec3 c = col.rgb * (0.38 + 0.62 * diffuse) + vec3(0.18 * specular);
                outColor = vec4(color_mapping(c), 1.0);
            }}",
            ColorMapping::fragment_shader_source()
        )
    }

    fn id(&self) -> EffectMaterialId {
        EffectMaterialId(ID)
    }

    fn use_uniforms(&self, program: &Program, viewer: &dyn Viewer, _lights: &[&dyn Light]) {
        viewer.color_mapping().use_uniforms(program);
    }

    fn render_states(&self) -> RenderStates {
        RenderStates::default()
    }

    fn material_type(&self) -> MaterialType {
        MaterialType::Opaque
    }
}

/// Instances of unit squares turned to face `camera`, one per (centre, radius, colour).
pub fn billboards(atoms: &[(Vec3, f32, Srgba)], camera: &Camera) -> Instances {
    let forward = -camera.view_direction().normalize();
    let right = camera.right_direction().normalize();
    let up = forward.cross(right).normalize();
    let mut transformations = Vec::with_capacity(atoms.len());
    let mut colors = Vec::with_capacity(atoms.len());
    for &(c, r, colour) in atoms {
        transformations.push(Mat4::from_cols(
            (right * r).extend(0.0),
            (up * r).extend(0.0),
            (forward * r).extend(0.0),
            c.extend(1.0),
        ));
        colors.push(colour);
    }
    Instances {
        transformations,
        colors: Some(colors),
        ..Default::default()
    }
}
