//! Computing the target points of an action.

use engine::numeric::{cos_deg, dot, norm, sin_deg};

use super::action::{Point, PointAction};

/// Why an action cannot be applied to a list of points.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PointActionError {
    /// An index is not in the list.
    #[error("point index {index} is out of range (there are {len} points)")]
    IndexOutOfRange {
        /// The index.
        index: usize,
        /// Number of points.
        len: usize,
    },
    /// The direction between two points is undefined (they coincide).
    #[error("points {0} and {1} coincide: the direction between them is undefined")]
    Coincident(usize, usize),
}

fn get(points: &[Point], index: usize) -> Result<Point, PointActionError> {
    points
        .get(index)
        .copied()
        .ok_or(PointActionError::IndexOutOfRange {
            index,
            len: points.len(),
        })
}

fn unit_between(points: &[Point], from: usize, to: usize) -> Result<[f64; 3], PointActionError> {
    let (a, b) = (get(points, from)?, get(points, to)?);
    let d: [f64; 3] = std::array::from_fn(|k| b[k] - a[k]);
    let n = norm(d);
    if n == 0.0 || !n.is_finite() {
        return Err(PointActionError::Coincident(from, to));
    }
    Ok(d.map(|x| x / n))
}

/// Rotate `p` by `angle` degrees about the axis through `center` along the unit vector
/// `axis` (right-hand rule; Rodrigues' formula, portable trigonometry).
pub fn rotate_point(p: Point, center: Point, axis: [f64; 3], angle: f64) -> Point {
    let (c, s) = (cos_deg(angle), sin_deg(angle));
    let v: [f64; 3] = std::array::from_fn(|k| p[k] - center[k]);
    let kxv = engine::numeric::cross(axis, v);
    let kdv = dot(axis, v);
    std::array::from_fn(|k| center[k] + v[k] * c + kxv[k] * s + axis[k] * kdv * (1.0 - c))
}

/// The points after `action` (the ground truth). The centre of a rotation is not moved, and
/// every point is rotated exactly once, by the printed angle.
pub fn apply(points: &[Point], action: &PointAction) -> Result<Vec<Point>, PointActionError> {
    let mut out = points.to_vec();
    match *action {
        PointAction::Move {
            index,
            displacement,
        } => {
            let p = get(points, index)?;
            out[index] = std::array::from_fn(|k| p[k] + displacement[k]);
        }
        PointAction::MoveTowards {
            index,
            towards,
            distance,
        } => {
            let u = unit_between(points, index, towards)?;
            let p = get(points, index)?;
            out[index] = std::array::from_fn(|k| p[k] + u[k] * distance);
        }
        PointAction::InsertBetween { from, to, distance } => {
            let u = unit_between(points, from, to)?;
            let p = get(points, from)?;
            out.push(std::array::from_fn(|k| p[k] + u[k] * distance));
        }
        PointAction::RotateAround {
            center,
            axis,
            angle,
        } => {
            let c = get(points, center)?;
            for (i, p) in out.iter_mut().enumerate() {
                if i != center {
                    *p = rotate_point(*p, c, axis.vector(), angle);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::action::Axis;
    use super::*;

    fn close(a: &[Point], b: &[Point]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| (0..3).all(|k| (p[k] - q[k]).abs() < 1e-12))
    }

    #[test]
    fn move_and_move_towards_and_insert_between() {
        let pts = [[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]];
        let m = apply(
            &pts,
            &PointAction::Move {
                index: 1,
                displacement: [1.0, -1.0, 0.5],
            },
        )
        .unwrap();
        assert!(close(&m, &[[0.0, 0.0, 0.0], [4.0, 3.0, 0.5]]));
        let t = apply(
            &pts,
            &PointAction::MoveTowards {
                index: 0,
                towards: 1,
                distance: 10.0,
            },
        )
        .unwrap();
        // Overshoots: 10 units along (0.6, 0.8, 0).
        assert!(close(&t, &[[6.0, 8.0, 0.0], [3.0, 4.0, 0.0]]));
        let i = apply(
            &pts,
            &PointAction::InsertBetween {
                from: 1,
                to: 0,
                distance: 1.0,
            },
        )
        .unwrap();
        assert!(close(&i, &[pts[0], pts[1], [2.4, 3.2, 0.0]]));
    }

    #[test]
    fn rotation_follows_the_right_hand_rule_and_keeps_the_centre() {
        let pts = [[1.0, 1.0, 5.0], [2.0, 1.0, -3.0]];
        let r = apply(
            &pts,
            &PointAction::RotateAround {
                center: 0,
                axis: Axis::PlusZ,
                angle: 90.0,
            },
        )
        .unwrap();
        // +x turns into +y about +z; z is kept.
        assert!(close(&r, &[[1.0, 1.0, 5.0], [1.0, 2.0, -3.0]]));
        let back = apply(
            &r,
            &PointAction::RotateAround {
                center: 0,
                axis: Axis::MinusZ,
                angle: 90.0,
            },
        )
        .unwrap();
        assert!(close(&back, &pts));
    }

    #[test]
    fn the_reference_rotated_twice_and_we_rotate_once() {
        // The reference's stored rotate_around targets were rotated by 2θ. Our target is
        // the single rotation by θ; rotating our target once more gives the reference's.
        let pts = [[0.0, 0.0, 0.0], [2.0, 0.0, 1.0]];
        let act = PointAction::RotateAround {
            center: 0,
            axis: Axis::PlusZ,
            angle: 60.0,
        };
        let once = apply(&pts, &act).unwrap();
        let twice = apply(&once, &act).unwrap();
        let c60 = 0.5;
        let s60 = 3f64.sqrt() / 2.0;
        assert!(close(&once, &[[0.0; 3], [2.0 * c60, 2.0 * s60, 1.0]]));
        assert!(close(&twice, &[[0.0; 3], [-1.0, 2.0 * s60, 1.0]]));
        let moved: f64 = (0..3)
            .map(|k| (once[1][k] - twice[1][k]).powi(2))
            .sum::<f64>()
            .sqrt();
        // 2 r sin(θ/2) with r = 2, θ = 60°: the doubled target is 2 units away.
        assert!((moved - 2.0).abs() < 1e-12);
        assert!(moved > super::super::score::PASS_THRESHOLD);
    }

    #[test]
    fn errors_are_reported() {
        let pts = [[0.0; 3], [0.0; 3]];
        let e = apply(
            &pts,
            &PointAction::MoveTowards {
                index: 0,
                towards: 1,
                distance: 1.0,
            },
        );
        assert_eq!(e, Err(PointActionError::Coincident(0, 1)));
        let e = apply(
            &pts,
            &PointAction::Move {
                index: 5,
                displacement: [0.0; 3],
            },
        );
        assert!(matches!(e, Err(PointActionError::IndexOutOfRange { .. })));
    }
}
