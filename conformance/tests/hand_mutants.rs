//! The hand-written mutants of `transcripts/hand-mutants/*.json` (the format:
//! transcripts/README.md, "The hand-written mutants") still apply to the code as it
//! is: each names a file that exists, a `find` that occurs exactly once in it and a
//! `replace` that changes it, a name of its own, transcripts that exist, and either
//! a transcript that catches it or the tests that do and why no transcript can.
//! `transcripts/hand_mutants.py` runs them; this check is the cheap part of it, so
//! that an edit of the bridge that moves a mutant's text fails the tests at once
//! rather than at the next measure.

use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// Every problem of the mutants of `folder`, each as one line naming the file of
/// mutants and the mutant; `root` is the repository (the mutants' files and the
/// transcripts under `root/transcripts/`).
fn problems(root: &Path, folder: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut files: Vec<_> = match fs::read_dir(folder) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect(),
        Err(error) => return vec![format!("{}: {error}", folder.display())],
    };
    files.sort();
    for path in files {
        let table = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let mutants = match fs::read_to_string(&path)
            .map_err(|error| error.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
        {
            Ok(Value::Array(mutants)) => mutants,
            Ok(_) => {
                problems.push(format!("{table}: not a JSON array of mutants"));
                continue;
            }
            Err(error) => {
                problems.push(format!("{table}: {error}"));
                continue;
            }
        };
        for (index, mutant) in mutants.iter().enumerate() {
            let text = |key: &str| mutant.get(key).and_then(Value::as_str);
            let list = |key: &str| -> Vec<&str> {
                mutant
                    .get(key)
                    .and_then(Value::as_array)
                    .map(|items| items.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default()
            };
            let name = text("name").map_or_else(|| format!("#{index}"), str::to_owned);
            let mut problem = |what: String| problems.push(format!("{table}: {name}: {what}"));
            if let Some(first) = seen.insert(name.clone(), table.clone()) {
                problem(format!("the name is also a mutant's of {first}"));
            }
            for key in ["name", "rule", "place", "file", "find"] {
                if text(key).is_none_or(str::is_empty) {
                    problem(format!("no `{key}`"));
                }
            }
            // An empty `replace` deletes the text: a line left out.
            if text("replace").is_none() {
                problem("no `replace`".into());
            }
            let (Some(file), Some(find), Some(replace)) =
                (text("file"), text("find"), text("replace"))
            else {
                continue;
            };
            if find == replace {
                problem("`replace` is `find`: the mutant changes nothing".into());
            }
            match fs::read_to_string(root.join(file)) {
                Ok(source) if !find.is_empty() => match source.matches(find).count() {
                    1 => {}
                    count => problem(format!(
                        "`find` occurs {count} times in {file}, not exactly once: write the mutant again"
                    )),
                },
                Ok(_) => {}
                Err(error) => problem(format!("the file {file}: {error}")),
            }
            let caught_by = list("caught_by");
            for transcript in &caught_by {
                if !root.join("transcripts").join(transcript).is_file() {
                    problem(format!(
                        "the transcript {transcript} of `caught_by` does not exist"
                    ));
                }
            }
            let tests = list("cargo_tests");
            let why = text("why_no_transcript").is_some_and(|why| !why.is_empty());
            if caught_by.is_empty() && (tests.is_empty() || !why) {
                problem(
                    "no `caught_by`, and not both `cargo_tests` and `why_no_transcript`".into(),
                );
            }
        }
    }
    problems
}

#[test]
fn every_hand_written_mutant_still_applies_and_names_what_catches_it() {
    // The repository (the package's `transcripts` is a link to its own).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the package is in the repository");
    let problems = problems(root, &root.join("transcripts/hand-mutants"));
    assert!(
        problems.is_empty(),
        "the hand-written mutants:\n{}",
        problems.join("\n")
    );
}

#[test]
fn each_kind_of_bad_mutant_is_found() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("src")).unwrap();
    fs::create_dir_all(root.path().join("transcripts/m4")).unwrap();
    fs::create_dir_all(root.path().join("transcripts/hand-mutants")).unwrap();
    fs::write(
        root.path().join("src/a.rs"),
        "let a = 1;\nlet b = 2;\nlet b = 2;\n",
    )
    .unwrap();
    fs::write(root.path().join("transcripts/m4/t.jsonl"), "").unwrap();
    let mutant = |name: &str, file: &str, find: &str, replace: &str, caught_by: &[&str]| {
        serde_json::json!({
            "name": name, "rule": "r", "place": "p", "file": file,
            "find": find, "replace": replace, "caught_by": caught_by,
            "cargo_tests": [], "why_no_transcript": null,
        })
    };
    let good = mutant(
        "good",
        "src/a.rs",
        "let a = 1;",
        "let a = 0;",
        &["m4/t.jsonl"],
    );
    let folder = root.path().join("transcripts/hand-mutants");
    let write = |mutants: Vec<Value>| {
        fs::write(folder.join("t.json"), Value::Array(mutants).to_string()).unwrap();
    };
    let check = || problems(root.path(), &folder);

    write(vec![good.clone()]);
    assert_eq!(check(), Vec::<String>::new());
    let tests_only = serde_json::json!({
        "name": "tests-only", "rule": "r", "place": "p", "file": "src/a.rs",
        "find": "let a = 1;", "replace": "let a = 2;", "caught_by": [],
        "cargo_tests": ["-p x --lib y"], "why_no_transcript": "no transcript reaches it",
    });
    write(vec![tests_only.clone()]);
    assert_eq!(check(), Vec::<String>::new());

    let cases = [
        (
            mutant("m", "src/missing.rs", "x", "y", &["m4/t.jsonl"]),
            "the file src/missing.rs",
        ),
        (
            mutant("m", "src/a.rs", "let c = 3;", "y", &["m4/t.jsonl"]),
            "occurs 0 times",
        ),
        (
            mutant("m", "src/a.rs", "let b = 2;", "y", &["m4/t.jsonl"]),
            "occurs 2 times",
        ),
        (
            mutant("m", "src/a.rs", "let a = 1;", "let a = 1;", &["m4/t.jsonl"]),
            "changes nothing",
        ),
        (
            mutant("m", "src/a.rs", "let a = 1;", "y", &["m4/gone.jsonl"]),
            "m4/gone.jsonl",
        ),
        (
            mutant("m", "src/a.rs", "let a = 1;", "y", &[]),
            "no `caught_by`",
        ),
    ];
    for (bad, expected) in cases {
        write(vec![good.clone(), bad.clone()]);
        let found = check();
        assert!(
            found.len() == 1 && found[0].contains(expected),
            "{bad}: expected one problem with {expected:?}, found {found:?}"
        );
    }
    let mut without_why = tests_only.clone();
    without_why["why_no_transcript"] = Value::Null;
    write(vec![without_why]);
    assert!(
        check().iter().any(|p| p.contains("no `caught_by`")),
        "{:?}",
        check()
    );

    // A name twice: in one file, and in two files.
    write(vec![good.clone(), good.clone()]);
    assert!(
        check()
            .iter()
            .any(|p| p.contains("also a mutant's of t.json"))
    );
    write(vec![good.clone()]);
    fs::write(folder.join("u.json"), Value::Array(vec![good]).to_string()).unwrap();
    assert!(
        check()
            .iter()
            .any(|p| p.starts_with("u.json: good: the name is also"))
    );
    fs::write(folder.join("u.json"), "{").unwrap();
    assert!(check().iter().any(|p| p.starts_with("u.json: ")));
}
