//! How both binaries start and end: parse the command line (help and version
//! on stdout with success, usage errors on stderr with 1), and report an error
//! as one `portcullis: error:` line with exit 1.

use std::process::ExitCode;

use clap::Parser;

/// The parsed command line, or the exit code once clap has printed why not.
pub fn parse<C: Parser>() -> Result<C, ExitCode> {
    C::try_parse().map_err(|err| {
        let _ = err.print();
        if err.use_stderr() {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// A command's result as the process's exit code.
pub fn report(result: anyhow::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|err| {
        eprintln!("portcullis: error: {err:#}");
        ExitCode::from(1)
    })
}
