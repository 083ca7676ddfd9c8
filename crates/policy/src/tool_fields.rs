//! Every input field of every agent tool, and what it means to the policy.
//!
//! A tool's [`ToolKind`](crate::tables::ToolKind) names its primary field (the
//! command, the file, the URL). Many tools have more fields that name files:
//! Grep's `glob`, Glob's `pattern`, Gemini's `read_many_files.include`, a
//! Cursor read's `attachments`. This table lists **every** field of every
//! tool as the agent declares it, judged or set aside with a reason; a
//! completeness test (`tests/it/tool_fields.rs`) checks it against the agents'
//! own schemas, kept as test data, so a field added by an agent fails the
//! test until it is placed here.

/// What one input field is to the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The field the tool's kind judges (command, file, URL, patch).
    Primary,
    /// The directory a search starts in (judged with the kind).
    SearchRoot,
    /// A file pattern (glob or name) of files read, relative to the search
    /// root given by the named field (the call's directory when absent).
    FilePattern { root: Option<&'static str> },
    /// Paths or patterns read, relative to the call's directory: a string
    /// or a list of strings.
    ReadList,
    /// Objects whose `filePath`/`file_path` are read (Cursor attachments).
    Attachments,
    /// Not a file, a URL or a command: why.
    Irrelevant(&'static str),
}

use Field::{Attachments, FilePattern, Irrelevant, Primary, ReadList, SearchRoot};

const CONTENT: Field = Irrelevant("text written into the file the primary field names");
const LIMIT: Field = Irrelevant("bounds the output");
const FLAG: Field = Irrelevant("an option of the tool's own behaviour");
const NOTE: Field = Irrelevant("text for people or the model");
const NARROW: Field = Irrelevant("narrows what is searched or listed");

/// One tool's fields.
pub type ToolFields = (&'static str, &'static [(&'static str, Field)]);

#[rustfmt::skip]
pub const CLAUDE_CODE: &[ToolFields] = &[
    ("Bash", &[("command", Primary), ("description", NOTE), ("timeout", LIMIT), ("run_in_background", FLAG), ("dangerouslyDisableSandbox", Irrelevant("Claude Code's own sandbox; portcullis judges the command either way"))]),
    ("Read", &[("file_path", Primary), ("offset", LIMIT), ("limit", LIMIT), ("pages", LIMIT)]),
    ("NotebookRead", &[("notebook_path", Primary), ("cell_id", LIMIT)]),
    ("Write", &[("file_path", Primary), ("content", CONTENT)]),
    ("Edit", &[("file_path", Primary), ("old_string", CONTENT), ("new_string", CONTENT), ("replace_all", FLAG)]),
    ("MultiEdit", &[("file_path", Primary), ("edits", Irrelevant("each edit's old and new text, in the file the primary field names"))]),
    ("NotebookEdit", &[("notebook_path", Primary), ("cell_id", LIMIT), ("new_source", CONTENT), ("cell_type", FLAG), ("edit_mode", FLAG)]),
    ("Glob", &[("path", SearchRoot), ("pattern", FilePattern { root: Some("path") })]),
    ("Grep", &[("path", SearchRoot), ("glob", FilePattern { root: Some("path") }), ("pattern", Irrelevant("the text searched for")), ("type", NARROW), ("output_mode", FLAG), ("-A", LIMIT), ("-B", LIMIT), ("-C", LIMIT), ("-n", FLAG), ("-i", FLAG), ("head_limit", LIMIT), ("offset", LIMIT), ("multiline", FLAG)]),
    ("LS", &[("path", SearchRoot), ("ignore", NARROW)]),
    ("WebFetch", &[("url", Primary), ("prompt", Irrelevant("what the model asks about the page; a URL in it is not fetched"))]),
    ("WebSearch", &[("query", NOTE), ("allowed_domains", NARROW), ("blocked_domains", NARROW)]),
    ("TodoWrite", &[("todos", NOTE)]),
    ("Task", &[("description", NOTE), ("prompt", NOTE), ("subagent_type", NOTE), ("model", FLAG)]),
    ("Agent", &[("description", NOTE), ("prompt", NOTE), ("subagent_type", NOTE), ("model", FLAG)]),
    ("ExitPlanMode", &[("plan", NOTE), ("planFilePath", Irrelevant("written by Claude Code itself, not by the model")), ("allowedPrompts", NOTE)]),
    ("BashOutput", &[("bash_id", Irrelevant("a shell Claude Code started")), ("filter", NARROW)]),
    ("KillShell", &[("shell_id", Irrelevant("a shell Claude Code started"))]),
];

#[rustfmt::skip]
pub const CODEX: &[ToolFields] = &[
    ("Bash", &[("command", Primary)]),
    ("apply_patch", &[("command", Primary)]),
];

#[rustfmt::skip]
pub const GEMINI: &[ToolFields] = &[
    ("run_shell_command", &[("command", Primary), ("dir_path", Primary), ("description", NOTE), ("is_background", FLAG)]),
    ("read_file", &[("file_path", Primary), ("start_line", LIMIT), ("end_line", LIMIT), ("offset", LIMIT), ("limit", LIMIT)]),
    ("read_many_files", &[("include", ReadList), ("exclude", NARROW), ("recursive", FLAG), ("useDefaultExcludes", FLAG), ("file_filtering_options", NARROW)]),
    ("write_file", &[("file_path", Primary), ("content", CONTENT)]),
    ("replace", &[("file_path", Primary), ("old_string", CONTENT), ("new_string", CONTENT), ("instruction", NOTE), ("allow_multiple", FLAG), ("expected_replacements", FLAG)]),
    ("glob", &[("dir_path", SearchRoot), ("pattern", FilePattern { root: Some("dir_path") }), ("case_sensitive", FLAG), ("respect_git_ignore", NARROW), ("respect_gemini_ignore", NARROW)]),
    ("grep_search", &[("dir_path", SearchRoot), ("include_pattern", FilePattern { root: Some("dir_path") }), ("pattern", Irrelevant("the text searched for")), ("names_only", FLAG), ("max_matches_per_file", LIMIT), ("total_max_matches", LIMIT)]),
    ("search_file_content", &[("dir_path", SearchRoot), ("include", FilePattern { root: Some("dir_path") }), ("pattern", Irrelevant("the text searched for"))]),
    ("list_directory", &[("dir_path", SearchRoot), ("ignore", NARROW), ("file_filtering_options", NARROW)]),
    ("web_fetch", &[("prompt", Primary)]),
    ("google_web_search", &[("query", NOTE)]),
    ("write_todos", &[("todos", NOTE)]),
    ("ask_user", &[("questions", NOTE)]),
    ("enter_plan_mode", &[]),
    ("exit_plan_mode", &[("plan", NOTE)]),
];

#[rustfmt::skip]
pub const CURSOR: &[ToolFields] = &[
    ("Shell", &[("command", Primary), ("cwd", Irrelevant("the call's directory, read by the adapter"))]),
    ("ReadFile", &[("file_path", Primary), ("content", Irrelevant("the file's content, as Cursor read it")), ("attachments", Attachments)]),
    ("Write", &[("file_path", Primary), ("content", CONTENT)]),
    ("Edit", &[("file_path", Primary), ("old_string", CONTENT), ("new_string", CONTENT)]),
];

#[rustfmt::skip]
pub const PI: &[ToolFields] = &[
    ("bash", &[("command", Primary), ("timeout", LIMIT)]),
    ("read", &[("path", Primary), ("offset", LIMIT), ("limit", LIMIT)]),
    ("write", &[("path", Primary), ("content", CONTENT)]),
    ("edit", &[("path", Primary), ("oldText", CONTENT), ("newText", CONTENT), ("edits", Irrelevant("each edit's old and new text, in the file the primary field names"))]),
    ("grep", &[("path", SearchRoot), ("glob", FilePattern { root: Some("path") }), ("pattern", Irrelevant("the text searched for")), ("ignoreCase", FLAG), ("literal", FLAG), ("context", LIMIT), ("limit", LIMIT)]),
    ("find", &[("path", SearchRoot), ("pattern", FilePattern { root: Some("path") }), ("limit", LIMIT)]),
    ("ls", &[("path", SearchRoot), ("limit", LIMIT)]),
];

/// The field table of an agent (`claude-code`, `codex`, `gemini`, `cursor`, `pi`).
pub fn fields_for(agent: &str) -> &'static [ToolFields] {
    match agent {
        "claude-code" => CLAUDE_CODE,
        "codex" => CODEX,
        "gemini" => GEMINI,
        "cursor" => CURSOR,
        "pi" => PI,
        _ => &[],
    }
}
