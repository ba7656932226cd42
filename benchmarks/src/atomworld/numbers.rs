//! Printing numbers the way the reference's Python printed them into prompts.
//!
//! Hand-written because prompts must be byte-identical to the reference data, which printed
//! vectors with numpy's `str(ndarray)` and scalars with Python's `str(float)`; no crate
//! reproduces those layouts. Scalars are [`engine::python::py_repr`]; only numpy's layout rules are here.

/// numpy's default print precision (`np.get_printoptions()["precision"]`).
const NUMPY_PRECISION: usize = 8;

/// Positional text of `x` with at most `precision` fractional digits: the shortest
/// round-trip digits when they fit, else rounded; trailing zeros trimmed, the point kept
/// (numpy's `dragon4_positional(unique=True, trim='.')`).
fn positional(x: f64, precision: usize) -> (String, String) {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let shortest = format!("{}", x.abs());
    let text = match shortest.split_once('.') {
        Some((_, frac)) if frac.len() > precision => format!("{:.*}", precision, x.abs()),
        _ => shortest,
    };
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = frac.trim_end_matches('0');
    (format!("{sign}{int}"), frac.to_string())
}

/// Scientific parts of `x`: sign+leading digit, fractional digits (≤ `precision`, trimmed)
/// and the exponent.
fn scientific(x: f64, precision: usize) -> (String, String, i32) {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let shortest = format!("{:e}", x.abs());
    let text = match shortest.split_once('e') {
        Some((m, _)) if m.split_once('.').is_some_and(|(_, f)| f.len() > precision) => {
            format!("{:.*e}", precision, x.abs())
        }
        _ => shortest,
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    (
        format!("{sign}{int}"),
        frac.trim_end_matches('0').to_string(),
        exp.parse().unwrap_or(0),
    )
}

/// numpy's `str(np.array(values))` for a 1-D float64 array with default print options,
/// e.g. `[ 2.27250436  2.31188179 -1.37854195]` or `[0. 1. 0.]`.
pub fn numpy_vector(values: &[f64]) -> String {
    let finite_nonzero: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v != 0.0)
        .map(|v| v.abs())
        .collect();
    let exp_format = if finite_nonzero.is_empty() {
        false
    } else {
        let max = finite_nonzero.iter().cloned().fold(f64::MIN, f64::max);
        let min = finite_nonzero.iter().cloned().fold(f64::MAX, f64::min);
        max >= 1e8 || min < 1e-4 || max / min > 1000.0
    };
    let items: Vec<String> = if exp_format {
        let parts: Vec<(String, String, i32)> = values
            .iter()
            .map(|&v| scientific(v, NUMPY_PRECISION))
            .collect();
        let precision = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
        let pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(1);
        let exp_digits = parts
            .iter()
            .map(|p| p.2.unsigned_abs().to_string().len().max(2))
            .max()
            .unwrap_or(2);
        values
            .iter()
            .map(|&v| {
                // Re-round to the common precision, then pad.
                let text = format!("{:.*e}", precision, v.abs());
                let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
                let exp: i32 = exp.parse().unwrap_or(0);
                let sign = if v.is_sign_negative() { "-" } else { "" };
                let esign = if exp < 0 { '-' } else { '+' };
                let m = format!("{sign}{mantissa}");
                let m = if precision == 0 { format!("{m}.") } else { m };
                let int_len = m.split('.').next().map_or(0, str::len);
                format!(
                    "{}{}e{}{:0width$}",
                    " ".repeat(pad_left.saturating_sub(int_len)),
                    m,
                    esign,
                    exp.unsigned_abs(),
                    width = exp_digits
                )
            })
            .collect()
    } else {
        let parts: Vec<(String, String)> = values
            .iter()
            .map(|&v| positional(v, NUMPY_PRECISION))
            .collect();
        let pad_left = parts.iter().map(|p| p.0.len()).max().unwrap_or(1);
        let pad_right = parts.iter().map(|p| p.1.len()).max().unwrap_or(0);
        parts
            .iter()
            .map(|(int, frac)| format!("{:>pl$}.{:<pr$}", int, frac, pl = pad_left, pr = pad_right))
            .collect()
    };
    format!("[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_layouts_from_the_reference_data() {
        assert_eq!(
            numpy_vector(&[2.27250436, 2.31188179, -1.37854195]),
            "[ 2.27250436  2.31188179 -1.37854195]"
        );
        assert_eq!(
            numpy_vector(&[-0.58093353, 3.52656, 2.08095567]),
            "[-0.58093353  3.52656     2.08095567]"
        );
        assert_eq!(
            numpy_vector(&[3.43842301, 3.21584385, 1.7706856]),
            "[3.43842301 3.21584385 1.7706856 ]"
        );
        assert_eq!(numpy_vector(&[0.0, 1.0, 0.0]), "[0. 1. 0.]");
        assert_eq!(numpy_vector(&[0.0, -1.0, 0.0]), "[ 0. -1.  0.]");
        assert_eq!(
            numpy_vector(&[2.0, 0.0015, 1.0]),
            "[2.0e+00 1.5e-03 1.0e+00]"
        );
    }
}
