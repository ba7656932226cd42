//! JSON as the reference reads a prediction: Python's `json.loads`, then `str()` of each
//! leaf. Differences from strict JSON that decide slots:
//! - `NaN`, `Infinity` and `-Infinity` are accepted;
//! - integers stay exact (Python ints), up to Python's 4,300-digit `int()` limit (beyond it
//!   the text is not JSON for the reference);
//! - other numbers pass through a binary float and its shortest repr: `1e400` becomes
//!   "inf", `2.5250000000000000001` becomes "2.525", `1E5` becomes "100000.0", `1e-5`
//!   becomes "1e-05";
//! - `true`/`false`/`null` become "True"/"False"/"None"; an object becomes its Python repr
//!   (it never matches a gold);
//! - a lone UTF-16 surrogate escape (`\ud800`), which Python keeps, becomes U+FFFD here;
//! - nesting deeper than [`MAX_DEPTH`] fails, as Python's recursion limit does.

use engine::python::py_str_repr;

/// Nesting beyond this fails (Python's recursion limit is about 1,000 frames).
pub const MAX_DEPTH: usize = 900;

/// A JSON value as Python holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    /// `None`.
    Null,
    /// `True`/`False`.
    Bool(bool),
    /// An int, exactly, as its decimal text (sign included, no leading zeros).
    Int(String),
    /// A float.
    Float(f64),
    /// A str.
    Str(String),
    /// A list.
    List(Vec<PyValue>),
    /// A dict (key order kept).
    Object(Vec<(String, PyValue)>),
}

impl PyValue {
    /// Python's truth value (`0`, `0.0`, `""`, `[]`, `{}`, `None`, `False` are false).
    pub fn truthy(&self) -> bool {
        match self {
            PyValue::Null => false,
            PyValue::Bool(b) => *b,
            PyValue::Int(s) => s.trim_start_matches('-') != "0",
            PyValue::Float(f) => *f != 0.0,
            PyValue::Str(s) => !s.is_empty(),
            PyValue::List(v) => !v.is_empty(),
            PyValue::Object(v) => !v.is_empty(),
        }
    }

