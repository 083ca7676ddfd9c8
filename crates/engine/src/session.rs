//! The one session resolver.

use crate::EngineError;

/// Every place a session id can come from, as the front door received it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionSources {
    /// `/s/{session}/…` of an HTTP route.
    pub url_path: Option<String>,
    /// The trusted `X-Session-ID` header.
    pub header: Option<String>,
    /// A `session` field of the request body (or a hook's `session_id`).
    pub body: Option<String>,
    /// `PORTCULLIS_SESSION` of the calling process (the MCP bridge, a CLI).
    pub env: Option<String>,
    /// The agent's own session as the MCP bridge found it: linked by the
    /// agent's hook to this very call, else the agent's environment.
    pub agent: Option<String>,
}

/// The session a call belongs to. Equal values from several sources are fine;
/// different values are a [`EngineError::SessionConflict`], never a silent
/// pick. Empty values count as absent.
pub fn resolve_session(s: &SessionSources) -> Result<Option<String>, EngineError> {
    let named: Vec<(&'static str, String)> = [
        ("url-path", &s.url_path),
        ("header", &s.header),
        ("body", &s.body),
        ("environment", &s.env),
        ("agent", &s.agent),
    ]
    .into_iter()
    .filter_map(|(name, v)| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| (name, v.to_string()))
    })
    .collect();
    match named.first() {
        None => Ok(None),
        Some((_, first)) if named.iter().all(|(_, v)| v == first) => Ok(Some(first.clone())),
        Some(_) => Err(EngineError::SessionConflict { sources: named }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(
        url: Option<&str>,
        header: Option<&str>,
        body: Option<&str>,
        env: Option<&str>,
    ) -> SessionSources {
        SessionSources {
            url_path: url.map(Into::into),
            header: header.map(Into::into),
            body: body.map(Into::into),
            env: env.map(Into::into),
            agent: None,
        }
    }

    #[test]
    fn one_resolver_no_silent_pick() {
        assert_eq!(resolve_session(&s(None, None, None, None)).unwrap(), None);
        assert_eq!(
            resolve_session(&s(Some("a"), Some("a"), None, Some("a")))
                .unwrap()
                .as_deref(),
            Some("a")
        );
        assert_eq!(
            resolve_session(&s(None, Some(" a "), Some(""), None))
                .unwrap()
                .as_deref(),
            Some("a")
        );
        match resolve_session(&s(Some("a"), Some("b"), None, None)) {
            Err(EngineError::SessionConflict { sources }) => {
                assert_eq!(
                    sources,
                    [("url-path", "a".to_string()), ("header", "b".to_string())]
                );
            }
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert!(resolve_session(&s(None, None, Some("a"), Some("b"))).is_err());
    }
}
