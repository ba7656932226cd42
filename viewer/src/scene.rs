//! Building and drawing the three-d scene of one structure: the [`Viewer`] and its drawing
//! (here), the answer overlay (`overlay`), the camera and picking (`camera`), and the mesh
//! instances of atoms, bonds and the cell (`instances`).

mod camera;
mod instances;
mod moments;
mod overlay;

use std::sync::Arc;

use engine::Structure;
use three_d::*;

use super::bake::bake;
use super::impostor::{billboard_mesh, ribbon_mesh, ImpostorMaterial};
use super::{Overlay, Style};
use instances::{atom_instances, bond_instances, cell_instances, detail_for, half_bonds};
use wasm_bindgen::JsCast;
use web_sys::{HtmlCanvasElement, WebGl2RenderingContext};

/// Background colour of the canvas (the e2e test treats it as "empty").
pub const BACKGROUND: [u8; 3] = [250, 250, 252];
/// Colour of unit-cell edges: a neutral grey, so it never looks like an element colour.
const CELL_COLOR: Srgba = Srgba::new(60, 60, 60, 255);
/// Atom sphere radius as a fraction of the covalent radius.
const ATOM_SCALE: f32 = 0.5;
/// Unit-cell edge radius in Å.
const EDGE_RADIUS: f32 = 0.03;
/// Bond cylinder radius in Å.
const BOND_RADIUS: f32 = 0.09;
/// Resolution of the frames drawn while a structure is dragged, relative to the full one.
const MOVING_RESOLUTION: f64 = 0.5;
/// Above this many drawn atoms, atoms are sphere impostors and bonds ribbons (see
/// `impostor`), and highlighted atoms are tinted instead of haloed.
const IMPOSTOR_SITES: usize = 500;
/// Above this many bonds none are drawn (a dense picture would hide the atoms anyway).
pub const MAX_BONDS: usize = 100_000;

fn v3(p: [f64; 3]) -> Vec3 {
    vec3(p[0] as f32, p[1] as f32, p[2] as f32)
}

fn webgl2(canvas: &HtmlCanvasElement) -> Result<WebGl2RenderingContext, String> {
    let options = js_sys::Object::new();
    for (k, v) in [("preserveDrawingBuffer", true), ("antialias", true)] {
        js_sys::Reflect::set(&options, &k.into(), &v.into())
            .map_err(|_| "cannot build WebGL options".to_string())?;
    }
    canvas
        .get_context_with_context_options("webgl2", &options)
        .map_err(|_| "WebGL2 context request failed".to_string())?
        .ok_or_else(|| "this browser has no WebGL2".to_string())?
        .dyn_into::<WebGl2RenderingContext>()
        .map_err(|_| "not a WebGL2 context".to_string())
}

/// Whether WebGL runs on the CPU (SwiftShader, llvmpipe: laptops and VMs without a GPU).
/// There triangles are what costs (a 64-atom meshed picture takes ten times as long per frame
/// as its impostors; `e2e/tests/performance.test.mjs`), so every structure is drawn with
/// impostors.
fn software_renderer(gl: &WebGl2RenderingContext) -> bool {
    /// `WEBGL_debug_renderer_info`'s `UNMASKED_RENDERER_WEBGL`.
    const UNMASKED_RENDERER: u32 = 0x9246;
    let unmasked = gl
        .get_extension("WEBGL_debug_renderer_info")
        .ok()
        .flatten()
        .and_then(|_| gl.get_parameter(UNMASKED_RENDERER).ok());
    let renderer = unmasked
        .or_else(|| gl.get_parameter(WebGl2RenderingContext::RENDERER).ok())
        .and_then(|v| v.as_string())
        .unwrap_or_default()
        .to_lowercase();
    ["swiftshader", "llvmpipe", "softpipe", "software"]
        .iter()
        .any(|s| renderer.contains(s))
}

