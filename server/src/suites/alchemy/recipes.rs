//! AlchemyBench's recipe files and the RAG condition's references, on the server side.
//!
//! [`read_recipes`] reads a file of recipes in the spec's fields: JSONL (one recipe a line)
//! or Parquet, the upstream layout (a file starting with `PAR1`; read row by row with the
//! `parquet` crate's record reader; pages uncompressed or in any codec pyarrow writes). A
//! recipe without a `split` takes the split its file name names (`train`,
//! `test_standard_impact`, `test_high_impact`), as the upstream files are split by file.
//! [`with_references`] gives each recipe its K nearest train recipes by exact cosine
//! (`benchmarks::alchemy::RecipeIndex`) over the stored `contributions_embedding`s, and computes
//! the missing ones through the gateway's embeddings endpoint (cached) when an embeddings
//! model is chosen.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use benchmarks::alchemy::{import_jsonl, AlchemyTask, ImportError, Recipe, RecipeIndex, Retrieval};
use benchmarks::retrieval::RetrievalError;

use crate::llm::spend::Budget;
use crate::llm::{Gateway, LlmError};
use crate::suites::EmbeddingUse;

/// The three upstream splits, longest name first (none is a part of another, but a file
/// name may hold more than one word).
pub const SPLITS: [&str; 3] = ["test_standard_impact", "test_high_impact", "train"];

/// Why a recipe file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecipeFileError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A JSONL line is not a usable recipe.
    #[error("{path}: {source}")]
    Jsonl {
        /// The file.
        path: PathBuf,
        /// What is wrong, and on which line.
        source: ImportError,
    },
    /// A Parquet file cannot be read, or a row is not a usable recipe.
    #[error("{path}: {message}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What is wrong (and in which row, 1-based).
        message: String,
    },
}

/// Why the references could not be found.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// A recipe has no stored embedding and no embeddings model is chosen.
    #[error(
        "recipe {0} has no contributions_embedding: choose an embeddings model \
         (--embeddings-model, or [limits] embeddings_model) to compute the missing ones"
    )]
    NoEmbedding(String),
    /// No train recipe can be retrieved.
    #[error("the train split has no recipe")]
    EmptyTrain,
    /// The embeddings call failed.
    #[error("computing embeddings: {0}")]
    Llm(#[from] LlmError),
    /// The vectors do not fit together (a stored embedding of another model's length).
    #[error("{0} (stored embeddings and computed ones must come from one model)")]
    Retrieval(#[from] RetrievalError),
}

/// The split a file name names, if exactly one.
pub fn split_of(path: &Path) -> Option<&'static str> {
    let name = path.file_name()?.to_str()?;
    let mut found = SPLITS.iter().filter(|s| name.contains(*s));
    let first = found.next()?;
    found.next().is_none().then_some(*first)
}

/// The recipes of a JSONL or Parquet file; a recipe without a split takes its file name's.
pub fn read_recipes(path: &Path) -> Result<Vec<Recipe>, RecipeFileError> {
    let read_error = |source| RecipeFileError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut magic = [0u8; 4];
    let is_parquet = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(read_error)?;
        matches!(f.read(&mut magic), Ok(4)) && magic == *PARQUET_MAGIC
    };
    let mut recipes = if is_parquet {
        let file = std::fs::File::open(path).map_err(read_error)?;
        parquet_recipes(file).map_err(|message| RecipeFileError::Parquet {
            path: path.to_path_buf(),
            message,
        })?
    } else {
        let text = std::fs::read_to_string(path).map_err(read_error)?;
        import_jsonl(&text).map_err(|source| RecipeFileError::Jsonl {
            path: path.to_path_buf(),
            source,
        })?
    };
    if let Some(split) = split_of(path) {
        for r in recipes.iter_mut().filter(|r| r.split.trim().is_empty()) {
            r.split = split.to_string();
        }
    }
    Ok(recipes)
}

/// The first (and last) four bytes of a Parquet file.
const PARQUET_MAGIC: &[u8; 4] = b"PAR1";

/// The column holding the embedding, read straight into `f32`s (3,072 numbers a row would
/// be a large detour through JSON values).
const EMBEDDING: &str = "contributions_embedding";

