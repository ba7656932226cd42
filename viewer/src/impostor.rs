//! Impostors: each atom of a large structure drawn as one camera-facing square whose
//! fragment shader shades the disc as a lit sphere, and each bond half as one camera-facing
//! ribbon shaded as a lit cylinder. Two triangles each instead of tens, all in one mesh per
//! kind rebuilt for each frame's camera, which is what keeps 10,000 atoms and their bonds
//! drawable under software WebGL.
//!
//! Why one mesh rather than instances: software WebGL (SwiftShader) pays a fixed cost per
//! instance of an instanced draw, about 17 µs, which made 10,000 instanced squares cost
//! 170 ms a frame; the same squares as one plain mesh are a single batch of vertices.
//!
//! Written here because three-d has no impostors; its `Material` trait takes our fragment
//! shaders. The depth is the quad's, not the sphere's or cylinder's, so touching shapes
//! intersect along straight lines: invisible at the few pixels an atom covers at that size.

use three_d::*;

/// The shading of the impostor quads: a lit sphere or a lit cylinder.
#[derive(Clone, Copy)]
pub struct ImpostorMaterial {
    /// The body of the fragment shader's `main`, from `uvs` and `col` to `c`.
    shading: &'static str,
    /// A shader id in three-d's public range (below its internal ids).
    id: u16,
}

impl ImpostorMaterial {
    /// Squares shaded as spheres (`uvs` span the square); outside the disc is discarded.
    pub const SPHERE: Self = Self {
        shading: "vec2 p = uvs * 2.0 - 1.0;
                float r2 = dot(p, p);
                if (r2 > 1.0) { discard; }
                // The normal of the sphere point seen here, in view space (z towards the eye).
                vec3 n = vec3(p, sqrt(1.0 - r2));
                vec3 l = normalize(vec3(-0.45, 0.55, 0.75));
                float diffuse = max(dot(n, l), 0.0);
                float specular = pow(max(dot(reflect(-l, n), vec3(0.0, 0.0, 1.0)), 0.0), 24.0);
                vec3 c = col.rgb * (0.38 + 0.62 * diffuse) + vec3(0.18 * specular);",
        id: 0x0A70,
    };

    /// Ribbons shaded as cylinders (`uvs.y` runs across the ribbon).
    pub const CYLINDER: Self = Self {
        shading: "// Across the ribbon, the cylinder's normal turns from one edge to the other.
                float x = uvs.y * 2.0 - 1.0;
                float facing = sqrt(max(1.0 - x * x, 0.0));
                vec3 c = col.rgb * (0.38 + 0.62 * facing);",
        id: 0x0A72,
    };
}

impl Material for ImpostorMaterial {
    fn fragment_shader_source(&self, _lights: &[&dyn Light]) -> String {
        format!(
            "{}
            in vec2 uvs;
            in vec4 col;
            layout (location = 0) out vec4 outColor;
            void main() {{
                {}
                outColor = vec4(color_mapping(c), 1.0);
            }}",
            ColorMapping::fragment_shader_source(),
            self.shading
        )
    }

    fn id(&self) -> EffectMaterialId {
        EffectMaterialId(self.id)
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

/// Quads (four corners with their `uvs`, one colour each) collected into one mesh of two
/// triangles per quad.
struct Quads {
    positions: Vec<Vec3>,
    uvs: Vec<Vec2>,
    colors: Vec<Srgba>,
    indices: Vec<u32>,
}

impl Quads {
    fn with_capacity(n: usize) -> Self {
        Self {
            positions: Vec::with_capacity(4 * n),
            uvs: Vec::with_capacity(4 * n),
            colors: Vec::with_capacity(4 * n),
            indices: Vec::with_capacity(6 * n),
        }
    }

    /// A quad with corners in order around it.
    fn push(&mut self, corners: [(Vec3, Vec2); 4], colour: Srgba) {
        let base = self.positions.len() as u32;
        for (q, uv) in corners {
            self.positions.push(q);
            self.uvs.push(uv);
            self.colors.push(colour);
        }
        self.indices
            .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }

    fn mesh(self) -> CpuMesh {
        CpuMesh {
            positions: Positions::F32(self.positions),
            indices: Indices::U32(self.indices),
            uvs: Some(self.uvs),
            colors: Some(self.colors),
            ..Default::default()
        }
    }
}

/// The squares of `atoms` (centre, radius, colour) turned to face `camera`, in one mesh for
/// [`ImpostorMaterial::SPHERE`].
pub fn billboard_mesh(atoms: &[(Vec3, f32, Srgba)], camera: &Camera) -> CpuMesh {
    let forward = -camera.view_direction().normalize();
    let right = camera.right_direction().normalize();
    let up = forward.cross(right).normalize();
    let mut quads = Quads::with_capacity(atoms.len());
    for &(c, r, colour) in atoms {
        let corner = |sx: f32, sy: f32| {
            (
                c + right * (sx * r) + up * (sy * r),
                vec2(0.5 * (sx + 1.0), 0.5 * (sy + 1.0)),
            )
        };
        quads.push(
            [
                corner(-1.0, -1.0),
                corner(1.0, -1.0),
                corner(1.0, 1.0),
                corner(-1.0, 1.0),
            ],
            colour,
        );
    }
    quads.mesh()
}

/// Ribbons of width `2 radius` along each bond half (start, vector, colour), turned about
/// their axis to face `camera`, in one mesh for [`ImpostorMaterial::CYLINDER`]. A half
/// pointing straight at the eye has no ribbon.
pub fn ribbon_mesh(halves: &[(Vec3, Vec3, Srgba)], radius: f32, camera: &Camera) -> CpuMesh {
    let eye = camera.position();
    let mut quads = Quads::with_capacity(halves.len());
    for &(p, d, colour) in halves {
        // Across the axis and the line of sight to the bond's middle.
        let across = d.cross(eye - (p + d * 0.5));
        if across.magnitude2() <= 0.0 {
            continue;
        }
        let w = across.normalize() * radius;
        let (edge, other) = (vec2(0.0, 0.0), vec2(0.0, 1.0));
        quads.push(
            [
                (p - w, edge),
                (p + w, other),
                (p + d + w, other),
                (p + d - w, edge),
            ],
            colour,
        );
    }
    quads.mesh()
}
