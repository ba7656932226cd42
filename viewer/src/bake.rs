//! Many copies of a small mesh merged into one plain mesh.
//!
//! Why: software WebGL (SwiftShader, what browsers fall back to without a GPU, and what the
//! browser tests run) pays a fixed cost per instance of an instanced draw, about 17 µs
//! measured, so 74,000 instanced atoms and bond halves took 1.3 s a frame. Merged, the same
//! triangles go through as one batch of vertices. The structure's atoms and bonds change
//! only when the structure or style does, so they are merged then, not at every frame.

use three_d::*;

/// `base` copied once per instance (transformation and colour), positions and normals
/// transformed, into one mesh with per-vertex colours.
pub fn bake(base: &CpuMesh, instances: &Instances) -> CpuMesh {
    let positions = base.positions.to_f32();
    let normals = base.normals.as_deref();
    let indices: Vec<u32> = base
        .indices
        .to_u32()
        .unwrap_or_else(|| (0..positions.len() as u32).collect());
    let colors = instances.colors.as_deref();
    let count = instances.transformations.len();
    let mut out_positions = Vec::with_capacity(count * positions.len());
    let mut out_normals = Vec::with_capacity(normals.map_or(0, |_| count * positions.len()));
    let mut out_colors = Vec::with_capacity(count * positions.len());
    let mut out_indices = Vec::with_capacity(count * indices.len());
    for (k, t) in instances.transformations.iter().enumerate() {
        let base_index = out_positions.len() as u32;
        out_positions.extend(positions.iter().map(|p| (t * p.extend(1.0)).truncate()));
        if let Some(normals) = normals {
            // Normals turn with the inverse transpose (cylinders scale unevenly), found once
            // per instance.
            let m = Mat3::from_cols(t.x.truncate(), t.y.truncate(), t.z.truncate());
            let turn = m.invert().map_or(m, |inv| inv.transpose());
            out_normals.extend(normals.iter().map(|n| (turn * n).normalize()));
        }
        let colour = colors
            .and_then(|c| c.get(k))
            .copied()
            .unwrap_or(Srgba::WHITE);
        out_colors.extend(std::iter::repeat_n(colour, positions.len()));
        out_indices.extend(indices.iter().map(|i| base_index + i));
    }
    CpuMesh {
        positions: Positions::F32(out_positions),
        indices: Indices::U32(out_indices),
        normals: normals.map(|_| out_normals),
        colors: Some(out_colors),
        ..Default::default()
    }
}