/// A Parquet value as JSON, for the recipe's serde reading (which is forgiving about the
/// bibliographic fields): numbers, text, lists and groups as themselves, anything else
/// (dates, decimals, bytes) as its text.
fn field_json(f: &parquet::record::Field) -> serde_json::Value {
    use parquet::record::Field;
    use serde_json::Value;
    match f {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Byte(x) => (*x).into(),
        Field::Short(x) => (*x).into(),
        Field::Int(x) => (*x).into(),
        Field::Long(x) => (*x).into(),
        Field::UByte(x) => (*x).into(),
        Field::UShort(x) => (*x).into(),
        Field::UInt(x) => (*x).into(),
        Field::ULong(x) => (*x).into(),
        Field::Float16(x) => serde_json::Number::from_f64(f64::from(f32::from(*x)))
            .map_or(Value::Null, Value::Number),
        Field::Float(x) => {
            serde_json::Number::from_f64(f64::from(*x)).map_or(Value::Null, Value::Number)
        }
        Field::Double(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
        Field::Str(s) => Value::String(s.clone()),
        Field::Bytes(b) => Value::String(String::from_utf8_lossy(b.data()).into_owned()),
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(field_json).collect()),
        Field::Group(row) => Value::Object(
            row.get_column_iter()
                .map(|(k, v)| (k.clone(), field_json(v)))
                .collect(),
        ),
        other => Value::String(other.to_string()),
    }
}

/// An embedding column's value: a list of numbers, or null.
fn embedding_of(f: &parquet::record::Field) -> Result<Option<Vec<f32>>, String> {
    use parquet::record::Field;
    match f {
        Field::Null => Ok(None),
        Field::ListInternal(list) => list
            .elements()
            .iter()
            .enumerate()
            .map(|(i, x)| match x {
                Field::Float(v) => Ok(*v),
                Field::Double(v) => Ok(*v as f32),
                Field::Float16(v) => Ok(f32::from(*v)),
                other => Err(format!("{EMBEDDING}[{i}] is {other}, not a number")),
            })
            .collect::<Result<Vec<f32>, String>>()
            .map(Some),
        other => Err(format!("{EMBEDDING} is {other}, not a list of numbers")),
    }
}

/// The recipes of a Parquet file, checked as the JSONL importer checks lines:
/// each a usable recipe, ids unique, every embedding as long as the first. Errors name the
/// row (1-based).
fn parquet_recipes(file: std::fs::File) -> Result<Vec<Recipe>, String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader =
        SerializedFileReader::new(file).map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| format!("cannot read its rows: {e}"))?;
    let mut out = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut dim: Option<(usize, usize)> = None;
    for (i, row) in rows.enumerate() {
        let n = i + 1;
        let row = row.map_err(|e| format!("row {n}: {e}"))?;
        let mut object = serde_json::Map::new();
        let mut embedding = None;
        for (name, field) in row.get_column_iter() {
            if name == EMBEDDING {
                embedding = embedding_of(field).map_err(|e| format!("row {n}: {e}"))?;
            } else {
                object.insert(name.clone(), field_json(field));
            }
        }
        let mut r: Recipe = serde_json::from_value(serde_json::Value::Object(object))
            .map_err(|e| format!("row {n}: not a recipe: {e}"))?;
        r.contributions_embedding = embedding;
        r.check().map_err(|e| format!("row {n}: {e}"))?;
        if let Some(e) = &r.contributions_embedding {
            match dim {
                None => dim = Some((e.len(), n)),
                Some((d, first)) if d != e.len() => {
                    return Err(format!(
                        "row {n}: recipe {}: {EMBEDDING} has {} values, row {first} had {d}",
                        r.id,
                        e.len()
                    ))
                }
                Some(_) => {}
            }
        }
        if let Some(first) = seen.insert(r.id.clone(), n) {
            return Err(format!(
                "row {n}: recipe id {} was already used in row {first}",
                r.id
            ));
        }
        out.push(r);
    }
    Ok(out)
}

/// Embeddings for the recipes that lack one, by embeddings model `model` (`None`: an error
/// names the first recipe without one).
async fn fill_embeddings(
    recipes: &mut [&mut Recipe],
    embedder: Option<(&Gateway, &str)>,
    budget: Option<&Arc<Budget>>,
    used: &mut EmbeddingUse,
) -> Result<(), ReferenceError> {
    let missing: Vec<usize> = (0..recipes.len())
        .filter(|&i| recipes[i].contributions_embedding.is_none())
        .collect();
    let Some(&first) = missing.first() else {
        return Ok(());
    };
    let Some((gateway, model)) = embedder else {
        return Err(ReferenceError::NoEmbedding(recipes[first].id.clone()));
    };
    let texts: Vec<String> = missing
        .iter()
        .map(|&i| recipes[i].contribution.clone())
        .collect();
    let got = gateway.embed(model, &texts, budget).await?;
    used.computed += texts.len();
    used.cached += got.cached;
    used.input_tokens += got.input_tokens;
    used.cost_usd += got.cost_usd;
    for (&i, v) in missing.iter().zip(got.vectors) {
        recipes[i].contributions_embedding = Some(v);
    }
    Ok(())
}

