//! `seed_cases.jsonl`: Step-Code's shell and tool-call rows, the coding-agent-loop folder guard.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;

/// Shell rows under five configurations (Step-Code's notes say what each preset does).
pub(super) fn shell(rows: &BTreeMap<usize, Value>) -> Vec<Case> {
    let allow_all = cfg("ask", &["Bash", "Read(./**)", "Edit(./**)"], &[], &[]);
    let variants: [(&str, String, bool); 5] = [
        ("allow-all", allow_all, false),
        (
            "approve-for-me",
            cfg("approve-for-me", &[], &[], &[]),
            false,
        ),
        ("read-only", cfg("read-only", &[], &[], &[]), false),
        ("full-access", cfg("full-access", &[], &[], &[]), false),
        ("unattended", cfg("approve-for-me", &[], &[], &[]), true),
    ];
    let mut out = Vec::new();
    for (line, row) in rows {
        let kind = field(row, "expected");
        if !matches!(
            kind,
            "dangerous" | "unresolved" | "ordinary" | "not-dangerous" | "platform-dependent"
        ) {
            continue;
        }
        for (variant, config, unattended) in &variants {
            let expect = match (kind, *variant) {
                ("dangerous", "allow-all" | "approve-for-me") => {
                    // `critical-path`: deleting the root or the home directory is denied outright.
                    Expect::Because(NOT_ALLOW, &["hazard", "opaque", "critical-path"])
                }
                ("unresolved", "allow-all" | "approve-for-me") => {
                    Expect::Because(NOT_ALLOW, &["opaque", "dynamic-path", "hazard"])
                }
                ("dangerous" | "unresolved", "read-only" | "unattended") => Expect::Is(DENY),
                (_, "full-access") => Expect::Is(ALLOW),
                (_, "read-only" | "unattended") => Expect::NoHazard,
                _ => Expect::Ordinary,
            };
            let mut job = Job::new(config.clone(), bash(field(row, "command")));
            if *unattended {
                job = job.flag("--unattended");
            }
            out.push(Case {
                file: SEED,
                line: *line,
                category: "seed: shell rows",
                variant,
                jobs: vec![job],
                expect,
            });
        }
    }
    out
}

