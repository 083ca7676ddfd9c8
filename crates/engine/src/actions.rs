//! What a person does, as opposed to what an agent asks: resolve a permission
//! request, revoke a grant or a session. Every front door (CLI, HTTP, UI) goes
//! through these, so each action is audited the same way wherever it came from.

use portcullis_store::{
    AuditEvent, AuditKind, Denial, Grant, NewGrant, NewSession, Pin, Registered, Request,
    Resolution, Store, StoreError,
};

/// Resolves a pending request and records who did it. `approver` names the
/// person and the front door (`cli:alice`, `ui`).
pub fn resolve_request(
    store: &Store,
    id: i64,
    how: Resolution,
    approver: &str,
    now: i64,
) -> Result<(Request, Option<Grant>), StoreError> {
    resolve_request_with(store, id, how, None, approver, now)
}

/// [`resolve_request`], with a denial that stands for the same call's next
/// attempts in the session and tells the agent why ([`Denial`]).
pub fn resolve_request_with(
    store: &Store,
    id: i64,
    how: Resolution,
    denial: Option<&Denial>,
    approver: &str,
    now: i64,
) -> Result<(Request, Option<Grant>), StoreError> {
    let (request, grant) = store.resolve_request_with(id, how, denial, approver, now)?;
    record_resolution(store, &request, grant.as_ref(), how, denial, approver, now)?;
    Ok((request, grant))
}

/// The audit row of a person's resolution.
pub(crate) fn record_resolution(
    store: &Store,
    request: &Request,
    grant: Option<&Grant>,
    how: Resolution,
    denial: Option<&Denial>,
    approver: &str,
    now: i64,
) -> Result<(), StoreError> {
    store.append_audit(
        &AuditEvent {
            kind: if grant.is_some() {
                AuditKind::Approval
            } else {
                AuditKind::Denial
            },
            session: Some(request.session.clone()),
            tool: Some(request.tool.clone()),
            verdict: None,
            detail: serde_json::json!({
                "request": request.id,
                "grant": grant.map(|g| g.id),
                "scope": how.as_str(),
                "by": approver,
                "message": denial.map(|d| d.message.as_str()),
                "denied_until": denial.map(|d| d.until),
            }),
        },
        now,
    )?;
    Ok(())
}

/// Revokes an active grant; `false` when there was none to revoke.
pub fn revoke_grant(store: &Store, id: i64, by: &str, now: i64) -> Result<bool, StoreError> {
    let revoked = store.revoke_grant(id, now)?;
    if revoked {
        record(
            store,
            AuditKind::Revoke,
            None,
            serde_json::json!({"grant": id, "by": by}),
            now,
        )?;
    }
    Ok(revoked)
}

/// Enrols a device with the team server for `by` (a person): the device
/// and its credential (shown once), audited.
pub fn enroll_device(
    store: &Store,
    name: &str,
    by: &str,
    now: i64,
) -> Result<(portcullis_store::Device, String), StoreError> {
    let enrolled = store.enroll_device(name, by, now)?;
    record(
        store,
        AuditKind::DeviceEnrolled,
        None,
        serde_json::json!({"device": name, "by": by}),
        now,
    )?;
    Ok(enrolled)
}

/// Revokes a device's credential; `false` when there was no active one.
pub fn revoke_device(store: &Store, name: &str, by: &str, now: i64) -> Result<bool, StoreError> {
    let revoked = store.revoke_device(name, now)?;
    if revoked {
        record(
            store,
            AuditKind::DeviceRevoked,
            None,
            serde_json::json!({"device": name, "by": by}),
            now,
        )?;
    }
    Ok(revoked)
}

/// Registers a session (a person, or a session registering its child):
/// answers its token, shown once.
pub fn register_session(store: &Store, s: &NewSession, now: i64) -> Result<Registered, StoreError> {
    store.register_session_at(s, now)
}

/// Adds a grant a person made directly (not from a request), audited.
pub fn add_grant(store: &Store, g: &NewGrant, now: i64) -> Result<Grant, StoreError> {
    let grant = store.add_grant_at(g, now)?;
    record_grant(store, &grant, now)?;
    Ok(grant)
}

/// The device-wide approvals a person made for `device`'s requests that it
/// does not keep yet, to deliver with its call's answer. Those among `held`
/// (the requests whose approvals the device reported keeping) are recorded
/// delivered and left out: from then on the device's own store carries them.
pub fn deliveries_for(
    store: &Store,
    device: &str,
    held: &[i64],
    now: i64,
) -> Result<Vec<portcullis_store::Request>, StoreError> {
    let pending = store.deliveries(device)?;
    let (taken, left): (Vec<_>, Vec<_>) = pending.into_iter().partition(|r| held.contains(&r.id));
    let taken: Vec<i64> = taken.iter().map(|r| r.id).collect();
    store.mark_delivered(device, &taken, now)?;
    Ok(left)
}

