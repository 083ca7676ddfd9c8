//! The walker: parses text with brush-parser and visits every place bash runs a
//! command from, collecting commands, effects and opaque parts.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use brush_parser::ParserOptions;
use brush_parser::ast;

use crate::arith;
use crate::knowledge::{self, Findings};
use crate::limits::Limits;
use crate::model::{
    Analysis, Command, Effect, EnvAssignment, Opaque, OpaqueReason, Redirect, RunsIn, Via,
};
use crate::word::{self, Nested, Word};
use crate::wrappers;

/// Where a command's standard input comes from, as far as a shell reading its
/// script from stdin is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stdin {
    /// Not redirected: the agent's stdin (normally empty).
    Inherited,
    /// A heredoc or here-string whose text is known.
    Text(String),
    /// A pipe, a file, or a heredoc with expansions.
    Unknown(String),
}

/// A simple command after its words were read.
struct SimpleCall {
    words: Vec<Word>,
    env: Vec<EnvAssignment>,
    redirects: Vec<Redirect>,
    stdin: Stdin,
}

pub(crate) struct Walker<'l> {
    limits: &'l Limits,
    opts: ParserOptions,
    out: Analysis,
    nodes: usize,
    /// Bytes of text read so far, re-readings included (`Limits::max_work`).
    work: usize,
    stopped: bool,
    /// Variables known to hold plain values (safe to read in arithmetic).
    plain_vars: HashSet<String>,
    /// Where relative paths are relative to.
    /// Where commands run, after the `cd`s seen so far.
    cwd: RunsIn,
    /// Aliases defined in the text (name → body).
    aliases: std::collections::HashMap<String, String>,
    /// Functions defined in the text (a builtin's name may be one).
    functions: HashSet<String>,
    /// Variables declared integer (`declare -i`): assigning them evaluates arithmetic.
    integer_vars: HashSet<String>,
    /// Variables declared name references (`declare -n`): the value assigned
    /// is a name whose subscript is evaluated on every use.
    nameref_vars: HashSet<String>,
}

impl<'l> Walker<'l> {
    pub(crate) fn new(limits: &'l Limits) -> Self {
        Walker {
            limits,
            opts: word::parser_options(),
            out: Analysis::default(),
            nodes: 0,
            work: 0,
            stopped: false,
            plain_vars: HashSet::new(),
            cwd: RunsIn::Caller,
            aliases: Default::default(),
            functions: HashSet::new(),
            integer_vars: HashSet::new(),
            nameref_vars: HashSet::new(),
        }
    }

    pub(crate) fn run(mut self, text: &str) -> Analysis {
        if text.len() > self.limits.max_bytes {
            self.opaque(
                OpaqueReason::SizeLimit,
                format!("{} bytes (limit {})", text.len(), self.limits.max_bytes),
            );
            return self.out;
        }
        self.text(text, Via::Top, 0);
        self.out
    }

    // ----- bookkeeping -------------------------------------------------------

    fn opaque(&mut self, reason: OpaqueReason, text: impl Into<String>) {
        let text = shorten(text.into());
        let o = Opaque { reason, text };
        if !self.out.opaque.contains(&o) {
            self.out.opaque.push(o);
        }
    }

    fn effect(&mut self, e: Effect) {
        let e = match e {
            Effect::Read { path, dynamic } => {
                let (path, dynamic) = self.place(path, dynamic);
                Effect::Read { path, dynamic }
            }
            Effect::Write { path, dynamic } => {
                let (path, dynamic) = self.place(path, dynamic);
                Effect::Write { path, dynamic }
            }
            Effect::Delete { path, dynamic } => {
                let (path, dynamic) = self.place(path, dynamic);
                Effect::Delete { path, dynamic }
            }
            Effect::Move { from, to, dynamic } => {
                let (from, d1) = self.place(from, dynamic);
                let (to, d2) = self.place(to, dynamic);
                Effect::Move {
                    from,
                    to,
                    dynamic: d1 || d2,
                }
            }
            other => other,
        };
        if !self.out.effects.contains(&e) {
            self.out.effects.push(e);
        }
    }

    /// A path as seen from the caller's working directory, after any `cd`.
    fn place(&self, path: String, dynamic: bool) -> (String, bool) {
        match self.cwd.place(&path) {
            Some(placed) => (placed, dynamic),
            None => (path, true),
        }
    }

    /// `cd DIR`: later relative paths are relative to DIR.
    fn change_dir(&mut self, target: Option<&Word>) {
        self.cwd = match target {
            None => RunsIn::Dir("~".into()),
            Some(w) if w.dynamic || w.value == "-" => RunsIn::Unknown,
            Some(w) if w.value.starts_with('/') || w.value.starts_with('~') => {
                RunsIn::Dir(w.value.clone())
            }
            Some(w) => match &self.cwd {
                RunsIn::Caller => RunsIn::Dir(w.value.clone()),
                RunsIn::Dir(dir) => RunsIn::Dir(crate::model::join_path(dir, &w.value)),
                RunsIn::Unknown => RunsIn::Unknown,
            },
        };
    }

    /// Starts the walk in `dir` rather than the caller's working directory.
    pub(crate) fn starting_in(mut self, dir: &str) -> Self {
        self.cwd = RunsIn::Dir(dir.to_string());
        self
    }