/// A structure on a canvas, with its camera.
pub struct Viewer {
    context: Context,
    canvas: HtmlCanvasElement,
    camera: Camera,
    target: Vec3,
    extent: f32,
    /// The atoms and the bonds, each merged into one mesh (see `bake`); `None` when empty.
    atoms: Option<Gm<Mesh, PhysicalMaterial>>,
    halos: Gm<InstancedMesh, PhysicalMaterial>,
    cell: Gm<InstancedMesh, PhysicalMaterial>,
    bonds: Option<Gm<Mesh, PhysicalMaterial>>,
    /// The sphere and cylinder merged into them, at the detail of [`Viewer::detail`].
    sphere: CpuMesh,
    cylinder: CpuMesh,
    /// The material of the atom and bond meshes (white, tinted by their colours).
    plain: PhysicalMaterial,
    /// Above this many drawn atoms, atoms are impostors and bonds ribbons:
    /// [`IMPOSTOR_SITES`], or every structure under software rendering (see
    /// [`software_renderer`]).
    impostor_sites: usize,
    /// Whether the user is dragging the view (see [`Viewer::set_moving`]).
    moving: bool,
    /// Magnetic moment arrows, and how many are drawn on the structure's own cell.
    moments: Gm<InstancedMesh, PhysicalMaterial>,
    moment_count: usize,
    /// Overlay arrows and the answer's sites (opaque), and the ring on the worst site.
    overlay: Gm<InstancedMesh, PhysicalMaterial>,
    worst: Gm<InstancedMesh, PhysicalMaterial>,
    answer_sites: Gm<InstancedMesh, PhysicalMaterial>,
    /// What is shown, so a style change can redraw it.
    shown: Option<(Structure, Vec<usize>)>,
    /// The structure and highlight as given (before repeating cells), for redraws.
    source: Option<(Structure, Vec<usize>)>,
    /// Sites of one cell: the first `home` drawn sites are the structure's own.
    home: usize,
    /// The overlay drawn, for redraws.
    overlay_data: Option<Overlay>,
    style: Style,
    /// Bonds drawn in the last frame.
    bond_count: usize,
    /// Subdivisions of the atom and bond meshes now in use (see [`detail_for`]).
    detail: (u32, u32),
    /// Whether the atoms are drawn shrunk for an overlay.
    overlay_on: bool,
    /// Sphere impostors of a large structure, and their (centre, radius, colour).
    impostors: Option<Gm<Mesh, ImpostorMaterial>>,
    impostor_atoms: Vec<(Vec3, f32, Srgba)>,
    /// Bond ribbons of a large structure, and their bond halves (start, vector, colour).
    ribbons: Option<Gm<Mesh, ImpostorMaterial>>,
    impostor_bonds: Vec<(Vec3, Vec3, Srgba)>,
    ambient: AmbientLight,
    key_light: DirectionalLight,
    /// Centre and drawn radius of every site, for picking.
    spheres: Vec<(Vec3, f32)>,
    /// The lattice vectors a, b, c (for the axis views).
    axes: [Vec3; 3],
}

/// Colour of the halo drawn around highlighted (touched) sites.
const HALO_COLOR: Srgba = Srgba::new(255, 196, 0, 110);
/// Halo radius relative to the atom sphere.
const HALO_SCALE: f32 = 1.45;
/// A highlighted atom of a large (impostor) structure, relative to its usual size: drawn
/// tinted instead of in a halo.
const LIT_SCALE: f32 = 1.25;

/// The colour of a highlighted atom of a large structure: its own colour blended halfway
/// to the halo colour.
fn lit_color([r, g, b]: [u8; 3]) -> Srgba {
    let mix = |c: u8, h: u8| ((u16::from(c) + u16::from(h)) / 2) as u8;
    Srgba::new(
        mix(r, HALO_COLOR.r),
        mix(g, HALO_COLOR.g),
        mix(b, HALO_COLOR.b),
        255,
    )
}
/// The translucent marker on the site an answer displaced most.
const WORST_COLOR: Srgba = Srgba::new(214, 39, 40, 90);
/// Overlay arrow radius (Å).
const ARROW_RADIUS: f32 = 0.06;
/// Radius of the answer's sites relative to the target's (unshrunk) atom spheres.
const ANSWER_SCALE: f32 = 0.3;
/// The target's atom spheres under an overlay, relative to their usual size.
const OVERLAY_ATOM_SCALE: f32 = 0.4;

