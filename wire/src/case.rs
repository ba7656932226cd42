//! A shareable case: everything needed to recompute a verdict (structure, prompt, answer),
//! versioned, serialised, compressed and base64url-encoded so it fits in a URL fragment and
//! works on a static host with no server.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

use benchmarks::atomworld::Semantics;

/// The current format version.
pub const CASE_VERSION: u32 = 1;

/// Largest decoded case accepted (bytes), so a hostile link cannot exhaust memory.
pub const MAX_CASE_BYTES: usize = 4 * 1024 * 1024;

/// Where the case's input structure comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CaseStructure {
    /// A structure of the shipped pool, by name.
    Pool {
        /// Pool entry name.
        name: String,
    },
    /// A CIF given in full.
    Cif {
        /// The CIF text.
        cif: String,
    },
}

/// One case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Format version ([`CASE_VERSION`]).
    pub v: u32,
    /// The input structure.
    pub structure: CaseStructure,
    /// The action prompt.
    pub prompt: String,
    /// Which reading of the action was shown.
    #[serde(default)]
    pub semantics: Semantics,
    /// The model's answer (may be empty).
    #[serde(default)]
    pub answer: String,
    /// The model that answered, if known.
    #[serde(default)]
    pub model: Option<String>,
    /// The seed the task was drawn with, if it was drawn (links made before it was
    /// recorded open without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// Why a link could not be opened.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CaseError {
    /// Not base64url.
    #[error("the link is damaged (not base64url)")]
    Encoding,
    /// Not a deflate stream, or too large.
    #[error("the link is damaged (cannot be decompressed, or larger than 4 MiB)")]
    Compression,
    /// Not a case.
    #[error("the link does not hold a case: {0}")]
    Format(String),
    /// Made by a newer version of the playground.
    #[error("the link was made by a newer playground (case format {0})")]
    Version(u32),
}

/// Encode a case for a URL fragment.
pub fn encode(case: &Case) -> String {
    pack(case)
}

/// Decode a URL fragment back into a case.
pub fn decode(text: &str) -> Result<Case, CaseError> {
    from_json(unpack(text)?)
}

/// JSON, deflated, base64url: the fragment form of every shareable case.
fn pack(value: &impl Serialize) -> String {
    let json = serde_json::to_vec(value).unwrap_or_default();
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    URL_SAFE_NO_PAD.encode(packed)
}

/// The JSON of a fragment made by [`pack`], at most [`MAX_CASE_BYTES`] decoded.
fn unpack(text: &str) -> Result<serde_json::Value, CaseError> {
    let packed = URL_SAFE_NO_PAD
        .decode(text.trim().as_bytes())
        .map_err(|_| CaseError::Encoding)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_CASE_BYTES)
        .map_err(|_| CaseError::Compression)?;
    serde_json::from_slice(&json).map_err(|e| CaseError::Format(e.to_string()))
}

/// A shareable case of another suite (MatTools, OmniMatBench, AlchemyBench): the task as the
/// server listed it (so the link shows its prompt and can be scored even where the server
/// holds other tasks) and the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteCase {
    /// Format version ([`CASE_VERSION`]).
    pub v: u32,
    /// The suite's name.
    pub suite: String,
    /// The task.
    pub task: crate::SuiteTask,
    /// The answer (may be empty).
    #[serde(default)]
    pub answer: String,
    /// The model that answered, if known.
    #[serde(default)]
    pub model: Option<String>,
}

/// Encode a suite case for a URL fragment.
pub fn encode_suite_case(case: &SuiteCase) -> String {
    pack(case)
}

/// Decode a URL fragment back into a suite case.
pub fn decode_suite_case(text: &str) -> Result<SuiteCase, CaseError> {
    let value = unpack(text)?;
    let v = value["v"].as_u64().unwrap_or(0) as u32;
    if v > CASE_VERSION {
        return Err(CaseError::Version(v));
    }
    serde_json::from_value(value).map_err(|e| CaseError::Format(e.to_string()))
}

/// A case from its JSON form (as a link decodes it, or as the server's case store keeps it),
/// refusing versions newer than this build understands.
pub fn from_json(value: serde_json::Value) -> Result<Case, CaseError> {
    let v = value["v"].as_u64().unwrap_or(0) as u32;
    if v > CASE_VERSION {
        return Err(CaseError::Version(v));
    }
    serde_json::from_value(value).map_err(|e| CaseError::Format(e.to_string()))
}

