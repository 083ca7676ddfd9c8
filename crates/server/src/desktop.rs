//! Desktop notifications sent by the daemon itself, so a person hears of a
//! new permission request with no browser tab open: a freedesktop
//! notification over the session's D-Bus (`org.freedesktop.Notifications`),
//! sent with `gdbus` (GLib's command-line D-Bus client) when both a session
//! bus (`DBUS_SESSION_BUS_ADDRESS`) and `gdbus` are there; nothing otherwise.
//! It names the agent and the project, and carries the card's address.
//!
//! Clicking it opens the card: the notification offers its default action,
//! and one `gdbus monitor` of the notification service (started with the
//! daemon, again at a notification if it ended) hears `ActionInvoked` for it
//! and opens the card's address with `xdg-open`. Without `xdg-open` no action is
//! offered.
//!
//! A notification is fire-and-forget: sent on a thread of its own, never in
//! the way of a decision; a failure is ignored (the UI and the browser's own
//! notifications remain).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use portcullis_store::{GrantTarget, Request};

/// The most notifications remembered for a click (the oldest are forgotten).
const REMEMBERED: usize = 512;

/// Where notifications go, if anywhere.
#[derive(Clone, Debug)]
pub struct Desktop {
    gdbus: PathBuf,
    /// `http://127.0.0.1:7878`: the cards' addresses start with it.
    base_url: String,
    /// `xdg-open`, which opens a card when its notification is clicked.
    opener: Option<PathBuf>,
    clicks: Arc<Clicks>,
}

/// The cards of the notifications shown, by notification id, and the
/// monitor that hears their clicks.
#[derive(Debug, Default)]
struct Clicks {
    cards: Mutex<HashMap<u32, String>>,
    monitor: Mutex<Option<Child>>,
}

/// `name` on the `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

impl Desktop {
    /// A notifier when this process has a session bus and `gdbus` is on the
    /// `PATH`; `None` otherwise.
    pub fn from_env(base_url: &str) -> Option<Desktop> {
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").filter(|a| !a.is_empty())?;
        let gdbus = on_path("gdbus")?;
        let desktop = Desktop {
            gdbus,
            base_url: base_url.to_string(),
            opener: on_path("xdg-open"),
            clicks: Arc::default(),
        };
        // Listening from the start: a click on the first notification is
        // not missed while a monitor would still be subscribing.
        desktop.listen();
        Some(desktop)
    }

    /// Makes sure a monitor hears clicks (one for the daemon's life; a new
    /// one if it ended). A monitor left behind by a daemon that was killed
    /// ends at its next write, on its closed pipe.
    fn listen(&self) {
        let Some(opener) = self.opener.clone() else {
            return;
        };
        let mut monitor = self
            .clicks
            .monitor
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(child) = monitor.as_mut()
            && matches!(child.try_wait(), Ok(None))
        {
            return;
        }
        let spawned = Command::new(&self.gdbus)
            .args([
                "monitor",
                "--session",
                "--dest",
                "org.freedesktop.Notifications",
                "--object-path",
                "/org/freedesktop/Notifications",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            return;
        };
        let Some(out) = child.stdout.take() else {
            return;
        };
        *monitor = Some(child);
        let clicks = Arc::clone(&self.clicks);
        let _ = std::thread::Builder::new()
            .name("portcullis-clicks".into())
            .spawn(move || {
                for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                    let Some(id) = clicked(&line) else { continue };
                    let card = clicks
                        .cards
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get(&id)
                        .cloned();
                    if let Some(card) = card {
                        open(&opener, &card);
                    }
                }
            });
    }

    /// Announces a new pending request made by `agent`.
    pub fn announce(&self, r: &Request, agent: Option<&str>) {
        let (summary, body) = text(r, agent, &self.base_url);
        let card = card_url(&self.base_url, r.id);
        self.listen();
        // The default action is what a click on the notification does.
        let actions = if self.opener.is_some() {
            "['default', 'Open the request']"
        } else {
            "[]"
        };
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
        .args([actions, "{}", "-1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        let clicks = Arc::clone(&self.clicks);
        let _ = std::thread::Builder::new()
            .name("portcullis-notify".into())
            .spawn(move || {
                // Reaped here: no zombie, and a slow bus delays nothing else.
                let Ok(out) = cmd.output() else { return };
                // `(uint32 7,)`: the notification's id, for its click.
                if let Some(id) = notification_id(&String::from_utf8_lossy(&out.stdout)) {
                    let mut cards = clicks.cards.lock().unwrap_or_else(|p| p.into_inner());
                    if cards.len() >= REMEMBERED
                        && let Some(oldest) = cards.keys().min().copied()
                    {
                        cards.remove(&oldest);
                    }
                    cards.insert(id, card);
                }
            });
    }
}

/// The card of request `id`.
fn card_url(base_url: &str, id: i64) -> String {
    format!("{base_url}/#request-{id}")
}

/// The id in `gdbus call`'s answer to `Notify`: `(uint32 7,)`.
fn notification_id(answer: &str) -> Option<u32> {
    let rest = answer.trim().strip_prefix("(uint32 ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The notification clicked, from a `gdbus monitor` line:
/// `/org/freedesktop/Notifications: org.freedesktop.Notifications.ActionInvoked (uint32 7, 'default')`.
fn clicked(line: &str) -> Option<u32> {
    let (_, args) = line.split_once("org.freedesktop.Notifications.ActionInvoked (")?;
    let (id, key) = args.split_once(',')?;
    let key = key.trim().trim_end_matches(')').trim().trim_matches('\'');
    if key != "default" {
        return None;
    }
    id.trim().strip_prefix("uint32 ")?.parse().ok()
}

/// Opens `card` in the person's browser (reaped on its own thread).
fn open(opener: &Path, card: &str) {
    let spawned = Command::new(opener)
        .arg(card)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        let _ = std::thread::Builder::new()
            .name("portcullis-open".into())
            .spawn(move || {
                let _ = child.wait();
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
        "{} {call}\n{}\n{}",
        r.tool,
        r.reason,
        card_url(base_url, r.id)
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
    fn ids_and_clicks_are_read_from_gdbus() {
        assert_eq!(notification_id("(uint32 7,)\n"), Some(7));
        assert_eq!(notification_id("Error: no such name"), None);
        let line = "/org/freedesktop/Notifications: org.freedesktop.Notifications.ActionInvoked (uint32 42, 'default')";
        assert_eq!(clicked(line), Some(42));
        assert_eq!(clicked(&line.replace("'default'", "'dismiss'")), None);
        assert_eq!(
            clicked(
                "/org/freedesktop/Notifications: org.freedesktop.Notifications.NotificationClosed (uint32 42, uint32 2)"
            ),
            None
        );
    }

    #[test]
    fn strings_are_quoted_for_gdbus() {
        assert_eq!(gvariant_string("it's a\\b\nc"), "'it\\'s a\\\\b\\nc'");
    }
}