/// Step-Code's `[tool]` rows (lines 233–262).
pub(super) fn tools(rows: &BTreeMap<usize, Value>) -> Vec<Case> {
    let mut c = Cases {
        rows,
        file: SEED,
        category: "seed: tool calls",
        out: Vec::new(),
    };
    let ask = cfg("ask", &[], &[], &[]);
    let afm = cfg("approve-for-me", &[], &[], &[]);
    let full = cfg("full-access", &[], &[], &[]);
    let j = |config: &str, call: Value| Job::new(config.to_string(), call);
    let un = |config: &str, call: Value| j(config, call).flag("--unattended");
    let rm_etc = || bash("rm -rf /etc");
    let rm_build = || bash("rm -rf ./build");
    let mkdir = || bash("mkdir build");

    c.add(
        233,
        "[tool] read_file {path:a.txt} @ask",
        "ask",
        vec![j(&ask, read("a.txt"))],
        Expect::Is(ALLOW),
    );
    let search = tool("WebSearch", "core", json!({"query": "current news"}));
    c.add(
        234,
        "[tool] search_web",
        "ask",
        vec![j(&ask, search)],
        Expect::Is(ALLOW),
    );
    c.add(
        235,
        "[tool] write_file {path:a.txt,content:x} @ask",
        "ask",
        vec![j(&ask, write("a.txt"))],
        Expect::Is(ASK),
    );
    c.add(
        236,
        "[tool] write_file {path:a.txt,content:x} @approve-for-me",
        "approve-for-me",
        vec![j(&afm, write("a.txt"))],
        Expect::Is(ALLOW),
    );
    c.add(
        237,
        "[tool] run_command {command:rm -rf /etc} @ask",
        "ask",
        vec![j(&ask, rm_etc())],
        Expect::Is(ASK),
    );
    c.add(
        238,
        "[tool] run_command {command:rm -rf /etc} @approve-for-me",
        "approve-for-me",
        vec![j(&afm, rm_etc())],
        Expect::Is(ASK),
    );
    c.add(
        239,
        "[tool] run_command {command:rm -rf /etc} @full-access",
        "full-access",
        vec![j(&full, rm_etc())],
        Expect::Is(ALLOW),
    );
    let full_no_bash = cfg("full-access", &[], &[], &["Bash"]);
    c.add(
        240,
        "[tool] run_command {command:rm -rf /etc} @full-access override run_command=deny",
        "full-access",
        vec![j(&full_no_bash, rm_etc())],
        Expect::Cites("deny", &["Bash"]),
    );
    c.add(
        241,
        "[tool] write_file {path:a.txt,content:x,then_run:rm -rf /etc} @approve-for-me",
        "approve-for-me",
        vec![j(&afm, write("a.txt")), j(&afm, rm_etc())],
        Expect::Is(ASK),
    );
    c.add(
        242,
        "[tool] write_file {path:a.txt,content:x,then_run:rm -rf /etc} @full-access",
        "full-access",
        vec![j(&full, write("a.txt")), j(&full, rm_etc())],
        Expect::Is(ALLOW),
    );
    c.add(
        243,
        "[tool] edit_file {path:a.txt,search:a,replace:b,then_run:npm test} @approve-for-me",
        "approve-for-me",
        vec![j(&afm, edit("a.txt")), j(&afm, bash("npm test"))],
        Expect::Is(ALLOW),
    );
    let afm_no_bash = cfg("approve-for-me", &[], &[], &["Bash"]);
    c.add(
        244,
        "[tool] edit_file {...,then_run:npm test} @approve-for-me override run_command=deny",
        "approve-for-me",
        vec![
            j(&afm_no_bash, edit("a.txt")),
            j(&afm_no_bash, bash("npm test")),
        ],
        Expect::Cites("deny", &["Bash"]),
    );
    c.add(
        245,
        "[tool] edit_file {...,then_run:npm test} @ask",
        "ask",
        vec![j(&ask, edit("a.txt")), j(&ask, bash("npm test"))],
        Expect::Is(ASK),
    );
    let allow_write = cfg("ask", &["Write"], &[], &[]);
    c.add(
        246,
        "[tool] write_file {} @ask override write_file=allow",
        "ask",
        vec![j(&allow_write, tool("Write", "core", json!({})))],
        Expect::Is(ALLOW),
    );
    let ask_write = cfg("ask", &[], &["Write"], &[]);
    c.add(
        247,
        "[tool] write_file {path:x} @ask override write_file=confirm",
        "ask",
        vec![j(&ask_write, write("x"))],
        Expect::Cites("ask", &["Write"]),
    );
    for (variant, mode, e) in [
        ("ask", "ask", Expect::Because(ASK, &["hazard"])),
        (
            "approve-for-me",
            "approve-for-me",
            Expect::Because(ASK, &["hazard"]),
        ),
        ("read-only", "read-only", Expect::Is(DENY)),
    ] {
        let config = cfg(mode, &["Bash", "Read(./**)", "Edit(./**)"], &[], &[]);
        c.add(
            248,
            "[tool] run_command {command:rm -rf ./build} @any-preset override run_command=allow",
            variant,
            vec![j(&config, rm_build())],
            e,
        );
    }
    let ext_allowed = cfg("approve-for-me", &["run_command"], &[], &[]);
    for (line, text, key) in [
        (249, "[tool] run_command {cmd:rm -rf ./build}", "cmd"),
        (250, "[tool] run_command {script:rm -rf ./build}", "script"),
    ] {
        let call = tool("run_command", "extension", json!({key: "rm -rf ./build"}));
        c.add(
            line,
            text,
            "extension tool",
            vec![j(&ext_allowed, call)],
            Expect::Because(ASK, &["hazard"]),
        );
    }
    let unattended: [(usize, &str, &str, Value, Expect); 12] = [
        (
            251,
            "[tool/no-UI] write_file {path:x,content:y} @confirm nonInteractiveApproval=allow",
            "ask",
            write("x"),
            Expect::Is(ALLOW),
        ),
        (
            252,
            "[tool/no-UI] run_command {command:rm -rf /}",
            "ask",
            bash("rm -rf /"),
            Expect::Is(DENY),
        ),
        (
            253,
            "[tool/no-UI] run_command {command:mkdir build} @defaulted",
            "ask",
            mkdir(),
            Expect::Is(DENY),
        ),
        (
            254,
            "[tool/no-UI] read_file {path:README.md} @defaulted",
            "ask",
            read("README.md"),
            Expect::Is(ALLOW),
        ),
        (
            256,
            "[tool/no-UI] run_command {command:mkdir build} @STEP_PERMISSION_PRESET=approve-for-me",
            "approve-for-me",
            mkdir(),
            Expect::Is(ALLOW),
        ),
        (
            257,
            "[tool/no-UI] run_command {command:mkdir build} @STEP_PERMISSION_PRESET=bypass",
            "ask",
            mkdir(),
            Expect::Is(DENY),
        ),
        (
            258,
            "[tool/no-UI] run_command {command:mkdir build} @nonInteractiveApproval=deny",
            "ask",
            mkdir(),
            Expect::Is(DENY),
        ),
        (
            259,
            "[tool/no-UI] run_command {command:mkdir build} @approvalMode=auto",
            "approve-for-me",
            mkdir(),
            Expect::Is(ALLOW),
        ),
        (
            260,
            "[tool/no-UI] run_command {command:rm -rf ./build} @auto",
            "approve-for-me",
            rm_build(),
            Expect::Is(DENY),
        ),
        (
            261,
            "[tool/no-UI] run_command {command:printf safe} @auto continue, shell=unsupported",
            "approve-for-me",
            bash("printf safe"),
            Expect::Is(DENY),
        ),
        (
            262,
            "[tool/no-UI] run_command {command:rm -rf ./build} @approve-for-me override run_command=deny",
            "approve-for-me+deny Bash",
            rm_build(),
            Expect::Cites("deny", &["Bash"]),
        ),
        (
            255,
            "[tool/UI] run_command {command:mkdir build} @defaulted",
            "interactive",
            mkdir(),
            Expect::Is(ALLOW),
        ),
    ];
    for (line, text, mode, call, e) in unattended {
        let config = match mode {
            "approve-for-me+deny Bash" => afm_no_bash.clone(),
            "interactive" => ask.clone(),
            m => cfg(m, &[], &[], &[]),
        };
        let job = if mode == "interactive" {
            j(&config, call)
        } else {
            un(&config, call)
        };
        c.add(line, text, "unattended", vec![job], e);
    }
    // The retired preset name itself is not a mode: the configuration does not load.
    c.add(
        257,
        "[tool/no-UI] run_command {command:mkdir build} @STEP_PERMISSION_PRESET=bypass",
        "mode = \"bypass\"",
        vec![j("mode = \"bypass\"\n", mkdir())],
        Expect::ConfigError,
    );
    c.out
}

