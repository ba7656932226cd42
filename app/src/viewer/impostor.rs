//! Impostors: each atom of a large structure drawn as one camera-facing square whose
//! fragment shader shades the disc as a lit sphere, and each bond half as one camera-facing
//! ribbon shaded as a lit cylinder. Two triangles each instead of tens, all in one mesh per
//! kind rebuilt for each frame's camera, which is what keeps 10,000 atoms and their bonds
//! drawable under software WebGL.
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

/// The impostor squares of `atoms` turned to face `camera`, baked into one mesh (four
/// vertices and two triangles per atom; `uvs` span each square, colours per vertex).
///
/// Why one mesh rather than instances: software WebGL (SwiftShader) pays a fixed cost per
/// instance of an instanced draw, about 17 µs, which made 10,000 instanced squares cost
/// 170 ms a frame; the same squares as one plain mesh are a single batch of vertices.
pub fn billboard_mesh(atoms: &[(Vec3, f32, Srgba)], camera: &Camera) -> CpuMesh {
    let forward = -camera.view_direction().normalize();
    let right = camera.right_direction().normalize();
    let up = forward.cross(right).normalize();
    let mut positions = Vec::with_capacity(4 * atoms.len());
    let mut uvs = Vec::with_capacity(4 * atoms.len());
    let mut colors = Vec::with_capacity(4 * atoms.len());
    let mut indices: Vec<u32> = Vec::with_capacity(6 * atoms.len());
    for (k, &(c, r, colour)) in atoms.iter().enumerate() {
        let base = 4 * k as u32;
        for (sx, sy) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            positions.push(c + right * (sx * r) + up * (sy * r));
            uvs.push(vec2(0.5 * (sx + 1.0), 0.5 * (sy + 1.0)));
            colors.push(colour);
        }
        indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    CpuMesh {
        positions: Positions::F32(positions),
        indices: Indices::U32(indices),
        uvs: Some(uvs),
        colors: Some(colors),
        ..Default::default()
    }
}

/// The shading of the bond ribbons: across the ribbon, a lit cylinder.
#[derive(Clone, Copy, Default)]
pub struct BondImpostorMaterial;

/// A shader id in three-d's public range, distinct from the other materials'.
const BOND_ID: u16 = 0x0A72;

impl Material for BondImpostorMaterial {
    fn fragment_shader_source(&self, _lights: &[&dyn Light]) -> String {
        format!(
            "{}
            in vec2 uvs;
            in vec4 col;
            layout (location = 0) out vec4 outColor;
            void main() {{
                // Across the ribbon, the cylinder's normal turns from one edge to the other.
                float x = uvs.y * 2.0 - 1.0;
                float facing = sqrt(max(1.0 - x * x, 0.0));
                outColor = vec4(color_mapping(col.rgb * (0.38 + 0.62 * facing)), 1.0);
            }}",
            ColorMapping::fragment_shader_source()
        )
    }

    fn id(&self) -> EffectMaterialId {
        EffectMaterialId(BOND_ID)
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

/// Ribbons of width `2 radius` along each bond half (start, vector, colour), turned about
/// their axis to face `camera`, in one mesh (`uvs.y` runs across each ribbon).
pub fn ribbon_mesh(halves: &[(Vec3, Vec3, Srgba)], radius: f32, camera: &Camera) -> CpuMesh {
    let eye = camera.position();
    let mut positions = Vec::with_capacity(4 * halves.len());
    let mut uvs = Vec::with_capacity(4 * halves.len());
    let mut colors = Vec::with_capacity(4 * halves.len());
    let mut indices: Vec<u32> = Vec::with_capacity(6 * halves.len());
    for &(p, d, colour) in halves {
        // Across the axis and the line of sight to the bond's middle.
        let across = d.cross(eye - (p + d * 0.5));
        let Some(w) = (across.magnitude2() > 0.0).then(|| across.normalize() * radius) else {
            continue;
        };
        let base = positions.len() as u32;
        for (q, v) in [
            (p - w, 0.0f32),
            (p + w, 1.0),
            (p + d + w, 1.0),
            (p + d - w, 0.0),
        ] {
            positions.push(q);
            uvs.push(vec2(0.0, v));
            colors.push(colour);
        }
        indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    CpuMesh {
        positions: Positions::F32(positions),
        indices: Indices::U32(indices),
        uvs: Some(uvs),
        colors: Some(colors),
        ..Default::default()
    }
}
