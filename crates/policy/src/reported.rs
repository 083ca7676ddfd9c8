//! File-system facts gathered on one machine and judged on another: a team
//! server decides a device's tool call with the facts the device's own file
//! system gave (its symlinks, its home, its protected files), never with the
//! server's file system, which knows nothing of the device's paths.
//!
//! [`Recording`] wraps the device's real facts and keeps every answer a
//! decision asked for: a [`FactsReport`], a plain value sent with the call.
//! [`Reported`] answers from that report on the server; a question the
//! report does not answer gets a fail-closed fact — outside every workspace,
//! protected and secret — so a missing or trimmed report can make a decision
//! stricter, never looser. No I/O here.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::facts::{PathFact, PathFacts, Zone};

/// Why an unreported path is refused (the reason a person reads).
pub const UNREPORTED: &str = "not reported by the device";

/// The most answers a report may carry (a bound on what a device can make
/// a server hold in memory for one call).
pub const MAX_REPORTED: usize = 4096;

/// Every answer a device's file system gave to one decision.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactsReport {
    /// The device user's home directory.
    pub home: String,
    /// `resolve(raw, cwd)` answers.
    #[serde(default)]
    pub paths: Vec<ReportedPath>,
    /// `expand_glob(pattern, cwd)` answers (`None`: it could not tell).
    #[serde(default)]
    pub globs: Vec<ReportedGlob>,
    /// `exists(raw, cwd)` answers.
    #[serde(default)]
    pub exists: Vec<ReportedExists>,
}

/// One path as the device resolved it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedPath {
    pub cwd: String,
    pub fact: PathFact,
}

/// One glob as the device expanded it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedGlob {
    pub pattern: String,
    pub cwd: String,
    pub paths: Option<Vec<String>>,
}

/// Whether a path exists on the device.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportedExists {
    pub raw: String,
    pub cwd: String,
    pub exists: bool,
}

impl FactsReport {
    /// Refuses a report too large to hold, or whose home is not absolute.
    pub fn check(&self) -> Result<(), String> {
        let answers = self.paths.len() + self.globs.len() + self.exists.len();
        if answers > MAX_REPORTED {
            return Err(format!(
                "the device reported {answers} file-system answers (at most {MAX_REPORTED})"
            ));
        }
        if !self.home.starts_with('/') {
            return Err(format!("the device's home `{}` is not absolute", self.home));
        }
        Ok(())
    }
}

/// The device's real facts, with every answer kept for a [`FactsReport`].
pub struct Recording<'a> {
    inner: &'a dyn PathFacts,
    report: RefCell<FactsReport>,
}

impl<'a> Recording<'a> {
    pub fn new(inner: &'a dyn PathFacts) -> Recording<'a> {
        Recording {
            inner,
            report: RefCell::new(FactsReport {
                home: inner.home().to_owned(),
                ..FactsReport::default()
            }),
        }
    }

    /// What was asked and answered so far.
    pub fn report(&self) -> FactsReport {
        self.report.borrow().clone()
    }
}

impl PathFacts for Recording<'_> {
    fn resolve(&self, raw: &str, cwd: &str) -> PathFact {
        let fact = self.inner.resolve(raw, cwd);
        let mut r = self.report.borrow_mut();
        if !r.paths.iter().any(|p| p.fact.raw == raw && p.cwd == cwd) {
            r.paths.push(ReportedPath {
                cwd: cwd.to_owned(),
                fact: fact.clone(),
            });
        }
        fact
    }

    fn home(&self) -> &str {
        self.inner.home()
    }

    fn expand_glob(&self, pattern: &str, cwd: &str) -> Option<Vec<String>> {
        let paths = self.inner.expand_glob(pattern, cwd);
        let mut r = self.report.borrow_mut();
        if !r.globs.iter().any(|g| g.pattern == pattern && g.cwd == cwd) {
            r.globs.push(ReportedGlob {
                pattern: pattern.to_owned(),
                cwd: cwd.to_owned(),
                paths: paths.clone(),
            });
        }
        paths
    }

    fn exists(&self, raw: &str, cwd: &str) -> bool {
        let exists = self.inner.exists(raw, cwd);
        let mut r = self.report.borrow_mut();
        if !r.exists.iter().any(|e| e.raw == raw && e.cwd == cwd) {
            r.exists.push(ReportedExists {
                raw: raw.to_owned(),
                cwd: cwd.to_owned(),
                exists,
            });
        }
        exists
    }
}

/// A device's [`FactsReport`], answering as its file system did.
#[derive(Clone, Debug)]
pub struct Reported {
    home: String,
    paths: HashMap<(String, String), PathFact>,
    globs: HashMap<(String, String), Option<Vec<String>>>,
    exists: HashMap<(String, String), bool>,
}

impl Reported {
    /// The report's answers ([`FactsReport::check`] it first). Where the
    /// report answers one question twice, the first answer counts.
    pub fn new(report: FactsReport) -> Reported {
        let mut paths = HashMap::new();
        for p in report.paths {
            paths.entry((p.fact.raw.clone(), p.cwd)).or_insert(p.fact);
        }
        let mut globs = HashMap::new();
        for g in report.globs {
            globs.entry((g.pattern, g.cwd)).or_insert(g.paths);
        }
        let mut exists = HashMap::new();
        for e in report.exists {
            exists.entry((e.raw, e.cwd)).or_insert(e.exists);
        }
        Reported {
            home: report.home,
            paths,
            globs,
            exists,
        }
    }
}

impl PathFacts for Reported {
    fn resolve(&self, raw: &str, cwd: &str) -> PathFact {
        if let Some(fact) = self.paths.get(&(raw.to_owned(), cwd.to_owned())) {
            return fact.clone();
        }
        // Not asked on the device: nothing is known of it, so nothing is
        // allowed on it without a person, and it is never written.
        PathFact {
            raw: raw.to_owned(),
            canonical: crate::facts::LexicalFacts {
                home: self.home.clone(),
                ..Default::default()
            }
            .normalize(raw, cwd),
            zone: Zone::External,
            blocked: false,
            blocked_write: true,
            protected: Some(UNREPORTED.to_owned()),
            secret: Some(UNREPORTED.to_owned()),
            hard_linked: false,
            contains_protected: Some(UNREPORTED.to_owned()),
        }
    }

    fn home(&self) -> &str {
        &self.home
    }

    fn expand_glob(&self, pattern: &str, cwd: &str) -> Option<Vec<String>> {
        self.globs
            .get(&(pattern.to_owned(), cwd.to_owned()))
            .cloned()
            .flatten()
    }

    fn exists(&self, raw: &str, cwd: &str) -> bool {
        // `true` is the trait's "cannot tell".
        self.exists
            .get(&(raw.to_owned(), cwd.to_owned()))
            .copied()
            .unwrap_or(true)
    }
}