/// A case kept in the server's case store: the playground's or a suite's (a short link opens
/// either).
#[derive(Clone, Debug, PartialEq)]
pub enum StoredCase {
    /// An AtomWorld playground case.
    Playground(Case),
    /// A task of another suite with its answer.
    Suite(SuiteCase),
}

/// Read a stored case, telling the two kinds apart by the suite case's `suite` field.
pub fn stored_from_json(value: serde_json::Value) -> Result<StoredCase, CaseError> {
    if value.get("suite").is_none() {
        return from_json(value).map(StoredCase::Playground);
    }
    let v = value["v"].as_u64().unwrap_or(0) as u32;
    if v > CASE_VERSION {
        return Err(CaseError::Version(v));
    }
    serde_json::from_value(value)
        .map(StoredCase::Suite)
        .map_err(|e| CaseError::Format(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let case = Case {
            v: CASE_VERSION,
            structure: CaseStructure::Pool {
                name: "Halite, Rock Salt 1×2×3".into(),
            },
            prompt: "Remove the atom at index 3 from the cif file.".into(),
            semantics: Semantics::Reference,
            answer: "<cif>\ndata_x\n</cif>".into(),
            model: Some("gpt".into()),
            seed: Some(7),
        };
        let text = encode(&case);
        assert!(text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_eq!(decode(&text).unwrap(), case);
        assert_eq!(decode("%%%"), Err(CaseError::Encoding));
        assert_eq!(decode("AAAA"), Err(CaseError::Compression));
        let newer = URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(b"{\"v\":9}", 6));
        assert_eq!(decode(&newer), Err(CaseError::Version(9)));
    }

    /// A case whose JSON is exactly `len` bytes, its answer padding it out.
    fn case_of_json_len(len: usize) -> Case {
        let mut case = Case {
            v: CASE_VERSION,
            structure: CaseStructure::Pool { name: "x".into() },
            prompt: "Remove the atom at index 0 from the cif file.".into(),
            semantics: Semantics::Reference,
            answer: String::new(),
            model: None,
            seed: None,
        };
        let bare = serde_json::to_vec(&case).unwrap().len();
        case.answer = "x".repeat(len - bare);
        assert_eq!(serde_json::to_vec(&case).unwrap().len(), len);
        case
    }

    #[test]
    fn a_link_decoding_to_exactly_4_mib_opens_and_one_byte_more_is_refused() {
        let at = case_of_json_len(MAX_CASE_BYTES);
        assert_eq!(decode(&encode(&at)).unwrap(), at);
        let over = case_of_json_len(MAX_CASE_BYTES + 1);
        let e = decode(&encode(&over)).unwrap_err();
        assert_eq!(e, CaseError::Compression);
        assert!(e.to_string().contains("larger than 4 MiB"), "{e}");
    }

    #[test]
    fn suite_cases_round_trip() {
        let case = SuiteCase {
            v: CASE_VERSION,
            suite: "mattools-qa".into(),
            task: crate::SuiteTask {
                id: "q1".into(),
                group: "code".into(),
                prompt: "Which?".into(),
                messages: vec![benchmarks::task::Message::user("Which?")],
                images: Vec::new(),
                unavailable: None,
                task: serde_json::json!({"id": "q1"}),
            },
            answer: "<answer>B</answer>".into(),
            model: None,
        };
        assert_eq!(decode_suite_case(&encode_suite_case(&case)).unwrap(), case);
        assert_eq!(decode_suite_case("%%%"), Err(CaseError::Encoding));
        // An AtomWorld case is not a suite case.
        let aw = encode(&Case {
            v: CASE_VERSION,
            structure: CaseStructure::Pool { name: "x".into() },
            prompt: String::new(),
            semantics: Semantics::Reference,
            answer: String::new(),
            model: None,
            seed: None,
        });
        assert!(matches!(decode_suite_case(&aw), Err(CaseError::Format(_))));
        // The case store keeps either kind; a short link tells them apart.
        let stored = serde_json::to_value(&case).unwrap();
        assert_eq!(stored_from_json(stored).unwrap(), StoredCase::Suite(case));
        let playground = case_of_json_len(400);
        assert_eq!(
            stored_from_json(serde_json::to_value(&playground).unwrap()).unwrap(),
            StoredCase::Playground(playground)
        );
    }
}
