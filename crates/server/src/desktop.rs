//! Desktop notifications sent by the daemon itself, so a person hears of a
//! new permission request with no browser tab open: a freedesktop
//! notification over the session's D-Bus (`org.freedesktop.Notifications`),
//! sent with `gdbus` (GLib's command-line D-Bus client) when both a session
//! bus (`DBUS_SESSION_BUS_ADDRESS`) and `gdbus` are there; nothing otherwise.
//! It names the agent and the project, and carries the card's address.
//!
//! A notification is fire-and-forget: sent on a thread of its own, never in
//! the way of a decision; a failure is ignored (the UI and the browser's own
//! notifications remain).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use portcullis_store::{GrantTarget, Request};

/// Where notifications go, if anywhere.
#[derive(Clone, Debug)]
pub struct Desktop {
    gdbus: PathBuf,
    /// `http://127.0.0.1:7878`: the cards' addresses start with it.
    base_url: String,
}

impl Desktop {
    /// A notifier when this process has a session bus and `gdbus` is on the
    /// `PATH`; `None` otherwise.
    pub fn from_env(base_url: &str) -> Option<Desktop> {
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").filter(|a| !a.is_empty())?;
        let gdbus = std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("gdbus"))
                .find(|p| p.is_file())
        })?;
        Some(Desktop {
            gdbus,
            base_url: base_url.to_string(),
        })
    }

    /// Announces a new pending request made by `agent`.
    pub fn announce(&self, r: &Request, agent: Option<&str>) {
        let (summary, body) = text(r, agent, &self.base_url);
        let mut cmd = Command::new(&self.gdbus);
        cmd.args([
            "call",
            "--session",
            "--dest",
            "org.freedesktop.Notifications",
            "--object-path",
            "/org/freedesktop/Notifications",
            "--method",
            "org.freedesktop.Notifications.Notify",
            // The timeout `-1` would otherwise be read as an option.
            "--",
            "portcullis",
            "0",
            "dialog-warning",
        ])
        .arg(gvariant_string(&summary))
        .arg(gvariant_string(&body))
        .args(["[]", "{}", "-1"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        let _ = std::thread::Builder::new()
            .name("portcullis-notify".into())
            .spawn(move || {
                // Reaped here: no zombie, and a slow bus delays nothing else.
                if let Ok(mut child) = cmd.spawn() {
                    let _ = child.wait();
                }
            });
    }
}

/// The notification's summary and body: the agent, the project, the call,
/// and the card's address.
pub fn text(r: &Request, agent: Option<&str>, base_url: &str) -> (String, String) {
    let agent = agent.unwrap_or("an agent");
    let (project, call) = match &r.target {
        GrantTarget::Call { cwd, call, .. } => (
            std::path::Path::new(cwd)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| cwd.clone()),
            call.clone(),
        ),
        other => (String::new(), other.to_string()),
    };
    let mut short: String = call.chars().take(200).collect();
    if short.len() < call.len() {
        short.push('…');
    }
    let call = short;
    let summary = if project.is_empty() {
        format!("portcullis: {agent} asks")
    } else {
        format!("portcullis: {agent} asks in {project}")
    };
    let body = format!(
        "{} {call}\n{}\n{base_url}/#request-{}",
        r.tool, r.reason, r.id
    );
    (summary, body)
}

/// `s` as a GVariant text-format string literal (what `gdbus call` parses).
fn gvariant_string(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_quoted_for_gdbus() {
        assert_eq!(gvariant_string("it's a\\b\nc"), "'it\\'s a\\\\b\\nc'");
    }
}