/// AlchemyBench tasks of `recipes`, each with its `k` nearest recipes of `train` (never
/// itself) as references, nearest first; none when `k` is 0 (the one-shot prompt). Stored
/// embeddings are used as they are; the missing ones, of train and query recipes alike, are
/// computed by `embedder` (gateway and embeddings model), so that model must be the one the
/// stored ones came from (upstream: text-embedding-3-large) wherever a set mixes the two.
/// The tasks do not carry the embeddings further.
pub async fn with_references(
    mut recipes: Vec<Recipe>,
    mut train: Vec<Recipe>,
    k: usize,
    embedder: Option<(&Gateway, &str)>,
    budget: Option<&Arc<Budget>>,
) -> Result<(Vec<AlchemyTask>, EmbeddingUse), ReferenceError> {
    let mut used = EmbeddingUse::default();
    let mut tasks = Vec::with_capacity(recipes.len());
    if k == 0 {
        for mut recipe in recipes {
            recipe.contributions_embedding = None;
            tasks.push(AlchemyTask {
                recipe,
                references: Vec::new(),
                retrieval: None,
            });
        }
        return Ok((tasks, used));
    }
    {
        let mut all: Vec<&mut Recipe> = train.iter_mut().chain(recipes.iter_mut()).collect();
        fill_embeddings(&mut all, embedder, budget, &mut used).await?;
    }
    let index = RecipeIndex::build(&train)?.ok_or(ReferenceError::EmptyTrain)?;
    let method = match (used.computed, embedder) {
        (0, _) | (_, None) => format!("cosine top-{k} over stored embeddings"),
        (n, Some((_, model))) => format!(
            "cosine top-{k} over embeddings ({n} of them computed by embeddings model {model})"
        ),
    };
    for mut recipe in recipes {
        let e = recipe
            .contributions_embedding
            .take()
            .ok_or_else(|| ReferenceError::NoEmbedding(recipe.id.clone()))?;
        let found = index
            .references(&e, k, &recipe.id)
            .map_err(|err| match err {
                RetrievalError::Length { got, expected, .. } => RetrievalError::Length {
                    what: format!("the embedding of recipe {}", recipe.id),
                    got,
                    expected,
                },
                other => other,
            })?;
        let hits = found
            .iter()
            .map(|(n, _)| (index.id(n.index).unwrap_or_default().to_string(), n.score))
            .collect();
        let references = found.into_iter().map(|(_, r)| r.clone()).collect();
        tasks.push(AlchemyTask {
            recipe,
            references,
            retrieval: Some(Retrieval {
                method: method.clone(),
                hits,
            }),
        });
    }
    Ok((tasks, used))
}

/// What the page's BM25 search says it is: not the benchmark's method.
pub const BM25_METHOD: &str = "BM25 over the key contributions: an offline stand-in, since no      embeddings model is configured (the benchmark ranks by cosine of text-embedding-3-large      embeddings)";

