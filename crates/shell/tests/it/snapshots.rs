//! Snapshot tests: the exact analysis (as `portcullis analyze --json` prints it)
//! of the tricky constructs in `tests/snapshots/analysis.jsonl`. Any change in
//! output fails here first; review the difference, then regenerate with
//!
//! ```sh
//! PORTCULLIS_UPDATE_SNAPSHOTS=1 cargo test -p portcullis-shell --test it -- snapshots::
//! ```
//!
//! and commit the file with the change that caused it.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

use serde_json::{Value, json};

fn snapshot_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/analysis.jsonl")
}

#[test]
fn analyses_match_their_snapshots() {
    let path = snapshot_file();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let update = std::env::var_os("PORTCULLIS_UPDATE_SNAPSHOTS").is_some();
    let mut lines = Vec::new();
    let mut mismatches = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: bad JSON: {e}", path.display(), i + 1));
        let command = row["command"].as_str().expect("row without command");
        let actual = serde_json::to_value(portcullis_shell::analyze(command)).unwrap();
        if row.get("analysis") != Some(&actual) {
            mismatches.push(format!(
                "line {}: {command:?}\n  snapshot: {}\n  now:      {actual}",
                i + 1,
                row.get("analysis").unwrap_or(&Value::Null)
            ));
        }
        lines.push(json!({"command": command, "analysis": actual}).to_string());
    }
    assert!(lines.len() >= 50, "only {} snapshots", lines.len());
    if update {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        return;
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} analyses differ from their snapshots (regenerate with \
         PORTCULLIS_UPDATE_SNAPSHOTS=1 once the change is intended):\n{}",
        mismatches.len(),
        lines.len(),
        mismatches.join("\n")
    );
}