/// Records a grant a person made directly (not from a request).
pub fn record_grant(store: &Store, grant: &Grant, now: i64) -> Result<(), StoreError> {
    record(
        store,
        AuditKind::Approval,
        grant.session.as_deref(),
        serde_json::json!({"grant": grant.id, "by": grant.approver}),
        now,
    )
}

/// Revokes a session; `false` when it was not active.
pub fn revoke_session(store: &Store, id: &str, by: &str, now: i64) -> Result<bool, StoreError> {
    let revoked = store.revoke_session_at(id, now)?;
    if revoked {
        record(
            store,
            AuditKind::Revoke,
            Some(id),
            serde_json::json!({"session": id, "by": by}),
            now,
        )?;
    }
    Ok(revoked)
}

/// Approves or rejects a pending MCP tool definition.
pub fn decide_pin(
    store: &Store,
    server: &str,
    tool: &str,
    hash: &str,
    approve: bool,
    by: &str,
    now: i64,
) -> Result<Pin, StoreError> {
    let pin = store.decide_pin(server, tool, hash, approve, by, now)?;
    store.append_audit(
        &AuditEvent {
            kind: if approve {
                AuditKind::ToolApproved
            } else {
                AuditKind::ToolRejected
            },
            session: None,
            tool: Some(portcullis_policy::McpToolName::new(server, tool).to_string()),
            verdict: None,
            detail: serde_json::json!({"server": server, "tool": tool, "hash": hash, "by": by}),
        },
        now,
    )?;
    Ok(pin)
}

fn record(
    store: &Store,
    kind: AuditKind,
    session: Option<&str>,
    detail: serde_json::Value,
    now: i64,
) -> Result<(), StoreError> {
    store.append_audit(
        &AuditEvent {
            kind,
            session: session.map(str::to_string),
            tool: None,
            verdict: None,
            detail,
        },
        now,
    )?;
    Ok(())
}

/// How long a denial with a message stands for the same call's next attempts,
/// unless it is for the session (10 minutes).
pub const DENIAL_SECS: i64 = 600;

/// The standing denial a person's resolution asks for: `message` (what the
/// agent reads) and `lasting` (`call`: [`DENIAL_SECS`]; `session`: as long as
/// the session lives). Neither: a plain deny, and the next attempt asks anew.
/// Either with an approval, or an unknown `lasting`: an error in words.
pub fn denial(
    how: Resolution,
    message: Option<&str>,
    lasting: Option<&str>,
    now: i64,
) -> Result<Option<Denial>, String> {
    let message = message.map(str::trim).filter(|m| !m.is_empty());
    let until = match lasting {
        None | Some("call") => Some(now.saturating_add(DENIAL_SECS)),
        Some("session") => None,
        Some(other) => return Err(format!("for `{other}`: expected call or session")),
    };
    if message.is_none() && lasting.is_none() {
        return Ok(None);
    }
    if how != Resolution::Deny {
        return Err(
            "a message for the agent, and how long a denial lasts, go with a denial only".into(),
        );
    }
    Ok(Some(Denial {
        message: message
            .unwrap_or("a person denied it for this session")
            .to_string(),
        until,
    }))
}

/// Appends a rule a person saved to a portcullis configuration file, as one
/// `[[approved]]` table at its end (valid TOML whatever precedes it; nothing
/// before it rewritten). The file and its directory are made if missing.
pub fn append_approved(
    path: &std::path::Path,
    rule: &str,
    by: &str,
    request: i64,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let existing = std::fs::read_to_string(path).unwrap_or_default();
    // JSON string escapes are TOML basic-string escapes.
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let mut text = String::new();
    if !existing.is_empty() && !existing.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n# Saved from permission request #{request} (portcullis).\n[[approved]]\nrule = {}\nby = {}\nrequest = {request}\n",
        quote(rule),
        quote(by)
    ));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// The audit row of a rule a person saved to a configuration file.
pub(crate) fn record_saved_rule(
    store: &Store,
    request: &Request,
    rule: &str,
    path: &std::path::Path,
    by: &str,
    now: i64,
) -> Result<(), StoreError> {
    store.append_audit(
        &AuditEvent {
            kind: AuditKind::Approval,
            session: Some(request.session.clone()),
            tool: Some(request.tool.clone()),
            verdict: None,
            detail: serde_json::json!({
                "request": request.id,
                "saved_rule": rule,
                "saved_to": path.display().to_string(),
                "by": by,
            }),
        },
        now,
    )?;
    Ok(())
}