/// `recipe` with its `k` best matches among `pool` (never itself) by BM25 over the key
/// contributions, for a page that has no embeddings to search; labelled as such.
pub fn bm25_references(recipe: Recipe, pool: &[Recipe], k: usize) -> AlchemyTask {
    use benchmarks::retrieval::tokens;
    let mut builder = rank_bm25::Builder::new(rank_bm25::Params::okapi());
    let mut kept = Vec::new();
    for r in pool.iter().filter(|r| r.id != recipe.id) {
        let t = tokens(&r.contribution);
        if builder.add_document(t.iter().map(String::as_str)).is_ok() {
            kept.push(r);
        }
    }
    let scores = match builder.build() {
        Ok(index) => index.get_scores(&tokens(&recipe.contribution)),
        Err(_) => Vec::new(),
    };
    let mut order: Vec<usize> = (0..scores.len().min(kept.len())).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order.truncate(k);
    let hits = order
        .iter()
        .map(|&i| (kept[i].id.clone(), scores[i] as f32))
        .collect();
    let references = order.iter().map(|&i| kept[i].as_reference()).collect();
    AlchemyTask {
        recipe,
        references,
        retrieval: (k > 0).then(|| Retrieval {
            method: BM25_METHOD.to_string(),
            hits,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_from_the_file_name() {
        assert_eq!(
            split_of(Path::new("/d/train-00000-of-00002.parquet")),
            Some("train")
        );
        assert_eq!(
            split_of(Path::new("test_high_impact.jsonl")),
            Some("test_high_impact")
        );
        assert_eq!(split_of(Path::new("recipes.jsonl")), None);
        assert_eq!(split_of(Path::new("train_vs_test_high_impact.jsonl")), None);
    }

    /// One row of a test file: id, year, authors, embedding.
    type Row<'a> = (&'a str, Option<i64>, &'a [&'a str], Option<&'a [f32]>);

    /// Writes recipes as pyarrow lays out a table (optional columns, three-level lists),
    /// with Snappy pages (pyarrow's default).
    fn write_parquet(path: &Path, rows: &[Row<'_>]) {
        write_parquet_with(path, rows, parquet::basic::Compression::SNAPPY);
    }

    fn write_parquet_with(path: &Path, rows: &[Row<'_>], compression: parquet::basic::Compression) {
        use parquet::data_type::{ByteArray, ByteArrayType, FloatType, Int64Type};
        use parquet::file::properties::WriterProperties;
        use parquet::file::writer::SerializedFileWriter;
        let schema = parquet::schema::parser::parse_message_type(
            "message recipes {
                OPTIONAL BYTE_ARRAY id (UTF8);
                OPTIONAL BYTE_ARRAY contribution (UTF8);
                OPTIONAL BYTE_ARRAY recipe (UTF8);
                OPTIONAL INT64 year;
                OPTIONAL group authors (LIST) {
                    REPEATED group list { OPTIONAL BYTE_ARRAY element (UTF8); }
                }
                OPTIONAL group contributions_embedding (LIST) {
                    REPEATED group list { OPTIONAL FLOAT element; }
                }
            }",
        )
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(compression)
            .build();
        let file = std::fs::File::create(path).unwrap();
        let mut w = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
        let mut g = w.next_row_group().unwrap();
        let text = |f: &dyn Fn(&str) -> String| -> Vec<ByteArray> {
            rows.iter()
                .map(|r| ByteArray::from(f(r.0).as_str()))
                .collect()
        };
        for values in [
            text(&|id| id.to_string()),
            text(&|id| format!("## Key Contributions\n- X of {id}")),
            text(&|id| format!("## Materials\n- Y of {id}")),
        ] {
            let mut c = g.next_column().unwrap().unwrap();
            let defs = vec![1i16; values.len()];
            c.typed::<ByteArrayType>()
                .write_batch(&values, Some(&defs), None)
                .unwrap();
            c.close().unwrap();
        }
        let mut c = g.next_column().unwrap().unwrap();
        let years: Vec<i64> = rows.iter().filter_map(|r| r.1).collect();
        let defs: Vec<i16> = rows.iter().map(|r| i16::from(r.1.is_some())).collect();
        c.typed::<Int64Type>()
            .write_batch(&years, Some(&defs), None)
            .unwrap();
        c.close().unwrap();
        // A list column: definition 0 = null list, 1 = empty, 3 = an element; repetition 0
        // starts a row.
        let (mut values, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
        for r in rows {
            if r.2.is_empty() {
                defs.push(1);
                reps.push(0);
            }
            for (j, a) in r.2.iter().enumerate() {
                values.push(ByteArray::from(*a));
                defs.push(3);
                reps.push(i16::from(j > 0));
            }
        }
        let mut c = g.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&values, Some(&defs), Some(&reps))
            .unwrap();
        c.close().unwrap();
        let (mut values, mut defs, mut reps) = (Vec::new(), Vec::new(), Vec::new());
        for r in rows {
            match r.3 {
                None => {
                    defs.push(0);
                    reps.push(0);
                }
                Some(e) => {
                    for (j, x) in e.iter().enumerate() {
                        values.push(*x);
                        defs.push(3);
                        reps.push(i16::from(j > 0));
                    }
                }
            }
        }
        let mut c = g.next_column().unwrap().unwrap();
        c.typed::<FloatType>()
            .write_batch(&values, Some(&defs), Some(&reps))
            .unwrap();
        c.close().unwrap();
        g.close().unwrap();
        w.close().unwrap();
    }

    /// Every codec pyarrow can write reads back to the same recipes.
    #[test]
    fn parquet_recipes_in_every_codec() {
        use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
        let dir = tempfile::tempdir().unwrap();
        let rows: &[Row<'_>] = &[
            ("a", Some(2021), &["A. B."], Some(&[1.0, 0.5])),
            ("b", None, &[], None),
        ];
        let plain = dir.path().join("plain.parquet");
        write_parquet_with(&plain, rows, Compression::UNCOMPRESSED);
        let expected = read_recipes(&plain).unwrap();
        assert_eq!(expected.len(), 2);
        for codec in [
            Compression::SNAPPY,
            Compression::GZIP(GzipLevel::default()),
            Compression::LZ4_RAW,
            Compression::LZ4,
            Compression::ZSTD(ZstdLevel::default()),
            Compression::BROTLI(BrotliLevel::default()),
        ] {
            let path = dir.path().join(format!("{codec}.parquet"));
            write_parquet_with(&path, rows, codec);
            assert_eq!(read_recipes(&path).unwrap(), expected, "{codec}");
        }
    }

    #[test]
    fn parquet_recipes_with_and_without_embeddings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test_high_impact-00000-of-00001.parquet");
        write_parquet(
            &path,
            &[
                (
                    "a",
                    Some(2021),
                    &["A. B.", "C. D."],
                    Some(&[1.0, 0.5, -0.25]),
                ),
                ("b", None, &[], None),
                ("c", Some(2019), &["E."], Some(&[0.0, 1.0, 0.0])),
            ],
        );
        let recipes = read_recipes(&path).unwrap();
        assert_eq!(recipes.len(), 3);
        let a = &recipes[0];
        assert_eq!(a.id, "a");
        assert_eq!(a.contribution, "## Key Contributions\n- X of a");
        assert_eq!(a.recipe, "## Materials\n- Y of a");
        assert_eq!(a.year, Some(2021));
        assert_eq!(a.authors, ["A. B.", "C. D."]);
        assert_eq!(
            a.contributions_embedding.as_deref(),
            Some(&[1.0, 0.5, -0.25][..])
        );
        assert_eq!(a.split, "test_high_impact", "from the file name");
        let b = &recipes[1];
        assert_eq!((b.year, b.authors.len()), (None, 0));
        assert!(b.contributions_embedding.is_none());
        assert_eq!(recipes[2].authors, ["E."]);

        // Rows are checked as JSONL lines are, and errors name the row.
        let dup = dir.path().join("dup.parquet");
        write_parquet(&dup, &[("a", None, &[], None), ("a", None, &[], None)]);
        let e = read_recipes(&dup).unwrap_err().to_string();
        assert!(
            e.contains("row 2: recipe id a was already used in row 1"),
            "{e}"
        );
        let short = dir.path().join("short.parquet");
        write_parquet(
            &short,
            &[
                ("a", None, &[], Some(&[1.0, 0.0])),
                ("b", None, &[], Some(&[1.0])),
            ],
        );
        let e = read_recipes(&short).unwrap_err().to_string();
        assert!(e.contains("row 2") && e.contains("row 1 had 2"), "{e}");
        // A broken file is an error, never a panic.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() / 2);
        let broken = dir.path().join("broken.parquet");
        std::fs::write(&broken, &bytes).unwrap();
        let e = read_recipes(&broken).unwrap_err().to_string();
        assert!(e.contains("broken.parquet") && e.contains("Parquet"), "{e}");
    }

    fn recipe(id: &str, e: Option<Vec<f32>>) -> Recipe {
        let mut r: Recipe = serde_json::from_value(serde_json::json!({
            "id": id, "contribution": format!("X {id}"), "recipe": format!("Y {id}")
        }))
        .unwrap();
        r.contributions_embedding = e;
        r
    }

    #[tokio::test]
    async fn stored_embeddings_need_no_model_and_missing_ones_do() {
        let train = vec![
            recipe("a", Some(vec![1.0, 0.0])),
            recipe("b", Some(vec![0.0, 1.0])),
            recipe("c", Some(vec![0.7, 0.7])),
        ];
        let queries = vec![
            recipe("q", Some(vec![0.1, 1.0])),
            recipe("b", Some(vec![0.0, 1.0])),
        ];
        let (tasks, used) = with_references(queries, train.clone(), 2, None, None)
            .await
            .unwrap();
        assert_eq!(used, EmbeddingUse::default());
        let ids = |t: &AlchemyTask| -> Vec<String> {
            t.references
                .iter()
                .map(|r| r.contribution.clone())
                .collect()
        };
        assert_eq!(ids(&tasks[0]), ["X b", "X c"]);
        assert_eq!(
            ids(&tasks[1]),
            ["X c", "X a"],
            "a recipe is not its own reference"
        );
        assert!(tasks
            .iter()
            .all(|t| t.recipe.contributions_embedding.is_none()));
        let err = with_references(vec![recipe("q", None)], train, 1, None, None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ReferenceError::NoEmbedding(id) if id == "q"),
            "{err}"
        );
        let (one_shot, _) = with_references(vec![recipe("q", None)], Vec::new(), 0, None, None)
            .await
            .unwrap();
        assert!(one_shot[0].references.is_empty());
    }
}
