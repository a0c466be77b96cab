//! A REST catalog's failed answer as a [`PortError`], read by the catalog's HTTP client and by
//! its token exchange alike.

use reqwest::StatusCode;

use crate::PortError;

/// A failed answer as a `PortError`, with the catalog's own message (`{"error": {...}}`).
pub(crate) fn status_error(context: &str, status: StatusCode, body: &[u8]) -> PortError {
    let said = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| match v.get("error")? {
            // OAuth2's shape (RFC 6749 §5.2): {"error": "invalid_client", "error_description": ...}.
            serde_json::Value::String(code) => {
                Some(format!("{code}: {}", v.get("error_description").and_then(|d| d.as_str()).unwrap_or("")))
            }
            e => {
                let kind = e.get("type").and_then(|t| t.as_str()).unwrap_or("");
                let message = e.get("message").and_then(|m| m.as_str()).unwrap_or("");
                Some(format!("{kind}: {message}"))
            }
        })
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned());
    let what = format!("{context}: HTTP {status}: {said}");
    match status.as_u16() {
        404 => PortError::NotFound(what),
        409 => PortError::Conflict(what),
        429 | 503 => PortError::Throttled(what),
        401 | 403 | 419 => PortError::Invalid(format!(
            "{what} (check FLOE_REST_TOKEN, FLOE_REST_CREDENTIAL or the AWS credentials SigV4 signs with)"
        )),
        // The request may have reached the catalog and applied: retried, and a commit read back.
        408 => PortError::io(context, format!("HTTP {status}: {said}")),
        400..=499 => PortError::Invalid(what),
        _ => PortError::io(context, format!("HTTP {status}: {said}")),
    }
}
