//! `portcullis analyze`: the shell analysis from the command line.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, bail};
use portcullis_shell::{Analysis, Command, Effect};

#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Print one JSON object instead of a readable tree.
    #[arg(long)]
    json: bool,
    /// Read the command text from standard input.
    #[arg(long, conflicts_with = "text")]
    stdin: bool,
    /// The command text (one argument; quote it).
    text: Option<String>,
}

pub fn run(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let text = match (&args.text, args.stdin) {
        (Some(text), false) => text.clone(),
        (None, true) => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("reading standard input")?;
            String::from_utf8(buf).context("standard input is not UTF-8 text")?
        }
        _ => {
            eprintln!(
                "portcullis analyze: give the command text as one argument, or --stdin\n\
                 usage: portcullis analyze [--json] '<command text>' | --stdin"
            );
            return Ok(ExitCode::from(1));
        }
    };
    let analysis = portcullis_shell::analyze(&text);
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &analysis).context("writing JSON")?;
        writeln!(out)?;
    } else {
        write_tree(&mut out, &analysis)?;
    }
    if let Err(err) = out.flush() {
        bail!("writing output: {err}");
    }
    Ok(ExitCode::SUCCESS)
}

fn write_tree(out: &mut impl Write, a: &Analysis) -> std::io::Result<()> {
    if a.commands.is_empty() {
        writeln!(out, "commands: none")?;
    } else {
        writeln!(out, "commands:")?;
        for c in &a.commands {
            write_command(out, c)?;
        }
    }
    if !a.effects.is_empty() {
        writeln!(out, "effects:")?;
        for e in &a.effects {
            writeln!(out, "  {}", describe_effect(e))?;
        }
    }
    if a.opaque.is_empty() {
        writeln!(out, "opaque: none (analysis complete)")?;
    } else {
        writeln!(out, "opaque (analysis incomplete):")?;
        for o in &a.opaque {
            writeln!(out, "  {}: {}", o.reason.as_str(), o.text)?;
        }
    }
    Ok(())
}

fn write_command(out: &mut impl Write, c: &Command) -> std::io::Result<()> {
    let indent = "  ".repeat(c.depth as usize + 1);
    let words = match &c.argv {
        Some(argv) => argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "),
        None => format!("{} (dynamic arguments)", c.words.join(" ")),
    };
    write!(out, "{indent}{words}   [via {}]", c.via.as_string())?;
    for e in &c.env {
        write!(out, " env {}={}", e.name, quote(&e.value))?;
    }
    for r in &c.redirects {
        let fd = r.fd.map(|f| f.to_string()).unwrap_or_default();
        write!(out, " {fd}{}{}", r.op, quote(&r.target))?;
    }
    writeln!(out)
}

fn describe_effect(e: &Effect) -> String {
    match e {
        Effect::Read { path, dynamic } => format!("read {}{}", quote(path), dyn_mark(*dynamic)),
        Effect::Write { path, dynamic } => format!("write {}{}", quote(path), dyn_mark(*dynamic)),
        Effect::Delete { path, dynamic } => format!("delete {}{}", quote(path), dyn_mark(*dynamic)),
        Effect::Move { from, to, dynamic } => {
            format!(
                "move {} -> {}{}",
                quote(from),
                quote(to),
                dyn_mark(*dynamic)
            )
        }
        Effect::Network { program, host } => match host {
            Some(h) => format!("network {program} -> {h}"),
            None => format!("network {program}"),
        },
        Effect::Code {
            program,
            source,
            reason,
        } => format!("code {program} {source}: {reason}"),
    }
}

fn dyn_mark(dynamic: bool) -> &'static str {
    if dynamic { " (dynamic)" } else { "" }
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,~".contains(c))
    {
        s.to_string()
    } else {
        format!("{s:?}")
    }
}
