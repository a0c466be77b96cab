//! HTTP to an Iceberg REST catalog: the catalog's `/v1/config` read once (its path prefix and
//! whether it honours `Idempotency-Key`), bearer tokens on every call, and the catalog's
//! answers turned into `PortError`s (404 not found, 409 conflict, 429/503 throttled, 408 (a
//! proxy's request timeout) and other 5xx and transport failures of unknown outcome, other 4xx
//! invalid).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use tokio::sync::OnceCell;

use super::auth::{RestAuth, Tokens};
use super::status::status_error;
use crate::PortError;

/// What `/v1/config` told us.
#[derive(Debug, Clone)]
pub(crate) struct ServerConfig {
    /// Path segment after `/v1/` (empty: none).
    prefix: String,
    /// The catalog keeps answers per `Idempotency-Key` (it advertised a key lifetime).
    pub(crate) idempotent: bool,
}

/// A client of one REST catalog.
pub(crate) struct Http {
    http: reqwest::Client,
    #[cfg(feature = "aws")]
    sigv4: Option<super::sigv4::SigV4>,
    uri: String,
    warehouse: Option<String>,
    tokens: Tokens,
    config: OnceCell<ServerConfig>,
}

/// A catalog's answer: status and body.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) body: bytes::Bytes,
}

impl Http {
    pub(crate) fn new(uri: &str, warehouse: Option<String>, auth: RestAuth) -> Result<Self, PortError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("floe/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| PortError::io("REST catalog HTTP client", e))?;
        Ok(Http {
            http,
            #[cfg(feature = "aws")]
            sigv4: match &auth {
                RestAuth::SigV4 { region, service } => Some(super::sigv4::SigV4::new(region, service)),
                _ => None,
            },
            uri: uri.trim_end_matches('/').to_string(),
            warehouse,
            tokens: Tokens::new(auth),
            config: OnceCell::new(),
        })
    }

    /// The catalog's configuration, read on first use (no network call at start-up).
    pub(crate) async fn config(&self) -> Result<&ServerConfig, PortError> {
        self.config.get_or_try_init(|| self.read_config()).await
    }

    async fn read_config(&self) -> Result<ServerConfig, PortError> {
        let query: Vec<(&str, &str)> = self.warehouse.iter().map(|w| ("warehouse", w.as_str())).collect();
        let answer = self.call(Method::GET, &format!("{}/v1/config", self.uri), &query, None, None).await?;
        let answer = ok_or_error("REST catalog configuration", answer)?;
        let v: serde_json::Value = json(&answer.body, "REST catalog configuration")?;
        let setting = |k: &str| {
            v.pointer(&format!("/overrides/{k}"))
                .or_else(|| v.pointer(&format!("/defaults/{k}")))
                .and_then(|x| x.as_str())
                .map(str::to_string)
        };
        Ok(ServerConfig {
            prefix: setting("prefix").unwrap_or_default().trim_matches('/').to_string(),
            idempotent: v.get("idempotency-key-lifetime").is_some_and(|x| x.is_string()),
        })
    }

    /// `<uri>/v1/<prefix>/<path>`.
    pub(crate) async fn url(&self, path: &str) -> Result<String, PortError> {
        let prefix = &self.config().await?.prefix;
        Ok(if prefix.is_empty() {
            format!("{}/v1/{path}", self.uri)
        } else {
            format!("{}/v1/{prefix}/{path}", self.uri)
        })
    }

    /// One request, with a fresh token and one more try if the catalog refuses a fetched one.
    pub(crate) async fn call(
        &self,
        method: Method,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        idempotency_key: Option<&str>,
    ) -> Result<Answer, PortError> {
        let full = reqwest::Url::parse_with_params(url, query)
            .map_err(|e| PortError::Invalid(format!("REST catalog URL {url}: {e}")))?;
        let bytes = match body {
            Some(b) => serde_json::to_vec(b).map_err(|e| PortError::Invalid(format!("{url}: {e}")))?,
            None => vec![],
        };
        let mut headers: Vec<(&str, &str)> = vec![];
        if body.is_some() {
            headers.push(("content-type", "application/json"));
        }
        if let Some(key) = idempotency_key {
            headers.push(("idempotency-key", key));
        }
        let mut renewed = false;
        loop {
            let mut req = self.http.request(method.clone(), full.clone());
            for (k, v) in &headers {
                req = req.header(*k, *v);
            }
            if body.is_some() {
                req = req.body(bytes.clone());
            }
            if let Some(token) = self.tokens.bearer(&self.http).await? {
                req = req.bearer_auth(token);
            }
            #[cfg(feature = "aws")]
            if let Some(signer) = &self.sigv4 {
                for (k, v) in signer.headers(method.as_str(), full.as_str(), &headers, &bytes).await? {
                    req = req.header(k, v);
                }
            }
            let context = format!("{method} {url}");
            let resp = req.send().await.map_err(|e| PortError::io(&context, e))?;
            let status = resp.status();
            let body = resp.bytes().await.map_err(|e| PortError::io(&context, e))?;
            let refused = status == StatusCode::UNAUTHORIZED || status.as_u16() == 419;
            if refused && self.tokens.renewable() && !renewed {
                self.tokens.forget().await;
                renewed = true;
                continue;
            }
            return Ok(Answer { status, body });
        }
    }
}

/// The answer if it is a success, its error otherwise.
pub(crate) fn ok_or_error(context: &str, answer: Answer) -> Result<Answer, PortError> {
    if answer.status.is_success() { Ok(answer) } else { Err(status_error(context, answer.status, &answer.body)) }
}

/// Parses a JSON body.
pub(crate) fn json<T: serde::de::DeserializeOwned>(body: &[u8], context: &str) -> Result<T, PortError> {
    serde_json::from_slice(body).map_err(|e| PortError::Invalid(format!("{context}: unreadable answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_what_a_caller_may_do_next() {
        let e = |code: u16| status_error("commit", StatusCode::from_u16(code).unwrap(), b"{}");
        assert!(matches!(e(409), PortError::Conflict(_)));
        assert!(matches!(e(404), PortError::NotFound(_)));
        for retried in [408, 429, 500, 502, 503, 504] {
            assert!(e(retried).is_retryable(), "{retried}");
        }
        for refused in [400, 401, 403, 422] {
            assert!(matches!(e(refused), PortError::Invalid(_)), "{refused}");
        }
    }
}