impl Viewer {
    /// Create a viewer drawing into `canvas`, showing nothing until [`Viewer::set_structure`].
    pub fn new(canvas: HtmlCanvasElement) -> Result<Self, String> {
        let gl = webgl2(&canvas)?;
        let impostor_sites = if software_renderer(&gl) {
            0
        } else {
            IMPOSTOR_SITES
        };
        // three-d's API takes an Arc; in the single-threaded browser it is never shared
        // across threads.
        #[allow(clippy::arc_with_non_send_sync)]
        let context =
            Context::from_gl_context(Arc::new(three_d::context::Context::from_webgl2_context(gl)))
                .map_err(|e| format!("three-d: {e}"))?;
        let white = CpuMaterial {
            albedo: Srgba::WHITE,
            roughness: 0.5,
            metallic: 0.0,
            ..Default::default()
        };
        let empty = Instances::default();
        let plain = PhysicalMaterial::new_opaque(&context, &white);
        // Only the halo's far half is drawn: the opaque atom hides it where they overlap, so
        // the atom keeps its element colour inside a ring of the halo colour.
        let mut halo_material = PhysicalMaterial::new_transparent(
            &context,
            &CpuMaterial {
                albedo: HALO_COLOR,
                roughness: 1.0,
                metallic: 0.0,
                ..Default::default()
            },
        );
        halo_material.render_states.cull = Cull::Front;
        let halos = Gm::new(
            InstancedMesh::new(&context, &empty, &CpuMesh::sphere(16)),
            halo_material,
        );
        let cell = Gm::new(
            InstancedMesh::new(&context, &empty, &CpuMesh::cylinder(8)),
            PhysicalMaterial::new_opaque(&context, &white),
        );
        let overlay = Gm::new(
            InstancedMesh::new(&context, &empty, &CpuMesh::cylinder(10)),
            PhysicalMaterial::new_opaque(&context, &white),
        );
        let moments = Gm::new(
            InstancedMesh::new(&context, &empty, &moments::arrow_mesh()),
            PhysicalMaterial::new_opaque(&context, &white),
        );
        let worst = Gm::new(
            InstancedMesh::new(&context, &empty, &CpuMesh::sphere(16)),
            PhysicalMaterial::new_transparent(
                &context,
                &CpuMaterial {
                    albedo: WORST_COLOR,
                    roughness: 1.0,
                    metallic: 0.0,
                    ..Default::default()
                },
            ),
        );
        let answer_sites = Gm::new(
            InstancedMesh::new(&context, &empty, &CpuMesh::sphere(16)),
            PhysicalMaterial::new_opaque(&context, &white),
        );
        let impostors = None;

        let camera = Camera::new_perspective(
            Viewport::new_at_origo(1, 1),
            vec3(0.0, -10.0, 0.0),
            vec3(0.0, 0.0, 0.0),
            vec3(0.0, 0.0, 1.0),
            degrees(35.0),
            0.1,
            1000.0,
        );
        let ambient = AmbientLight::new(&context, 0.45, Srgba::WHITE);
        let key_light = DirectionalLight::new(&context, 2.2, Srgba::WHITE, vec3(-0.5, 0.8, -1.0));
        Ok(Self {
            context,
            canvas,
            camera,
            target: vec3(0.0, 0.0, 0.0),
            extent: 1.0,
            atoms: None,
            halos,
            cell,
            bonds: None,
            sphere: CpuMesh::sphere(24),
            cylinder: CpuMesh::cylinder(10),
            plain,
            impostor_sites,
            moving: false,
            moments,
            moment_count: 0,
            overlay,
            worst,
            answer_sites,
            shown: None,
            source: None,
            home: 0,
            overlay_data: None,
            style: Style::default(),
            bond_count: 0,
            detail: (24, 10),
            overlay_on: false,
            impostors,
            impostor_atoms: Vec::new(),
            ribbons: None,
            impostor_bonds: Vec::new(),
            ambient,
            key_light,
            spheres: Vec::new(),
            axes: [
                vec3(1.0, 0.0, 0.0),
                vec3(0.0, 1.0, 0.0),
                vec3(0.0, 0.0, 1.0),
            ],
        })
    }

    /// Draw with `style` from now on (redraws what is shown).
    pub fn set_style(&mut self, style: Style) {
        if style == self.style {
            return;
        }
        self.style = style;
        if let Some((s, h)) = self.source.take() {
            self.set_structure(&s, &h);
            let overlay = self.overlay_data.take();
            self.set_overlay(overlay.as_ref());
        }
    }

    /// Bonds in the current picture.
    pub fn bond_count(&self) -> usize {
        self.bond_count
    }

    /// Magnetic moment arrows drawn on the structure's own cell.
    pub fn moment_count(&self) -> usize {
        self.moment_count
    }

    /// Atoms in the current picture (all drawn cells).
    pub fn atom_count(&self) -> usize {
        self.spheres.len()
    }

