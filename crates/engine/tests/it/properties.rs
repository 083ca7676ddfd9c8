//! Properties of the engine's decisions with grants, over generated calls and
//! grants on a real temporary file tree and store (issue 14 item 6):
//! - a grant never widens beyond its target: whatever a set of grants turns
//!   into an allow, every effect of the call is one a grant's target covers
//!   literally (the oracle below, written apart from the engine: a path
//!   under the granted folder with the granted operation, a command of the
//!   granted program, the granted tool by name) or one the policy allows
//!   alone; and grants built to cover each effect do allow the call;
//! - a child session never exceeds its parent: with grants on the parent, a
//!   sibling and the device, a child and a grandchild decide as the parent
//!   does; once the parent is revoked, both decide as the policy alone;
//! - deny beats ask beats allow: a deny rule matching one effect denies
//!   whatever allow and ask rules match and whatever grants cover the call;
//!   an ask rule with allow rules and no grant never allows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};

use crate::support;

use portcullis_engine::{CallContext, Engine, Outcome, SessionSources, SessionStatus, actions};
use portcullis_paths::FsPaths;
use portcullis_policy::{McpToolName, Origin, ToolCall, ToolRef, Verdict};
use portcullis_store::{AgentKind, GrantScope, GrantTarget, NewGrant, NewSession, Op, Store};
use proptest::prelude::*;
use serde_json::json;

const NOW: i64 = 1_800_000_000;

/// The files of the tree, under `ext/` (outside the workspace: reading or
/// writing any of them asks). `d`, `dd` and `d.txt` share a prefix; `link`
/// is a symbolic link to `d`.
const FILES: &[&str] = &[
    "ext/a.txt",
    "ext/b.txt",
    "ext/d.txt",
    "ext/d/c.txt",
    "ext/d/e/f.txt",
    "ext/dd/g.txt",
];
const DIRS: &[&str] = &["ext", "ext/d", "ext/d/e", "ext/dd"];
/// Paths calls name: the files, the folders, files not there yet, and
/// paths through the link.
const CALL_PATHS: &[&str] = &[
    "ext/a.txt",
    "ext/b.txt",
    "ext/d.txt",
    "ext/d/c.txt",
    "ext/d/e/f.txt",
    "ext/dd/g.txt",
    "ext/new.txt",
    "ext/d/new.txt",
    "ext/dd/new.txt",
    "ext/link/c.txt",
    "ext/link/new.txt",
    "ext/d",
    "ext/dd",
    "ext/d/e",
];
/// Where a call writes to (never a folder: a copy into a folder writes a
/// file of its own name, which the oracle does not model).
const WRITE_PATHS: &[&str] = &[
    "ext/a.txt",
    "ext/d.txt",
    "ext/d/c.txt",
    "ext/dd/g.txt",
    "ext/new.txt",
    "ext/d/new.txt",
    "ext/dd/new.txt",
    "ext/link/new.txt",
];
/// Programs whose only effects are their files': allowed, their effects
/// judged. `chmod` and `curl` ask.
const FREE: &[&str] = &["cat", "ls", "cp", "echo", "touch", "mv", "rm"];
/// MCP tools by the name the agent gives, no server known: `mcp__a___t` is
/// `a`'s `_t` or `a_`'s `t`, Gemini's `mcp_my_fs_write` has three readings.
const MCP_TOOLS: &[&str] = &[
    "mcp__fs__read",
    "mcp__fs__write",
    "mcp__a___t",
    "mcp__ab__t",
    "mcp_my_fs_write",
];

const BASE_POLICY: &str = "mode = \"ask\"\n";

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Engine<FsPaths>,
}

impl World {
    fn new(config: &str) -> World {
        World::with(|_| config.to_string())
    }

