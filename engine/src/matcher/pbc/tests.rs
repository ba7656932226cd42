use super::columns::{cart_of_wrapped, nearest_image_scan, wrap};
use super::window::ColumnWindow;
use super::*;
use crate::linalg::{vec_mat, Vec3};
use crate::numeric::distance_to_integer;

/// pymatgen's `is_coord_subset_pbc` as written, the reference for [`SupersetIndex`]: true
/// when every point of `subset` lies within `atol` (per fractional axis, periodic) of a
/// point of `superset` it may be matched to. `forbidden(i, j)` says whether subset point `i`
/// may not be matched to superset point `j`.
fn is_coord_subset_pbc(
    subset: &[Vec3],
    superset: &[Vec3],
    atol: Vec3,
    forbidden: impl Fn(usize, usize) -> bool,
) -> bool {
    subset.iter().enumerate().all(|(i, p)| {
        superset.iter().enumerate().any(|(j, q)| {
            !forbidden(i, j) && (0..3).all(|k| distance_to_integer(p[k] - q[k]) <= atol[k])
        })
    })
}

#[test]
fn the_column_window_never_misses_a_pair_the_exact_test_accepts() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut rnd = || rng.unit() * 6.0 - 3.0;
    let cols: Vec<Vec3> = (0..300).map(|_| [rnd(), rnd(), rnd()]).collect();
    let mut out = Vec::new();
    for tol in [0.01, 0.1, 0.3, 0.49, 0.6] {
        // The window takes the tightest axis: each axis in turn.
        for axis in 0..3 {
            let mut t = [0.45; 3];
            t[axis] = tol;
            let w = ColumnWindow::new(&cols, Some(t));
            let first_other = usize::from(axis == 0);
            assert_eq!(w.axis(), if tol < 0.45 { axis } else { first_other });
            for _ in 0..300 {
                let r = [rnd(), rnd(), rnd()];
                w.near(&r, &mut out);
                let mut once = out.clone();
                once.sort_unstable();
                once.dedup();
                assert_eq!(once.len(), out.len(), "a column listed twice");
                for (j, c) in cols.iter().enumerate() {
                    if (0..3).all(|k| distance_to_integer(c[k] - r[k]) <= t[k]) {
                        assert!(
                            out.contains(&j),
                            "tol {t:?}: row {r:?} misses column {j} at {c:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn distance_to_integer_is_exactly_the_rounding_formula() {
    let mut rng = XorShift::new(0x1234_5678_9abc_def0);
    let mut cases = vec![
        0.5,
        -0.5,
        1.5,
        -2.5,
        0.49999999999999994,
        -0.49999999999999994,
        1e-300,
        -0.0,
        2251799813685247.5,
        4503599627370497.0,
        1e300,
        -7.25,
        3.0,
    ];
    for _ in 0..100_000 {
        let x = rng.next_u64();
        cases.push((x as f64 / u64::MAX as f64 - 0.5) * 40.0);
    }
    for c in cases {
        assert_eq!(
            distance_to_integer(c).to_bits(),
            (c - c.round()).abs().to_bits(),
            "{c}"
        );
    }
}
use crate::reduction::{lll_reduce_matrix, LLL_DELTA};
use crate::test_rng::XorShift;

#[test]
fn shortest_vector_crosses_the_boundary() {
    let m = [[4.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 6.0]];
    let lll = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
    let columns = Columns::new(&lll, &[[0.95, 0.5, 0.0], [0.1, 0.0, 0.0]], None);
    let t = columns.table(&[[0.05, 0.0, 0.0]], &|_, j| j == 1);
    let v = t.vector(0, 0);
    assert!(
        (v[0] + 0.4).abs() < 1e-12 && (v[1].abs() - 2.5).abs() < 1e-12,
        "{v:?}"
    );
    assert_eq!(t.vector(0, 1), [FORBIDDEN; 3]);
    assert_eq!(t.dense_d2()[1], FORBIDDEN);
    assert_eq!(t.col, vec![0]);
}

#[test]
fn a_table_built_in_stages_and_reordered_is_the_table_built_at_once() {
    let lll = lll_reduce_matrix(
        &[[4.0, 0.0, 0.0], [0.5, 3.5, 0.0], [0.2, 0.3, 5.0]],
        LLL_DELTA,
    )
    .unwrap();
    let cols: Vec<Vec3> = (0..7)
        .map(|i| {
            [
                0.13 * i as f64,
                0.29 * i as f64 % 1.0,
                0.41 * i as f64 % 1.0,
            ]
        })
        .collect();
    let rows: Vec<Vec3> = (0..5)
        .map(|i| {
            [
                0.07 + 0.17 * i as f64,
                0.31 * i as f64 % 1.0,
                0.9 - 0.11 * i as f64,
            ]
        })
        .collect();
    let columns = Columns::new(&lll, &cols, Some([0.4, 0.4, 0.4]));
    let forbidden = |i: usize, j: usize| (i + j).is_multiple_of(3);
    let whole = columns.table(&rows, &forbidden);
    let order = [3, 0, 4, 1, 2];
    let mut staged = Table::empty(cols.len());
    let mut near = Vec::new();
    for part in [&order[..2], &order[2..]] {
        let part = part.iter().copied();
        columns.append_rows(&rows, part, &forbidden, &mut staged, &mut near);
    }
    let back = staged.reordered(&order);
    assert_eq!(back.rows, whole.rows);
    assert_eq!(back.start, whole.start);
    assert_eq!(back.col, whole.col);
    assert_eq!(back.d2, whole.d2);
    assert_eq!(back.vectors, whole.vectors);
    assert!(!whole.col.is_empty());
}

#[test]
fn the_cube_holds_every_image_inside_it_and_partners_are_a_rows_columns() {
    let matrix = [[4.0, 0.0, 0.0], [1.7, 3.5, 0.0], [-0.9, 0.6, 5.0]];
    let lll = lll_reduce_matrix(&matrix, LLL_DELTA).unwrap();
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut next = || rng.unit();
    let cols: Vec<Vec3> = (0..40).map(|_| [next(), next(), next()]).collect();
    let rows: Vec<Vec3> = (0..25)
        .map(|_| [2.0 * next() - 0.5, next(), next() + 1.0])
        .collect();
    let columns = Columns::new(&lll, &cols, Some([0.2, 0.3, 0.25]));
    let forbidden = |i: usize, j: usize| (i + j).is_multiple_of(4);
    // Every image, by brute force over the original basis.
    let brute = |f: &Vec3, i: usize, half: f64| {
        let mut out = Vec::new();
        for (j, c) in cols.iter().enumerate() {
            if forbidden(i, j) {
                continue;
            }
            for n in 0..343 {
                let m = [
                    (n / 49) as f64 - 3.0,
                    ((n / 7) % 7) as f64 - 3.0,
                    (n % 7) as f64 - 3.0,
                ];
                let d: Vec3 = std::array::from_fn(|a| c[a] - f[a] + m[a]);
                let v = vec_mat(d, &matrix);
                if v.iter().all(|x| x.abs() <= half) {
                    out.push(v);
                }
            }
        }
        out
    };
    let table = columns.table(&rows, &forbidden);
    let (mut near, mut found, mut partners) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen = 0;
    for (i, f) in rows.iter().enumerate() {
        for half in [0.3, 0.9, 1.6] {
            found.clear();
            if !columns.in_cube(*f, half, (&forbidden, i), &mut near, &mut found) {
                assert!(half > 0.5, "a small cube is always searched");
                assert!(found.is_empty());
                continue;
            }
            let want = brute(f, i, half);
            seen += want.len();
            assert_eq!(found.len(), want.len(), "row {i}, half {half}");
            for w in &want {
                assert!(
                    found
                        .iter()
                        .any(|v| (0..3).all(|a| (v[a] - w[a]).abs() < 1e-9)),
                    "row {i}, half {half}: {w:?} missing from {found:?}"
                );
            }
        }
        columns.partners(*f, (&forbidden, i), &mut near, &mut partners);
        let mut got = partners.clone();
        got.sort_unstable();
        let mut want = table.col[table.range(i)].to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "row {i}");
    }
    assert!(seen > 20, "too few vectors in the cubes: {seen}");
}

#[test]
fn the_indexed_subset_test_agrees_with_the_plain_one() {
    let mut rng = XorShift::new(0x2545_f491_4f6c_dd1d);
    let mut rnd = || rng.unit() * 3.0 - 1.0;
    let (mut yes, mut no) = (0, 0);
    for round in 0..400 {
        let sup: Vec<Vec3> = (0..12).map(|_| [rnd(), rnd(), rnd()]).collect();
        // Subsets near superset points (some beyond the tolerance), shifted by integers.
        let sub: Vec<Vec3> = (0..6)
            .map(|k| {
                let q = sup[(k * 5 + round) % 12];
                [
                    q[0] + 0.01 * rnd() + 1.0,
                    q[1] + 0.015 * rnd() - 2.0,
                    q[2] + 0.01 * rnd(),
                ]
            })
            .collect();
        let atol = [0.05, 0.03, 0.04];
        let forbidden = |i: usize, j: usize| (3 * i + j + round).is_multiple_of(23);
        let plain = is_coord_subset_pbc(&sub, &sup, atol, forbidden);
        let index = SupersetIndex::new(&sup, atol);
        assert_eq!(index.contains(&sup, &sub, forbidden), plain);
        if plain {
            yes += 1;
        } else {
            no += 1;
        }
    }
    assert!(yes > 20 && no > 20, "{yes} / {no}");
}

#[test]
fn pruned_image_search_equals_the_full_scan() {
    let mut rng = XorShift::new(0x9e37_79b9_7f4a_7c15);
    let mut rnd = || rng.unit();
    let mut pairs = 0;
    let mut ties = 0;
    for _ in 0..200 {
        // Skewed cells, some with exact ties (half-cell separations below).
        let m = [
            [3.0 + 4.0 * rnd(), 0.0, 0.0],
            [4.0 * rnd() - 2.0, 3.0 + 4.0 * rnd(), 0.0],
            [4.0 * rnd() - 2.0, 4.0 * rnd() - 2.0, 3.0 + 4.0 * rnd()],
        ];
        let lll = lll_reduce_matrix(&m, LLL_DELTA).unwrap();
        let cols: Vec<Vec3> = (0..8)
            .map(|k| {
                if k < 2 {
                    [0.5 * k as f64, 0.5, 0.0]
                } else {
                    [3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0]
                }
            })
            .collect();
        let columns = Columns::new(&lll, &cols, None);
        let noting = Columns::new(&lll, &cols, None).noting_image_ties(1e-5);
        // Rows on the tie points, near a column (short vectors, which skip the other
        // images at once) and anywhere.
        let rows: Vec<Vec3> = (0..8)
            .map(|k| match k {
                0 | 1 => [0.0; 3],
                2..=4 => cols[k].map(|c| c + 0.1 * rnd() - 0.05),
                _ => [3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0, 3.0 * rnd() - 1.0],
            })
            .collect();
        for f in &rows {
            let l1 = columns.inv.apply(*f);
            let w1 = wrap(&l1);
            let c1 = cart_of_wrapped(&w1, &columns.lat);
            let (w2, c2) = columns.wrapped();
            for j in 0..cols.len() {
                let pre: Vec3 = std::array::from_fn(|a| c2[j][a] - c1[a]);
                let pre_frac: Vec3 = std::array::from_fn(|a| w2[j][a] - w1[a]);
                let (d, k, tied) = columns.nearest_image(&pre, &pre_frac);
                let (d0, k0) = nearest_image_scan(&columns.images, &pre);
                assert_eq!((d.to_bits(), k), (d0.to_bits(), k0), "{m:?} {f:?} {j}");
                assert!(!tied);
                // Noting ties: the same image, and a tie exactly when another of the
                // 27 is within 1e-5 Å² of the shortest.
                let (dn, kn, tied) = noting.nearest_image(&pre, &pre_frac);
                assert_eq!((dn.to_bits(), kn), (d0.to_bits(), k0));
                let close = columns
                    .images
                    .iter()
                    .map(|im| (0..3).map(|a| (pre[a] + im[a]).powi(2)).sum::<f64>())
                    .filter(|&x| x <= d0 + 1e-5)
                    .count();
                assert_eq!(tied, close > 1, "{m:?} {f:?} {j}");
                ties += usize::from(tied);
                pairs += 1;
            }
        }
    }
    assert_eq!(pairs, 200 * 64);
    assert!(ties > 100, "{ties} ties");
}

#[test]
fn subset_test_is_periodic() {
    let a = [[0.99, 0.5, 0.5]];
    let b = [[0.01, 0.5, 0.5]];
    assert!(is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| false));
    assert!(!is_coord_subset_pbc(&a, &b, [0.01; 3], |_, _| false));
    assert!(!is_coord_subset_pbc(&a, &b, [0.03; 3], |_, _| true));
}

/// Rows and columns in classes that pair only when equal, told as classes.
struct SameClass<'a> {
    rows: &'a [u32],
    cols: &'a [u32],
}

impl PairRule for SameClass<'_> {
    fn forbidden(&self, i: usize, j: usize) -> bool {
        self.rows[i] != self.cols[j]
    }

    fn class_of_row(&self, i: usize) -> Option<u32> {
        Some(self.rows[i])
    }
}

#[test]
fn class_windows_give_the_tables_of_the_pairwise_rule() {
    let matrix = [[4.0, 0.0, 0.0], [1.7, 3.5, 0.0], [-0.9, 0.6, 5.0]];
    let lll = lll_reduce_matrix(&matrix, LLL_DELTA).unwrap();
    let mut rng = XorShift::new(0x0123_4567_89ab_cdef);
    let mut next = || rng.unit();
    let cols: Vec<Vec3> = (0..60).map(|_| [next(), next(), next()]).collect();
    let rows: Vec<Vec3> = (0..60).map(|_| [next(), next() - 1.0, next()]).collect();
    // Three classes, one of which (2) no row has, and a row class (3) no column has.
    let col_class: Vec<u32> = (0..60).map(|j| (j % 7 % 3) as u32).collect();
    let row_class: Vec<u32> = (0..60).map(|i| [0, 1, 0, 3][i % 4]).collect();
    let rule = SameClass {
        rows: &row_class,
        cols: &col_class,
    };
    let pairwise = |i: usize, j: usize| rule.forbidden(i, j);
    for tol in [Some([0.3, 0.2, 0.45]), Some([0.6, 0.6, 0.6]), None] {
        let plain = Columns::new(&lll, &cols, tol);
        let classed = Columns::new(&lll, &cols, tol).with_classes(&col_class);
        let (a, b) = (plain.table(&rows, &pairwise), classed.table(&rows, &rule));
        assert!(!a.col.is_empty());
        assert_eq!(a.start, b.start, "tol {tol:?}");
        for (i, row) in rows.iter().enumerate() {
            let sorted = |t: &Table| {
                let mut e: Vec<(usize, u64, [u64; 3])> = t
                    .range(i)
                    .map(|k| (t.col[k], t.d2[k].to_bits(), t.vectors[k].map(f64::to_bits)))
                    .collect();
                e.sort_unstable();
                e
            };
            assert_eq!(sorted(&a), sorted(&b), "tol {tol:?}, row {i}");
            let (mut near, mut p, mut q) = (Vec::new(), Vec::new(), Vec::new());
            plain.partners(*row, (&pairwise, i), &mut near, &mut p);
            classed.partners(*row, (&rule, i), &mut near, &mut q);
            p.sort_unstable();
            q.sort_unstable();
            assert_eq!(p, q, "tol {tol:?}, row {i}");
            let (mut u, mut v) = (Vec::new(), Vec::new());
            assert!(plain.in_cube(*row, 0.4, (&pairwise, i), &mut near, &mut u));
            assert!(classed.in_cube(*row, 0.4, (&rule, i), &mut near, &mut v));
            let bits = |w: &[Vec3]| {
                let mut b: Vec<[u64; 3]> = w.iter().map(|x| x.map(f64::to_bits)).collect();
                b.sort_unstable();
                b
            };
            assert_eq!(bits(&u), bits(&v), "tol {tol:?}, row {i}");
        }
    }
}

/// What a table says [`Columns::own_nearest`] should give: each row's nearest entry when
/// `unique_nearest` solves the table, no other entry of a row is within `delta` of its
/// nearest, and (with image ties noted) no solution entry is an image tie.
fn own_nearest_from_table(table: &Table, delta: f64) -> Option<Vec<NearestEntry>> {
    let costs = crate::matcher::assignment::SparseCosts {
        rows: table.rows,
        cols: table.cols,
        start: &table.start,
        col: &table.col,
        cost: &table.d2,
        forbidden: FORBIDDEN,
    };
    let sol = crate::matcher::assignment::unique_nearest(costs)?;
    let mut out = Vec::new();
    for (i, &j) in sol.iter().enumerate() {
        let own = table.range(i).find(|&k| table.col[k] == j)?;
        let others_near = table
            .range(i)
            .any(|k| k != own && table.d2[k] - table.d2[own] <= delta);
        if others_near || table.tied.get(own) == Some(&true) {
            return None;
        }
        out.push(NearestEntry {
            col: j,
            d2: table.d2[own],
            vector: table.vectors[own],
        });
    }
    Some(out)
}

#[test]
fn the_rows_own_nearest_entries_are_what_their_table_gives() {
    let matrix = [[6.0, 0.0, 0.0], [1.7, 5.5, 0.0], [-0.9, 0.6, 7.0]];
    let lll = lll_reduce_matrix(&matrix, LLL_DELTA).unwrap();
    let mut rng = XorShift::new(0x005e_ed0f_0be5);
    let mut next = || rng.unit();
    let cols: Vec<Vec3> = (0..48).map(|_| [next(), next(), next()]).collect();
    let col_class: Vec<u32> = (0..48).map(|j| (j % 3) as u32).collect();
    let (mut settled, mut unsettled) = (0, 0);
    for case in 0..1200 {
        // Rows near the columns (a candidate near a match), or anywhere; some a column's
        // exact copy, so equal lengths and image ties occur too.
        let spread = [0.0, 1e-3, 0.02, 0.08, 0.5][case % 5];
        let mut order: Vec<usize> = (0..48).collect();
        for k in (1..48).rev() {
            order.swap(k, (next() * (k + 1) as f64) as usize % (k + 1));
        }
        let rows: Vec<Vec3> = order
            .iter()
            .map(|&j| std::array::from_fn(|a| cols[j][a] + spread * (next() - 0.5) + 1.0))
            .collect();
        let row_class: Vec<u32> = order.iter().map(|&j| col_class[j]).collect();
        let rule = SameClass {
            rows: &row_class,
            cols: &col_class,
        };
        let tol = [None, Some([0.2, 0.25, 0.3]), Some([0.05, 0.4, 0.1])][case % 3];
        let delta = [0.0, 1e-5, 0.05][case % 4 % 3];
        // Balls from well inside the rows' distances to wider than the tolerance.
        let radius = [0.03, 0.08, 0.15, 0.3, 1.0, 4.0][case / 5 % 6];
        let mut columns = Columns::new(&lll, &cols, tol);
        if case % 2 == 0 {
            columns = columns.with_classes(&col_class);
        }
        if case % 7 == 0 {
            columns = columns.noting_image_ties(1e-5);
        }
        let table = columns.table(&rows, &rule);
        let expected = own_nearest_from_table(&table, delta);
        let mut work = NearestWork::default();
        let order: Vec<usize> = (0..48).rev().collect();
        let got = columns.own_nearest(&rows, &order, &rule, (radius, delta), &mut work);
        let label = format!("case {case}: spread {spread}, tol {tol:?}, delta {delta}");
        match expected {
            Some(e) => {
                assert!(got, "{label}: the table settles every row");
                let bits = |v: &[NearestEntry]| {
                    v.iter()
                        .map(|e| (e.col, e.d2.to_bits(), e.vector.map(f64::to_bits)))
                        .collect::<Vec<_>>()
                };
                assert_eq!(bits(&work.entries), bits(&e), "{label}");
                settled += 1;
            }
            None => {
                assert!(!got, "{label}: the table leaves some row unsettled");
                unsettled += 1;
            }
        }
    }
    assert!(
        settled > 40 && unsettled > 40,
        "{settled} settled, {unsettled} not"
    );
}

#[test]
fn a_nearest_entry_beyond_the_ball_is_found_past_a_farther_one_in_its_box() {
    // A cubic cell of 10 Å: the ball's box of radius 0.5 Å is the cube of half-width
    // 0.05 (fractional). Column 0 lies just outside that cube, 0.55 Å away; column 1 in a
    // corner of it, 0.78 Å away: the nearest is the one the box does not hold.
    let lll = lll_reduce_matrix(
        &[[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]],
        LLL_DELTA,
    )
    .unwrap();
    let row = [0.5, 0.5, 0.5];
    let cols = [[0.555, 0.5, 0.5], [0.545, 0.545, 0.545]];
    let columns = Columns::new(&lll, &cols, None);
    let anything = |_: usize, _: usize| false;
    let mut work = NearestWork::default();
    assert!(columns.own_nearest(&[row], &[0], &anything, (0.5, 0.0), &mut work));
    assert_eq!(work.entries[0].col, 0);
    assert!((work.entries[0].d2 - 0.55f64.powi(2)).abs() < 1e-9);
    // Within the ball, the box's answer stands.
    assert!(columns.own_nearest(&[row], &[0], &anything, (1.0, 0.0), &mut work));
    assert_eq!(work.entries[0].col, 0);
}
