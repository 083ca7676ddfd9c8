//! The security cases of seed `002_…`, each a named test, and the original
//! incident as a regression test: one session resolver, one store, grants that
//! hold through every entry point and never widen.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;

use crate::support;

use portcullis_engine::{CallContext, Engine, EngineError, SessionSources, SessionStatus};
use portcullis_paths::FsPaths;
use portcullis_policy::{Origin, ToolCall, ToolRef, Verdict};
use portcullis_store::{AgentKind, GrantScope, GrantTarget, NewGrant, NewSession, Op};
use serde_json::json;

const NOW: i64 = 1_800_000_000;

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    engine: Engine<FsPaths>,
}

impl World {
    fn new(config: &str) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        for d in [
            "home/Downloads",
            "home/proj/.git",
            "home/proj/src",
            "outside",
            "data",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/Downloads/statement.pdf"), "%PDF").unwrap();
        std::fs::write(root.join("home/Downloads/a b.txt"), "x").unwrap();
        std::fs::write(root.join("outside/secret.txt"), "s").unwrap();
        let engine = support::engine(&root, config);
        World {
            _tmp: tmp,
            root,
            engine,
        }
    }

    fn p(&self, rel: &str) -> String {
        self.root.join(rel).to_string_lossy().into_owned()
    }

    fn cwd(&self) -> String {
        self.p("home/proj")
    }

    fn session(&self, id: &str, parent: Option<&str>, kind: AgentKind) {
        self.engine
            .store()
            .unwrap()
            .register_session(&NewSession {
                id: id.into(),
                agent: Some("claude-code".into()),
                cwd: Some(self.cwd()),
                parent: parent.map(Into::into),
                kind,
                workflow: (kind == AgentKind::Workflow).then(|| format!("wf-{id}")),
                ttl_secs: None,
            })
            .unwrap();
    }

    fn grant(
        &self,
        session: Option<&str>,
        scope: GrantScope,
        op: Op,
        path: &str,
        folder: bool,
    ) -> i64 {
        self.engine
            .store()
            .unwrap()
            .add_grant(&NewGrant {
                session: session.map(Into::into),
                scope,
                op,
                target: GrantTarget::Path {
                    canonical: path.into(),
                    folder,
                },
                expires_at: None,
                approver: "test".into(),
                request: None,
            })
            .unwrap()
            .id
    }

    fn bash(
        &self,
        command: &str,
        ctx: &CallContext,
    ) -> Result<portcullis_engine::Outcome, EngineError> {
        let call = ToolCall {
            tool: ToolRef {
                name: "Bash".into(),
                origin: Origin::Core,
                server: None,
                manifest: None,
            },
            input: json!({ "command": command }),
            cwd: self.cwd(),
        };
        self.engine.decide(&call, ctx, NOW)
    }

    fn read_tool(&self, path: &str, ctx: &CallContext) -> portcullis_engine::Outcome {
        let call = ToolCall {
            tool: ToolRef {
                name: "Read".into(),
                origin: Origin::Core,
                server: None,
                manifest: None,
            },
            input: json!({ "file_path": path }),
            cwd: self.cwd(),
        };
        self.engine.decide(&call, ctx, NOW).unwrap()
    }
}

