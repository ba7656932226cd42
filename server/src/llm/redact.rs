//! Keeping API keys out of everything the server shows: error messages (stream events, HTTP
//! answers, stored results), log lines and answer text.
//!
//! Every configured key is removed wherever it appears, not only where a provider echoes a
//! header, and always *before* a message is shortened, so a key that straddles the cut
//! cannot leak in part.

use super::LlmError;
use crate::config::Config;

/// What replaces a key.
pub const REDACTED: &str = "[redacted]";

/// Longest provider error message kept (characters, after redaction).
pub const MAX_ERROR_CHARS: usize = 300;

/// Values shorter than this are not treated as keys (they would blank ordinary words).
const MIN_KEY_LEN: usize = 8;

/// The values of every API key the configuration can use, read from the environment.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    /// Longest first, so a key containing another is removed whole.
    keys: Vec<String>,
}

impl Secrets {
    /// The keys named by `config` (each chat and embeddings model's key variable and each
    /// provider's default), as set in the environment now.
    pub fn of(config: &Config) -> Self {
        let mut names: Vec<String> = Vec::new();
        for m in &config.models {
            names.extend(m.api_key_env.clone());
            names.extend(m.provider.default_key_env().map(str::to_string));
        }
        for e in &config.embeddings {
            names.extend(e.api_key_env.clone());
            names.extend(e.provider.default_key_env().map(str::to_string));
        }
        Self::from_values(names.iter().filter_map(|n| std::env::var(n).ok()))
    }

    /// Secrets with these values (values shorter than 8 characters are ignored).
    pub fn from_values(values: impl IntoIterator<Item = String>) -> Self {
        let mut keys: Vec<String> = values
            .into_iter()
            .map(|k| k.trim().to_string())
            .filter(|k| k.len() >= MIN_KEY_LEN)
            .collect();
        keys.sort_by_key(|k| std::cmp::Reverse(k.len()));
        keys.dedup();
        Self { keys }
    }

    /// `text` with every key replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for k in &self.keys {
            if out.contains(k.as_str()) {
                out = out.replace(k.as_str(), REDACTED);
            }
        }
        out
    }

    /// The error with every key removed from its message, then the message shortened to
    /// [`MAX_ERROR_CHARS`].
    pub fn scrub(&self, e: LlmError) -> LlmError {
        let clean = |m: String| shorten(&self.redact(&m));
        match e {
            LlmError::Http { status, message } => LlmError::Http {
                status,
                message: clean(message),
            },
            LlmError::Network(m) => LlmError::Network(clean(m)),
            LlmError::Malformed(m) => LlmError::Malformed(clean(m)),
            LlmError::Stream(m) => LlmError::Stream(clean(m)),
            LlmError::SpendCap(m) => LlmError::SpendCap(clean(m)),
            other => other,
        }
    }

    /// The longest key, in bytes (0 without keys).
    fn longest(&self) -> usize {
        self.keys.first().map_or(0, String::len)
    }
}

/// `text` cut to [`MAX_ERROR_CHARS`] characters (an ellipsis marks a cut).
fn shorten(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Redacts a text that arrives in pieces (a streamed answer): it holds back only a tail that
/// could be the start of a key, so a key split across pieces is still found whole before any
/// of it is passed on, while ordinary text flows on at once.
#[derive(Debug)]
pub struct StreamRedactor {
    secrets: Secrets,
    pending: String,
}

impl StreamRedactor {
    /// A redactor for `secrets`.
    pub fn new(secrets: Secrets) -> Self {
        Self {
            secrets,
            pending: String::new(),
        }
    }

    /// Take the next piece; returns the text that is now safe to pass on (maybe empty).
    pub fn push(&mut self, piece: &str) -> String {
        self.pending.push_str(piece);
        if self.secrets.keys.is_empty() {
            return std::mem::take(&mut self.pending);
        }
        // Every key wholly inside is replaced; one that runs past the end starts at a suffix
        // that is a prefix of it, no further back than the longest key.
        self.pending = self.secrets.redact(&self.pending);
        let len = self.pending.len();
        let from = len.saturating_sub(self.secrets.longest().saturating_sub(1));
        let cut = (from..len)
            .filter(|&i| self.pending.is_char_boundary(i))
            .find(|&i| {
                let tail = &self.pending.as_bytes()[i..];
                self.secrets
                    .keys
                    .iter()
                    .any(|k| k.as_bytes().starts_with(tail))
            })
            .unwrap_or(len);
        let rest = self.pending.split_off(cut);
        std::mem::replace(&mut self.pending, rest)
    }

    /// The text held back, redacted (call once the stream has ended).
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.secrets.redact(&rest)
    }

    /// Forget what is held (the stream restarts from the beginning).
    pub fn reset(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-0123456789abcdef";

    #[test]
    fn redaction_comes_before_the_cut() {
        let s = Secrets::from_values([KEY.to_string(), "short".to_string()]);
        // The key straddles character 300.
        let body = format!("{}{KEY} and more", "x".repeat(290));
        let e = s.scrub(LlmError::Http {
            status: 401,
            message: body,
        });
        let LlmError::Http { message, .. } = e else {
            panic!("kind changed")
        };
        assert!(!message.contains("sk-test"), "{message}");
        assert!(!message.contains("0123456789abcde"), "{message}");
        assert!(message.contains(REDACTED));
        // Short values are not secrets worth blanking ordinary words for.
        assert_eq!(s.redact("a short word"), "a short word");
    }

    #[test]
    fn a_key_split_across_stream_pieces_is_caught() {
        let s = Secrets::from_values([KEY.to_string()]);
        let text = format!("before {KEY} after é {KEY}");
        // Every way of cutting the text into three pieces.
        let n = text.len();
        for a in (0..=n).filter(|&i| text.is_char_boundary(i)) {
            for b in (a..=n).filter(|&i| text.is_char_boundary(i)).step_by(3) {
                let mut r = StreamRedactor::new(s.clone());
                let mut out = String::new();
                for piece in [&text[..a], &text[a..b], &text[b..]] {
                    let part = r.push(piece);
                    assert!(!part.contains("0123456789"), "{part}");
                    out.push_str(&part);
                }
                out.push_str(&r.finish());
                assert_eq!(out, format!("before {REDACTED} after é {REDACTED}"));
            }
        }
    }

    #[test]
    fn ordinary_text_is_not_held_back() {
        let mut r = StreamRedactor::new(Secrets::default());
        assert_eq!(r.push("abc"), "abc");
        assert_eq!(r.finish(), "");
        let mut r = StreamRedactor::new(Secrets::from_values([KEY.to_string()]));
        assert_eq!(r.push("<cif>"), "<cif>");
        // Only what could begin the key waits for the next piece.
        assert_eq!(r.push("data sk-te"), "data ");
        assert_eq!(r.push("a"), "sk-tea");
        assert_eq!(r.finish(), "");
    }
}
