//! `portcullis device enroll|show`: this machine's credential with a team
//! server. A person enrols the machine with their own login token, read from
//! standard input (never an argument, which other processes can see, and
//! never stored): the server answers a credential good for asking decisions
//! only, kept in the data directory (`device.json`, 0600) with the CA file
//! it was enrolled with. Runs in `portcullis-daemon`.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use portcullis_store::DeviceCredential;

#[derive(clap::Subcommand)]
pub enum DeviceCmd {
    /// Enrol this machine with a team server; your login token on standard input.
    Enroll {
        /// The team server (`https://team.example`).
        #[arg(long, value_name = "URL")]
        server: String,
        /// This machine's name there (default: its host name).
        #[arg(long)]
        name: Option<String>,
        /// The CA certificates (PEM) to trust for the server, in place of the
        /// system's (kept with the credential: the hook trusts only these).
        #[arg(long, value_name = "PEM")]
        ca_file: Option<PathBuf>,
        /// The data directory (else `PORTCULLIS_DATA_DIR`, else the default).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Which server this machine is enrolled with, and as what (never the token).
    Show {
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
}

pub fn run(cmd: &DeviceCmd) -> Result<ExitCode> {
    match cmd {
        DeviceCmd::Enroll {
            server,
            name,
            ca_file,
            data_dir,
        } => {
            let dir = data_dir
                .clone()
                .unwrap_or_else(portcullis_store::default_data_dir);
            let name = match name {
                Some(n) => n.clone(),
                None => std::fs::read_to_string("/proc/sys/kernel/hostname")
                    .context("reading this machine's host name (or give --name)")?
                    .trim()
                    .to_owned(),
            };
            let mut login = String::new();
            std::io::stdin()
                .read_to_string(&mut login)
                .context("reading your login token from standard input")?;
            let login = login.trim();
            if login.is_empty() {
                bail!(
                    "no login token on standard input: pipe the approval server's login token \
                     (its ui-token file, or `portcullis users token NAME`) into this command"
                );
            }
            let server = server.trim_end_matches('/').to_owned();
            // Kept as an absolute path: the hook reads it from anywhere.
            let ca_file = match ca_file {
                Some(path) => Some(
                    std::path::absolute(path)
                        .with_context(|| format!("finding the CA file {}", path.display()))?,
                ),
                None => None,
            };
            let remote = crate::team_http::Server::parse(&server, ca_file.as_deref())?;
            let (status, body) = remote
                .post_json(
                    "/v1/devices",
                    &[("authorization", &format!("Bearer {login}"))],
                    serde_json::json!({ "name": name }).to_string().as_bytes(),
                    std::time::Instant::now() + std::time::Duration::from_secs(30),
                )
                .with_context(|| format!("asking {server} to enrol this device"))?;
            let body = String::from_utf8_lossy(&body);
            let answer: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            if status != 201 {
                let why = answer
                    .get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or(&*body);
                bail!("{server} refused to enrol `{name}` ({status}): {why}");
            }
            let token = answer
                .get("token")
                .and_then(|t| t.as_str())
                .context("the server's answer holds no credential")?
                .to_owned();
            let credential = DeviceCredential {
                server: server.clone(),
                name: name.clone(),
                token,
                ca_file,
            };
            portcullis_store::save_device_credential(&dir, &credential)
                .with_context(|| format!("writing the credential to {}", dir.display()))?;
            println!(
                "this machine is enrolled with {server} as `{name}` (credential in {})",
                dir.join(portcullis_store::DEVICE_FILE).display()
            );
            Ok(ExitCode::SUCCESS)
        }
        DeviceCmd::Show { data_dir } => {
            let dir = data_dir
                .clone()
                .unwrap_or_else(portcullis_store::default_data_dir);
            match portcullis_store::load_device_credential(&dir)? {
                Some(c) => {
                    println!("enrolled with {} as `{}`", c.server, c.name);
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    println!(
                        "not enrolled with a team server ({} has no {})",
                        dir.display(),
                        portcullis_store::DEVICE_FILE
                    );
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}
