//! The paper's model-written documentation: one document per class, function, method and
//! property of the pinned stack, written by a model from the object's source code (the MatTools
//! reference generated its own with RepoAgent and Gemini 2.0 Flash, one document per object:
//! `src/construct_doc.ipynb`, its "method 4", in `Grenzlinie/MatTools`). The prompt here is ours.
//! The server writes the documents once (`atomworld prepare`) and the `rag-model-doc` and
//! `reflect-model-doc` agents search them.

use serde::{Deserialize, Serialize};

use super::agent::DocEntry;
use crate::task::Message;

/// Most characters of an object's source code the extractor keeps (and the writer sees).
pub const SOURCE_CHARS: usize = 6000;

/// An object of the pinned stack with its source code (the documentation extractor's entry
/// when asked for sources).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourcedObject {
    /// Dotted name.
    pub name: String,
    /// `class`, `function`, `method` or `property` (modules are not documented).
    pub kind: String,
    /// The call signature, when there is one.
    #[serde(default)]
    pub signature: String,
    /// The source code, cut to [`SOURCE_CHARS`]; empty when Python could not find it.
    #[serde(default)]
    pub source: String,
}

/// The written documentation and the model that wrote it (the cache file's contents).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelDocs {
    /// The writer model.
    pub writer: String,
    /// One entry per documented object, in the order they were written.
    pub entries: Vec<DocEntry>,
}

impl SourcedObject {
    /// Whether the object can be documented (not a module, its source found).
    pub fn documentable(&self) -> bool {
        self.kind != "module" && !self.source.trim().is_empty()
    }

    /// The writer's messages for this object.
    pub fn writing_messages(&self) -> Vec<Message> {
        vec![Message::user(format!(
            "You write the reference documentation of the Python library pymatgen. Document \
             the {kind} `{name}` from its source code below: what it is for, its parameters \
             (with types and defaults), what it returns or holds, errors it raises, and one \
             short usage example. Write Markdown, at most 300 words, and describe only what \
             the code does.\n\n```python\n{source}\n```",
            kind = self.kind,
            name = self.name,
            source = self.source.trim_end(),
        ))]
    }

    /// The entry the writer's `reply` makes.
    pub fn written(&self, reply: &str) -> DocEntry {
        DocEntry {
            name: self.name.clone(),
            kind: self.kind.clone(),
            signature: self.signature.clone(),
            doc: reply.trim().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(kind: &str, source: &str) -> SourcedObject {
        SourcedObject {
            name: "pymatgen.core.structure.Structure.copy".into(),
            kind: kind.into(),
            signature: "(self)".into(),
            source: source.into(),
        }
    }

    #[test]
    fn an_object_is_documented_from_its_source() {
        let o = object("method", "    def copy(self):\n        return self\n");
        assert!(o.documentable());
        let text = &o.writing_messages()[0].content;
        assert!(text.contains("Document the method `pymatgen.core.structure.Structure.copy`"));
        assert!(
            text.ends_with("```python\n    def copy(self):\n        return self\n```"),
            "{text}"
        );
        let entry = o.written("  Returns a copy.\n");
        assert_eq!(
            (entry.name.as_str(), entry.kind.as_str(), entry.doc.as_str()),
            (
                "pymatgen.core.structure.Structure.copy",
                "method",
                "Returns a copy."
            )
        );
        assert!(!object("module", "x = 1").documentable());
        assert!(!object("function", "  ").documentable());
    }
}
