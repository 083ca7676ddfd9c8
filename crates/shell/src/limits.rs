//! Resource limits. Past any of them the analysis stops descending and reports an
//! opaque part: nothing is ever skipped silently.

/// Limits on one analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest text analysed, in bytes. Agent commands that write files through
    /// heredocs can be long; 256 KiB leaves room for them.
    pub max_bytes: usize,
    /// Deepest nesting: substitutions, `sh -c`, `eval`, wrappers and compound
    /// commands each add one level.
    pub max_depth: u32,
    /// Deepest nesting of brackets and keyword blocks accepted before parsing
    /// (`((((…`, `$($($(…`, `if … if … fi fi`): the parser recurses per level,
    /// so this bounds its stack use (a debug build overflows a 2 MiB thread
    /// at about 100 nested `if`s).
    pub max_bracket_depth: u32,
    /// Most syntax nodes (commands, words, redirects) visited.
    pub max_nodes: usize,
    /// Most commands reported.
    pub max_commands: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_bytes: 256 * 1024,
        max_depth: 24,
        max_bracket_depth: 32,
        max_nodes: 50_000,
        max_commands: 2_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