    /// A world whose configuration names its paths (`config` is given the
    /// tree's root).
    fn with(config: impl FnOnce(&Path) -> String) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for d in DIRS.iter().chain(&["home/proj", "data"]) {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in FILES {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("ext/d"), root.join("ext/link")).unwrap();
        let engine = support::engine(&root, &config(&root));
        World {
            _tmp: tmp,
            root,
            engine,
        }
    }

    fn p(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn store(&self) -> &Store {
        self.engine.store().unwrap()
    }

    fn session(&self, id: &str, parent: Option<&str>) {
        actions::register_session(
            self.store(),
            &NewSession {
                id: id.into(),
                agent: Some("claude-code".into()),
                cwd: Some(self.p("home/proj")),
                parent: parent.map(Into::into),
                kind: if parent.is_some() {
                    AgentKind::Subagent
                } else {
                    AgentKind::Main
                },
                workflow: None,
                ttl_secs: None,
            },
            NOW - 10,
        )
        .unwrap();
    }

    /// Adds the grant (to the device when it is a device read grant) and
    /// answers its id and session.
    fn grant(&self, session: Option<&str>, g: &GrantSpec) -> (i64, Option<String>) {
        let (scope, session) = match (g.scope, session) {
            // Device grants are for reads only, and belong to no session.
            (GrantScope::Device, _) if g.op == Op::Read => (GrantScope::Device, None),
            (GrantScope::Device, s) | (GrantScope::Session, s) => (GrantScope::Session, s),
            (GrantScope::Once, s) => (GrantScope::Once, s),
        };
        let session = match (scope, session) {
            (GrantScope::Device, _) => None,
            (_, s) => Some(s.unwrap_or("P").to_string()),
        };
        let grant = actions::add_grant(
            self.store(),
            &NewGrant {
                session,
                scope,
                op: g.op,
                target: g.target(self),
                expires_at: None,
                approver: "test".into(),
                request: None,
            },
            NOW - 5,
        )
        .unwrap();
        (grant.id, grant.session)
    }

    fn call(&self, c: &CallSpec) -> ToolCall {
        let tool = |name: &str, origin: Origin| ToolRef {
            name: name.into(),
            origin,
            server: None,
            manifest: None,
        };
        let bash = |text: String| (tool("Bash", Origin::Core), json!({ "command": text }));
        let (tool, input) = match c {
            CallSpec::ReadTool(p) => (tool("Read", Origin::Core), json!({"file_path": self.p(p)})),
            CallSpec::WriteTool(p) => (
                tool("Write", Origin::Core),
                json!({"file_path": self.p(p), "content": "y"}),
            ),
            CallSpec::Cat(p) => bash(format!("cat {}", self.p(p))),
            CallSpec::Ls(p) => bash(format!("ls {}", self.p(p))),
            CallSpec::Rm(p) => bash(format!("rm {}", self.p(p))),
            CallSpec::Touch(p) => bash(format!("touch {}", self.p(p))),
            CallSpec::EchoTo(p) => bash(format!("echo hi > {}", self.p(p))),
            CallSpec::Cp(p, q) => bash(format!("cp {} {}", self.p(p), self.p(q))),
            CallSpec::Mv(p, q) => bash(format!("mv {} {}", self.p(p), self.p(q))),
            CallSpec::Chmod(p) => bash(format!("chmod 644 {}", self.p(p))),
            CallSpec::Curl(None) => bash("curl https://x.example/".into()),
            CallSpec::Curl(Some(p)) => bash(format!("curl -o {} https://x.example/", self.p(p))),
            CallSpec::Mcp(name, path) => (
                tool(name, Origin::Mcp),
                match path {
                    Some(p) => json!({ "path": self.p(p) }),
                    None => json!({ "n": 1 }),
                },
            ),
        };
        ToolCall {
            tool,
            input,
            cwd: self.p("home/proj"),
        }
    }

    fn decide(&self, c: &CallSpec, session: Option<&str>) -> Outcome {
        let ctx = CallContext {
            sources: SessionSources {
                body: session.map(Into::into),
                ..Default::default()
            },
            // Judge with the grants, spending none: the same call judged in
            // two sessions sees the same once-grants.
            dry_run: true,
            ..Default::default()
        };
        self.engine.decide(&self.call(c), &ctx, NOW).unwrap()
    }

    /// The path as the file system places it (std's own resolution, not the
    /// engine's): the folder's real path and the name, for a file not there.
    fn canonical(&self, rel: &str) -> String {
        canonical(&self.root, rel)
    }
}

fn canonical(root: &Path, rel: &str) -> String {
    let path = root.join(rel);
    let real = std::fs::canonicalize(&path).unwrap_or_else(|_| {
        let parent = std::fs::canonicalize(path.parent().unwrap()).unwrap();
        parent.join(path.file_name().unwrap())
    });
    real.to_string_lossy().into_owned()
}

/// A call, and what it does by construction.
#[derive(Clone, Debug)]
enum CallSpec {
    ReadTool(&'static str),
    WriteTool(&'static str),
    Cat(&'static str),
    Ls(&'static str),
    Rm(&'static str),
    Touch(&'static str),
    EchoTo(&'static str),
    Cp(&'static str, &'static str),
    Mv(&'static str, &'static str),
    Chmod(&'static str),
    /// `curl URL`, or `curl -o PATH URL`.
    Curl(Option<&'static str>),
    Mcp(&'static str, Option<&'static str>),
}

/// What a call does, with paths as written (relative to the tree).
#[derive(Clone, Debug, PartialEq)]
enum Does {
    Exec(&'static str),
    Read(&'static str),
    Write(&'static str),
    Delete(&'static str),
    /// Both ends of a move.
    Move(&'static str, &'static str),
    /// Network use by a program.
    Net(&'static str),
    Mcp(&'static str),
}

impl CallSpec {
    fn does(&self) -> Vec<Does> {
        use Does::*;
        match *self {
            CallSpec::ReadTool(p) => vec![Read(p)],
            CallSpec::WriteTool(p) => vec![Write(p)],
            CallSpec::Cat(p) => vec![Exec("cat"), Read(p)],
            CallSpec::Ls(p) => vec![Exec("ls"), Read(p)],
            CallSpec::Rm(p) => vec![Exec("rm"), Delete(p)],
            CallSpec::Touch(p) => vec![Exec("touch"), Write(p)],
            CallSpec::EchoTo(p) => vec![Exec("echo"), Write(p)],
            CallSpec::Cp(p, q) => vec![Exec("cp"), Read(p), Write(q)],
            // Moves the source to the destination, or into it (a folder).
            CallSpec::Mv(p, q) => vec![Exec("mv"), Move(p, q), Write(q)],
            CallSpec::Chmod(p) => vec![Exec("chmod"), Write(p)],
            CallSpec::Curl(None) => vec![Exec("curl"), Net("curl")],
            CallSpec::Curl(Some(p)) => vec![Exec("curl"), Write(p), Net("curl")],
            CallSpec::Mcp(name, None) => vec![Mcp(name)],
            CallSpec::Mcp(name, Some(p)) => vec![Mcp(name), Write(p)],
        }
    }
}

/// A grant, as generated.
#[derive(Clone, Debug)]
struct GrantSpec {
    scope: GrantScope,
    op: Op,
    target: TargetSpec,
}

#[derive(Clone, Debug)]
enum TargetSpec {
    /// A file or folder of the tree (relative), its real path stored.
    Path(&'static str, bool),
    /// `PROG *`.
    Program(&'static str),
    Tool(&'static str),
}

impl GrantSpec {
    fn target(&self, w: &World) -> GrantTarget {
        match self.target {
            TargetSpec::Path(p, folder) => GrantTarget::Path {
                canonical: w.canonical(p),
                folder,
            },
            TargetSpec::Program(p) => GrantTarget::Command {
                pattern: format!("{p} *"),
            },
            TargetSpec::Tool(name) => GrantTarget::Tool { name: name.into() },
        }
    }

    /// The oracle: the grant's target covers what the call does, literally.
    fn covers(&self, w: &World, d: &Does) -> bool {
        let under = |rel: &str| match self.target {
            TargetSpec::Path(t, folder) => {
                let (t, p) = (w.canonical(t), w.canonical(rel));
                p == t || (folder && p.starts_with(&format!("{t}/")))
            }
            _ => false,
        };
        match (d, self.op) {
            (Does::Read(p), Op::Read) | (Does::Write(p), Op::Write) => under(p),
            (Does::Delete(p), Op::Delete) => under(p),
            (Does::Move(p, q), Op::Move) => under(p) && under(q),
            (Does::Exec(prog) | Does::Net(prog), Op::Exec) => {
                matches!(self.target, TargetSpec::Program(g) if g == *prog)
            }
            (Does::Mcp(name), Op::Exec) => matches!(self.target, TargetSpec::Tool(g) if g == *name),
            _ => false,
        }
    }
}

/// What the policy allows alone: running a program whose effects are its
/// files'.
fn free(d: &Does) -> bool {
    matches!(d, Does::Exec(p) if FREE.contains(p))
}

/// The grants that cover each effect of a call exactly (durable, the call's
/// own paths, files only; a folder read or listed gets a file grant on it).
fn exact_grants(c: &CallSpec) -> Vec<GrantSpec> {
    let g = |op, target| GrantSpec {
        scope: GrantScope::Session,
        op,
        target,
    };
    c.does()
        .into_iter()
        .filter(|d| !free(d))
        .flat_map(|d| match d {
            Does::Exec(p) | Does::Net(p) => vec![g(Op::Exec, TargetSpec::Program(p))],
            Does::Mcp(n) => vec![g(Op::Exec, TargetSpec::Tool(n))],
            Does::Read(p) => vec![g(Op::Read, TargetSpec::Path(p, false))],
            // A folder grant on the file: `cp SRC DEST` may also write
            // `DEST/SRC's name` (the knowledge base cannot tell whether
            // DEST is a folder when it is not there yet).
            Does::Write(p) => vec![g(Op::Write, TargetSpec::Path(p, true))],
            Does::Delete(p) => vec![g(Op::Delete, TargetSpec::Path(p, false))],
            // One grant covers both ends of a move: a folder above both.
            Does::Move(..) => vec![g(Op::Move, TargetSpec::Path("ext", true))],
        })
        .collect()
}

fn path() -> impl Strategy<Value = &'static str> {
    prop::sample::select(CALL_PATHS)
}

fn write_path() -> impl Strategy<Value = &'static str> {
    prop::sample::select(WRITE_PATHS)
}

fn call_spec() -> impl Strategy<Value = CallSpec> {
    prop_oneof![
        path().prop_map(CallSpec::ReadTool),
        write_path().prop_map(CallSpec::WriteTool),
        path().prop_map(CallSpec::Cat),
        path().prop_map(CallSpec::Ls),
        write_path().prop_map(CallSpec::Rm),
        write_path().prop_map(CallSpec::Touch),
        write_path().prop_map(CallSpec::EchoTo),
        (path(), write_path()).prop_map(|(p, q)| CallSpec::Cp(p, q)),
        (write_path(), write_path()).prop_map(|(p, q)| CallSpec::Mv(p, q)),
        write_path().prop_map(CallSpec::Chmod),
        prop::option::of(write_path()).prop_map(CallSpec::Curl),
        (
            prop::sample::select(MCP_TOOLS),
            prop::option::of(write_path())
        )
            .prop_map(|(n, p)| CallSpec::Mcp(n, p)),
    ]
}

fn grant_spec() -> impl Strategy<Value = GrantSpec> {
    let target = prop_oneof![
        4 => (
            prop::sample::select(
                DIRS.iter()
                    .chain(FILES)
                    .copied()
                    .collect::<Vec<&'static str>>()
            ),
            any::<bool>()
        )
            .prop_map(|(p, folder)| TargetSpec::Path(p, folder)),
        1 => prop::sample::select(&["cat", "rm", "chmod", "curl", "chmo", "c", "curl -o"][..])
            .prop_map(TargetSpec::Program),
        1 => prop::sample::select(&["mcp__fs__read", "mcp__fs__write", "mcp__a__t", "mcp__a___t", "mcp__ab__t", "mcp__fs", "mcp_my_fs_write"][..])
            .prop_map(TargetSpec::Tool),
    ];
    let op = prop::sample::select(&[Op::Read, Op::Write, Op::Delete, Op::Move, Op::Exec][..]);
    let scope =
        prop::sample::select(&[GrantScope::Session, GrantScope::Once, GrantScope::Device][..]);
    (scope, op, target).prop_map(|(scope, op, target)| GrantSpec { scope, op, target })
}

/// A rule that matches one thing the call does.
fn matching_rule(root: &Path, d: &Does, wide: bool) -> String {
    let path = |rel: &str| {
        let c = canonical(root, rel);
        if wide {
            // The folder it is in, and everything below.
            let parent = Path::new(&c)
                .parent()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            format!("/{parent}/**")
        } else {
            format!("/{c}")
        }
    };
    match d {
        Does::Exec(p) | Does::Net(p) => format!("Bash({p} *)"),
        Does::Read(p) => format!("Read({})", path(p)),
        Does::Write(p) | Does::Delete(p) | Does::Move(p, _) => format!("Edit({})", path(p)),
        // Every tool of (one reading's) server.
        Does::Mcp(n) if wide => match McpToolName::parse(n) {
            Some(name) => format!("mcp__{}", name.server()),
            None => format!(
                "mcp__{}",
                n.trim_start_matches("mcp_").split('_').next().unwrap()
            ),
        },
        // The name as the agent sends it: `mcp__server__tool`, or Gemini's
        // `mcp_a_b_c` with no server, which a rule so spelt names whatever
        // the reading.
        Does::Mcp(n) => n.to_string(),
    }
}

fn toml_list(rules: &[String]) -> String {
    serde_json::to_string(rules).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    /// Whatever grants turn into an allow is covered, effect by effect, by a
    /// grant's target (or allowed by the policy alone); a grant never
    /// tightens; grants made to cover each effect exactly allow the call.
    #[test]
    fn a_grant_never_widens_beyond_its_target(
        grants in prop::collection::vec(grant_spec(), 1..4),
        calls in prop::collection::vec(call_spec(), 1..5),
    ) {
        let w = World::new(BASE_POLICY);
        w.session("P", None);
        w.session("N", None);
        for g in &grants {
            w.grant(Some("P"), g);
        }
        for c in &calls {
            let with = w.decide(c, Some("P"));
            let without = w.decide(c, Some("N"));
            prop_assert_eq!(without.session_status, SessionStatus::Active);
            prop_assert!(
                without.decision.decision != Verdict::Allow
                    || with.decision.decision == Verdict::Allow,
                "a grant tightened {:?}", c
            );
            if with.decision.decision == Verdict::Allow
                && without.decision.decision != Verdict::Allow
            {
                for d in c.does() {
                    prop_assert!(
                        free(&d) || grants.iter().any(|g| g.covers(&w, &d)),
                        "{:?} allowed by {:?} ({:?}), but no grant covers {:?}",
                        c, grants, with.grants_used, d
                    );
                }
            }
        }
        // Completeness, so that the property above is not vacuous.
        let w = World::new(BASE_POLICY);
        w.session("P", None);
        let c = &calls[0];
        for g in exact_grants(c) {
            w.grant(Some("P"), &g);
        }
        let o = w.decide(c, Some("P"));
        prop_assert_eq!(
            o.decision.decision, Verdict::Allow,
            "{:?} with {:?}: {:?}", c, exact_grants(c), o.decision.reasons
        );
    }

    /// The request is the whole call (issue 16): approving the request a
    /// call raised allows that call again — nothing less — and no other call
    /// gains from it — nothing more: whatever call is allowed in the session
    /// but not in a session without the approval is that very call.
    #[test]
    fn an_approved_request_allows_its_call_and_no_other(
        asked in call_spec(),
        others in prop::collection::vec(call_spec(), 1..6),
        session_wide in any::<bool>(),
    ) {
        let w = World::new(BASE_POLICY);
        w.session("P", None);
        w.session("N", None);
        let call = w.call(&asked);
        let first = w.engine.decide(&call, &in_session("P"), NOW).unwrap();
        // A call refused for what no person may lift raises no request.
        let Some(request) = first.request else {
            prop_assert_ne!(first.decision.decision, Verdict::Allow);
            return Ok(());
        };
        let scope = if session_wide {
            portcullis_store::Resolution::Session
        } else {
            portcullis_store::Resolution::Once
        };
        actions::resolve_request(w.store(), request.id, scope, "person", NOW).unwrap();
        for o in &others {
            let other = w.call(o);
            let with = w.decide(o, Some("P"));
            let without = w.decide(o, Some("N"));
            if with.decision.decision == Verdict::Allow && without.decision.decision != Verdict::Allow {
                prop_assert!(
                    other.tool.name == call.tool.name && other.input == call.input,
                    "approving {:?} allowed {:?} too", asked, o
                );
            }
        }
        let retry = w.decide(&asked, Some("P"));
        prop_assert_eq!(
            retry.decision.decision, Verdict::Allow,
            "the retry of {:?} after its approval: {:?}", asked, retry.decision.reasons
        );
    }

    /// A child (and its child) decides as its parent does, never more: the
    /// parent's grants flow down, a sibling's never; once the parent is
    /// revoked, the chain decides as the policy alone.
    #[test]
    fn a_child_session_never_exceeds_its_parent(
        parent in prop::collection::vec(grant_spec(), 0..4),
        sibling in prop::collection::vec(grant_spec(), 0..3),
        calls in prop::collection::vec(call_spec(), 1..5),
    ) {
        let w = World::new(BASE_POLICY);
        w.session("P", None);
        w.session("C", Some("P"));
        w.session("G", Some("C"));
        w.session("S", Some("P"));
        // The grants the chain may use: the parent's and the device's.
        let mut usable = Vec::new();
        for g in &parent {
            usable.push(w.grant(Some("P"), g).0);
        }
        for g in &sibling {
            if let (id, None) = w.grant(Some("S"), g) {
                usable.push(id);
            }
        }
        // The calls, and what each sibling grant covers exactly, so that
        // a sibling's grant would show.
        let mut all = calls.clone();
        all.extend(calls.iter().take(2).cloned());
        for c in calls.iter().take(2) {
            for g in exact_grants(c) {
                if let (id, None) = w.grant(Some("S"), &g) {
                    usable.push(id);
                }
            }
        }
        for c in &all {
            let p = w.decide(c, Some("P")).decision.decision;
            for child in ["C", "G"] {
                let o = w.decide(c, Some(child));
                prop_assert_eq!(o.session_status, SessionStatus::Active);
                prop_assert!(
                    o.grants_used.iter().all(|id| usable.contains(id)),
                    "{} used {:?}, not all its parent's or the device's ({:?})",
                    child, o.grants_used, usable
                );
                prop_assert!(
                    o.decision.decision >= p,
                    "{} exceeds its parent on {:?}: {:?} vs {:?} ({:?})",
                    child, c, o.decision.decision, p, o.grants_used
                );
                prop_assert_eq!(o.decision.decision, p, "{} on {:?}", child, c);
            }
        }
        prop_assert!(actions::revoke_session(w.store(), "P", "test", NOW).unwrap());
        for c in &all {
            let alone = w.decide(c, None).decision.decision;
            for s in ["P", "C", "G"] {
                let o = w.decide(c, Some(s));
                prop_assert_eq!(o.session_status, SessionStatus::Inactive);
                prop_assert!(o.grants_used.is_empty());
                prop_assert_eq!(o.decision.decision, alone, "{} on {:?}", s, c);
            }
        }
    }

    /// A deny rule matching one effect denies, whatever allow and ask rules
    /// match and whatever grants cover the call; an ask rule among allow
    /// rules, with no grant, never allows.
    #[test]
    fn deny_beats_ask_beats_allow_whatever_the_grants(
        c in call_spec(),
        pick in any::<prop::sample::Index>(),
        wide in any::<bool>(),
        with_ask in any::<bool>(),
        extra in prop::collection::vec(grant_spec(), 0..3),
    ) {
        let d = pick.get(&c.does()).clone();
        let config = |deny: &[String], ask: &[String]| {
            format!(
                "mode = \"ask\"\n[permissions]\nallow = {}\nask = {}\ndeny = {}\n",
                toml_list(&[
                    "Bash(*)".to_string(),
                    "Read(//**)".to_string(),
                    "Edit(//**)".to_string(),
                    "mcp__*".to_string(),
                ]),
                toml_list(ask),
                toml_list(deny),
            )
        };
        let mut deny = String::new();
        let w = World::with(|root| {
            deny = matching_rule(root, &d, wide);
            let ask: Vec<String> = if with_ask {
                vec![matching_rule(root, &d, !wide)]
            } else {
                Vec::new()
            };
            config(std::slice::from_ref(&deny), &ask)
        });
        w.session("P", None);
        w.session("C", Some("P"));
        for g in exact_grants(&c).iter().chain(&extra) {
            w.grant(Some("P"), g);
        }
        for s in [Some("P"), Some("C"), None] {
            let o = w.decide(&c, s);
            prop_assert_eq!(
                o.decision.decision, Verdict::Deny,
                "{:?} under deny {} in {:?}: {:?}", c, deny, s, o.decision.reasons
            );
            prop_assert!(o.grants_used.is_empty());
        }
        // Ask beats allow: no grant, an ask rule, every allow rule.
        let mut ask = String::new();
        let w = World::with(|root| {
            ask = matching_rule(root, &d, wide);
            config(&[], std::slice::from_ref(&ask))
        });
        let o = w.decide(&c, None);
        prop_assert!(
            o.decision.decision >= Verdict::Ask,
            "{:?} under ask {}: {:?}", c, ask, o.decision.reasons
        );
    }
}

fn mcp_call(w: &World, name: &str) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: name.into(),
            origin: Origin::Mcp,
            server: None,
            manifest: None,
        },
        input: json!({ "n": 1 }),
        cwd: w.p("home/proj"),
    }
}

fn in_session(id: &str) -> CallContext {
    CallContext {
        sources: SessionSources {
            body: Some(id.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Found by the completeness half of `a_grant_never_widens_beyond_its_target`:
/// an MCP name judged as each of its readings carried a note with the
/// decision's verdict, which no grant could cover, so a grant naming the
/// tool never allowed it and no request was raised for a person.
#[test]
fn an_mcp_name_with_several_readings_is_granted_by_name() {
    for name in ["mcp__a___t", "mcp_my_fs_write"] {
        let w = World::new(BASE_POLICY);
        w.session("P", None);
        let call = mcp_call(&w, name);
        let asked = w.engine.decide(&call, &in_session("P"), NOW).unwrap();
        assert_eq!(asked.decision.decision, Verdict::Ask, "{name}");
        let request = asked
            .request
            .unwrap_or_else(|| panic!("{name}: no request"));
        assert!(
            matches!(&request.target, GrantTarget::Call { tool, .. } if tool == name),
            "{name}: {:?}",
            request.target
        );
        w.engine.approve_once(request.id, "test", NOW).unwrap();
        let o = w.engine.decide(&call, &in_session("P"), NOW).unwrap();
        assert_eq!(o.decision.decision, Verdict::Allow, "{name}");
        assert_eq!(o.grants_used.len(), 1, "{name}");
    }
}

/// A grant covers such a name only where it covers what every reading
/// refused: an ask rule about one reading (a tool-level ask, which no grant
/// lifts) is not dodged because another reading was the one kept.
#[test]
fn an_ask_rule_about_one_reading_is_not_dodged_by_a_grant() {
    for (name, rule) in [
        ("mcp__a___t", "mcp__a"),
        ("mcp__a___t", "mcp__a_"),
        ("mcp_my_fs_write", "mcp__my"),
        ("mcp_my_fs_write", "mcp__my_fs"),
    ] {
        let w = World::new(&format!(
            "mode = \"ask\"\n[permissions]\nask = [\"{rule}\"]\n"
        ));
        w.session("P", None);
        w.grant(
            Some("P"),
            &GrantSpec {
                scope: GrantScope::Session,
                op: Op::Exec,
                target: TargetSpec::Tool(name),
            },
        );
        let o = w
            .engine
            .decide(&mcp_call(&w, name), &in_session("P"), NOW)
            .unwrap();
        assert_eq!(o.decision.decision, Verdict::Ask, "{name} under ask {rule}");
        assert!(o.grants_used.is_empty(), "{name} under ask {rule}");
    }
}

/// Found while probing what a person can approve: `mv SRC DEST` outside the
/// workspace raised a request for a move of DEST alone (a file grant), which
/// never covered the move (a move needs both ends), so the same request came
/// back after every approval. The request is now the whole call: both ends,
/// approved at once, and the first approval allows the retry.
#[test]
fn an_approved_move_request_allows_the_move() {
    let w = World::new(BASE_POLICY);
    w.session("P", None);
    let call = w.call(&CallSpec::Mv("ext/a.txt", "ext/b.txt"));
    for _ in 0..2 {
        let o = w.engine.decide(&call, &in_session("P"), NOW).unwrap();
        if o.decision.decision == Verdict::Allow {
            return;
        }
        let request = o.request.expect("a request a person can approve");
        actions::resolve_request(
            w.store(),
            request.id,
            portcullis_store::Resolution::Session,
            "test",
            NOW,
        )
        .unwrap();
    }
    panic!("approved once and still asked");
}

/// An approved call covers the paths it named as they resolved when the
/// person looked: once a symbolic link in it points elsewhere, the same text
/// is another call, and asks again.
#[test]
fn an_approved_call_through_a_swapped_link_asks_again() {
    let w = World::new(BASE_POLICY);
    w.session("P", None);
    let read = CallSpec::ReadTool("ext/link/c.txt");
    let asked = w
        .engine
        .decide(&w.call(&read), &in_session("P"), NOW)
        .unwrap();
    let request = asked.request.expect("a read outside the workspace asks");
    actions::resolve_request(
        w.store(),
        request.id,
        portcullis_store::Resolution::Session,
        "person",
        NOW,
    )
    .unwrap();
    assert_eq!(w.decide(&read, Some("P")).decision.decision, Verdict::Allow);
    // The link now leads to another folder holding a file of the same name.
    std::fs::write(w.root.join("ext/dd/c.txt"), "other").unwrap();
    std::fs::remove_file(w.root.join("ext/link")).unwrap();
    std::os::unix::fs::symlink(w.root.join("ext/dd"), w.root.join("ext/link")).unwrap();
    assert_eq!(
        w.decide(&read, Some("P")).decision.decision,
        Verdict::Ask,
        "the approval was for {}, not {}",
        w.canonical("ext/d/c.txt"),
        w.canonical("ext/dd/c.txt")
    );
}