    /// Python's `str(value)`.
    pub fn py_str(&self) -> String {
        match self {
            PyValue::Str(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// Python's `repr(value)`.
    pub fn py_repr(&self) -> String {
        match self {
            PyValue::Null => "None".into(),
            PyValue::Bool(true) => "True".into(),
            PyValue::Bool(false) => "False".into(),
            PyValue::Int(s) => s.clone(),
            PyValue::Float(f) => engine::python::py_repr(*f),
            PyValue::Str(s) => py_str_repr(s),
            PyValue::List(v) => {
                let items: Vec<String> = v.iter().map(PyValue::py_repr).collect();
                format!("[{}]", items.join(", "))
            }
            PyValue::Object(v) => {
                let items: Vec<String> = v
                    .iter()
                    .map(|(k, x)| format!("{}: {}", py_str_repr(k), x.py_repr()))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }
}

/// Python's `json.loads(text)`; `None` where it raises.
pub fn loads(text: &str) -> Option<PyValue> {
    if text.starts_with('\u{feff}') {
        return None;
    }
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        at: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    (p.at == p.s.len()).then_some(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn lit(&mut self, word: &str) -> bool {
        if self.s[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Option<PyValue> {
        if depth > MAX_DEPTH {
            return None;
        }
        match *self.s.get(self.at)? {
            b'{' => self.object(depth),
            b'[' => self.list(depth),
            b'"' => self.string().map(PyValue::Str),
            b'n' if self.lit("null") => Some(PyValue::Null),
            b't' if self.lit("true") => Some(PyValue::Bool(true)),
            b'f' if self.lit("false") => Some(PyValue::Bool(false)),
            b'N' if self.lit("NaN") => Some(PyValue::Float(f64::NAN)),
            b'I' if self.lit("Infinity") => Some(PyValue::Float(f64::INFINITY)),
            b'-' if self.lit("-Infinity") => Some(PyValue::Float(f64::NEG_INFINITY)),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn list(&mut self, depth: usize) -> Option<PyValue> {
        self.at += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(PyValue::List(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.s.get(self.at)? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(PyValue::List(items));
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<PyValue> {
        self.at += 1;
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Some(PyValue::Object(items));
        }
        loop {
            self.ws();
            if self.s.get(self.at) != Some(&b'"') {
                return None;
            }
            let k = self.string()?;
            self.ws();
            if self.s.get(self.at) != Some(&b':') {
                return None;
            }
            self.at += 1;
            self.ws();
            let v = self.value(depth + 1)?;
            items.push((k, v));
            self.ws();
            match self.s.get(self.at)? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(PyValue::Object(items));
                }
                _ => return None,
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.text.get(self.at..self.at + 4)?;
        if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(h, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(&b) = self.s.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            out.push_str(self.text.get(start..self.at)?);
            match *self.s.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(out);
                }
                b'\\' => {
                    self.at += 1;
                    let e = *self.s.get(self.at)?;
                    self.at += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&u)
                                && self.s[self.at..].starts_with(b"\\u")
                            {
                                let save = self.at;
                                self.at += 2;
                                match self.hex4() {
                                    Some(l) if (0xDC00..0xE000).contains(&l) => char::from_u32(
                                        0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00),
                                    ),
                                    _ => {
                                        self.at = save;
                                        None
                                    }
                                }
                            } else {
                                char::from_u32(u)
                            };
                            out.push(c.unwrap_or('\u{fffd}'));
                        }
                        _ => return None,
                    }
                }
                _ => return None, // a raw control character (strict mode)
            }
        }
    }

    fn number(&mut self) -> Option<PyValue> {
        let start = self.at;
        if self.s.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.s.get(self.at)? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                while matches!(self.s.get(self.at), Some(b'0'..=b'9')) {
                    self.at += 1;
                }
            }
            _ => return None,
        }
        let int_end = self.at;
        let mut is_float = false;
        if self.s.get(self.at) == Some(&b'.')
            && matches!(self.s.get(self.at + 1), Some(b'0'..=b'9'))
        {
            is_float = true;
            self.at += 1;
            while matches!(self.s.get(self.at), Some(b'0'..=b'9')) {
                self.at += 1;
            }
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            let save = self.at;
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if matches!(self.s.get(self.at), Some(b'0'..=b'9')) {
                is_float = true;
                while matches!(self.s.get(self.at), Some(b'0'..=b'9')) {
                    self.at += 1;
                }
            } else {
                self.at = save;
            }
        }
        let text = self.text.get(start..self.at)?;
        if is_float {
            text.parse::<f64>().ok().map(PyValue::Float)
        } else {
            let digits = self.text.get(start..int_end)?;
            let (neg, body) = match digits.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, digits),
            };
            if body.len() > 4300 {
                return None;
            }
            let sign = if neg && body != "0" { "-" } else { "" };
            Some(PyValue::Int(format!("{sign}{body}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(t: &str) -> Option<String> {
        loads(t).map(|v| v.py_str())
    }

    #[test]
    fn numbers_as_python_prints_them() {
        assert_eq!(strs("1e400").as_deref(), Some("inf"));
        assert_eq!(strs("2.5250000000000000001").as_deref(), Some("2.525"));
        assert_eq!(strs("1E5").as_deref(), Some("100000.0"));
        assert_eq!(strs("1e-5").as_deref(), Some("1e-05"));
        assert_eq!(strs("1e16").as_deref(), Some("1e+16"));
        assert_eq!(strs("1.5e16").as_deref(), Some("1.5e+16"));
        assert_eq!(strs("123456789.125").as_deref(), Some("123456789.125"));
        assert_eq!(strs("0.0001").as_deref(), Some("0.0001"));
        assert_eq!(strs("-0").as_deref(), Some("0"));
        assert_eq!(strs("-0.0").as_deref(), Some("-0.0"));
        assert_eq!(
            strs("123456789012345678901234567890").as_deref(),
            Some("123456789012345678901234567890")
        );
        assert_eq!(strs("NaN").as_deref(), Some("nan"));
        assert_eq!(strs("-Infinity").as_deref(), Some("-inf"));
        assert_eq!(strs("true").as_deref(), Some("True"));
        assert_eq!(strs("null").as_deref(), Some("None"));
    }

    #[test]
    fn strictness() {
        assert!(loads("01").is_none());
        assert!(loads("[1,]").is_none());
        assert!(loads("\"a\nb\"").is_none());
        assert!(loads(".5").is_none());
        assert!(loads("+1").is_none());
        assert!(loads(" [1] ").is_some());
        assert!(loads("\u{feff}[1]").is_none());
        assert_eq!(strs("\"\\ud83d\\ude00\"").as_deref(), Some("\u{1f600}"));
        assert_eq!(strs("\"\\ud800x\"").as_deref(), Some("\u{fffd}x"));
        assert_eq!(
            strs("{\"a\": [1, 2.5]}").as_deref(),
            Some("{'a': [1, 2.5]}")
        );
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert!(loads(&deep).is_none());
    }
}
