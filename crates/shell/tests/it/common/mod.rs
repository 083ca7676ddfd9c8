//! Shared test helpers: the command corpus used by the oracle, differential and
//! property tests. The conformance files are vendored in the repository at
//! `tests/data/conformance/` (see its `PROVENANCE.md`); the project's own
//! corpus in `tests/corpus/`.

#![allow(dead_code)]

use std::path::PathBuf;

/// One command of the corpus and where it came from.
#[derive(Clone, Debug)]
pub struct CorpusCase {
    pub origin: String,
    pub command: String,
}

/// The project root (two levels above this crate).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tests/data/conformance/` under the project root (vendored copies).
pub fn conformance_dir() -> PathBuf {
    project_root().join("tests/data/conformance")
}

/// Reads a JSON Lines file into values; panics with the file and line on bad input.
pub fn read_jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: bad JSON: {e}", path.display(), i + 1))
        })
        .collect()
}

/// The bypass corpus (`bypass_cases.jsonl`), every command.
pub fn bypass_corpus() -> Vec<CorpusCase> {
    read_jsonl(&conformance_dir().join("bypass_cases.jsonl"))
        .into_iter()
        .map(|v| CorpusCase {
            origin: format!("bypass {}", v["id"].as_str().unwrap_or("?")),
            command: v["command"]
                .as_str()
                .expect("bypass case without command")
                .to_string(),
        })
        .collect()
}

/// The project's own corpus (`tests/corpus/*.jsonl`, objects with `command`).
pub fn own_corpus() -> Vec<CorpusCase> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        for (i, v) in read_jsonl(&f).into_iter().enumerate() {
            out.push(CorpusCase {
                origin: format!("{name}:{}", i + 1),
                command: v["command"]
                    .as_str()
                    .expect("corpus case without command")
                    .to_string(),
            });
        }
    }
    out
}

/// Shell commands of `seed_cases.jsonl` (rows that are shell text, not tool calls or skill rows).
pub fn seed_shell_corpus() -> Vec<CorpusCase> {
    read_jsonl(&conformance_dir().join("seed_cases.jsonl"))
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let command = v["command"].as_str()?;
            let expected = v["expected"].as_str().unwrap_or("");
            let shell = matches!(
                expected,
                "dangerous" | "not-dangerous" | "ordinary" | "unresolved" | "platform-dependent"
            );
            shell.then(|| CorpusCase {
                origin: format!("seed line {}", i + 1),
                command: command.to_string(),
            })
        })
        .collect()
}

/// The whole corpus: bypass cases, seed shell cases and the project's own.
pub fn full_corpus() -> Vec<CorpusCase> {
    let mut all = bypass_corpus();
    all.extend(seed_shell_corpus());
    all.extend(own_corpus());
    all
}

/// Reads a JSON Lines file into `(line number, value)` pairs (1-based, blank lines
/// skipped but counted), so a failure can name the line of the file.
pub fn read_jsonl_numbered(path: &std::path::Path) -> Vec<(usize, serde_json::Value)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: bad JSON: {e}", path.display(), i + 1));
            (i + 1, v)
        })
        .collect()
}

/// Shell texts of the peer suites (`codex_cases.jsonl`, `hook_cases.jsonl`): every
/// row whose `command` is a string. Their verdicts are in the peers' terms; only
/// the text is taken, for tests that need shell input (differential, properties).
pub fn peer_shell_corpus() -> Vec<CorpusCase> {
    let mut out = Vec::new();
    for file in ["codex_cases.jsonl", "hook_cases.jsonl"] {
        for (i, v) in read_jsonl(&conformance_dir().join(file))
            .into_iter()
            .enumerate()
        {
            if let Some(command) = v["command"].as_str() {
                out.push(CorpusCase {
                    origin: format!("{file}:{}", i + 1),
                    command: command.to_string(),
                });
            }
        }
    }
    out
}

/// [`full_corpus`] plus [`peer_shell_corpus`].
pub fn extended_corpus() -> Vec<CorpusCase> {
    let mut all = full_corpus();
    all.extend(peer_shell_corpus());
    all
}
