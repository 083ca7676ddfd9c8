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
    /// (`((((…`, `$($($(…`, `$[$[…`, `[[ ( ( …`, `${x:-${y:-…`, `if … if … fi fi`):
    /// the parser recurses per level,
    /// so this bounds its stack use (a debug build overflows a 2 MiB thread
    /// at about 100 nested `if`s).
    pub max_bracket_depth: u32,
    /// Most syntax nodes (commands, words, redirects) visited.
    pub max_nodes: usize,
    /// Most commands reported.
    pub max_commands: usize,
    /// Most operators that build nested syntax trees (`&&` and `||`, `!` as a
    /// word) in one text: inside `[[ ]]` each adds a level to the tree the
    /// parser builds, the walker visits and the tree's drop recurses through.
    pub max_operators: usize,
    /// Most bytes of text read in all, counting each re-reading of nested
    /// scripts (`eval`, `sh -c`, substitutions) and words: the bound on the
    /// analysis' time. A multiple of `max_bytes`, so any text within the size
    /// limit with ordinary nesting fits.
    pub max_work: usize,
    /// Least stack the walker keeps free before it descends further; below
    /// it the part is opaque (a construct nobody bounded degrades, not aborts).
    pub min_stack: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_bytes: 256 * 1024,
        max_depth: 24,
        max_bracket_depth: 32,
        max_nodes: 50_000,
        max_commands: 2_000,
        max_operators: 1_000,
        max_work: 32 * 256 * 1024,
        min_stack: 256 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
