//! Random parameters of each action (the AtomWorld reference code's actions), from one task's RNG.

use engine::{Element, Structure};

use super::rng::TaskRng;
use crate::atomworld::action::{Action, ActionKind};

/// Attempts at finding a valid swap pair or delete_below reference before skipping a
/// structure (the reference's rule).
pub const RETRIES: usize = 20;

/// `x` rounded to `decimals` places, as the reference rounds its printed parameters.
pub(crate) fn round(x: f64, decimals: i32) -> f64 {
    let k = libm::pow(10.0, decimals as f64);
    (x * k).round() / k
}

fn element(rng: &mut TaskRng) -> Element {
    // 118 entries: from_z cannot fail for 1..=118.
    Element::from_z(rng.below(Element::COUNT) as u32 + 1).unwrap_or_else(|| unreachable!())
}

/// Minimum-image distances from site `i` to every other site.
fn distances_from(s: &Structure, i: usize) -> Vec<f64> {
    (0..s.len())
        .filter(|&j| j != i)
        .map(|j| s.distance(i, j))
        .collect()
}

/// Sample an action of `kind` for `s`, or `None` when the structure does not allow one (no
/// two different elements to swap, no site with another below it, fewer than two sites).
pub fn sample(kind: ActionKind, s: &Structure, rng: &mut TaskRng) -> Option<Action> {
    let n = s.len();
    if n == 0 {
        return None;
    }
    Some(match kind {
        ActionKind::Change => Action::Change {
            index: rng.below(n),
            element: element(rng),
        },
        ActionKind::Remove => Action::Remove {
            index: rng.below(n),
        },
        ActionKind::Add => {
            let element = element(rng);
            let u = [rng.unit(), rng.unit(), rng.unit()];
            Action::Add {
                element,
                position: s.lattice.to_cartesian(u),
            }
        }
        ActionKind::Move => Action::Move {
            index: rng.below(n),
            displacement: [rng.normal(2.0), rng.normal(2.0), rng.normal(2.0)],
        },
        ActionKind::MoveTowards => {
            if n < 2 {
                return None;
            }
            let (index, towards) = rng.distinct_pair(n);
            Action::MoveTowards {
                index,
                towards,
                distance: round(rng.uniform(0.1, 3.0), 4),
            }
        }
        ActionKind::InsertBetween => {
            if n < 2 {
                return None;
            }
            let element = element(rng);
            let (from, to) = rng.distinct_pair(n);
            let p = s.cartesian(from);
            let q = s.cartesian(to);
            let len = engine::numeric::norm([q[0] - p[0], q[1] - p[1], q[2] - p[2]]);
            let ratio = rng.uniform(0.1, 0.9);
            Action::InsertBetween {
                element,
                from,
                to,
                distance: round(ratio * len, 2),
            }
        }
        ActionKind::Swap => {
            if n < 2 {
                return None;
            }
            let pair = (0..RETRIES)
                .map(|_| rng.distinct_pair(n))
                .find(|&(i, j)| s.sites[i].element != s.sites[j].element)?;
            Action::Swap {
                first: pair.0,
                second: pair.1,
            }
        }
        ActionKind::DeleteBelow => {
            let z: Vec<f64> = (0..n).map(|i| s.cartesian(i)[2]).collect();
            let index = (0..RETRIES)
                .map(|_| rng.below(n))
                .find(|&i| z.iter().any(|&zj| zj < z[i]))?;
            Action::DeleteBelow {
                index,
                including_itself: rng.below(2) == 0,
            }
        }
        ActionKind::RotateAround => {
            if n < 2 {
                return None;
            }
            let center = rng.below(n);
            let d = distances_from(s, center);
            let nearest = d.iter().cloned().fold(f64::INFINITY, f64::min);
            let farthest = d.iter().cloned().fold(0.0, f64::max);
            let rmin = f64::max(1.0, 1.01 * nearest);
            let mut rmax = f64::min(4.0, 0.99 * farthest);
            if rmax < rmin {
                rmax = 0.5 * farthest;
            }
            let mut axis = [0.0; 3];
            let a = rng.below(6);
            axis[a % 3] = if a < 3 { 1.0 } else { -1.0 };
            Action::RotateAround {
                center,
                radius: round(rng.uniform(rmin, rmax), 4),
                angle: round(rng.uniform(45.0, 315.0), 4),
                axis,
            }
        }
        ActionKind::SuperCell => {
            // All sizes in {1..4}³ with product ≤ 8, except 1×1×1, equally likely.
            let sizes: Vec<[u32; 3]> = (1..=4u32)
                .flat_map(|a| (1..=4u32).flat_map(move |b| (1..=4u32).map(move |c| [a, b, c])))
                .filter(|s| s[0] * s[1] * s[2] <= 8 && *s != [1, 1, 1])
                .collect();
            Action::SuperCell {
                size: sizes[rng.below(sizes.len())],
            }
        }
        ActionKind::MoveAll => Action::MoveAll {
            displacement: [rng.normal(2.0), rng.normal(2.0), rng.normal(2.0)],
        },
        ActionKind::DeleteAround => Action::DeleteAround {
            index: rng.below(n),
            radius: round(rng.uniform(1.0, 3.0), 4),
        },
        ActionKind::MoveSelected => {
            let k = 2 + rng.below(3.min(n.saturating_sub(1)).max(1));
            let mut indices: Vec<usize> = Vec::new();
            while indices.len() < k.min(n) {
                let i = rng.below(n);
                if !indices.contains(&i) {
                    indices.push(i);
                }
            }
            Action::MoveSelected {
                indices,
                displacement: [rng.normal(1.0), rng.normal(1.0), rng.normal(1.0)],
            }
        }
        ActionKind::MoveAround => Action::MoveAround {
            index: rng.below(n),
            radius: round(rng.uniform(1.0, 3.0), 4),
            displacement: [rng.normal(1.0), rng.normal(1.0), rng.normal(1.0)],
        },
    })
}
