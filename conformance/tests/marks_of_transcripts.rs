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
