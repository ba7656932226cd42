//! The `atomworld apply`, `eval` and `gen` commands, run as a user runs them.

use std::process::Command;

use crate::common;

use common::{bin, NACL};

#[test]
fn apply_prints_a_pymatgen_style_cif_and_fails_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let cif = dir.path().join("in.cif");
    std::fs::write(&cif, NACL).unwrap();
    let out = bin()
        .args(["apply", "--cif"])
        .arg(&cif)
        .args(["--prompt", "Create a supercell with the size 2x1x1."])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("# generated using pymatgen\ndata_NaCl\n"),
        "{text}"
    );
    assert!(text.contains("_cell_length_a   11.28000000\n"), "{text}");
    assert_eq!(text.matches("  Na  ").count(), 2);

    let bad = bin()
        .args(["apply", "--cif"])
        .arg(&cif)
        .args(["--prompt", "Remove the atom at index 7 from the cif file."])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("index 7 is out of range"), "{err}");

    let missing = bin()
        .args(["apply", "--cif", "/nonexistent.cif", "--prompt", "x"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn eval_scores_each_line_and_computes_null_targets() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = "Remove the atom at index 1 from the cif file.";
    // The target, computed by `apply`.
    let cif = dir.path().join("in.cif");
    std::fs::write(&cif, NACL).unwrap();
    let target = bin()
        .args(["apply", "--cif"])
        .arg(&cif)
        .args(["--prompt", prompt])
        .output()
        .unwrap();
    let target = String::from_utf8(target.stdout).unwrap();
    let line = |target: Option<&str>, response: String| {
        serde_json::json!({"input_cif": NACL, "action_prompt": prompt, "target_cif": target, "response": response}).to_string()
    };
    let input = [
        line(None, format!("<cif>\n{target}\n</cif>")),
        line(Some(&target), format!("<cif>{NACL}</cif>")),
        line(None, "no tags here".into()),
        line(None, "<cif>data_x\n_cell_length_a 1\n</cif>".into()),
    ]
    .join("\n");
    let (inp, out) = (dir.path().join("in.jsonl"), dir.path().join("out.jsonl"));
    std::fs::write(&inp, input).unwrap();
    let run = bin()
        .args(["eval", "--suite", "atomworld"])
        .arg(&inp)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let labels: Vec<String> = lines
        .iter()
        .map(|v| {
            assert_eq!(v["action_prompt"], prompt);
            v["verdict"]["label"].as_str().unwrap().to_string()
        })
        .collect();
    // The second verdict, wherever both structures parse: the target is the same crystal; the
    // unchanged input (one atom more) is not; unparsed answers have none.
    let same: Vec<Option<bool>> = lines
        .iter()
        .map(|v| v["verdict"]["same_crystal"]["fit"].as_bool())
        .collect();
    assert_eq!(same, [Some(true), Some(false), None, None]);
    assert!(lines[0]["verdict"]["same_crystal"]["max_dist"].is_number());
    assert_eq!(
        labels,
        [
            "Success",
            "AtomCountMismatch",
            "OutputFormatError",
            "CifParsingError"
        ]
    );
    let summary = String::from_utf8(run.stderr).unwrap();
    assert!(summary.contains("remove"), "{summary}");
    assert!(
        summary.contains("Stricter than chemistry: 0 of 1 failed answers"),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("overall") && l.contains("0.250")),
        "{summary}"
    );
}

#[test]
fn gen_writes_a_reproducible_task_set() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    for f in [&a, &b] {
        let run = bin()
            .args(["gen", "--seed", "9", "--per-action", "2", "-o"])
            .arg(f)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let text = std::fs::read_to_string(&a).unwrap();
    assert_eq!(text, std::fs::read_to_string(&b).unwrap());
    assert_eq!(text.lines().count(), 20);
    // What the Python reference's driver reads beside the task.
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for key in ["structure", "parameters", "readings_differ", "target_cif"] {
        assert!(first.get(key).is_some(), "{key} missing from {first}");
    }
}

