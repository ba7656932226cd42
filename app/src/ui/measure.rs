//! What the picked sites say: each site's coordinates, the distance between two, the angle
//! at the middle one of three (minimum-image vectors, as the engine computes them).

use engine::Structure;
use leptos::prelude::*;

/// The panel under a viewer describing `picked` sites of `s` (nothing when none).
pub fn picked_panel(s: &Structure, picked: &[usize], id: &'static str) -> Option<AnyView> {
    let p: Vec<usize> = picked.iter().copied().filter(|&i| i < s.len()).collect();
    if p.is_empty() {
        return None;
    }
    let rows = p
        .iter()
        .map(|&i| {
            let site = &s.sites[i];
            let f = site.frac;
            let c = s.cartesian(i);
            view! {
                <li data-site=i>
                    <b>{format!("#{i} {}", site.element)}</b>
                    {format!(
                        " frac ({:.4}, {:.4}, {:.4}) · Cartesian ({:.4}, {:.4}, {:.4}) Å",
                        f[0], f[1], f[2], c[0], c[1], c[2]
                    )}
                </li>
            }
        })
        .collect_view();
    let distances = p
        .windows(2)
        .map(|w| {
            let d = s.distance(w[0], w[1]);
            view! {
                <li class="distance">
                    {format!("distance #{} – #{}: ", w[0], w[1])}
                    <b class="value">{format!("{d:.4}")}</b>
                    " Å (nearest periodic image)"
                </li>
            }
        })
        .collect_view();
    let angle = (p.len() == 3).then(|| {
        let text = s.angle(p[0], p[1], p[2]).map_or_else(
            || "undefined (coincident sites)".to_string(),
            |a| format!("{a:.2}"),
        );
        view! {
            <li class="angle">
                {format!("angle #{}–#{}–#{}: ", p[0], p[1], p[2])}
                <b class="value">{text}</b>
                "° (at the middle site, nearest images)"
            </li>
        }
    });
    Some(view! { <ul class="picked" data-for=id>{rows}{distances}{angle}</ul> }.into_any())
}
