//! The environment the paths are placed in: home, portcullis' own directories,
//! and the user database (`/etc/passwd`) for `~user`.

use std::fs;
use std::os::unix::fs::MetadataExt;

/// Where the user and portcullis live. All paths absolute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    /// The user's home directory: what `~` expands to.
    pub home: String,
    /// portcullis' configuration directory, e.g. `~/.config/portcullis`.
    /// Protected (never writable) with everything under it.
    pub config_dir: String,
    /// portcullis' data directory (database, audit log), e.g.
    /// `~/.local/share/portcullis`. Protected, and secret (it holds grants and
    /// session tokens).
    pub data_dir: String,
}

impl Environment {
    /// The environment of this process. The only function of the crate that
    /// reads environment variables:
    ///
    /// - `home`: `$HOME`; if unset, empty or relative, the home of this
    ///   process' user in `/etc/passwd`; failing that, `/`.
    /// - `config_dir`: `$XDG_CONFIG_HOME/portcullis`, or
    ///   `<home>/.config/portcullis` when `XDG_CONFIG_HOME` is unset, empty or
    ///   relative (as the XDG base directory specification says).
    /// - `data_dir`: `$PORTCULLIS_DATA_DIR`, else `$XDG_DATA_HOME/portcullis`,
    ///   else `<home>/.local/share/portcullis`; relative values are ignored.
    pub fn from_process() -> Environment {
        Environment::from_vars(
            |name| std::env::var(name).ok(),
            || {
                // The owner of /proc/self is this process' user.
                let uid = fs::metadata("/proc/self").ok()?.uid();
                read_passwd()
                    .into_iter()
                    .find(|u| u.uid == uid)
                    .map(|u| u.home)
            },
        )
    }

    /// [`Environment::from_process`] with the variables and the passwd home
    /// supplied by the caller.
    fn from_vars(
        get: impl Fn(&str) -> Option<String>,
        passwd_home: impl FnOnce() -> Option<String>,
    ) -> Environment {
        let var = |name: &str| get(name).filter(|v| v.starts_with('/'));
        let home = var("HOME")
            .or_else(|| passwd_home().filter(|h| h.starts_with('/')))
            .unwrap_or_else(|| "/".to_string());
        let base = home.trim_end_matches('/');
        let config_dir = var("XDG_CONFIG_HOME")
            .map(|d| format!("{}/portcullis", d.trim_end_matches('/')))
            .unwrap_or_else(|| format!("{base}/.config/portcullis"));
        let data_dir = var("PORTCULLIS_DATA_DIR")
            .or_else(|| {
                var("XDG_DATA_HOME").map(|d| format!("{}/portcullis", d.trim_end_matches('/')))
            })
            .unwrap_or_else(|| format!("{base}/.local/share/portcullis"));
        Environment {
            home,
            config_dir,
            data_dir,
        }
    }
}

/// One line of `/etc/passwd`, the parts we use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct User {
    pub name: String,
    pub uid: u32,
    pub home: String,
}

/// Reads `/etc/passwd`. Missing or unreadable: no users. Only local users are
/// known: users of other NSS sources (LDAP, sssd) are not, so `~them` is
/// unresolvable.
pub(crate) fn read_passwd() -> Vec<User> {
    fs::read_to_string("/etc/passwd")
        .map(|text| parse_passwd(&text))
        .unwrap_or_default()
}

/// Parses `passwd(5)` lines: `name:password:uid:gid:gecos:home:shell`.
/// Malformed lines are skipped; the first entry of a name wins (as `getpwnam`).
pub(crate) fn parse_passwd(text: &str) -> Vec<User> {
    let mut users: Vec<User> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        let [name, _, uid, _, _, home, _, ..] = fields.as_slice() else {
            continue;
        };
        if name.is_empty() || name.starts_with(['#', '+', '-']) {
            continue;
        }
        let Ok(uid) = uid.parse() else { continue };
        if users.iter().any(|u| u.name == *name) {
            continue;
        }
        users.push(User {
            name: name.to_string(),
            uid,
            home: home.to_string(),
        });
    }
    users
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &[(&str, &str)], passwd_home: Option<&str>) -> Environment {
        Environment::from_vars(
            |name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            },
            || passwd_home.map(str::to_string),
        )
    }

    #[test]
    fn environment_defaults() {
        let e = env_of(&[("HOME", "/home/u")], Some("/elsewhere"));
        assert_eq!(e.home, "/home/u");
        assert_eq!(e.config_dir, "/home/u/.config/portcullis");
        assert_eq!(e.data_dir, "/home/u/.local/share/portcullis");
    }

    #[test]
    fn environment_from_xdg_and_override() {
        let e = env_of(
            &[
                ("HOME", "/home/u/"),
                ("XDG_CONFIG_HOME", "/cfg/"),
                ("XDG_DATA_HOME", "/data"),
            ],
            None,
        );
        assert_eq!(e.config_dir, "/cfg/portcullis");
        assert_eq!(e.data_dir, "/data/portcullis");
        let e = env_of(
            &[
                ("HOME", "/home/u"),
                ("XDG_DATA_HOME", "/data"),
                ("PORTCULLIS_DATA_DIR", "/var/lib/pc"),
            ],
            None,
        );
        assert_eq!(e.data_dir, "/var/lib/pc");
    }

    #[test]
    fn environment_ignores_relative_and_missing_values() {
        let e = env_of(
            &[
                ("HOME", "relative"),
                ("XDG_CONFIG_HOME", "cfg"),
                ("PORTCULLIS_DATA_DIR", ""),
            ],
            Some("/home/from-passwd"),
        );
        assert_eq!(e.home, "/home/from-passwd");
        assert_eq!(e.config_dir, "/home/from-passwd/.config/portcullis");
        assert_eq!(e.data_dir, "/home/from-passwd/.local/share/portcullis");
        let e = env_of(&[], None);
        assert_eq!(e.home, "/");
        assert_eq!(e.config_dir, "/.config/portcullis");
    }

    #[test]
    fn parses_passwd() {
        let users = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\n\
             # comment\n\
             broken:x:1\n\
             +nis::::::\n\
             alice:x:1000:1000:Alice,,,:/home/alice:/bin/zsh\n\
             root:x:0:0:second:/elsewhere:/bin/sh\n",
        );
        assert_eq!(
            users,
            vec![
                User {
                    name: "root".into(),
                    uid: 0,
                    home: "/root".into()
                },
                User {
                    name: "alice".into(),
                    uid: 1000,
                    home: "/home/alice".into()
                },
            ]
        );
    }
}
