//! `portcullis mcp pins`: the approved MCP tool definitions.

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::state::StoreArgs;

#[derive(Subcommand)]
pub enum McpCmd {
    /// Tool definition pins: list, approve, reject.
    #[command(subcommand)]
    Pins(PinsCmd),
}

#[derive(Subcommand)]
pub enum PinsCmd {
    /// Pinned definitions (pending ones only with --pending).
    List {
        #[arg(long)]
        pending: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Approve a pending definition: the tool is offered again.
    Approve {
        server: String,
        tool: String,
        /// The definition's hash (from `list`).
        hash: String,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Reject a pending definition: the tool stays withheld.
    Reject {
        server: String,
        tool: String,
        hash: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub fn run(cmd: &McpCmd) -> Result<ExitCode> {
    let McpCmd::Pins(cmd) = cmd;
    match cmd {
        PinsCmd::List { pending, store } => {
            let pins = store.open()?.pins(*pending)?;
            if store.json {
                println!("{}", serde_json::to_string(&pins)?);
            } else {
                for p in &pins {
                    println!(
                        "{}\t{}\t{}\t{}",
                        p.server,
                        p.tool,
                        p.status.as_str(),
                        p.hash
                    );
                }
            }
        }
        PinsCmd::Approve {
            server,
            tool,
            hash,
            store,
        }
        | PinsCmd::Reject {
            server,
            tool,
            hash,
            store,
        } => {
            let approve = matches!(cmd, PinsCmd::Approve { .. });
            let s = store.open()?;
            let pin = portcullis_engine::actions::decide_pin(
                &s,
                server,
                tool,
                hash,
                approve,
                &crate::state::approver(),
                crate::state::now(),
            )?;
            if store.json {
                println!("{}", serde_json::to_string(&pin)?);
            } else {
                println!(
                    "{} {tool} on {server} ({hash}): {}",
                    if approve { "approved" } else { "rejected" },
                    pin.status.as_str()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