    /// `base` copied for each instance, as one mesh in the plain material (see `bake`).
    fn merged(&self, base: &CpuMesh, instances: &Instances) -> Option<Gm<Mesh, PhysicalMaterial>> {
        (!instances.transformations.is_empty()).then(|| {
            Gm::new(
                Mesh::new(&self.context, &bake(base, instances)),
                self.plain.clone(),
            )
        })
    }

    /// Instances of the atoms (spheres scaled by `scale`), their halos and, with `bonds`, the
    /// bonds of `structure`.
    fn draw_atoms(&mut self, structure: &Structure, highlight: &[usize], scale: f32, bonds: bool) {
        if structure.len() > self.impostor_sites {
            // Large: one shaded square per atom, turned to the camera at every frame.
            // Highlighted atoms are drawn larger and tinted with the halo colour instead of
            // inside a translucent halo: thousands of translucent spheres, sorted and blended
            // at every frame, cost seconds per frame under software WebGL.
            self.atoms = None;
            let mut lit = vec![false; structure.len()];
            if structure.len() > IMPOSTOR_SITES {
                for &i in highlight {
                    if let Some(l) = lit.get_mut(i) {
                        *l = true;
                    }
                }
            }
            self.impostor_atoms = structure
                .sites
                .iter()
                .zip(structure.cartesian_positions())
                .zip(lit)
                .map(|((site, p), lit)| {
                    let r = site.element.covalent_radius() as f32
                        * ATOM_SCALE
                        * self.style.atom_scale
                        * scale;
                    let [cr, cg, cb] = self.style.scheme.color(site.element);
                    if lit {
                        (v3(p), r * LIT_SCALE, lit_color([cr, cg, cb]))
                    } else {
                        (v3(p), r, Srgba::new(cr, cg, cb, 255))
                    }
                })
                .collect();
        } else {
            self.impostor_atoms.clear();
            self.impostors = None;
            self.atoms = self.merged(
                &self.sphere,
                &atom_instances(structure, None, self.style, scale),
            );
        }
        let halves = if bonds {
            half_bonds(structure, self.style)
        } else {
            Vec::new()
        };
        self.bond_count = halves.len() / 2;
        if structure.len() > self.impostor_sites {
            // Large: a ribbon per bond half, turned to the camera at every frame.
            self.bonds = None;
            self.ribbons = None;
            self.impostor_bonds = halves;
        } else {
            self.impostor_bonds.clear();
            self.ribbons = None;
            self.bonds = self.merged(&self.cylinder, &bond_instances(&halves));
        }
        let halos = if structure.len() > IMPOSTOR_SITES {
            Instances::default()
        } else {
            atom_instances(structure, Some(highlight), self.style, scale)
        };
        self.halos.geometry.set_instances(&halos);
    }

