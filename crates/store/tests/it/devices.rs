//! Devices enrolled with a team server: a credential shown once, found by
//! its hash, refused once revoked; names checked and never reused.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{DEVICE_TOKEN_PREFIX, StoreError};

#[test]
fn a_device_is_found_by_its_credential_until_it_is_revoked() {
    let (_dir, store) = support::store();
    let (laptop, token) = store
        .enroll_device("alice-laptop", "ui:alice", 100)
        .unwrap();
    assert_eq!(
        (
            laptop.name.as_str(),
            laptop.enrolled_by.as_str(),
            laptop.revoked_at
        ),
        ("alice-laptop", "ui:alice", None)
    );
    assert!(token.starts_with(DEVICE_TOKEN_PREFIX), "{token}");
    assert_eq!(token.len(), DEVICE_TOKEN_PREFIX.len() + 64);
    let (_, other) = store.enroll_device("ci-runner-3", "api", 101).unwrap();
    assert_ne!(token, other);
    let found = |t: &str| store.device_for_token(t).unwrap().map(|d| d.name);
    assert_eq!(found(&token).as_deref(), Some("alice-laptop"));
    assert_eq!(found(&other).as_deref(), Some("ci-runner-3"));
    // Anything else is no device: a near miss, the bare hex, another prefix.
    let mut near = token.clone();
    near.pop();
    near.push(if token.ends_with('0') { '1' } else { '0' });
    for bad in [
        near.as_str(),
        &token[DEVICE_TOKEN_PREFIX.len()..],
        "",
        "pcd_",
    ] {
        assert_eq!(found(bad), None, "{bad}");
    }
    assert!(store.revoke_device("alice-laptop", 200).unwrap());
    assert_eq!(found(&token), None, "a revoked credential");
    assert_eq!(found(&other).as_deref(), Some("ci-runner-3"));
    assert!(
        !store.revoke_device("alice-laptop", 201).unwrap(),
        "already revoked"
    );
    assert!(!store.revoke_device("nobody", 201).unwrap());
    let listed: Vec<_> = store
        .devices()
        .unwrap()
        .into_iter()
        .map(|d| (d.name, d.revoked_at))
        .collect();
    assert_eq!(
        listed,
        [
            ("alice-laptop".to_owned(), Some(200)),
            ("ci-runner-3".to_owned(), None)
        ]
    );
}

#[test]
fn device_names_are_checked_and_never_reused() {
    let (_dir, store) = support::store();
    store.enroll_device("box", "api", 1).unwrap();
    store.revoke_device("box", 2).unwrap();
    for (name, by) in [
        ("box", "api"),
        ("", "api"),
        ("a b", "api"),
        ("a/b", "api"),
        (&"x".repeat(65) as &str, "api"),
        ("fine", " "),
    ] {
        let err = store.enroll_device(name, by, 3).unwrap_err();
        assert!(
            matches!(err, StoreError::InvalidDevice { .. }),
            "{name:?}: {err:?}"
        );
    }
    assert_eq!(store.devices().unwrap().len(), 1);
}

crate::also_on_postgres!(
    a_device_is_found_by_its_credential_until_it_is_revoked,
    device_names_are_checked_and_never_reused,
    a_devices_device_wide_approval_is_delivered_not_granted,
);

/// A device's request approved device-wide makes no grant in this store:
/// it is delivered to its device until the device says it keeps it; another
/// device's deliveries are not its own, and a rule cannot stand in for it.
#[test]
fn a_devices_device_wide_approval_is_delivered_not_granted() {
    use portcullis_store::{Op, Resolution};
    let (_dir, store) = support::store();
    for id in ["laptop-a:s1", "laptop-b:s1"] {
        store.register_session(&support::main_session(id)).unwrap();
    }
    let raised = |session: &str, device: &str, path: &str| {
        let mut r = support::request(session, Op::Read, support::file(path));
        r.device = Some(device.into());
        store.raise_request(&r, 20).unwrap()
    };
    let a = raised("laptop-a:s1", "laptop-a", "/etc/a");
    assert!(a.suggested.contains(&Resolution::Device), "{a:?}");
    let b = raised("laptop-b:s1", "laptop-b", "/etc/b");
    let (resolved, grant) = store
        .resolve_request_with(a.id, Resolution::Device, None, "alice", 30)
        .unwrap();
    assert_eq!(grant, None);
    assert_eq!(resolved.device.as_deref(), Some("laptop-a"));
    assert_eq!(store.active_grants(&["laptop-a:s1"], 31).unwrap(), vec![]);
    // A rule cannot stand in for a device's device-wide approval.
    let err = store
        .resolve_request_as(
            b.id,
            Resolution::Device,
            None,
            Some((Op::Read, support::folder("/etc"))),
            "alice",
            30,
        )
        .unwrap_err();
    assert!(err.to_string().contains("enrolled device"), "{err}");
    store
        .resolve_request_with(b.id, Resolution::Device, None, "alice", 30)
        .unwrap();
    let ids = |device: &str| -> Vec<i64> {
        store
            .deliveries(device)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids("laptop-a"), vec![a.id]);
    assert_eq!(ids("laptop-b"), vec![b.id]);
    // B saying it keeps A's approval changes nothing; A saying so does.
    store.mark_delivered("laptop-b", &[a.id], 40).unwrap();
    assert_eq!(ids("laptop-a"), vec![a.id]);
    store.mark_delivered("laptop-a", &[a.id], 40).unwrap();
    assert_eq!(ids("laptop-a"), Vec::<i64>::new());
    assert_eq!(store.request(a.id).unwrap().unwrap().delivered_at, Some(40));
    assert_eq!(ids("laptop-b"), vec![b.id]);
}
