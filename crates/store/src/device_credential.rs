//! This machine's credential with a team server (`portcullis device
//! enroll`): `device.json` (0600) in the data directory, which the policy
//! keeps secret and confined commands never see. It names the server, the
//! device, and the token the server gave it — good for asking decisions
//! only.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The file's name in the data directory.
pub const DEVICE_FILE: &str = "device.json";

/// What `device.json` holds.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceCredential {
    /// The team server (`https://team.example`).
    pub server: String,
    /// This device's name there.
    pub name: String,
    /// The credential (`pcd_…`).
    pub token: String,
    /// The CA certificates (PEM, an absolute path) trusted for the server in
    /// place of the system's roots, as given at enrolment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<std::path::PathBuf>,
}

/// Never the token in a debug print.
impl std::fmt::Debug for DeviceCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceCredential")
            .field("server", &self.server)
            .field("name", &self.name)
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

/// This machine's credential, if it was enrolled. A file others may read or
/// write is refused (its token could be anyone's, or anyone could read it).
pub fn load_device_credential(data_dir: &Path) -> std::io::Result<Option<DeviceCredential>> {
    let path = data_dir.join(DEVICE_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mode = fs::metadata(&path)?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} has mode {:o}: others may read or write it; enrol this device again",
            path.display(),
            mode & 0o777
        )));
    }
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))
}

/// Writes this machine's credential (0600, replacing any earlier one whole).
pub fn save_device_credential(data_dir: &Path, c: &DeviceCredential) -> std::io::Result<()> {
    crate::prepare_data_dir(data_dir).map_err(std::io::Error::other)?;
    let json = serde_json::to_vec_pretty(c).map_err(std::io::Error::other)?;
    crate::user_tokens::replace_private(data_dir, DEVICE_FILE, &json)
}