/// `gen --pool` over the real-CIF corpus: reproducible by seed, every action of a number on
/// the same structure (or a counted substitute), the unreadable files named; each task runs
/// with the reference baseline to 100 % (its target agrees with its own evaluation).
#[test]
fn gen_draws_from_a_users_pool_of_cifs() {
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/cif-corpus");
    let dir = tempfile::tempdir().unwrap();
    let mut texts = Vec::new();
    let mut reports = Vec::new();
    for (name, seed) in [("a", "4"), ("b", "4"), ("c", "5")] {
        let out = dir.path().join(format!("{name}.jsonl"));
        let run = bin()
            .args(["gen", "--seed", seed, "--per-group", "3", "--pool"])
            .arg(&corpus)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr).to_string();
        assert!(run.status.success(), "{stderr}");
        assert!(stderr.contains("pool user-"), "{stderr}");
        assert!(
            stderr.contains("unreadable, left out:\n  cod/2006199.cif: "),
            "{stderr}"
        );
        texts.push(std::fs::read_to_string(&out).unwrap());
        reports.push(stderr);
    }
    // "…, N tasks moved to the next structure)".
    let moved: usize = reports[0]
        .split(" tasks moved")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", reports[0]));
    assert_eq!(texts[0], texts[1]);
    assert_ne!(texts[0], texts[2]);
    let tasks: Vec<serde_json::Value> = texts[0]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(tasks.len(), 30);
    let mut by_number: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        Default::default();
    for t in &tasks {
        let number = t["id"]
            .as_str()
            .unwrap()
            .rsplit('-')
            .next()
            .unwrap()
            .to_string();
        by_number
            .entry(number)
            .or_default()
            .insert(t["structure"].as_str().unwrap().to_string());
    }
    // One structure per number, but for the tasks moved to a substitute.
    let extra: usize = by_number.values().map(|s| s.len() - 1).sum();
    assert!(extra <= moved, "{moved} moved: {by_number:?}");
    assert_eq!(by_number.len(), 3);
    let run = bin()
        .args(["run", "--model", "reference", "--tasks"])
        .arg(dir.path().join("a.jsonl"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--summary-json")
        .arg(dir.path().join("s.json"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(s["overall"]["n"], 30);
    assert_eq!(s["overall"]["success_rate"], 1.0, "{s}");
}

#[test]
fn gen_of_a_suite_without_a_generator_says_where_its_tasks_come_from() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.jsonl");
    let run = bin()
        .args(["gen", "--suite", "mattools-qa", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("suite mattools-qa has no task generator"),
        "{stderr}"
    );
    assert!(!out.exists(), "no file is left behind");
    let run = bin()
        .args(["gen", "--suite", "no-such", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&run.stderr).contains("no-such"));
}

#[test]
fn cache_export_and_import_move_answers_between_machines() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache.jsonl");
    std::fs::write(
        &file,
        "{\"key\":\"abc\",\"model\":\"m\",\"response\":\"<cif>x</cif>\",\"input_tokens\":1,\"output_tokens\":2}\n",
    )
    .unwrap();
    let import = bin()
        .args(["cache", "import"])
        .arg(&file)
        .arg("--data-dir")
        .arg(dir.path().join("d"))
        .output()
        .unwrap();
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    assert!(String::from_utf8_lossy(&import.stderr).contains("imported 1 new"));
    let out = dir.path().join("out.jsonl");
    let export = bin()
        .args(["cache", "export"])
        .arg(&out)
        .arg("--data-dir")
        .arg(dir.path().join("d"))
        .output()
        .unwrap();
    assert!(export.status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("\"key\":\"abc\"") && text.contains("<cif>x</cif>"),
        "{text}"
    );
    std::fs::write(&file, "not json\n").unwrap();
    let bad = bin()
        .args(["cache", "import"])
        .arg(&file)
        .arg("--data-dir")
        .arg(dir.path().join("d"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// Runs a command that must succeed; returns its stderr.
fn succeed(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

/// A reference `evaluation_results.json` is imported, its answers re-scored by `eval`, and
/// the recorded verdicts compared with ours.
#[test]
fn import_then_eval_compares_recorded_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = "Remove the atom at index 1 from the cif file.";
    // The target: NaCl without Cl.
    let target = NACL.replace("Cl Cl1 0.5 0.5 0.5\n", "");
    let results = serde_json::json!({"metrics": {}, "results": [
        {"correct": true, "input_cif": NACL, "action_prompt": prompt, "target_cif": target,
         "generated_output": format!("<cif>\n{target}</cif>"), "wrong_type": null,
         "rmsd": 0.0, "max_dist": 0.0, "frame_index": 1},
        {"correct": false, "input_cif": NACL, "action_prompt": prompt, "target_cif": target,
         "generated_output": "I cannot do that.", "wrong_type": "OutputFormatError",
         "rmsd": null, "max_dist": null, "frame_index": 2},
        // Recorded as a failure although the answer is right: ours must disagree.
        {"correct": false, "input_cif": NACL, "action_prompt": prompt, "target_cif": target,
         "generated_output": format!("<cif>\n{target}</cif>"), "wrong_type": "CIFParsingError",
         "rmsd": null, "max_dist": null, "frame_index": 3},
        {"correct": false, "input_cif": NACL, "action_prompt": "Remove the atom at index 9 from the cif file.",
         "target_cif": target, "generated_output": "x", "wrong_type": "OutputFormatError"},
        // An AtomCountMismatch row keeps the extracted CIF, without tags (the reference's data sets): the
        // import puts them back, so ours agrees.
        {"correct": false, "input_cif": NACL, "action_prompt": prompt, "target_cif": target,
         "generated_output": NACL, "wrong_type": "AtomCountMismatch",
         "rmsd": null, "max_dist": null, "frame_index": 5}
    ]});
    let input = dir.path().join("evaluation_results.json");
    std::fs::write(&input, results.to_string()).unwrap();
    let imported = dir.path().join("imported.jsonl");
    let report = succeed(bin().arg("import").arg(&input).arg("-o").arg(&imported));
    assert!(
        report.contains(
            "5 records of evaluation results: 4 prompts parsed, 1 not; 5 with a model answer"
        ),
        "{report}"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&imported)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[1]["recorded_verdict"]["label"], "OutputFormatError");
    assert_eq!(lines[2]["recorded_verdict"]["label"], "CifParsingError");
    assert!(
        lines[3]["parse_error"].as_str().unwrap().contains("9"),
        "{}",
        lines[3]
    );

    assert!(lines[4]["response"]
        .as_str()
        .unwrap()
        .starts_with("<cif>\n"));
    // eval needs the four lines whose prompt applies.
    let scorable: String = [&lines[0], &lines[1], &lines[2], &lines[4]]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    let eval_in = dir.path().join("eval-in.jsonl");
    std::fs::write(&eval_in, scorable).unwrap();
    let eval_out = dir.path().join("eval-out.jsonl");
    let summary = succeed(
        bin()
            .args(["eval", "--suite", "atomworld"])
            .arg(&eval_in)
            .arg("-o")
            .arg(&eval_out),
    );
    assert!(
        summary.contains(
            "recorded verdicts (reference run): 3 of 4 agree with ours (AtomCountMismatch 1/1, \
             CifParsingError 0/1, OutputFormatError 1/1, Success 1/1)"
        ),
        "{summary}"
    );
}

#[test]
fn an_agent_the_suite_does_not_have_is_refused_with_the_suites_agents() {
    let dir = tempfile::tempdir().unwrap();
    let run = |suite: &str, agent: &str| {
        let out = bin()
            .args([
                "run",
                "--suite",
                suite,
                "--model",
                "reference",
                "--agent",
                agent,
            ])
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    let err = run("atomworld", "nope");
    assert!(
        err.contains("no agent named 'nope' (atomworld's: pymatgen, engine-tools)"),
        "{err}"
    );
    let err = run("pointworld", "pymatgen");
    assert!(
        err.contains(
            "the pymatgen agent answers atomworld tasks, not pointworld (pointworld has none)"
        ),
        "{err}"
    );
    let err = run("omnimat-cal", "reflect");
    assert!(
        err.contains("the reflect agent answers mattools-code tasks, not omnimat-cal (omnimat-cal's: python)"),
        "{err}"
    );
}
