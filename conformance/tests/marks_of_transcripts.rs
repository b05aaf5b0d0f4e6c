//! The check of the marks over every transcript that applies in the contract's
//! terms: each exact text that the contract does not fix carries `"ours"`, each
//! shape demands no prose and accepts the rewording of its text, and no path
//! names this project except through `$TOKEN_DIR` or `$KEYCHAIN_SERVICE`
//! (`mcp_conformance::marks_check`).

use mcp_conformance::contract_texts::ContractTexts;
use mcp_conformance::format::{discover_files, read};
use mcp_conformance::marks_check::check;
use mcp_conformance::mode::not_applicable;
use mcp_conformance::paths::transcripts_dir;

#[test]
fn every_exact_text_of_ours_is_marked_with_a_fair_shape() {
    let root = transcripts_dir();
    let mut findings = Vec::new();
    let mut checked = 0;
    for path in discover_files(&root).expect("the transcripts folder is read") {
        let transcript = match read(&path, &root) {
            Ok(transcript) => transcript,
            Err(error) => panic!("{error}"),
        };
        if not_applicable(&transcript).is_some() {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(&path).expect("a transcript is read");
        for finding in check(&text, ContractTexts::of_contract()) {
            findings.push(format!("{}:{finding}", transcript.display));
        }
    }
    assert!(checked > 300, "only {checked} transcripts apply");
    assert!(
        findings.is_empty(),
        "{} findings (mark each text of ours with \"ours\", see transcripts/README.md):\n{}",
        findings.len(),
        findings.join("\n")
    );
}

/// The names that the help block of `file` demands in `--contract`.
fn help_names(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(transcripts_dir().join(file)).expect("the transcript");
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|step| step.get("expect_raw_block").is_some())
        .flat_map(|step| {
            step.pointer("/ours/names")
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|name| name.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_help_texts_must_name_each_option_the_contract_gives_them() {
    let contract = ContractTexts::of_contract();
    let help = help_names("m1/cli-help.jsonl");
    for option in contract.options() {
        assert!(help.iter().any(|name| name == option), "--help: {option}");
    }
    let logout_help = help_names("m4/logout-help.jsonl");
    for option in contract.logout_options() {
        assert!(
            logout_help.iter().any(|name| name == option),
            "logout --help: {option}"
        );
    }
}