    /// Show `structure`, with a halo around the sites in `highlight`, and frame it. With
    /// [`Style::cells`] above one, the cell is repeated (the structure's own cell drawn, and
    /// picking, labels and overlays refer to its sites).
    pub fn set_structure(&mut self, structure: &Structure, highlight: &[usize]) {
        let n = structure.len();
        let cells = self.style.cells.map(|k| k.max(1));
        let copies = (cells[0] * cells[1] * cells[2]) as usize;
        let drawn = if copies == 1 {
            structure.clone()
        } else {
            structure.supercell(cells)
        };
        // Supercells list image by image, so site i of copy c is c·n + i.
        let drawn_highlight: Vec<usize> = (0..copies)
            .flat_map(|c| highlight.iter().map(move |&h| c * n + h))
            .collect();
        let detail = detail_for(drawn.len());
        if detail != self.detail {
            self.sphere = CpuMesh::sphere(detail.0);
            self.cylinder = CpuMesh::cylinder(detail.1);
            self.detail = detail;
        }
        let corners = |l: &engine::Lattice| -> Vec<Vec3> {
            (0..8)
                .map(|i| {
                    let f = [(i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64];
                    v3(l.to_cartesian(f))
                })
                .collect()
        };
        let centre = v3(drawn.lattice.to_cartesian([0.5, 0.5, 0.5]));
        // Framed to hold the cell and every atom whole, halo included: an atom outside the
        // cell (one an action moved out, say) or on a corner is never cut by the canvas edge.
        let scale = ATOM_SCALE * self.style.atom_scale * HALO_SCALE;
        let extent = corners(&drawn.lattice)
            .iter()
            .map(|c| (c - centre).magnitude())
            .chain(
                drawn
                    .sites
                    .iter()
                    .zip(drawn.cartesian_positions())
                    .map(|(site, p)| {
                        (v3(p) - centre).magnitude() + site.element.covalent_radius() as f32 * scale
                    }),
            )
            .fold(1.0f32, f32::max);
        self.draw_atoms(&drawn, &drawn_highlight, 1.0, self.style.bonds);
        let atom_scale = self.style.atom_scale;
        let radius =
            |site: &engine::Site| site.element.covalent_radius() as f32 * ATOM_SCALE * atom_scale;
        self.moments
            .geometry
            .set_instances(&moments::moment_instances(&drawn, radius));
        self.moment_count = structure
            .sites
            .iter()
            .filter(|site| moments::drawn_moment(site).is_some())
            .count();
        self.overlay_on = false;
        self.cell
            .geometry
            .set_instances(&cell_instances(&corners(&structure.lattice)));
        let m = structure.lattice.matrix();
        self.axes = [v3(m[0]), v3(m[1]), v3(m[2])];
        self.spheres = drawn
            .sites
            .iter()
            .zip(drawn.cartesian_positions())
            .map(|(site, p)| {
                let r = site.element.covalent_radius() as f32 * ATOM_SCALE * self.style.atom_scale;
                (v3(p), r)
            })
            .collect();
        let reframe =
            (self.target - centre).magnitude() > 1e-3 || (self.extent - extent).abs() > 1e-3;
        self.target = centre;
        self.extent = extent;
        if reframe {
            self.reset_view();
        }
        self.home = n;
        self.source = Some((structure.clone(), highlight.to_vec()));
        self.shown = Some((drawn, drawn_highlight));
        self.render();
    }

    /// Draw the scene at the canvas's current CSS size and device pixel ratio.
    pub fn render(&mut self) {
        let dpr = web_sys::window()
            .map(|w| w.device_pixel_ratio())
            .unwrap_or(1.0);
        // While a structure is dragged, frames are drawn at reduced resolution (fewer pixels
        // to shade under software WebGL, where pixels cost more than atoms); releasing it
        // redraws in full.
        let scale = if self.moving {
            MOVING_RESOLUTION * dpr
        } else {
            dpr
        };
        let w = ((self.canvas.client_width() as f64) * scale)
            .round()
            .max(1.0) as u32;
        let h = ((self.canvas.client_height() as f64) * scale)
            .round()
            .max(1.0) as u32;
        if self.canvas.width() != w || self.canvas.height() != h {
            self.canvas.set_width(w);
            self.canvas.set_height(h);
        }
        self.camera.set_viewport(Viewport::new_at_origo(w, h));
        if !self.impostor_atoms.is_empty() {
            self.impostors = Some(Gm::new(
                Mesh::new(
                    &self.context,
                    &billboard_mesh(&self.impostor_atoms, &self.camera),
                ),
                ImpostorMaterial::SPHERE,
            ));
        }
        if !self.impostor_bonds.is_empty() {
            // A bond pointing straight at the eye has no ribbon; an empty mesh is not drawn.
            let ribbons = ribbon_mesh(&self.impostor_bonds, BOND_RADIUS, &self.camera);
            self.ribbons = (!ribbons.positions.is_empty()).then(|| {
                Gm::new(
                    Mesh::new(&self.context, &ribbons),
                    ImpostorMaterial::CYLINDER,
                )
            });
        }
        let [r, g, b] = BACKGROUND.map(|c| c as f32 / 255.0);
        RenderTarget::screen(&self.context, w, h)
            .clear(ClearState::color_and_depth(r, g, b, 1.0, 1.0))
            .render(
                &self.camera,
                self.atoms
                    .iter()
                    .map(|g| g as &dyn Object)
                    .chain(self.impostors.iter().map(|g| g as &dyn Object))
                    .chain(self.bonds.iter().map(|g| g as &dyn Object))
                    .chain(self.ribbons.iter().map(|g| g as &dyn Object))
                    .chain(&self.cell)
                    .chain(&self.moments)
                    .chain(&self.overlay)
                    .chain(&self.answer_sites)
                    .chain(&self.halos)
                    .chain(&self.worst),
                &[&self.ambient as &dyn Light, &self.key_light],
            );
    }
}