    /// Runs `f` in a subshell-like scope: a `cd` inside does not leak out.
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        let saved = self.cwd.clone();
        f(self);
        self.cwd = saved;
    }

    /// Counts a syntax node; false once the node limit is passed.
    fn tick(&mut self) -> bool {
        if self.stopped || !self.stack_ok() {
            return false;
        }
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            self.stopped = true;
            self.opaque(
                OpaqueReason::NodeLimit,
                format!("more than {} syntax nodes", self.limits.max_nodes),
            );
            return false;
        }
        true
    }

    /// Counts `bytes` of text read (re-readings included); false, and the
    /// walk stops with a `work-limit` part, once the work budget is spent.
    fn spend(&mut self, bytes: usize) -> bool {
        if self.stopped {
            return false;
        }
        self.work = self.work.saturating_add(bytes);
        if self.work > self.limits.max_work {
            self.stopped = true;
            self.opaque(
                OpaqueReason::WorkLimit,
                format!(
                    "more than {} bytes of text read through nested scripts and words",
                    self.limits.max_work
                ),
            );
            return false;
        }
        true
    }

    /// The last line of defence against deep recursion that no limit above
    /// bounded: below `Limits::min_stack` free bytes the walk stops with a
    /// `work-limit` part instead of overflowing the stack.
    fn stack_ok(&mut self) -> bool {
        match stacker::remaining_stack() {
            Some(left) if left < self.limits.min_stack => {
                self.stopped = true;
                self.opaque(
                    OpaqueReason::WorkLimit,
                    "nesting too deep for the analysis' stack".to_string(),
                );
                false
            }
            _ => true,
        }
    }

    fn depth_ok(&mut self, depth: u32, what: &str) -> bool {
        if depth > self.limits.max_depth {
            self.opaque(
                OpaqueReason::DepthLimit,
                format!("nesting deeper than {}: {what}", self.limits.max_depth),
            );
            return false;
        }
        true
    }

    // ----- text and syntax tree ----------------------------------------------

    /// Parses and walks shell text (the whole input, or a nested script).
    fn text(&mut self, text: &str, via: Via, depth: u32) {
        // The parser's recursion cannot be instrumented: the scan below bounds
        // it, and it always starts with room to spare on the stack.
        stacker::maybe_grow(PARSE_RED_ZONE, PARSE_STACK, || {
            self.text_on_stack(text, via, depth)
        });
    }

    fn text_on_stack(&mut self, text: &str, via: Via, depth: u32) {
        if self.stopped || !self.depth_ok(depth, text) || !self.spend(text.len()) {
            return;
        }
        let shape = Shape::of(text);
        if shape.depth > self.limits.max_bracket_depth {
            self.opaque(
                OpaqueReason::DepthLimit,
                format!(
                    "brackets nested deeper than {}: {text}",
                    self.limits.max_bracket_depth
                ),
            );
            return;
        }
        if shape.operators > self.limits.max_operators {
            self.opaque(
                OpaqueReason::WorkLimit,
                format!(
                    "more than {} `&&`, `||` and `!` operators: {text}",
                    self.limits.max_operators
                ),
            );
            return;
        }
        if let Some(at) = find_empty_heredoc_tag(text) {
            // brush-parser 0.4 loops without end (allocating as it goes) on a
            // here-document whose tag is empty inside a substitution: never
            // hand it such a text. bash itself rejects an empty tag.
            self.opaque(
                OpaqueReason::ParseError,
                format!("here-document without a tag: {}", &text[at..]),
            );
            return;
        }
        if let Some(at) = find_expanding_heredoc_tag(text) {
            // A tag holding `$(`, `$((`, `${` or a backtick: bash's lexer reads
            // on to close the expansion, and brush-parser 0.4 allocates
            // without end on some of these (found by the fuzz target).
            self.opaque(
                OpaqueReason::ParseError,
                format!("here-document tag with an expansion in it: {}", &text[at..]),
            );
            return;
        }
        if let Some(at) = find_funsub(text) {
            // bash 5.3 `${ cmd; }` / `${| cmd; }` run commands; brush-parser
            // reads them as something else.
            self.opaque(
                OpaqueReason::UnsupportedSyntax,
                format!("${{ … }} command substitution: {}", &text[at..]),
            );
        }
        let rewritten = rewrite_ansi_c_heredoc_tags(text);
        let rewritten = split_process_substitution_parens(&rewritten);
        let text: &str = &rewritten;
        let opts = &self.opts;
        let parentheses = text.bytes().filter(|&b| b == b'(').count();
        let parsed = if parentheses <= MAX_PARENTHESIS_TOKEN_DEPTH {
            // Too few `(` to nest past the limit: parse at once (tokenizing
            // first costs a reader buffer per text, and most texts are here).
            catch_unwind(AssertUnwindSafe(|| {
                brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), opts)
                    .parse_program()
            }))
        } else {
            let tokens = catch_unwind(AssertUnwindSafe(|| {
                brush_parser::uncached_tokenize_str(text, &opts.tokenizer_options())
            }));
            let tokens = match tokens {
                Ok(Ok(tokens)) => tokens,
                Ok(Err(err)) => {
                    self.opaque(OpaqueReason::ParseError, format!("{err}: {text}"));
                    return;
                }
                Err(_) => {
                    self.opaque(OpaqueReason::ParseError, format!("parser failed: {text}"));
                    return;
                }
            };
            if parenthesis_token_depth(&tokens) > MAX_PARENTHESIS_TOKEN_DEPTH {
                // The published brush-parser 0.4 tried each `(` after a `((`
                // both as a bracket of an arithmetic command and as a plain
                // token of one: a text whose arithmetic attempt fails (a `;`
                // inside, a `(` never closed) took time exponential in the
                // nesting (16 levels over 16 KiB: 10 s; 32 unclosed: minutes;
                // found by the fuzz target). The copy built here memoizes
                // that rule (vendor/brush-parser); this refusal stays as a
                // second line, and commands agents write nest far less.
                self.opaque(
                    OpaqueReason::DepthLimit,
                    format!("parentheses nested deeper than {MAX_PARENTHESIS_TOKEN_DEPTH}: {text}"),
                );
                return;
            }
            catch_unwind(AssertUnwindSafe(|| {
                brush_parser::parse_tokens(&tokens, opts)
            }))
        };
        match parsed {
            Ok(Ok(program)) => {
                for (i, list) in program.complete_commands.iter().enumerate() {
                    let first = if i == 0 { via.clone() } else { Via::Sequence };
                    self.list(list, first, depth);
                }
            }
            Ok(Err(err)) => self.opaque(OpaqueReason::ParseError, format!("{err}: {text}")),
            Err(_) => self.opaque(OpaqueReason::ParseError, format!("parser failed: {text}")),
        }
    }

    fn list(&mut self, list: &ast::CompoundList, first: Via, depth: u32) {
        let mut via = first;
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            if matches!(sep, ast::SeparatorOperator::Async) {
                // A background job runs in a subshell.
                self.scoped(|w| w.and_or(and_or, via.clone(), depth));
            } else {
                self.and_or(and_or, via.clone(), depth);
            }
            via = match sep {
                ast::SeparatorOperator::Async => Via::Background,
                ast::SeparatorOperator::Sequence => Via::Sequence,
            };
        }
    }

    fn and_or(&mut self, list: &ast::AndOrList, via: Via, depth: u32) {
        self.pipeline(&list.first, via, depth);
        for next in &list.additional {
            match next {
                ast::AndOr::And(p) => self.pipeline(p, Via::And, depth),
                ast::AndOr::Or(p) => self.pipeline(p, Via::Or, depth),
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline, via: Via, depth: u32) {
        for (i, cmd) in p.seq.iter().enumerate() {
            let v = if i == 0 { via.clone() } else { Via::Pipeline };
            if p.seq.len() > 1 {
                // Each stage of a pipeline runs in its own subshell.
                self.scoped(|w| w.command(cmd, v, depth, i > 0));
            } else {
                self.command(cmd, v, depth, i > 0);
            }
        }
    }

    fn command(&mut self, cmd: &ast::Command, via: Via, depth: u32, piped: bool) {
        if !self.tick() {
            return;
        }
        match cmd {
            ast::Command::Simple(simple) => self.simple(simple, via, depth, piped),
            ast::Command::Compound(compound, redirects) => {
                if let Some(r) = redirects {
                    for redirect in &r.0 {
                        self.redirect(redirect, depth);
                    }
                }
                self.compound(compound, depth + 1);
            }
            ast::Command::Function(def) => {
                self.functions.insert(def.fname.value.clone());
                // The body runs whenever the function is called; analyse it here.
                let body = &def.body;
                if let Some(r) = &body.1 {
                    for redirect in &r.0 {
                        self.redirect(redirect, depth + 1);
                    }
                }
                // It runs wherever it is called from: the directory is not known.
                self.scoped(|w| {
                    w.cwd = RunsIn::Unknown;
                    w.compound_as(&body.0, Via::Function, depth + 1);
                });
            }
            ast::Command::ExtendedTest(test, redirects) => {
                if let Some(r) = redirects {
                    for redirect in &r.0 {
                        self.redirect(redirect, depth);
                    }
                }
                self.extended_test(&test.expr, depth);
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, depth: u32) {
        let via = match c {
            ast::CompoundCommand::Subshell(_) => Via::Subshell,
            ast::CompoundCommand::BraceGroup(_) => Via::Group,
            _ => Via::Compound,
        };
        self.compound_as(c, via, depth);
    }

    fn compound_as(&mut self, c: &ast::CompoundCommand, via: Via, depth: u32) {
        if !self.depth_ok(depth, "compound command") {
            return;
        }
        use ast::CompoundCommand as C;
        match c {
            C::Arithmetic(a) => self.arith(&a.expr.value, depth),
            C::ArithmeticForClause(f) => {
                if let Some(init) = &f.initializer {
                    // `i=0` gives `i` a plain value before anything reads it.
                    for name in arith::numeric_assignments(&init.value) {
                        self.plain_vars.insert(name);
                    }
                    self.arith(&init.value, depth);
                }
                if let Some(cond) = &f.condition {
                    self.arith(&cond.value, depth);
                }
                if let Some(upd) = &f.updater {
                    self.arith(&upd.value, depth);
                }
                self.list(&f.body.list, via, depth);
            }
            C::BraceGroup(g) => self.list(&g.list, via, depth),
            C::Subshell(s) => self.scoped(|w| w.list(&s.list, via, depth)),
            C::ForClause(f) => {
                let mut plain = true;
                if let Some(values) = &f.values {
                    for w in values {
                        let w = self.word(&w.value, depth);
                        plain &= !w.dynamic && arith::is_plain_value(&w.value);
                        let assigned = EnvAssignment {
                            name: f.variable_name.clone(),
                            value: w.value.clone(),
                            dynamic: w.dynamic,
                        };
                        if self.nameref_vars.contains(&f.variable_name) {
                            // A name reference as the loop variable refers to each word in turn.
                            self.nameref_target(&assigned, depth);
                        }
                        if self.integer_vars.contains(&f.variable_name) {
                            if w.dynamic {
                                self.variable_filled(&f.variable_name, "for");
                            } else {
                                self.arith(&w.value, depth);
                            }
                        }
                        self.shell_variable_set(
                            &EnvAssignment {
                                name: f.variable_name.clone(),
                                value: w.value,
                                dynamic: w.dynamic,
                            },
                            depth,
                        );
                    }
                } else {
                    plain = false;
                    self.shell_variable_read_in(&f.variable_name, "for");
                    self.variable_filled(&f.variable_name, "for");
                }
                self.set_var(&f.variable_name, plain);
                self.list(&f.body.list, via, depth);
            }
            C::CaseClause(case) => {
                self.word(&case.value.value, depth);
                for item in &case.cases {
                    for p in &item.patterns {
                        self.word(&p.value, depth);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd, via.clone(), depth);
                    }
                }
            }
            C::IfClause(i) => {
                self.list(&i.condition, via.clone(), depth);
                self.list(&i.then, via.clone(), depth);
                for e in i.elses.iter().flatten() {
                    if let Some(cond) = &e.condition {
                        self.list(cond, via.clone(), depth);
                    }
                    self.list(&e.body, via.clone(), depth);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.list(&w.0, via.clone(), depth);
                self.list(&w.1.list, via, depth);
            }
            C::Coprocess(co) => {
                if let Some(name) = &co.name {
                    self.word(&name.value, depth);
                }
                self.command(&co.body, via, depth, false);
            }
        }
    }

    fn extended_test(&mut self, e: &ast::ExtendedTestExpr, depth: u32) {
        use ast::ExtendedTestExpr as T;
        if !self.tick() {
            return;
        }
        match e {
            T::And(a, b) | T::Or(a, b) => {
                self.extended_test(a, depth);
                self.extended_test(b, depth);
            }
            T::Not(a) | T::Parenthesized(a) => self.extended_test(a, depth),
            T::UnaryTest(pred, w) => {
                use ast::UnaryPredicate as U;
                let word = if matches!(pred, U::StringHasZeroLength | U::StringHasNonZeroLength) {
                    self.word_value_hidden(&w.value, depth)
                } else {
                    self.word(&w.value, depth)
                };
                if matches!(pred, ast::UnaryPredicate::ShellVariableIsSetAndAssigned) {
                    // `-v name[subscript]` evaluates the subscript.
                    self.subscript_in_name(&word, depth);
                }
            }
            T::BinaryTest(pred, l, r) => {
                let lw = self.word(&l.value, depth);
                let rw = self.word(&r.value, depth);
                use ast::BinaryPredicate as B;
                if matches!(
                    pred,
                    B::ArithmeticEqualTo
                        | B::ArithmeticNotEqualTo
                        | B::ArithmeticLessThan
                        | B::ArithmeticLessThanOrEqualTo
                        | B::ArithmeticGreaterThan
                        | B::ArithmeticGreaterThanOrEqualTo
                ) {
                    // Operands of `-eq` … inside `[[ ]]` are arithmetic expressions.
                    for w in [lw, rw] {
                        if w.dynamic || !w.value.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                            self.arith(&w.value, depth);
                        }
                    }
                }
            }
        }
    }

    // ----- words ---------------------------------------------------------------

    /// Normalises a word and analyses the code it carries.
    fn word(&mut self, raw: &str, depth: u32) -> Word {
        self.tick();
        self.spend(raw.len());
        let w = word::normalize(raw, &self.opts);
        self.nested(&w.nested, depth);
        w
    }

    /// A word whose value is only tested for being empty (`[[ -n $x ]]`,
    /// `[ -z "$x" ]`): its variables' values do not come out. Code it carries
    /// is analysed as usual.
    fn word_value_hidden(&mut self, raw: &str, depth: u32) -> Word {
        self.tick();
        self.spend(raw.len());
        let mut w = word::normalize(raw, &self.opts);
        w.nested.retain(|n| !matches!(n, Nested::EnvRead(_)));
        self.nested(&w.nested, depth);
        w
    }

    /// Records a read of a variable's value (`*` for all of them).
    fn env_read(&mut self, name: &str, by: &str) {
        let r = crate::model::EnvRead {
            name: name.to_string(),
            by: by.to_string(),
        };
        if !self.out.env_reads.contains(&r) {
            self.out.env_reads.push(r);
        }
    }

    fn nested(&mut self, nested: &[Nested], depth: u32) {
        for n in nested {
            match n {
                Nested::Command { text, backticks } => {
                    let via = if *backticks {
                        Via::Backticks
                    } else {
                        Via::CommandSubstitution
                    };
                    self.scoped(|w| w.text(text, via, depth + 1));
                }
                Nested::Arith(expr) => self.arith(expr, depth),
                Nested::Opaque(reason, text) => self.opaque(*reason, text.clone()),
                Nested::EnvRead(name) => self.env_read(name, "expansion"),
            }
        }
    }

    /// An arithmetic context: its substitutions run, and names it reads must
    /// hold plain values. Quotes do not quote here: bash expands the text as
    /// if double-quoted, so `a['$(id)']` runs `id`.
    fn arith(&mut self, expr: &str, depth: u32) {
        if !self.spend(expr.len()) {
            return;
        }
        let nested = word::quotes_literal_code(expr, &self.opts);
        self.nested(&nested, depth);
        let bad = arith::unsafe_names(expr, &self.plain_vars);
        if !bad.is_empty() {
            self.opaque(
                OpaqueReason::ArithmeticEvaluation,
                format!(
                    "arithmetic reads {} whose value is not known: {expr}",
                    bad.join(", ")
                ),
            );
        }
    }

    /// A variable name argument (`unset a[i]`, `-v a[$(x)]`): a subscript is arithmetic.
    fn subscript_in_name(&mut self, w: &Word, depth: u32) {
        if w.dynamic {
            self.opaque(
                OpaqueReason::ArithmeticEvaluation,
                format!("variable name known only at run time: {}", w.value),
            );
        } else if let Some(open) = w.value.find('[') {
            let inner = w.value[open + 1..].trim_end_matches(']').to_string();
            self.arith(&inner, depth);
        }
    }

    /// The value given to a name reference: a variable name whose subscript
    /// (quotes literal: `'a[$(id)]'`) is evaluated whenever it is used.
    fn nameref_target(&mut self, e: &EnvAssignment, depth: u32) {
        if !e.dynamic && !e.value.is_empty() {
            // Every use of the reference reads the variable it names.
            let name = e.value.split('[').next().unwrap_or(&e.value);
            self.env_read(name, "declare -n");
        }
        let target = Word {
            value: e.value.clone(),
            dynamic: e.dynamic,
            nested: Vec::new(),
        };
        self.subscript_in_name(&target, depth);
    }

    fn set_var(&mut self, name: &str, plain: bool) {
        if plain {
            self.plain_vars.insert(name.to_string());
        } else {
            self.plain_vars.remove(name);
        }
    }

    // ----- simple commands -----------------------------------------------------

    fn simple(&mut self, s: &ast::SimpleCommand, via: Via, depth: u32, piped: bool) {
        let mut call = SimpleCall {
            words: Vec::new(),
            env: Vec::new(),
            redirects: Vec::new(),
            stdin: if piped {
                Stdin::Unknown("a pipe".into())
            } else {
                Stdin::Inherited
            },
        };
        let prefix = s.prefix.iter().flat_map(|p| p.0.iter());
        let name = s.word_or_name.iter().map(|w| (true, w));
        for item in prefix {
            self.item(item, &mut call, depth, true);
        }
        let first_suffix = s.suffix.as_ref().and_then(|p| p.0.first());
        for (_, w) in name {
            let fd_var = is_fd_name(&w.value)
                && matches!(
                    first_suffix,
                    Some(ast::CommandPrefixOrSuffixItem::IoRedirect(_))
                );
            if !fd_var {
                let word = self.word(&w.value, depth);
                call.words.push(word);
            }
        }
        let suffix: Vec<&ast::CommandPrefixOrSuffixItem> =
            s.suffix.iter().flat_map(|p| p.0.iter()).collect();
        if let Some(w) = &s.word_or_name
            && is_open_subscript(&w.value)
        {
            // `a[ '$(id)' ]=1`: bash reads an assignment whose subscript holds
            // blanks (and evaluates it); the parser sees a command `a[`.
            self.opaque(
                OpaqueReason::UnsupportedSyntax,
                format!("an assignment with blanks in its subscript: {}", w.value),
            );
            for item in &suffix {
                if let ast::CommandPrefixOrSuffixItem::Word(w)
                | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) = item
                {
                    self.arith(&w.value, depth);
                }
            }
        }
        // `[ -n "$x" ]`, `test -z "$x"`: only whether the value is empty comes out.
        let emptiness_test = s
            .word_or_name
            .as_ref()
            .is_some_and(|w| matches!(w.value.as_str(), "[" | "test"))
            && matches!(
                suffix.as_slice(),
                [ast::CommandPrefixOrSuffixItem::Word(op), _]
                | [ast::CommandPrefixOrSuffixItem::Word(op), _, _]
                    if matches!(op.value.as_str(), "-n" | "-z")
            )
            && suffix.get(2).is_none_or(
                |close| matches!(close, ast::CommandPrefixOrSuffixItem::Word(c) if c.value == "]"),
            );
        for (k, item) in suffix.iter().enumerate() {
            if emptiness_test
                && k == 1
                && let ast::CommandPrefixOrSuffixItem::Word(w) = item
            {
                let word = self.word_value_hidden(&w.value, depth);
                call.words.push(word);
                continue;
            }
            if is_fd_variable(item)
                && matches!(
                    suffix.get(k + 1),
                    Some(ast::CommandPrefixOrSuffixItem::IoRedirect(_))
                )
            {
                // `{fd}>file`: bash allocates a descriptor into `fd`; the word
                // is part of the redirect, not an argument.
                continue;
            }
            self.item(item, &mut call, depth, false);
        }
        if call.words.is_empty() {
            // Plain assignments change the shell's own variables.
            for e in &call.env {
                let plain = !e.dynamic && arith::is_plain_value(&e.value);
                self.set_var(&e.name.clone(), plain);
                if self.integer_vars.contains(&e.name) {
                    // Assigning an integer variable evaluates the value as arithmetic.
                    self.arith(&e.value.clone(), depth);
                }
                if self.nameref_vars.contains(&e.name) {
                    // A name reference's value is a name: `a[$(id)]` runs on use.
                    self.nameref_target(e, depth);
                }
                self.shell_variable_set(e, depth);
            }
            return;
        }
        self.run_command(call, via, depth);
    }

    fn item(
        &mut self,
        item: &ast::CommandPrefixOrSuffixItem,
        call: &mut SimpleCall,
        depth: u32,
        in_prefix: bool,
    ) {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => {
                if let Some((redirect, stdin)) = self.redirect(r, depth) {
                    call.redirects.push(redirect);
                    if let Some(s) = stdin {
                        call.stdin = s;
                    }
                }
            }
            I::Word(w) => {
                let word = self.word(&w.value, depth);
                call.words.push(word);
            }
            I::AssignmentWord(assignment, w) => {
                if in_prefix {
                    let (value, dynamic) = self.assignment_value(assignment, depth);
                    let name = match &assignment.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, index) => {
                            self.arith(index, depth);
                            n.clone()
                        }
                    };
                    call.env.push(EnvAssignment {
                        name,
                        value,
                        dynamic,
                    });
                } else {
                    // An assignment-shaped argument (`declare x=$(…)`, `echo a=b`).
                    let word = self.word(&w.value, depth);
                    call.words.push(word);
                }
            }
            I::ProcessSubstitution(kind, sub) => {
                let via = match kind {
                    ast::ProcessSubstitutionKind::Read => Via::ProcessSubstitutionIn,
                    ast::ProcessSubstitutionKind::Write => Via::ProcessSubstitutionOut,
                };
                if self.depth_ok(depth + 1, "process substitution") {
                    self.list(&sub.list, via, depth + 1);
                }
                call.words.push(Word {
                    value: format!("{kind}({})", sub.list),
                    dynamic: true,
                    nested: Vec::new(),
                });
            }
        }
    }

    fn assignment_value(&mut self, a: &ast::Assignment, depth: u32) -> (String, bool) {
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let w = self.word(&w.value, depth);
                (w.value, w.dynamic)
            }
            ast::AssignmentValue::Array(items) => {
                let mut parts = Vec::new();
                let mut dynamic = false;
                // bash reads `[ '$(id)' ]=1` inside `( … )` as one element whose
                // subscript holds blanks; the parser splits it into words. Every
                // element of such a literal may be part of a subscript.
                let spaced_subscript = items
                    .iter()
                    .any(|(key, value)| key.is_none() && value.value.starts_with('['));
                for (key, value) in items {
                    if let Some(k) = key {
                        let kw = self.word(&k.value, depth);
                        self.arith(&kw.value, depth);
                    } else if spaced_subscript {
                        self.arith(&value.value, depth);
                    }
                    let vw = self.word(&value.value, depth);
                    dynamic |= vw.dynamic;
                    parts.push(vw.value);
                }
                (format!("({})", parts.join(" ")), dynamic)
            }
        }
    }

    /// Records a redirect's effects; returns its description and, for input
    /// redirects, what a shell would read as its script.
    fn redirect(&mut self, r: &ast::IoRedirect, depth: u32) -> Option<(Redirect, Option<Stdin>)> {
        self.tick();
        use ast::IoFileRedirectKind as K;
        use ast::IoRedirect as R;
        match r {
            R::File(fd, kind, target) => {
                let (op, default_fd) = match kind {
                    K::Read => ("<", 0),
                    K::Write => (">", 1),
                    K::Append => (">>", 1),
                    K::ReadAndWrite => ("<>", 0),
                    K::Clobber => (">|", 1),
                    K::DuplicateInput => ("<&", 0),
                    K::DuplicateOutput => (">&", 1),
                };
                let fd = Some(fd.unwrap_or(default_fd));
                let (target, dynamic) = match target {
                    ast::IoFileRedirectTarget::Filename(w) => {
                        let w = self.word(&w.value, depth);
                        self.file_redirect_effects(kind, &w);
                        (w.value, w.dynamic)
                    }
                    ast::IoFileRedirectTarget::Fd(n) => (n.to_string(), false),
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let w = self.word(&w.value, depth);
                        // `>&file` (not a number or `-`) writes to a file.
                        let is_fd = w.value == "-"
                            || w.value
                                .trim_end_matches('-')
                                .bytes()
                                .all(|b| b.is_ascii_digit());
                        if w.dynamic || !is_fd {
                            self.file_redirect_effects(kind, &w);
                        }
                        (w.value, w.dynamic)
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(kind, sub) => {
                        let via = match kind {
                            ast::ProcessSubstitutionKind::Read => Via::ProcessSubstitutionIn,
                            ast::ProcessSubstitutionKind::Write => Via::ProcessSubstitutionOut,
                        };
                        if self.depth_ok(depth + 1, "process substitution") {
                            self.list(&sub.list, via, depth + 1);
                        }
                        (format!("{kind}({})", sub.list), true)
                    }
                };
                let stdin = (fd == Some(0)
                    && matches!(kind, K::Read | K::ReadAndWrite | K::DuplicateInput))
                .then(|| Stdin::Unknown(format!("{op}{target}")));
                Some((
                    Redirect {
                        op: op.into(),
                        fd,
                        target,
                        dynamic,
                    },
                    stdin,
                ))
            }
            R::HereDocument(fd, doc) => {
                let op = if doc.remove_tabs { "<<-" } else { "<<" };
                let fd = fd.unwrap_or(0);
                let mut body = doc.doc.value.clone();
                if doc.remove_tabs {
                    body = body
                        .lines()
                        .map(|l| l.trim_start_matches('\t'))
                        .collect::<Vec<_>>()
                        .join("\n")
                        + "\n";
                }
                let mut dynamic = false;
                if doc.requires_expansion {
                    // An unquoted delimiter: the body is expanded, and its
                    // substitutions run whatever command reads it.
                    let expanded = word::expand_heredoc(&body, &self.opts);
                    self.nested(&expanded.nested, depth);
                    dynamic = expanded.dynamic;
                    body = expanded.value;
                }
                let stdin = if fd != 0 {
                    None
                } else if dynamic {
                    Some(Stdin::Unknown("a heredoc with expansions".into()))
                } else {
                    Some(Stdin::Text(body.clone()))
                };
                Some((
                    Redirect {
                        op: op.into(),
                        fd: Some(fd),
                        target: body,
                        dynamic,
                    },
                    stdin,
                ))
            }
            R::HereString(fd, w) => {
                let fd = fd.unwrap_or(0);
                let w = self.word(&w.value, depth);
                let stdin = (fd == 0).then(|| {
                    if w.dynamic {
                        Stdin::Unknown(format!("<<<{}", w.value))
                    } else {
                        Stdin::Text(format!("{}\n", w.value))
                    }
                });
                Some((
                    Redirect {
                        op: "<<<".into(),
                        fd: Some(fd),
                        target: w.value,
                        dynamic: w.dynamic,
                    },
                    stdin,
                ))
            }
            R::OutputAndError(w, append) => {
                let w = self.word(&w.value, depth);
                self.file_redirect_effects(&K::Write, &w);
                let op = if *append { "&>>" } else { "&>" };
                Some((
                    Redirect {
                        op: op.into(),
                        fd: None,
                        target: w.value,
                        dynamic: w.dynamic,
                    },
                    None,
                ))
            }
        }
    }

    fn file_redirect_effects(&mut self, kind: &ast::IoFileRedirectKind, target: &Word) {
        use ast::IoFileRedirectKind as K;
        let path = target.value.clone();
        let dynamic = target.dynamic;
        if let Some(host) = dev_tcp_host(&path) {
            self.effect(Effect::Network {
                program: "bash".into(),
                host: Some(host),
            });
        }
        match kind {
            K::Read | K::DuplicateInput => self.effect(Effect::Read { path, dynamic }),
            K::ReadAndWrite => {
                self.effect(Effect::Read {
                    path: path.clone(),
                    dynamic,
                });
                self.effect(Effect::Write { path, dynamic });
            }
            K::Write | K::Append | K::Clobber | K::DuplicateOutput => {
                self.effect(Effect::Write { path, dynamic })
            }
        }
    }

    // ----- running a command ---------------------------------------------------

    /// A command with its words read: record it, then look through it.
    fn run_command(&mut self, call: SimpleCall, via: Via, depth: u32) {
        let Some(name) = call.words.first() else {
            // Every caller passes the program word; without it nothing is
            // known about the call (fail closed).
            self.opaque(OpaqueReason::ParseError, "a command without words");
            return;
        };
        if self.stopped || !self.depth_ok(depth, &name.value) {
            return;
        }
        if name.dynamic {
            self.opaque(OpaqueReason::DynamicCommandName, joined_source(&call.words));
            return;
        }
        if self.out.commands.len() >= self.limits.max_commands {
            self.stopped = true;
            self.opaque(
                OpaqueReason::CommandLimit,
                format!("more than {} commands", self.limits.max_commands),
            );
            return;
        }
        let argv = (!call.words.iter().any(|w| w.dynamic))
            .then(|| call.words.iter().map(|w| w.value.clone()).collect());
        let dynamic_words = call
            .words
            .iter()
            .enumerate()
            .filter(|(_, w)| w.dynamic)
            .map(|(i, _)| i)
            .collect();
        self.out.commands.push(Command {
            program: name.value.clone(),
            argv,
            words: call.words.iter().map(|w| w.value.clone()).collect(),
            dynamic_words,
            via,
            depth,
            env: call.env.clone(),
            redirects: call.redirects.clone(),
            runs_in: self.cwd.clone(),
        });
        let program = name.value.clone();
        let runs_nothing = knowledge::BUILTINS_THAT_RUN_NOTHING.contains(&program.as_str())
            && !self.functions.contains(&program)
            && !self.aliases.contains_key(&program);
        for e in call.env.iter().filter(|_| !runs_nothing) {
            self.env_assignment(&program, e, depth);
        }
        if !matches!(self.cwd, RunsIn::Caller)
            && knowledge::lookup_key(&program)
                .is_some_and(|k| knowledge::LOADS_FROM_CWD.contains(&k))
        {
            // The directory a `cd` moved to: its configuration and code load too.
            self.effect(Effect::Read {
                path: ".".into(),
                dynamic: false,
            });
        }
        if let Some(key) = knowledge::lookup_key(&program) {
            self.printed_variables(key, &call.words);
        }
        self.look_through(call, depth);
    }

    /// Programs and builtins that print variables' values: every variable
    /// (`printenv`, `set`, `declare -p`, `export`), or the ones named
    /// (`printenv NAME`, `declare -p NAME`). `env` without a command is judged
    /// in [`Walker::wrapper`].
    fn printed_variables(&mut self, key: &str, words: &[Word]) {
        // `words` starts with the program (`run_command` checked).
        let args = words.get(1..).unwrap_or_default();
        match key {
            "printenv" => {
                let names: Vec<&Word> = args
                    .iter()
                    .filter(|w| w.dynamic || !w.value.starts_with('-'))
                    .collect();
                if names.is_empty() || names.iter().any(|w| w.dynamic) {
                    self.env_read("*", key);
                } else {
                    for w in names {
                        self.env_read(&w.value, key);
                    }
                }
            }
            // `set` alone lists every variable (and function).
            "set" if args.is_empty() => self.env_read("*", key),
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                let mut print = false;
                let mut functions = false;
                let mut names: Vec<&Word> = Vec::new();
                for w in args {
                    if w.dynamic && !w.value.contains('=') {
                        // It may be `-p`: fail closed.
                        self.env_read("*", key);
                        return;
                    }
                    if !w.dynamic && (w.value.starts_with('-') || w.value.starts_with('+')) {
                        print |= w.value.starts_with('-') && w.value.contains('p');
                        functions |= w.value.contains(['f', 'F']);
                    } else if !w.value.contains('=') {
                        names.push(w);
                    }
                }
                if functions {
                    return;
                }
                let assigns = args.iter().any(|w| w.value.contains('='));
                if names.is_empty() && !assigns {
                    // Without operands they list variables with their values.
                    self.env_read("*", key);
                } else if print {
                    for w in names {
                        let name = w.value.split('[').next().unwrap_or(&w.value);
                        self.env_read(name, key);
                    }
                }
            }
            // Substitutes every `$NAME` of its input from the environment.
            "envsubst" => self.env_read("*", key),
            // BSD-style `ps e` (and `ps -E`) shows each process's environment.
            "ps" => {
                let mut prev_option = false;
                for w in args {
                    let bsd = !prev_option
                        && !w.value.starts_with('-')
                        && w.value.bytes().all(|b| b.is_ascii_alphabetic())
                        && w.value.contains('e');
                    if w.dynamic || bsd || w.value == "-E" {
                        self.env_read("*", key);
                        return;
                    }
                    prev_option = w.value.starts_with('-');
                }
            }
            "awk" | "gawk" | "mawk" | "nawk"
                if args.iter().any(|w| w.value.contains("ENVIRON")) =>
            {
                self.env_read("*", key);
            }
            "jq" | "gojq" | "jaq" | "yq"
                if args
                    .iter()
                    .any(|w| !w.value.starts_with('-') && jq_reads_env(&w.value)) =>
            {
                self.env_read("*", key);
            }
            "tmux"
                if args
                    .iter()
                    .any(|w| matches!(w.value.as_str(), "show-environment" | "showenv")) =>
            {
                self.env_read("*", key);
            }
            "systemctl" if args.iter().any(|w| w.value == "show-environment") => {
                self.env_read("*", key);
            }
            _ => {}
        }
    }

    /// `PS4` (and the other prompt strings) are expanded, substitutions and
    /// all, each time bash prints them (`set -x` prints PS4 before every command).
    fn prompt_value(&mut self, e: &EnvAssignment, depth: u32) {
        if !matches!(e.name.as_str(), "PS0" | "PS1" | "PS2" | "PS3" | "PS4") {
            return;
        }
        if e.dynamic {
            self.opaque(OpaqueReason::DynamicCode, format!("{}={}", e.name, e.value));
        } else {
            let w = word::normalize(&e.value, &self.opts);
            self.nested(&w.nested, depth);
        }
    }

    fn env_assignment(&mut self, program: &str, e: &EnvAssignment, depth: u32) {
        self.prompt_value(e, depth);
        if let Some(func) = e.name.strip_prefix("BASH_FUNC_") {
            // An exported function: bash defines it from the environment at start.
            let name = func.trim_end_matches('%');
            self.effect(Effect::Code {
                program: program.into(),
                source: e.name.clone(),
                reason: format!("defines the shell function {name} in bash started from here"),
            });
            if e.dynamic {
                self.opaque(OpaqueReason::DynamicCode, format!("{}={}", e.name, e.value));
            } else {
                self.text(
                    &format!("__exported_function{}", e.value),
                    Via::Option(e.name.clone()),
                    depth + 1,
                );
            }
            return;
        }
        if let Some(risk) = knowledge::env_var(&e.name) {
            if let Some(reason) = risk.opaque {
                self.opaque(reason, format!("{}={} ({})", e.name, e.value, risk.reason));
            }
            self.effect(Effect::Code {
                program: program.into(),
                source: e.name.clone(),
                reason: risk.reason.into(),
            });
            if risk.shell_text {
                let text = risk.text_of(&e.value);
                if e.dynamic {
                    self.opaque(OpaqueReason::DynamicCode, format!("{}={}", e.name, e.value));
                } else if !text.is_empty() {
                    self.run_via_sh(Via::Option(e.name.clone()), text, depth + 1);
                }
            }
        }
    }

    /// Looks through the program to the code it runs: builtins, wrappers,
    /// shells, interpreters, and the knowledge base.
    fn look_through(&mut self, call: SimpleCall, depth: u32) {
        let Some((first, args)) = call.words.split_first() else {
            self.opaque(OpaqueReason::ParseError, "a command without words");
            return;
        };
        let program = first.value.clone();
        if let Some(body) = self.aliases.get(&program).cloned() {
            // An alias defined earlier in the text: bash replaces the word with
            // its body (which may end in `;` or `|` and so start a new command).
            let rest: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
            let expanded = format!("{body} {}", rest.join(" "));
            if !args.iter().any(|w| w.dynamic) {
                self.scoped(|w| w.text(&expanded, Via::Wrapper("alias".into()), depth + 1));
            } else {
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!("alias {program} with arguments known only at run time"),
                );
            }
        }
        let Some(key) = knowledge::lookup_key(&program) else {
            // A program run by path outside the system directories: a file the
            // text may itself have written.
            self.opaque(
                OpaqueReason::CodeFromFile,
                format!("runs the file {program}"),
            );
            return;
        };
        if !program.contains('/') && self.builtin(key, &call, depth) {
            return;
        }
        if let Some(spec) = wrappers::lookup(key, &call.words) {
            self.wrapper(key, spec, &call, depth);
            return;
        }
        if knowledge::is_shell(key) {
            self.shell(key, &call.words, &call.stdin, depth);
            return;
        }
        let findings = knowledge::analyze_program(key, &call.words, &call.stdin_text());
        self.findings(findings, &call, depth);
    }

    fn findings(&mut self, f: Findings, call: &SimpleCall, depth: u32) {
        for e in f.effects {
            self.effect(e);
        }
        for (reason, text) in f.opaque {
            self.opaque(reason, text);
        }
        for (label, text, dynamic, via_sh) in f.shell_texts {
            if dynamic {
                self.opaque(OpaqueReason::DynamicCode, format!("{label}: {text}"));
            } else if via_sh {
                self.run_via_sh(Via::Option(label), &text, depth + 1);
            } else {
                self.text(&text, Via::Option(label), depth + 1);
            }
        }
        for (label, range, replace) in f.commands {
            let Some(run) = call.words.get(range) else {
                // The reader named words the call does not have (fail closed).
                self.opaque(
                    OpaqueReason::ParseError,
                    format!("{label}: a command this analysis lost track of"),
                );
                continue;
            };
            let words: Vec<Word> = run
                .iter()
                .map(|w| match &replace {
                    Some(r) if w.value.contains(r.as_str()) => Word {
                        dynamic: true,
                        ..w.clone()
                    },
                    _ => w.clone(),
                })
                .collect();
            if words.is_empty() {
                continue;
            }
            let inner = SimpleCall {
                words,
                env: Vec::new(),
                redirects: Vec::new(),
                stdin: Stdin::Inherited,
            };
            self.run_command(inner, Via::Wrapper(label), depth + 1);
        }
    }

    /// Shell text a program hands to `sh -c`: the `sh` is a command too.
    fn run_via_sh(&mut self, via: Via, text: &str, depth: u32) {
        let sh = |v: &str| Word {
            value: v.to_string(),
            dynamic: false,
            nested: Vec::new(),
        };
        let call = SimpleCall {
            words: vec![sh("sh"), sh("-c"), sh(text)],
            env: Vec::new(),
            redirects: Vec::new(),
            stdin: Stdin::Inherited,
        };
        self.scoped(|w| w.run_command(call, via, depth));
    }

    /// Shell builtins that run or re-read code. Returns true when handled.
    fn builtin(&mut self, name: &str, call: &SimpleCall, depth: u32) -> bool {
        let Some(args) = call.words.get(1..) else {
            self.opaque(OpaqueReason::ParseError, "a command without words");
            return true;
        };
        match name {
            "eval" => {
                // `eval` skips one leading `--`.
                let args = match args.split_first() {
                    Some((w, rest)) if !w.dynamic && w.value == "--" => rest,
                    _ => args,
                };
                if args.iter().any(|w| w.dynamic) {
                    self.opaque(OpaqueReason::DynamicCode, joined_source(&call.words));
                } else {
                    let text = args
                        .iter()
                        .map(|w| w.value.as_str())
                        .collect::<Vec<_>>()
                        .join(" ");
                    self.text(&text, Via::Eval, depth + 1);
                }
                true
            }
            "cd" | "pushd" => {
                let target = args
                    .iter()
                    .find(|w| w.dynamic || !w.value.starts_with('-') || w.value == "-");
                self.change_dir(target);
                false
            }
            "popd" => {
                self.cwd = RunsIn::Unknown;
                false
            }
            "trap" => {
                // `trap 'cmd' SIG…`: the first argument runs later (`-p`, `-l` list).
                if let Some(first) = args.iter().find(|w| !w.value.starts_with('-') || w.dynamic) {
                    if first.dynamic {
                        self.opaque(OpaqueReason::DynamicCode, joined_source(&call.words));
                    } else if args.len() > 1 && first.value != "-" {
                        self.text(&first.value.clone(), Via::Wrapper("trap".into()), depth + 1);
                    }
                }
                true
            }
            "alias" => {
                for a in args {
                    if a.dynamic {
                        self.opaque(OpaqueReason::DynamicCode, format!("alias {}", a.value));
                    } else if let Some((alias, body)) = a.value.split_once('=') {
                        self.aliases.insert(alias.to_string(), body.to_string());
                        // An alias body is command text wherever the alias is used.
                        self.text(body, Via::Wrapper("alias".into()), depth + 1);
                    }
                }
                true
            }
            "source" | "." => {
                if let Some(file) = args.first() {
                    self.effect(Effect::Read {
                        path: file.value.clone(),
                        dynamic: file.dynamic,
                    });
                    self.effect(Effect::Code {
                        program: name.into(),
                        source: file.value.clone(),
                        reason: "runs the commands of a script file in this shell".into(),
                    });
                    self.opaque(OpaqueReason::CodeFromFile, format!("{name} {}", file.value));
                }
                true
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                self.declaration(name, args, depth);
                true
            }
            "let" => {
                for a in args {
                    self.arith(&a.value.clone(), depth);
                    for n in arith::numeric_assignments(&a.value) {
                        self.plain_vars.insert(n);
                    }
                }
                true
            }
            "unset" | "read" | "printf" | "wait" | "test" | "[" | "getopts" => {
                self.name_arguments(name, args, depth);
                false
            }
            "mapfile" | "readarray" => {
                self.mapfile(name, args, depth);
                false
            }
            "bind" | "complete" | "compgen" | "fc" | "enable" | "hash" => {
                self.code_binding_builtin(name, args);
                true
            }
            _ => false,
        }
    }

    /// `declare -a x="$v"` re-parses a dynamic value as an array literal, and
    /// `declare -i` evaluates it as arithmetic; subscripts in names are arithmetic.
    fn declaration(&mut self, name: &str, args: &[Word], depth: u32) {
        let mut array = false;
        let mut integer = false;
        let mut nameref = false;
        for a in args {
            if a.dynamic && a.value.starts_with('-') {
                self.opaque(OpaqueReason::DynamicCode, format!("{name} {}", a.value));
                continue;
            }
            if !a.dynamic && a.value.starts_with(['-', '+']) {
                array |= a.value.contains(['a', 'A']);
                integer |= a.value.contains('i');
                nameref |= a.value.contains('n');
                continue;
            }
            let (lhs, value) = match a.value.split_once('=') {
                Some((n, v)) => (n.trim_end_matches('+').to_string(), Some(v.to_string())),
                None => (a.value.clone(), None),
            };
            if lhs.contains('[') {
                let w = Word {
                    value: lhs.clone(),
                    dynamic: false,
                    nested: Vec::new(),
                };
                self.subscript_in_name(&w, depth);
            }
            if integer {
                self.integer_vars.insert(lhs.clone());
            }
            if nameref {
                self.nameref_vars.insert(lhs.clone());
            }
            let Some(v) = value else {
                if nameref && !self.plain_vars.contains(&lhs) {
                    // `x='a[$(id)]'; declare -n x`: the value it already has
                    // becomes the name it refers to.
                    self.opaque(
                        OpaqueReason::ArithmeticEvaluation,
                        format!("{name} -n {lhs}: refers to a name whose value is not known"),
                    );
                }
                continue;
            };
            if nameref {
                // A reference to `a[sub]` evaluates the subscript on every use.
                self.nameref_target(
                    &EnvAssignment {
                        name: lhs.clone(),
                        value: v.clone(),
                        dynamic: a.dynamic,
                    },
                    depth,
                );
            }
            let compound = v.starts_with('(') && v.ends_with(')');
            if a.dynamic && (array || integer || compound) {
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!(
                        "{name} re-reads a value known only at run time: {}",
                        a.value
                    ),
                );
            } else if compound {
                // `declare -a x='(…)'` parses the string as an array literal:
                // its substitutions run.
                self.text(
                    &format!("__declared={v}"),
                    Via::Wrapper(name.to_string()),
                    depth + 1,
                );
            } else if integer {
                // `declare -i x=…` evaluates the value as arithmetic.
                self.arith(&v, depth);
            }
            let plain = !a.dynamic && arith::is_plain_value(&v);
            self.set_var(&lhs, plain);
            self.shell_variable_set(
                &EnvAssignment {
                    name: lhs,
                    value: v,
                    dynamic: a.dynamic,
                },
                depth,
            );
        }
    }

    /// A shell variable set by an assignment, `export`/`declare`, or a `for`
    /// loop. It outlives the command: every later command of the text sees it
    /// once it is exported — and `PATH`, `HOME` and the rest already are, `set
    /// -a` exports everything, `export NAME` may follow. So a variable that
    /// loads or runs code is judged here, as if it prefixed a command.
    fn shell_variable_set(&mut self, e: &EnvAssignment, depth: u32) {
        self.env_assignment("bash", e, depth);
    }

    /// A variable filled with text only known at run time (`read NAME`,
    /// `printf -v NAME`, `for NAME; do`): one that loads or runs code is a
    /// code effect whose content cannot be seen.
    fn shell_variable_read_in(&mut self, name: &str, how: &str) {
        let name = name.split('[').next().unwrap_or(name);
        if let Some(risk) = knowledge::env_var(name) {
            self.effect(Effect::Code {
                program: "bash".into(),
                source: name.to_string(),
                reason: format!(
                    "{} (set by `{how}` to text known only at run time)",
                    risk.reason
                ),
            });
            self.opaque(
                OpaqueReason::DynamicCode,
                format!("{how} sets {name}, which {}", risk.reason),
            );
        }
    }

    /// Builtins that take variable names, which may carry arithmetic subscripts.
    fn name_arguments(&mut self, name: &str, args: &[Word], depth: u32) {
        let takes_names = match name {
            "unset" | "read" => true,
            "printf" | "wait" => false,
            _ => false,
        };
        let mut next_is_name = false;
        for (i, a) in args.iter().enumerate() {
            // `getopts OPTSTRING NAME [ARGS]`: the second word is a name.
            let is_name = next_is_name
                || (takes_names && !a.value.starts_with('-'))
                || (name == "getopts" && i == 1);
            // `-v NAME` (printf), `-p NAME` (wait; read's prompt is taken as a
            // name too, which only over-judges), `-a NAME` (read), also at the
            // end of a cluster (`read -ra NAME`).
            let cluster =
                a.value.len() > 1 && a.value.starts_with('-') && !a.value.starts_with("--");
            next_is_name =
                (cluster && a.value.ends_with(['v', 'p', 'a']) && name != "test" && name != "[")
                    || (matches!(name, "test" | "[") && a.value == "-v");
            if is_name && (a.dynamic || a.value.contains('[')) {
                self.subscript_in_name(a, depth);
            }
            if is_name && !a.dynamic && name != "unset" && name != "test" && name != "[" {
                self.shell_variable_read_in(&a.value, name);
                self.variable_filled(&a.value, name);
            }
        }
    }

    /// A variable given a value only known at run time (`read x`, `printf -v
    /// x`, `mapfile x`, `getopts … x`): assigning an integer variable evaluates
    /// the value as arithmetic, and a name reference's value is a name whose
    /// subscript is evaluated: both may run code the text does not show.
    fn variable_filled(&mut self, name: &str, how: &str) {
        let base = name.split('[').next().unwrap_or(name);
        self.plain_vars.remove(base);
        if self.integer_vars.contains(base) || self.nameref_vars.contains(base) {
            self.opaque(
                OpaqueReason::ArithmeticEvaluation,
                format!("`{how}` gives {base}, an integer variable or name reference, a value known only at run time"),
            );
        }
    }

    /// `mapfile`/`readarray [-d D] [-n N] [-O O] [-s S] [-t] [-u FD] [-C
    /// CALLBACK] [-c QUANTUM] [ARRAY]`: the callback is shell text bash
    /// evaluates with two arguments appended (the index and the line,
    /// quoted), so it is walked as a script of its own.
    fn mapfile(&mut self, name: &str, args: &[Word], depth: u32) {
        const VALUED: &[u8] = b"dnOsuCc";
        let mut callback: Option<Word> = None;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a.dynamic && a.value.starts_with('-') {
                // It may be an option, `-C` included.
                self.opaque(OpaqueReason::DynamicCode, format!("{name} {}", a.value));
                i += 1;
                continue;
            }
            if a.value == "--" {
                i += 1;
                break;
            }
            if a.dynamic || !a.value.starts_with('-') || a.value == "-" {
                break;
            }
            // `a.value` starts with `-` (one byte).
            let letters = a.value.as_bytes().get(1..).unwrap_or_default();
            let mut k = 0;
            while let Some(&letter) = letters.get(k) {
                k += 1;
                if !VALUED.contains(&letter) {
                    continue;
                }
                // The value: the rest of the cluster, else the next word. The
                // rest starts after an ASCII letter, so on a char boundary
                // (were it not, no value: `-C` is then reported).
                let value = if k < letters.len() {
                    a.value.get(1 + k..).map(|rest| Word {
                        value: rest.to_string(),
                        dynamic: false,
                        nested: Vec::new(),
                    })
                } else {
                    i += 1;
                    args.get(i).cloned()
                };
                if letter == b'C' {
                    match value {
                        Some(v) => callback = Some(v),
                        None => self.opaque(
                            OpaqueReason::ParseError,
                            format!("{name} -C without a callback"),
                        ),
                    }
                }
                break;
            }
            i += 1;
        }
        for a in args.iter().skip(i) {
            if a.dynamic || a.value.contains('[') {
                self.subscript_in_name(a, depth);
            }
            if !a.dynamic {
                self.shell_variable_read_in(&a.value, name);
                self.variable_filled(&a.value, name);
            }
        }
        if let Some(cb) = &callback {
            if cb.dynamic {
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!(
                        "{name} -C {} runs a callback known only at run time",
                        cb.value
                    ),
                );
            } else {
                let text = format!("{} 0 \"$__mapfile_line\"", cb.value);
                self.scoped(|w| w.text(&text, Via::Wrapper(name.to_string()), depth + 1));
            }
        }
    }

    /// Builtins that bind code to run later (`bind -x`, `complete -C`,
    /// `mapfile -C`) or load it (`enable -f`), or remap names (`hash -p`).
    fn code_binding_builtin(&mut self, name: &str, args: &[Word]) {
        let flags: &[&str] = match name {
            "bind" => &["-x"],
            "complete" | "compgen" => &["-C", "-F"],
            "fc" => &["-e", "-s"],
            "enable" => &["-f"],
            "hash" => &["-p"],
            _ => &[],
        };
        for (i, a) in args.iter().enumerate() {
            let hit = flags
                .iter()
                .any(|f| a.value == *f || (a.value.starts_with(f) && a.value.len() > f.len()));
            if hit || a.dynamic {
                let detail = args.get(i + 1).map(|w| w.value.as_str()).unwrap_or("");
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!("{name} {} {detail}", a.value),
                );
            }
        }
        if name == "fc" && args.is_empty() {
            self.opaque(OpaqueReason::DynamicCode, "fc re-runs history commands");
        }
    }

    fn wrapper(
        &mut self,
        name: &str,
        spec: &'static wrappers::WrapperSpec,
        call: &SimpleCall,
        depth: u32,
    ) {
        let parsed = wrappers::parse(spec, &call.words);
        for path in &parsed.writes {
            self.effect(Effect::Write {
                path: path.clone(),
                dynamic: false,
            });
        }
        if let Some((reason, text)) = parsed.opaque {
            self.opaque(reason, format!("{text} in: {}", joined_source(&call.words)));
            return;
        }
        for (text, dynamic, via_sh) in &parsed.shell_texts {
            if *dynamic {
                self.opaque(OpaqueReason::DynamicCode, text.clone());
            } else if *via_sh {
                self.run_via_sh(Via::Wrapper(name.to_string()), text, depth + 1);
            } else {
                self.text(text, Via::Wrapper(name.to_string()), depth + 1);
            }
        }
        let mut env: Vec<EnvAssignment> = parsed
            .env
            .iter()
            .map(|(n, v)| EnvAssignment {
                name: n.clone(),
                value: v.clone(),
                dynamic: false,
            })
            .collect();
        if name == "ssh" {
            self.ssh_options(&call.words, depth);
        }
        if name == "env" && parsed.command_start.is_none() && !env_cleared(&call.words) {
            // `env` (options and assignments only) prints the environment.
            self.env_read("*", "env");
        }
        let Some(start) = parsed.command_start else {
            if parsed.input_args {
                // `xargs` with no command runs `echo` with the input.
                let words = vec![
                    Word {
                        value: "echo".into(),
                        dynamic: false,
                        nested: Vec::new(),
                    },
                    Word {
                        value: "<input>".into(),
                        dynamic: true,
                        nested: Vec::new(),
                    },
                ];
                let inner = SimpleCall {
                    words,
                    env,
                    redirects: Vec::new(),
                    stdin: Stdin::Inherited,
                };
                self.run_command(inner, Via::Wrapper(name.into()), depth + 1);
            }
            return;
        };
        let Some(command) = call.words.get(start..) else {
            // The wrapper's reader pointed past its words (fail closed).
            self.opaque(
                OpaqueReason::UnknownWrapperOption,
                format!("{name} not understood: {}", joined_source(&call.words)),
            );
            return;
        };
        let mut words: Vec<Word> = command.to_vec();
        if parsed.join_as_shell {
            if words.iter().any(|w| w.dynamic) {
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!(
                        "{name} runs shell text known only at run time: {}",
                        joined_source(&words)
                    ),
                );
            } else {
                let text = words
                    .iter()
                    .map(|w| w.value.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                if name == "ssh" {
                    // Runs on the remote host, through the remote user's shell.
                    self.text(&text, Via::Wrapper(name.to_string()), depth + 1);
                } else {
                    self.run_via_sh(Via::Wrapper(name.to_string()), &text, depth + 1);
                }
            }
            return;
        }
        if let Some(r) = &parsed.replace {
            for w in &mut words {
                if w.value.contains(r.as_str()) {
                    w.dynamic = true;
                }
            }
        }
        if parsed.input_args {
            words.push(Word {
                value: "<input>".into(),
                dynamic: true,
                nested: Vec::new(),
            });
        }
        // The wrapper's stdin reaches its command; `xargs` keeps stdin for itself.
        let stdin = if parsed.input_args {
            Stdin::Inherited
        } else {
            call.stdin.clone()
        };
        let inner = SimpleCall {
            words,
            env: std::mem::take(&mut env),
            redirects: Vec::new(),
            stdin,
        };
        let chdir = parsed.chdir.clone();
        self.scoped(|w| {
            if let Some(dir) = &chdir {
                let dir = Word {
                    value: dir.clone(),
                    dynamic: false,
                    nested: Vec::new(),
                };
                w.change_dir(Some(&dir));
            }
            w.run_command(inner, Via::Wrapper(name.to_string()), depth + 1);
        });
    }

    /// `ssh -o ProxyCommand=…` and friends run local shell text.
    fn ssh_options(&mut self, words: &[Word], depth: u32) {
        let f = knowledge::analyze_program("ssh", words, "");
        let call = SimpleCall {
            words: words.to_vec(),
            env: Vec::new(),
            redirects: Vec::new(),
            stdin: Stdin::Inherited,
        };
        self.findings(f, &call, depth);
    }

    /// `bash -c TEXT`, `sh script.sh`, `bash <<EOF`, `curl … | sh`.
    fn shell(&mut self, name: &str, words: &[Word], stdin: &Stdin, depth: u32) {
        let mut i = 1;
        let mut command_text: Option<&Word> = None;
        let mut c_flag = false;
        let mut reads_stdin = false;
        while let Some(w) = words.get(i) {
            if w.dynamic {
                self.opaque(
                    OpaqueReason::DynamicCode,
                    format!(
                        "{name} argument known only at run time: {}",
                        joined_source(words)
                    ),
                );
                return;
            }
            let v = w.value.as_str();
            if v == "--" || v == "-" {
                i += 1;
                reads_stdin |= v == "-";
                break;
            }
            if v.starts_with("--") {
                // `--norc`, `--noprofile`, `--posix` …; `--rcfile FILE`/`--init-file FILE` load code.
                if matches!(v, "--rcfile" | "--init-file") {
                    if let Some(f) = words.get(i + 1) {
                        self.effect(Effect::Code {
                            program: name.into(),
                            source: v.into(),
                            reason: format!("loads {} as startup code", f.value),
                        });
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
                let letters = &v[1..];
                if letters.contains('c') && v.starts_with('-') {
                    c_flag = true;
                }
                if letters.contains('s') {
                    reads_stdin = true;
                }
                // Each `o` / `O` in the cluster takes the next word (`-oc errexit`).
                i += letters.matches(['o', 'O']).count();
                i += 1;
                continue;
            }
            break;
        }
        if c_flag {
            // The first operand is the script; later ones are $0, $1 … (data).
            match words.get(i) {
                Some(w) if w.dynamic => {
                    self.opaque(OpaqueReason::DynamicCode, format!("{name} -c {}", w.value))
                }
                Some(w) => command_text = Some(w),
                None => self.opaque(
                    OpaqueReason::ParseError,
                    format!("{name} -c without a script"),
                ),
            }
            if let Some(w) = command_text {
                let text = w.value.clone();
                // A new shell process: its `cd` does not reach back here.
                self.scoped(|w| w.text(&text, Via::ShellScript(name.to_string()), depth + 1));
            }
            return;
        }
        if !reads_stdin && let Some(script) = words.get(i) {
            self.effect(Effect::Read {
                path: script.value.clone(),
                dynamic: script.dynamic,
            });
            self.effect(Effect::Code {
                program: name.into(),
                source: script.value.clone(),
                reason: "runs a script file whose commands are not analysed here".into(),
            });
            self.opaque(
                OpaqueReason::CodeFromFile,
                format!("{name} {}", script.value),
            );
            return;
        }
        match stdin {
            Stdin::Text(text) => {
                let text = text.clone();
                self.scoped(|w| w.text(&text, Via::Heredoc, depth + 1));
            }
            Stdin::Unknown(what) => {
                self.opaque(
                    OpaqueReason::CodeFromStdin,
                    format!("{name} reads its script from {what}"),
                );
            }
            Stdin::Inherited => {
                self.opaque(
                    OpaqueReason::CodeFromStdin,
                    format!("{name} reads its script from standard input"),
                );
            }
        }
    }
}

impl SimpleCall {
    fn stdin_text(&self) -> String {
        match &self.stdin {
            Stdin::Text(t) => t.clone(),
            _ => String::new(),
        }
    }
}

/// brush-parser does not accept a `$'…'` heredoc delimiter (`cat <<$'EOF'`),
/// which bash reads as the quoted word it decodes to. Rewrites such a tag to
/// the equivalent single-quoted word when it decodes to plain characters; the
/// quote structure of the text is unchanged (only the `$` goes), so this cannot
/// change how anything else parses.
fn rewrite_ansi_c_heredoc_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("<<$'") && !text.contains("<<-$'") && !text.contains("<< $'") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("<<") {
        let (before, after) = rest.split_at(pos + 2);
        out.push_str(before);
        // `after` is `[-][blanks]TAG…`: `head` the part before the tag.
        let tag = after
            .strip_prefix('-')
            .unwrap_or(after)
            .trim_start_matches([' ', '\t']);
        let head = after.strip_suffix(tag).unwrap_or_default();
        if let Some(body) = tag.strip_prefix("$'") {
            // Find the closing quote, skipping backslash escapes.
            let bytes = body.as_bytes();
            let mut k = 0;
            while let Some(&b) = bytes.get(k)
                && b != b'\''
            {
                k += if b == b'\\' { 2 } else { 1 };
            }
            // Found: `k` is the quote (ASCII, so a char boundary).
            if let Some((quoted, tail)) = body.split_at_checked(k)
                && let Some(tail) = tail.strip_prefix('\'')
            {
                let decoded = word::decode_ansi_c(quoted);
                let plain = !decoded.is_empty()
                    && decoded
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
                if plain {
                    out.push_str(head);
                    out.push('\'');
                    out.push_str(&decoded);
                    out.push('\'');
                    rest = tail;
                    continue;
                }
            }
        }
        rest = after;
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// brush-parser mis-reads a process substitution whose body starts with `(`
/// (`>(( … ))`, `<((…))`): a heredoc inside is lost, and with it the commands
/// it feeds (found by the property tests). bash reads `>((` as `>(` followed by
/// a subshell, so a space between the parentheses means the same to bash and
/// parses correctly. The space is inserted everywhere, quoted text included:
/// at worst a literal `<((` in data gains a space, which can only make a rule
/// match less, never change which commands run.
fn split_process_substitution_parens(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("<((") && !text.contains(">((") {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("<((", "<( (").replace(">((", ">( ("))
}

/// A jq (or yq) program that reads the environment: `env`, `$ENV`, `strenv(…)`.
fn jq_reads_env(program: &str) -> bool {
    let ident = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    program.contains("$ENV")
        || program.contains("strenv")
        || program.match_indices("env").any(|(i, _)| {
            let b = program.as_bytes();
            let before = i.checked_sub(1).and_then(|j| b.get(j)).copied();
            !ident(before) && !ident(b.get(i + 3).copied())
        })
}

/// `env -i` / `env -` / `env --ignore-environment` start from an empty
/// environment: what `env` then prints is only what its words set.
fn env_cleared(words: &[Word]) -> bool {
    words.iter().skip(1).take_while(|w| !w.dynamic).any(|w| {
        w.value == "-"
            || w.value == "--ignore-environment"
            || (w.value.starts_with('-')
                && !w.value.starts_with("--")
                && w.value
                    .bytes()
                    .skip(1)
                    .take_while(|b| *b != b'u' && *b != b'C' && *b != b'S')
                    .any(|b| b == b'i'))
    })
}

/// `name[` with the subscript left open, as the first word of a command:
/// bash may read it, with the words up to `]=`, as one assignment.
fn is_open_subscript(raw: &str) -> bool {
    raw.split_once('[').is_some_and(|(name, rest)| {
        !rest.contains(']')
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// `{name}` as written (unquoted), the form bash reads as a descriptor
/// variable when a redirect follows directly.
fn is_fd_name(raw: &str) -> bool {
    raw.strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|n| {
            n.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

fn is_fd_variable(item: &ast::CommandPrefixOrSuffixItem) -> bool {
    matches!(item, ast::CommandPrefixOrSuffixItem::Word(w) if is_fd_name(&w.value))
}

/// Source text of a command's words, for opaque reports.
fn joined_source(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.value.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn shorten(mut s: String) -> String {
    const MAX: usize = 200;
    if s.len() > MAX {
        let mut cut = MAX;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// Stack kept free when the parser starts, and the size of a new stack
/// segment when less is left: the parser's recursion, bounded by the scan in
/// [`Shape`], fits in far less (≈20 KiB per level in a debug build).
const PARSE_RED_ZONE: usize = 2 * 1024 * 1024;
const PARSE_STACK: usize = 16 * 1024 * 1024;

/// What a text's structure costs the parser and the walker, read in one
/// linear pass before parsing: every construct they recurse on is counted.
#[derive(Debug, Default, PartialEq, Eq)]
struct Shape {
    /// Deepest nesting of brackets — `(`, `{`, `[` (so `$(`, `$((`, `((`,
    /// `${`, `$[`, `[[`, subscripts) — and keyword blocks (`if`, `case`, `do`).
    depth: u32,
    /// `&&`, `||` and `!` as a word: inside `[[ ]]` each one is a level of
    /// the test's syntax tree.
    operators: usize,
}

impl Shape {
    fn of(text: &str) -> Shape {
        // Separate counters, so that a case pattern's lone `)` cannot cancel a
        // keyword level: [parentheses, braces, square brackets, keyword blocks].
        // Quotes are not followed: counting quoted brackets too only over-counts.
        let mut open = [0i64; 4];
        let mut max = 0i64;
        let mut operators = 0usize;
        let mut word_start = 0usize;
        let mut in_word = false;
        let bytes = text.as_bytes();
        let bump = |open: &mut [i64; 4], kind: usize, delta: i64, max: &mut i64| {
            if let Some(n) = open.get_mut(kind) {
                *n = (*n + delta).max(0);
            }
            *max = (*max).max(open.iter().sum());
        };
        for i in 0..=bytes.len() {
            let c = bytes.get(i).copied().unwrap_or(b' ');
            if c.is_ascii_alphabetic() {
                if !in_word {
                    in_word = true;
                    word_start = i;
                }
                continue;
            }
            if in_word {
                in_word = false;
                match bytes.get(word_start..i) {
                    Some(b"if" | b"case" | b"do") => bump(&mut open, 3, 1, &mut max),
                    Some(b"fi" | b"esac" | b"done") => bump(&mut open, 3, -1, &mut max),
                    _ => {}
                }
            }
            let prev = i
                .checked_sub(1)
                .and_then(|j| bytes.get(j))
                .copied()
                .unwrap_or(b' ');
            let next = bytes.get(i + 1).copied().unwrap_or(b' ');
            match c {
                b'(' => bump(&mut open, 0, 1, &mut max),
                b')' => bump(&mut open, 0, -1, &mut max),
                b'{' => bump(&mut open, 1, 1, &mut max),
                b'}' => bump(&mut open, 1, -1, &mut max),
                b'[' => bump(&mut open, 2, 1, &mut max),
                b']' => bump(&mut open, 2, -1, &mut max),
                b'&' | b'|' if next == c && prev != c => operators += 1,
                b'!' if is_blank_or_start(prev) && is_blank_or_start(next) => operators += 1,
                _ => {}
            }
        }
        Shape {
            depth: u32::try_from(max).unwrap_or(u32::MAX),
            operators,
        }
    }
}

fn is_blank_or_start(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'(' | b';')
}

/// Deepest nesting of `(` tokens handed to the parser (see
/// [`parenthesis_token_depth`]).
const MAX_PARENTHESIS_TOKEN_DEPTH: usize = 6;

/// The deepest nesting of `(` operator tokens in a text (`((` is two tokens);
/// a `)` with nothing open (a case pattern's) closes nothing. Tokens, not
/// characters: a `)` in quotes or in a comment closes nothing, and `$(`,
/// `<(` belong to words, which are parsed on their own.
fn parenthesis_token_depth(tokens: &[brush_parser::Token]) -> usize {
    let mut open = 0usize;
    let mut deepest = 0usize;
    for token in tokens {
        if let brush_parser::Token::Operator(op, _) = token {
            match op.as_str() {
                "(" => open = open.saturating_add(1),
                ")" => open = open.saturating_sub(1),
                _ => {}
            }
            deepest = deepest.max(open);
        }
    }
    deepest
}

/// Finds a `<<` (or `<<-`) whose tag is missing: after blanks comes an
/// operator character, a newline or the end of the text. Every `<<` counts,
/// also one inside `<<<<<` or quotes: an extra match only makes a text opaque.
fn find_empty_heredoc_tag(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1)).find(|&i| {
        if b.get(i) != Some(&b'<') || b.get(i + 1) != Some(&b'<') {
            return false;
        }
        let mut j = i + 2;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        match b.get(j) {
            None => true,
            // `<<<` is a here-string; its own `<<` is judged at the next position.
            Some(b'<') => j != i + 2,
            // A tag starts with a printable ASCII character that is not an
            // operator; anything else (`\r`, control bytes, non-ASCII) the
            // parser may read as an empty tag.
            Some(&c) => {
                !(0x21..=0x7e).contains(&c) || matches!(c, b'>' | b'|' | b'&' | b';' | b'(' | b')')
            }
        }
    })
}

/// Finds a here-document tag (the word after `<<` or `<<-`) holding `$(`,
/// `${` or a backtick.
fn find_expanding_heredoc_tag(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(1)).find(|&i| {
        if b.get(i) != Some(&b'<') || b.get(i + 1) != Some(&b'<') || b.get(i + 2) == Some(&b'<') {
            return false;
        }
        if i > 0 && b.get(i - 1) == Some(&b'<') {
            return false;
        }
        let mut j = i + 2;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let start = j;
        while let Some(&c) = b.get(j) {
            if matches!(
                c,
                b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'<' | b'>' | b')'
            ) {
                break;
            }
            j += 1;
        }
        let tag = b.get(start..j).unwrap_or_default();
        tag.windows(2).any(|w| w == b"$(" || w == b"${") || tag.contains(&b'`')
    })
}

/// Finds bash 5.3's `${ cmd; }` / `${| cmd; }` (a `${` followed by a blank or `|`).
fn find_funsub(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(2)).find(|&i| {
        b.get(i) == Some(&b'$')
            && b.get(i + 1) == Some(&b'{')
            && matches!(b.get(i + 2), Some(b' ' | b'\t' | b'\n' | b'|'))
    })
}

/// `/dev/tcp/HOST/PORT` and `/dev/udp/…` are bash's own network redirections.
fn dev_tcp_host(path: &str) -> Option<String> {
    let rest = path
        .strip_prefix("/dev/tcp/")
        .or_else(|| path.strip_prefix("/dev/udp/"))?;
    Some(rest.split('/').next().unwrap_or(rest).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_brackets_and_keyword_blocks() {
        let depth = |t: &str| Shape::of(t).depth;
        assert_eq!(depth("ls"), 0);
        assert_eq!(depth("(($(id)))"), 3);
        assert_eq!(depth("if a; then if b; then c; fi; fi"), 2);
        // A case pattern's `)` does not close the `case`.
        assert_eq!(depth("case x in x) case y in y) id;; esac;; esac"), 2);
        assert_eq!(depth("for i in 1; do while x; do :; done; done"), 2);
        // Square brackets nest too: `$[` arithmetic, `[[ ]]`, subscripts.
        assert_eq!(depth("echo $[$[$[1]]]"), 3);
        assert_eq!(depth("[[ -n ${a[$[1]]} ]]"), 5);
    }

    #[test]
    fn a_heredoc_tag_with_an_expansion_is_found() {
        for t in [
            "jest <<c$((   st <<c$((",
            "jest\t<<\tc\0$((\t\t\tst\t<<\tc\0$((",
            "cat <<$(id)\nx\n",
            "cat <<-x${y}",
            "cat << `id`",
        ] {
            assert!(find_expanding_heredoc_tag(t).is_some(), "{t:?}");
        }
        for t in [
            "cat <<EOF\n$(id)\nEOF",
            "cat <<<$(id)",
            "cat <<'EOF'\nx\nEOF",
            "x=$((1<<2))",
        ] {
            assert_eq!(find_expanding_heredoc_tag(t), None, "{t:?}");
        }
    }

    #[test]
    fn a_heredoc_without_a_tag_is_found() {
        for t in [
            "$(<<<<< <$(",
            "cat <<",
            "cat << ;",
            "cat <<- |x",
            "a <<\nb",
            "$(<< <$(",
        ] {
            assert!(find_empty_heredoc_tag(t).is_some(), "{t:?}");
        }
        for t in [
            "cat <<EOF\nx\nEOF",
            "cat <<< hi",
            "cat <<<\"$x\"",
            "cat <<-'E'\nE",
            "a < b",
        ] {
            assert_eq!(find_empty_heredoc_tag(t), None, "{t:?}");
        }
        // The text that made brush-parser allocate without end (found by the fuzzer).
        let a = crate::analyze("$(<<<<< <$(");
        assert!(!a.is_complete());
    }

    #[test]
    fn operators_count_every_level_a_test_can_nest() {
        let ops = |t: &str| Shape::of(t).operators;
        assert_eq!(ops("ls"), 0);
        assert_eq!(ops("a && b || c"), 2);
        assert_eq!(ops("[[ ! ! ! a ]]"), 3);
        assert_eq!(ops("[[ a && a && a ]]"), 2);
        // `!` inside a word, `|` and `&` alone are not nesting operators.
        assert_eq!(ops("echo a!b | cat & wait; [[ !a ]]"), 0);
        assert_eq!(ops("a &&& b"), 1);
    }

    #[test]
    fn parenthesis_depth_counts_operator_tokens_only() {
        let depth = |t: &str| {
            let tokens =
                brush_parser::uncached_tokenize_str(t, &word::parser_options().tokenizer_options())
                    .map_err(|e| e.to_string());
            parenthesis_token_depth(&tokens.unwrap_or_default())
        };
        assert_eq!(depth("echo hi"), 0);
        assert_eq!(depth("( ( x ) ); ( y )"), 2);
        assert_eq!(depth("((x;))"), 2);
        assert_eq!(depth("( ( ( ( x"), 4);
        // A substitution is a word, parsed on its own.
        assert_eq!(depth("echo $( ( ( x ) ) ) \"$( ( y ) )\""), 0);
        // Quoted or commented brackets are not tokens: they neither open nor close.
        assert_eq!(depth("( ( ( x ')))' # )))"), 3);
        assert_eq!(depth("echo '((((((((('"), 0);
        // A case pattern's lone `)` closes nothing that is not open.
        assert_eq!(depth("case a in a) ( ( b ) ) ;; esac"), 2);
    }

    #[test]
    fn parentheses_nested_past_the_limit_are_opaque_before_parsing() {
        // The fuzz target's input: brush-parser spent 39 s on it.
        let found = "cd sc& ((((((((((s &\x1f cd -2 && l((((((((((((((((s &\x1f cd 2.";
        for text in [
            found.to_string(),
            format!("{}x", "(".repeat(30)),
            format!("{}x;{}", "(".repeat(16), ")".repeat(16)),
            format!("{}x ')' # {}", "( ".repeat(7), ")".repeat(7)),
        ] {
            let a = crate::analyze(&text);
            assert!(
                a.opaque.iter().any(|o| o.reason == OpaqueReason::DepthLimit
                    && o.text.contains("parentheses nested deeper")),
                "{text}: {:?}",
                a.opaque
            );
        }
        // Six levels are parsed as usual.
        let a = crate::analyze("((((((x;))))))");
        assert!(a.opaque.is_empty(), "{:?}", a.opaque);
        assert_eq!(a.commands.first().map(|c| c.program.as_str()), Some("x"));
    }

    #[test]
    fn ansi_c_heredoc_tags_become_single_quoted() {
        assert_eq!(
            rewrite_ansi_c_heredoc_tags("cat <<$'E\\x4fF'\nx\nEOF"),
            "cat <<'EOF'\nx\nEOF"
        );
        assert_eq!(
            rewrite_ansi_c_heredoc_tags("cat <<-$'EOF'\nx\nEOF"),
            "cat <<-'EOF'\nx\nEOF"
        );
        // Not plain after decoding: left alone (the parser then fails closed).
        assert_eq!(
            rewrite_ansi_c_heredoc_tags("cat <<$'a b'\nx"),
            "cat <<$'a b'\nx"
        );
        assert_eq!(rewrite_ansi_c_heredoc_tags("echo hi"), "echo hi");
    }

    #[test]
    fn process_substitution_of_a_subshell_is_split() {
        assert_eq!(
            split_process_substitution_parens("a >((b)) <((c))"),
            "a >( (b)) <( (c))"
        );
        assert_eq!(
            split_process_substitution_parens("echo $((1))"),
            "echo $((1))"
        );
    }

    #[test]
    fn paths_after_cd() {
        assert_eq!(crate::model::join_path("src", "./a.rs"), "src/a.rs");
        assert_eq!(crate::model::join_path("/", "etc"), "/etc");
        assert_eq!(crate::model::join_path("~/.ssh", "."), "~/.ssh");
    }
}
