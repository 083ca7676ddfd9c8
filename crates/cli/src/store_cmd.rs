//! `portcullis store migrate`: bring a store's schema up to date without
//! serving (a team applies migrations once, before starting its replicas;
//! `serve` also does it on start). Runs in `portcullis-daemon`, which links
//! the PostgreSQL client.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

#[derive(clap::Subcommand)]
pub enum StoreCmd {
    /// Apply the schema migrations this portcullis knows and print the version.
    Migrate {
        /// The store: `sqlite` (the default, in the data directory) or
        /// postgres://USER@HOST[:PORT]/DB.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// The data directory of a SQLite store (else `PORTCULLIS_DATA_DIR`, else the default).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
}

pub fn run(cmd: &StoreCmd) -> Result<ExitCode> {
    match cmd {
        StoreCmd::Migrate { store, data_dir } => {
            let dir = data_dir
                .clone()
                .unwrap_or_else(portcullis_store::default_data_dir);
            let location = portcullis_store::Location::parse(store.as_deref(), &dir)
                .map_err(anyhow::Error::msg)
                .context("--store")?;
            let opened = location
                .open()
                .with_context(|| format!("migrating the store {location}"))?;
            let version = opened.schema_version()?;
            println!("{location}: schema version {version}, up to date");
            Ok(ExitCode::SUCCESS)
        }
    }
}
