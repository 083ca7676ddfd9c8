//! `portcullis users`: logins of their own for the people the configuration
//! names in `[[server.users]]` (an approver or a viewer each). A token is
//! made here, shown once, and kept only as its hash in the data directory;
//! the running server picks it up within seconds.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use portcullis_paths::Environment;

use crate::config_files;

#[derive(Subcommand)]
pub enum UsersCmd {
    /// List the configured users, their role and whether they have a token.
    List(UsersArgs),
    /// Make a new login token for a configured user (shown once; replaces
    /// the one they had).
    Token {
        name: String,
        #[command(flatten)]
        args: UsersArgs,
    },
    /// Take a user's token away: their login stops working.
    Revoke {
        name: String,
        #[command(flatten)]
        args: UsersArgs,
    },
}

#[derive(clap::Args)]
pub struct UsersArgs {
    /// The data directory (else `PORTCULLIS_DATA_DIR`, else the default).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// A configuration file, layered above the user's.
    #[arg(long)]
    config: Option<PathBuf>,
}

impl UsersArgs {
    fn data_dir(&self) -> PathBuf {
        self.data_dir
            .clone()
            .unwrap_or_else(portcullis_store::default_data_dir)
    }

    fn users(&self) -> Result<Vec<portcullis_policy::ServerUser>> {
        let env = Environment::from_process();
        let cwd = std::env::current_dir().context("finding the current directory")?;
        let policy = config_files::load(self.config.as_deref(), &cwd, &env)
            .context("reading the configuration")?;
        Ok(policy.server_users)
    }
}

pub fn run(cmd: &UsersCmd) -> Result<ExitCode> {
    match cmd {
        UsersCmd::List(args) => {
            let hashes = portcullis_store::user_token_hashes(&args.data_dir())?;
            for u in args.users()? {
                let has = hashes.iter().any(|(n, _)| *n == u.name);
                println!(
                    "{}\t{}\t{}",
                    u.name,
                    u.role.as_str(),
                    if has { "token" } else { "no token" }
                );
            }
        }
        UsersCmd::Token { name, args } => {
            let users = args.users()?;
            let Some(user) = users.iter().find(|u| u.name == *name) else {
                bail!(
                    "no [[server.users]] entry named `{name}`: add one (name and role = \
                     \"approver\" or \"viewer\") to your configuration first"
                );
            };
            let dir = args.data_dir();
            let token = portcullis_store::issue_user_token(&dir, name)
                .with_context(|| format!("writing the token in {}", dir.display()))?;
            println!("{token}");
            eprintln!(
                "portcullis: a {} login for {name}: shown once, keep it; they open \
                 http(s)://SERVER/login?token=… or send it as `Authorization: Bearer`",
                user.role.as_str()
            );
        }
        UsersCmd::Revoke { name, args } => {
            let dir = args.data_dir();
            if !portcullis_store::revoke_user_token(&dir, name)
                .with_context(|| format!("changing the tokens in {}", dir.display()))?
            {
                bail!("`{name}` has no token");
            }
            eprintln!("portcullis: {name}'s login no longer works");
        }
    }
    Ok(ExitCode::SUCCESS)
}
