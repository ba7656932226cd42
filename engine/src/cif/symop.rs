//! Symmetry operations written as CIF xyz triplets (`-x+1/2, y, z+0.25`).

use super::lexer::Pos;
use super::CifError;

/// An affine symmetry operation on fractional coordinates: `x' = R·x + t`.
#[derive(Clone, Debug, PartialEq)]
pub struct SymOp {
    /// Rotation part, row i gives output coordinate i.
    pub rotation: [[f64; 3]; 3],
    /// Translation part.
    pub translation: [f64; 3],
}

impl SymOp {
    /// The identity operation.
    pub fn identity() -> Self {
        Self {
            rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
            translation: [0.0; 3],
        }
    }

    /// True for the identity.
    pub fn is_identity(&self) -> bool {
        *self == Self::identity()
    }

    /// Apply to fractional coordinates.
    pub fn apply(&self, f: [f64; 3]) -> [f64; 3] {
        let r = &self.rotation;
        std::array::from_fn(|i| {
            r[i][0] * f[0] + r[i][1] * f[1] + r[i][2] * f[2] + self.translation[i]
        })
    }

    /// Parse an xyz triplet such as `x, y+1/2, -z` (case-insensitive; `+`, `-`, fractions,
    /// decimals and coefficients like `2x` or `0.5*y` accepted).
    pub fn parse(text: &str, pos: Pos) -> Result<Self, CifError> {
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() != 3 {
            return Err(CifError::at(
                pos,
                format!("symmetry operation '{text}' does not have three comma-separated parts"),
            ));
        }
        let mut op = SymOp {
            rotation: [[0.0; 3]; 3],
            translation: [0.0; 3],
        };
        for (row, part) in parts.iter().enumerate() {
            parse_component(part, &mut op.rotation[row], &mut op.translation[row])
                .map_err(|why| CifError::at(pos, format!("symmetry operation '{text}': {why}")))?;
        }
        Ok(op)
    }
}

/// Parse one linear expression like `-x+y+1/3` into coefficients and a constant.
fn parse_component(s: &str, coeffs: &mut [f64; 3], constant: &mut f64) -> Result<(), String> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    if s.is_empty() {
        return Err("empty component".into());
    }
    let chars: Vec<char> = s.to_ascii_lowercase().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let mut sign = 1.0;
        while i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
            if chars[i] == '-' {
                sign = -sign;
            }
            i += 1;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.' || chars[i] == '/') {
            i += 1;
        }
        let number: String = chars[start..i].iter().collect();
        let value = if number.is_empty() {
            None
        } else if let Some((n, d)) = number.split_once('/') {
            let n: f64 = n.parse().map_err(|_| format!("bad number '{number}'"))?;
            let d: f64 = d.parse().map_err(|_| format!("bad number '{number}'"))?;
            if d == 0.0 {
                return Err(format!("division by zero in '{number}'"));
            }
            Some(n / d)
        } else {
            Some(
                number
                    .parse::<f64>()
                    .map_err(|_| format!("bad number '{number}'"))?,
            )
        };
        if i < chars.len() && chars[i] == '*' {
            i += 1;
        }
        match chars.get(i) {
            Some(&c @ ('x' | 'y' | 'z')) => {
                let k = (c as u8 - b'x') as usize;
                coeffs[k] += sign * value.unwrap_or(1.0);
                i += 1;
            }
            Some(&c) if c != '+' && c != '-' => return Err(format!("unexpected '{c}'")),
            _ => match value {
                Some(v) => *constant += sign * v,
                None => return Err("dangling sign".into()),
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Pos = Pos { line: 1, col: 1 };

    #[test]
    fn parses_common_forms() {
        let op = SymOp::parse("-x+y, 1/2+x, -z+0.25", P).unwrap();
        assert_eq!(
            op.rotation,
            [[-1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]
        );
        assert_eq!(op.translation, [0.0, 0.5, 0.25]);
        assert!(SymOp::parse("x,y,z", P).unwrap().is_identity());
        assert!(SymOp::parse("X, Y, Z", P).unwrap().is_identity());
    }

    #[test]
    fn rejects_malformed() {
        assert!(SymOp::parse("x, y", P).is_err());
        assert!(SymOp::parse("x, y, q", P).is_err());
        assert!(SymOp::parse("x, y, 1/0", P).is_err());
        assert!(SymOp::parse("x, y, -", P).is_err());
    }
}