fn body(id: &str) -> CallContext {
    CallContext {
        sources: SessionSources {
            body: Some(id.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn verdict(o: Result<portcullis_engine::Outcome, EngineError>) -> Verdict {
    o.unwrap().decision.decision
}

const CONFIG: &str = "mode = \"ask\"\n[workspace]\nblocked_write = [\"~/Downloads\"]\n";

/// The incident: a session with a read-only grant for Downloads must keep it
/// whichever front door the call comes through.
#[test]
fn incident_read_only_downloads_grant_holds_through_every_entry_point() {
    let w = World::new(CONFIG);
    w.session("S", None, AgentKind::Main);
    w.grant(
        Some("S"),
        GrantScope::Session,
        Op::Read,
        &w.p("home/Downloads"),
        true,
    );
    let file = w.p("home/Downloads/statement.pdf");
    let entry_points = [
        ("library call", body("S")),
        (
            "X-Session-ID header",
            CallContext {
                sources: SessionSources {
                    header: Some("S".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ),
        (
            "environment",
            CallContext {
                sources: SessionSources {
                    env: Some("S".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ),
        (
            "URL path",
            CallContext {
                sources: SessionSources {
                    url_path: Some("S".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ),
    ];
    for (name, ctx) in &entry_points {
        let o = w.read_tool(&file, ctx);
        assert_eq!(
            o.decision.decision,
            Verdict::Allow,
            "{name}: {:?}",
            o.decision.reasons
        );
        assert_eq!(o.session.as_deref(), Some("S"));
        assert_eq!(
            verdict(w.bash(&format!("cp '{file}' src/statement.pdf"), ctx)),
            Verdict::Ask,
            "{name}: the copy's write into the workspace still needs an Edit rule"
        );
        assert_eq!(
            verdict(w.bash(&format!("cat '{file}'"), ctx)),
            Verdict::Allow,
            "{name}"
        );
    }
    // Writes are denied: Downloads is blocked for writes, and a read grant never writes.
    assert_eq!(
        verdict(w.bash(
            &format!("echo x > '{}'", w.p("home/Downloads/new.txt")),
            &body("S")
        )),
        Verdict::Deny
    );
    // Without the session: no grant.
    assert_eq!(
        w.read_tool(&file, &CallContext::default())
            .decision
            .decision,
        Verdict::Ask
    );
    // Sources that disagree: an error, never a silent pick.
    let conflict = CallContext {
        sources: SessionSources {
            header: Some("S".into()),
            env: Some("T".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(matches!(
        w.bash("ls", &conflict),
        Err(EngineError::SessionConflict { .. })
    ));
}

#[test]
fn symlink_inside_an_approved_folder_pointing_outside() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    w.grant(
        Some("S"),
        GrantScope::Session,
        Op::Read,
        &w.p("home/Downloads"),
        true,
    );
    std::os::unix::fs::symlink(
        w.p("outside/secret.txt"),
        w.p("home/Downloads/innocent.txt"),
    )
    .unwrap();
    let o = w.read_tool(&w.p("home/Downloads/innocent.txt"), &body("S"));
    assert_ne!(
        o.decision.decision,
        Verdict::Allow,
        "the link lands outside the grant"
    );
    assert_eq!(
        w.read_tool(&w.p("home/Downloads/statement.pdf"), &body("S"))
            .decision
            .decision,
        Verdict::Allow
    );
}

#[test]
fn path_swapped_between_approval_and_use() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    let file = w.p("home/Downloads/statement.pdf");
    w.grant(Some("S"), GrantScope::Session, Op::Read, &file, false);
    assert_eq!(
        w.read_tool(&file, &body("S")).decision.decision,
        Verdict::Allow
    );
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(w.p("outside/secret.txt"), &file).unwrap();
    assert_ne!(
        w.read_tool(&file, &body("S")).decision.decision,
        Verdict::Allow,
        "re-resolved at use: now outside"
    );
}

#[test]
fn quoted_paths_globs_pipes_redirects_heredocs_and_subshells_reach_the_guarded_path() {
    let w = World::new(CONFIG);
    w.session("S", None, AgentKind::Main);
    let dl = w.p("home/Downloads");
    w.grant(Some("S"), GrantScope::Session, Op::Read, &dl, true);
    for read in [
        format!("cat '{dl}/a b.txt'"),
        format!("cat \"{dl}/a b.txt\" | wc -c"),
        format!("(cat {dl}/statement.pdf)"),
        format!("wc -c {dl}/*.pdf"),
        format!("cat {dl}/../Downloads/statement.pdf"),
    ] {
        assert_eq!(verdict(w.bash(&read, &body("S"))), Verdict::Allow, "{read}");
    }
    for write in [
        format!("echo x > '{dl}/a b.txt'"),
        format!("cat <<'EOF' > {dl}/note.txt\nx\nEOF"),
        format!("(cd {dl} && touch x)"),
        format!("cp src/x {dl}/"),
        format!("rm '{dl}/a b.txt'"),
        format!("cat {dl}/statement.pdf | tee {dl}/copy.pdf"),
    ] {
        assert_ne!(
            verdict(w.bash(&write, &body("S"))),
            Verdict::Allow,
            "{write}"
        );
    }
    // Reaching past the folder by `..`, or a sibling sharing its prefix.
    std::fs::create_dir_all(w.p("home/Downloads_evil")).unwrap();
    std::fs::write(w.p("home/Downloads_evil/x"), "x").unwrap();
    assert_ne!(
        verdict(w.bash(&format!("cat {dl}_evil/x"), &body("S"))),
        Verdict::Allow
    );
    assert_ne!(
        verdict(w.bash(&format!("cat {dl}/../.bashrc"), &body("S"))),
        Verdict::Allow
    );
}

#[test]
fn one_workflow_cannot_reuse_another_workflows_grant() {
    let w = World::new("mode = \"ask\"");
    w.session("M", None, AgentKind::Main);
    w.session("W1", Some("M"), AgentKind::Workflow);
    w.session("W2", Some("M"), AgentKind::Workflow);
    let file = w.p("home/Downloads/statement.pdf");
    w.grant(Some("W1"), GrantScope::Session, Op::Read, &file, false);
    assert_eq!(
        w.read_tool(&file, &body("W1")).decision.decision,
        Verdict::Allow
    );
    assert_ne!(
        w.read_tool(&file, &body("W2")).decision.decision,
        Verdict::Allow
    );
    assert_ne!(
        w.read_tool(&file, &body("M")).decision.decision,
        Verdict::Allow,
        "a child's grant does not flow up"
    );
    // A parent's grant does flow down to its children.
    w.grant(
        Some("M"),
        GrantScope::Session,
        Op::Read,
        &w.p("home/Downloads"),
        true,
    );
    assert_eq!(
        w.read_tool(&file, &body("W2")).decision.decision,
        Verdict::Allow
    );
}

#[test]
fn stale_and_forged_session_ids_get_no_grants() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    let file = w.p("home/Downloads/statement.pdf");
    w.grant(Some("S"), GrantScope::Session, Op::Read, &file, false);
    let forged = w.read_tool(&file, &body("S-forged"));
    assert_eq!(forged.session_status, SessionStatus::Unknown);
    assert_ne!(forged.decision.decision, Verdict::Allow);
    // HTTP callers must prove the session with its token.
    let http = |token: Option<&str>| CallContext {
        sources: SessionSources {
            header: Some("S".into()),
            ..Default::default()
        },
        token: token.map(Into::into),
        require_token: true,
        dry_run: false,
        can_confine: false,
        asked_in_agent: false,
        agent_link: None,
        remote_device: None,
    };
    let o = w.read_tool(&file, &http(Some("not-the-token")));
    assert_eq!(o.session_status, SessionStatus::Unauthenticated);
    assert_ne!(o.decision.decision, Verdict::Allow);
    // Revoked: the next decision has no grants.
    assert_eq!(
        w.read_tool(&file, &body("S")).decision.decision,
        Verdict::Allow
    );
    w.engine.store().unwrap().revoke_session("S").unwrap();
    let o = w.read_tool(&file, &body("S"));
    assert_eq!(o.session_status, SessionStatus::Inactive);
    assert_ne!(o.decision.decision, Verdict::Allow);
}

#[test]
fn a_device_grant_never_authorizes_a_write() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    let dir = w.p("outside");
    let refused = w.engine.store().unwrap().add_grant(&NewGrant {
        session: None,
        scope: GrantScope::Device,
        op: Op::Write,
        target: GrantTarget::Path {
            canonical: dir.clone(),
            folder: true,
        },
        expires_at: None,
        approver: "test".into(),
        request: None,
    });
    assert!(
        refused.is_err(),
        "the store refuses a device grant for writes"
    );
    w.grant(None, GrantScope::Device, Op::Read, &dir, true);
    assert_eq!(
        verdict(w.bash(&format!("cat {dir}/secret.txt"), &body("S"))),
        Verdict::Allow,
        "reads: any session of this device"
    );
    assert_ne!(
        verdict(w.bash(&format!("echo x > {dir}/secret.txt"), &body("S"))),
        Verdict::Allow
    );
}

#[test]
fn a_background_agent_cannot_ask_for_more_than_its_parent() {
    let w = World::new("mode = \"ask\"");
    w.session("M", None, AgentKind::Main);
    w.session("B", Some("M"), AgentKind::Background);
    w.grant(
        Some("M"),
        GrantScope::Session,
        Op::Read,
        &w.p("outside"),
        true,
    );
    let read = w
        .bash(&format!("cat {}", w.p("outside/secret.txt")), &body("B"))
        .unwrap();
    assert_eq!(
        read.decision.decision,
        Verdict::Allow,
        "the parent's read grant covers the child's read"
    );
    let write = w
        .bash(&format!("echo x > {}", w.p("outside/new.txt")), &body("B"))
        .unwrap();
    assert_ne!(write.decision.decision, Verdict::Allow);
    assert!(
        write.request.is_none(),
        "no request for a wider scope than the parent's"
    );
    // The same write from the attended parent raises a request a person can approve.
    let parent = w
        .bash(&format!("echo x > {}", w.p("outside/new.txt")), &body("M"))
        .unwrap();
    assert!(parent.request.is_some());
}

/// A background agent cannot widen what it may ask for by registering a
/// child: a child's eligibility is within its ancestors'.
#[test]
fn a_child_of_a_background_agent_cannot_ask_for_writes() {
    let w = World::new("mode = \"ask\"");
    w.session("M", None, AgentKind::Main);
    w.session("B", Some("M"), AgentKind::Background);
    w.session("B.child", Some("B"), AgentKind::Subagent);
    let write = w
        .bash(
            &format!("echo x > {}", w.p("outside/new.txt")),
            &body("B.child"),
        )
        .unwrap();
    assert_ne!(write.decision.decision, Verdict::Allow);
    assert!(
        write.request.is_none(),
        "the child of a background agent raised a write request"
    );
    let read = w
        .bash(
            &format!("cat {}", w.p("outside/secret.txt")),
            &body("B.child"),
        )
        .unwrap();
    assert!(read.request.is_some(), "reads may still be asked for");
}

#[test]
fn a_retry_loop_makes_one_request_not_a_flood() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    let file = w.p("outside/secret.txt");
    let mut ids = Vec::new();
    for _ in 0..100 {
        ids.push(
            w.read_tool(&file, &body("S"))
                .request
                .expect("a request")
                .id,
        );
    }
    ids.dedup();
    assert_eq!(ids.len(), 1);
    let pending = w.engine.store().unwrap().requests(true).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].count, 100);
    // Approving it once lets exactly one retry through.
    let (_, grant) = w
        .engine
        .store()
        .unwrap()
        .resolve_request(ids[0], portcullis_store::Resolution::Once, "person", NOW)
        .unwrap();
    assert!(grant.is_some());
    assert_eq!(
        w.read_tool(&file, &body("S")).decision.decision,
        Verdict::Allow
    );
    assert_ne!(
        w.read_tool(&file, &body("S")).decision.decision,
        Verdict::Allow,
        "once means once"
    );
}

/// An "allow once" waits for its retry as long as `[approvals]
/// once_ttl_secs` says where the call was judged: past it, the retry asks
/// again.
#[test]
fn an_allow_once_expires_as_configured() {
    let w = World::new("mode = \"ask\"\n[approvals]\nonce_ttl_secs = 30\n");
    w.session("S", None, AgentKind::Main);
    let file = w.p("outside/secret.txt");
    let request = w.read_tool(&file, &body("S")).request.expect("a request");
    assert_eq!(request.once_ttl_secs, Some(30));
    let (_, grant) = w
        .engine
        .store()
        .unwrap()
        .resolve_request(
            request.id,
            portcullis_store::Resolution::Once,
            "person",
            NOW,
        )
        .unwrap();
    assert_eq!(grant.unwrap().expires_at, Some(NOW + 30));
}

#[test]
fn every_decision_is_audited_without_contents_and_the_chain_holds() {
    let w = World::new("mode = \"ask\"");
    w.session("S", None, AgentKind::Main);
    let call = ToolCall {
        tool: ToolRef {
            name: "Write".into(),
            origin: Origin::Core,
            server: None,
            manifest: None,
        },
        input: json!({ "file_path": "src/secret.rs", "content": "API_KEY=sk-live-123456" }),
        cwd: w.cwd(),
    };
    w.engine.decide(&call, &body("S"), NOW).unwrap();
    w.bash(
        "curl -H 'Authorization: Bearer tok-987' https://x.example",
        &body("S"),
    )
    .unwrap();
    let rows = w.engine.store().unwrap().audit_all().unwrap();
    assert!(rows.len() >= 2);
    let dump = serde_json::to_string(&rows).unwrap();
    assert!(
        !dump.contains("sk-live-123456"),
        "file contents never reach the audit log"
    );
    assert!(
        !dump.contains("tok-987"),
        "authorization material never reaches the audit log"
    );
    // What ran is said, secrets masked: the command with `***` in place of
    // a token, and the paths as they resolved.
    w.bash(
        "GITHUB_TOKEN=ghp_0123456789abcdefghij gh pr list > ../elsewhere.txt",
        &body("S"),
    )
    .unwrap();
    let rows = w.engine.store().unwrap().audit_all().unwrap();
    let last = rows.last().unwrap();
    let detail: serde_json::Value = last.event.detail.clone();
    assert_eq!(
        detail["command"], "GITHUB_TOKEN=*** gh pr list > ../elsewhere.txt",
        "{detail}"
    );
    let parent = std::path::Path::new(&w.cwd())
        .parent()
        .unwrap()
        .join("elsewhere.txt");
    assert!(
        detail["canonical_paths"]
            .as_array()
            .unwrap()
            .contains(&json!(parent.display().to_string())),
        "{detail}"
    );
    let dump = serde_json::to_string(&rows).unwrap();
    assert!(!dump.contains("ghp_0123456789"), "the token is masked");
    assert!(matches!(
        w.engine.store().unwrap().verify_audit().unwrap(),
        portcullis_store::AuditCheck::Intact { .. }
    ));
}

fn mcp(w: &World, tool: &str, input: serde_json::Value) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: format!("mcp__github__{tool}"),
            origin: Origin::Mcp,
            server: Some("github".into()),
            manifest: None,
        },
        input,
        cwd: w.cwd(),
    }
}

/// An MCP tool that asks raises a request a person can approve; the grant
/// names that one tool, in that session, and never covers what its input
/// names (judged as its own effects) nor a tool a deny rule names.
#[test]
fn an_approved_mcp_tool_is_that_tool_only() {
    let w = World::new("mode = \"ask\"\n[permissions]\ndeny = [\"mcp__github__delete_repo\"]\n");
    w.session("S", None, AgentKind::Main);
    w.session("T", None, AgentKind::Main);
    let get = mcp(&w, "get_issue", json!({"issue": 7}));
    let first = w.engine.decide(&get, &body("S"), NOW).unwrap();
    assert_eq!(first.decision.decision, Verdict::Ask);
    let request = first.request.expect("an MCP ask raises a request");
    assert_eq!(request.op, Op::Exec);
    // The request is the whole call: this tool with this input.
    let GrantTarget::Call { tool, call, .. } = &request.target else {
        panic!("a request names the whole call: {:?}", request.target);
    };
    assert_eq!(tool, "mcp__github__get_issue");
    assert_eq!(call, r#"{"issue":7}"#);
    let (_, grant) = w
        .engine
        .store()
        .unwrap()
        .resolve_request(
            request.id,
            portcullis_store::Resolution::Session,
            "person",
            NOW,
        )
        .unwrap();
    assert!(grant.is_some());

    assert_eq!(
        verdict(w.engine.decide(&get, &body("S"), NOW)),
        Verdict::Allow
    );
    assert_eq!(
        verdict(w.engine.decide(&get, &body("S"), NOW)),
        Verdict::Allow,
        "a session grant lasts"
    );
    // The same tool with another input, another tool of the same server, or
    // the same call in another session: not covered.
    let other_issue = mcp(&w, "get_issue", json!({"issue": 8}));
    assert_eq!(
        verdict(w.engine.decide(&other_issue, &body("S"), NOW)),
        Verdict::Ask,
        "an approval is for the call the person saw"
    );
    let create = mcp(&w, "create_issue", json!({"title": "t"}));
    assert_eq!(
        verdict(w.engine.decide(&create, &body("S"), NOW)),
        Verdict::Ask
    );
    assert_eq!(
        verdict(w.engine.decide(&get, &body("T"), NOW)),
        Verdict::Ask
    );
    // What the input names is judged on its own: a shell-like field still counts.
    let smuggled = mcp(&w, "get_issue", json!({"command": "rm -rf ~"}));
    assert_ne!(
        verdict(w.engine.decide(&smuggled, &body("S"), NOW)),
        Verdict::Allow
    );
    // A deny rule raises no request, and a tool grant could not cover it anyway.
    let delete = mcp(&w, "delete_repo", json!({"repo": "r"}));
    let denied = w.engine.decide(&delete, &body("S"), NOW).unwrap();
    assert_eq!(denied.decision.decision, Verdict::Deny);
    assert!(denied.request.is_none());
}
