//! Whole upstream releases in one `atomworld run`, as a researcher runs them: every task of
//! the public OmniMatBench folders read, answered (or reported as not asked) and counted.
//!
//! Needs the shared data (`shared/data/omnimatbench`): without it the test fails under CI and
//! is skipped with a notice otherwise.

use crate::common;

use std::path::{Path, PathBuf};

use common::{bin, required};
use serde_json::Value;

fn release() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/omnimatbench");
    if dir.join("cal").is_dir() {
        return Some(dir);
    }
    assert!(
        !required(),
        "{} is missing (required under CI)",
        dir.display()
    );
    eprintln!("SKIPPED: {} is missing", dir.display());
    None
}

/// `atomworld run --suite SUITE --model reference --tasks TASKS`: its summary JSON, or the
/// failed command's stderr.
fn run(suite: &str, tasks: &Path, data: &Path) -> Result<Value, String> {
    let summary = data.join(format!("{suite}.json"));
    let out = bin()
        .args(["run", "--suite", suite, "--model", "reference", "--tasks"])
        .arg(tasks)
        .arg("--data-dir")
        .arg(data)
        .arg("--summary-json")
        .arg(&summary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(stderr);
    }
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("tasks: "),
        "the text summary states the counts:\n{text}"
    );
    Ok(serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap())
}

/// The counts add up: read = in the run + left out; every answer of the run stored.
fn assert_accounted(counts: &Value, read: u64, what: &str) {
    let n = |k: &str| counts[k].as_u64().unwrap();
    assert_eq!(n("read"), read, "{what}: {counts}");
    assert_eq!(n("read"), n("in_run") + n("skipped"), "{what}: {counts}");
    assert_eq!(n("skipped"), 0, "{what}: {counts}");
    assert_eq!(
        n("in_run") * n("samples"),
        n("scored") + n("unasked") + n("failed") + n("pending"),
        "{what}: {counts}"
    );
    assert_eq!((n("failed"), n("pending")), (0, 0), "{what}: {counts}");
}

/// Items of the files in `folder` that name images (`image_url`), read with serde_json.
fn naming_images(folder: &Path) -> u64 {
    let mut n = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let items: Vec<Value> = if text.trim_start().starts_with('[') {
            serde_json::from_str(&text).unwrap()
        } else {
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        n += items
            .iter()
            .filter(|i| {
                i["image_url"]
                    .as_str()
                    .is_some_and(|u| !u.trim().is_empty())
            })
            .count() as u64;
    }
    n
}

#[test]
fn the_public_omnimatbench_folders_run_whole_with_the_reference_baseline() {
    let Some(release) = release() else { return };
    let data = tempfile::tempdir().unwrap();

    // The release root: omnimat-cal reads its cal/ folder, all 19 subfields.
    let cal = run("omnimat-cal", &release, data.path()).unwrap();
    let counts = &cal["counts"];
    assert_accounted(counts, 502, "CAL");
    // Items that name images, without an images folder, are not asked (142, counted from the
    // files); the rest are scored, one stored result per item (ids restart in every subfield).
    let with_images = naming_images(&release.join("cal"));
    assert_eq!(with_images, 142);
    assert_eq!(counts["unasked"], with_images, "{counts}");
    assert_eq!(counts["scored"], 502 - with_images, "{counts}");
    assert_eq!(cal["overall"]["n"], 502, "{cal}");

    // The QA rubric files (JSON lists), as a folder: no judge configured, so every asked
    // item is judge-failed, never dropped.
    let qa = run("omnimat-qa", &release.join("qa"), data.path()).unwrap();
    assert_accounted(&qa["counts"], 498, "QA");
    // Two items name an image while saying `multimodal: false`: they too wait for it.
    assert_eq!(naming_images(&release.join("qa")), 140);
    assert_eq!(qa["counts"]["unasked"], 140, "{qa}");
    assert_eq!(qa["overall"]["n"], 498, "{qa}");

    // One subfield's file alone.
    let one = release.join("qa/03_Materials_Physics_QA_rubric.json");
    let single = run("omnimat-qa", &one, data.path()).unwrap();
    let items = serde_json::from_str::<Vec<Value>>(&std::fs::read_to_string(&one).unwrap())
        .unwrap()
        .len() as u64;
    assert_accounted(&single["counts"], items, "one QA file");
}

#[test]
fn a_key_that_repeats_is_refused_with_both_places() {
    let Some(release) = release() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = "03_Materials_Physics_Cal_with_final_answers.jsonl";
    let text = std::fs::read_to_string(release.join("cal").join(file)).unwrap();
    let first = text.lines().next().unwrap();
    // The same subfield's first item again, at the end of a copy of the file.
    let copy = dir.path().join("cal.jsonl");
    std::fs::write(&copy, format!("{}\n{first}\n", text.trim_end())).unwrap();
    let lines = text.trim_end().lines().count();
    let err = run("omnimat-cal", &copy, &dir.path().join("db")).unwrap_err();
    let id: Value = serde_json::from_str(first).unwrap();
    let key = format!(
        "{}/{}",
        id["type"].as_str().unwrap(),
        id["id"].as_str().unwrap()
    );
    assert!(
        err.contains(&format!(
            "two tasks share the key {key:?}: cal.jsonl line 1 and cal.jsonl line {}",
            lines + 1
        )),
        "{err}"
    );
}