/// The coding-agent-loop folder guard (lines 263–282).
pub(super) fn guard(rows: &BTreeMap<usize, Value>, sb: &Sandbox) -> Vec<Case> {
    let mut c = Cases {
        rows,
        file: SEED,
        category: "seed: folder guard",
        out: Vec::new(),
    };
    let docs = Sandbox::s(&sb.root.join("guard/docs"));
    let cwd = Sandbox::s(&sb.root.join("guard/cwd"));
    std::fs::create_dir_all(&cwd).expect("guard cwd");
    for f in [
        "test-ops/planning/plan.json",
        "test-ops/planning/nested/deep.json",
        "test-ops/reports/report_plan.md",
        "test-ops/secrets/token.txt",
        "demo/report.html",
        "demo/planning/plan.json",
        "demo/secrets/token.txt",
        "rtslatency/builder/improve.html",
        "rtslatency/builder/other.html",
        "testing/workflow.json",
    ] {
        sb.write(&format!("guard/docs/Workflow/{f}"), "{}\n");
    }
    sb.write("home/Downloads/statement.pdf", "%PDF\n");
    let w = |rel: &str| format!("{docs}/Workflow/{rel}");
    let scopes = |roots: &[String], read: &[String], blocked: &[String], blocked_w: &[String]| {
        let list = |l: &[String]| serde_json::to_string(l).expect("strings");
        format!(
            "{}[workspace]\nroots = {}\nread_roots = {}\nblocked = {}\nblocked_write = {}\n",
            cfg("approve-for-me", &[], &[], &[]),
            list(roots),
            list(read),
            list(blocked),
            list(blocked_w)
        )
    };
    let job = |config: &str, call: Value, dir: &str| {
        Job::new(config.to_string(), from(call, dir)).flag("--unattended")
    };
    let guards = [
        scopes(&[], &[], &[], &[]),
        scopes(&[w("test-ops")], &[], &[], &[w("test-ops/planning")]),
        scopes(&[w("test-ops")], &[], &[w("test-ops/secrets")], &[]),
        scopes(&[w("rtslatency/builder/improve.html")], &[], &[], &[]),
        scopes(&[w("demo")], &[], &[], &[w("demo/planning")]),
        scopes(&[w("demo")], &[], &[w("demo/secrets")], &[]),
        scopes(&[], &[w("demo")], &[], &[]),
    ];
    // (line, guard, verdict): the row's text says the operation and the path.
    let table: [(usize, usize, &[&str]); 16] = [
        (263, 1, ALLOW),
        (264, 1, ALLOW),
        (265, 1, DENY),
        (266, 1, DENY),
        (267, 1, ALLOW),
        (268, 1, ALLOW),
        (269, 0, DENY),
        (270, 0, DENY),
        (271, 2, DENY),
        (272, 2, DENY),
        (273, 3, ALLOW),
        (274, 3, DENY),
        (275, 3, DENY),
        (276, 4, ALLOW),
        (277, 5, DENY),
        (278, 6, DENY),
    ];
    for (line, g, want) in table {
        let text = field(&rows[&line], "command");
        let (op, rest) = text.split_once(' ').expect("`read PATH` or `write PATH`");
        let path = rest.split(' ').next().expect("a path");
        let rel = path.strip_prefix("Workflow/").expect("under Workflow/");
        let call = if op == "read" {
            read(&w(rel))
        } else {
            write(&w(rel))
        };
        c.add(
            line,
            op,
            "guard",
            vec![job(&guards[g], call, &cwd)],
            Expect::Is(want),
        );
    }
    // blockAbsoluteHostPaths: /Users/mipl is the sandbox home, the workspace-docs
    // directory is guard/docs (the call's directory, so the workspace).
    let home = Sandbox::s(&sb.home);
    let downloads = format!("{home}/Downloads");
    let target = "Workflow/testing/runs/iteration-0/test-group/execution/Downloads/statement.pdf";
    let cp = format!("cp '{downloads}/statement.pdf' {target}");
    let host_grant = std::slice::from_ref(&downloads);
    let read_only_host = scopes(&[], host_grant, &[], host_grant);
    let read_host = scopes(&[], host_grant, &[], &[]);
    let plain = scopes(&[], &[], &[], &[]);
    let host: [(usize, &str, &String, String, Expect); 4] = [
        (
            279,
            "cat '/Users/mipl/.ssh/id_rsa'",
            &plain,
            format!("cat '{home}/.ssh/id_rsa'"),
            Expect::Is(DENY),
        ),
        (
            280,
            "cp '/Users/mipl/Downloads/statement.pdf' Workflow/testing",
            &read_only_host,
            cp.clone(),
            Expect::Is(ALLOW),
        ),
        (
            281,
            "cp '/Users/mipl/Downloads/statement.pdf' Workflow/testing",
            &read_host,
            cp,
            Expect::Is(DENY),
        ),
        (
            282,
            "cat '/Users/mipl/ai-work/coding-agent-loop/workspace-docs/Workflow/testing/workflow.json'",
            &plain,
            format!("cat '{}'", w("testing/workflow.json")),
            Expect::Is(ALLOW),
        ),
    ];
    for (line, text, config, command, e) in host {
        c.add(
            line,
            text,
            "host paths",
            vec![job(config, bash(&command), &docs)],
            e,
        );
    }
    c.out
}
