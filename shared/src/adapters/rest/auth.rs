//! How Floe authenticates to an Iceberg REST catalog: none, a fixed bearer token, OAuth2
//! client credentials (a token fetched from the token endpoint, kept until a minute before it
//! expires, fetched again when the catalog answers 401 or 419), or AWS SigV4 (`sigv4.rs`).

use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use crate::PortError;

/// The catalog's credentials, as configured.
#[derive(Clone, PartialEq, Eq)]
pub enum RestAuth {
    /// No `Authorization` header.
    None,
    /// A fixed bearer token (`FLOE_REST_TOKEN`).
    Token(String),
    /// OAuth2 client credentials (`FLOE_REST_CREDENTIAL` = `CLIENT_ID:CLIENT_SECRET`), exchanged
    /// at `token_uri` for a bearer token with `scope`.
    ClientCredentials {
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: String,
        /// The token endpoint (`FLOE_REST_OAUTH2_SERVER_URI`, default `<uri>/v1/oauth/tokens`).
        token_uri: String,
        /// The scope asked for (`FLOE_REST_SCOPE`, default `catalog`).
        scope: String,
    },
    /// AWS SigV4 signatures with the standard AWS credentials (`FLOE_REST_SIGV4=true`), for
    /// AWS's Iceberg REST endpoints.
    SigV4 {
        /// The region signed for (`FLOE_REST_SIGNING_REGION`, default `AWS_REGION`).
        region: String,
        /// The signing name (`FLOE_REST_SIGNING_NAME`: `glue`, the default, or `s3tables`).
        service: String,
    },
}

impl std::fmt::Debug for RestAuth {
    /// Never prints a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RestAuth::None => f.write_str("None"),
            RestAuth::Token(_) => f.write_str("Token(..)"),
            RestAuth::ClientCredentials { client_id, token_uri, scope, .. } => f
                .debug_struct("ClientCredentials")
                .field("client_id", client_id)
                .field("token_uri", token_uri)
                .field("scope", scope)
                .finish_non_exhaustive(),
            RestAuth::SigV4 { region, service } => write!(f, "SigV4({service}, {region})"),
        }
    }
}

/// A token fetched with client credentials, and when to stop using it.
struct Fetched {
    token: String,
    good_until: Instant,
}

/// Bearer tokens for requests, fetched and renewed as `auth` says.
pub(crate) struct Tokens {
    auth: RestAuth,
    fetched: Mutex<Option<Fetched>>,
}

#[derive(serde::Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl Tokens {
    pub(crate) fn new(auth: RestAuth) -> Self {
        Tokens { auth, fetched: Mutex::new(None) }
    }

    /// Whether a 401 may be cured by fetching a new token.
    pub(crate) fn renewable(&self) -> bool {
        matches!(self.auth, RestAuth::ClientCredentials { .. })
    }

    /// Forgets a fetched token (the catalog refused it).
    pub(crate) async fn forget(&self) {
        *self.fetched.lock().await = None;
    }

    /// The token to send, if any.
    pub(crate) async fn bearer(&self, http: &reqwest::Client) -> Result<Option<String>, PortError> {
        let (client_id, client_secret, token_uri, scope) = match &self.auth {
            RestAuth::None | RestAuth::SigV4 { .. } => return Ok(None),
            RestAuth::Token(t) => return Ok(Some(t.clone())),
            RestAuth::ClientCredentials { client_id, client_secret, token_uri, scope } => {
                (client_id, client_secret, token_uri, scope)
            }
        };
        let mut fetched = self.fetched.lock().await;
        if let Some(f) = fetched.as_ref().filter(|f| Instant::now() < f.good_until) {
            return Ok(Some(f.token.clone()));
        }
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", client_id.as_str()),
            ("client_secret", client_secret.as_str()),
            ("scope", scope.as_str()),
        ];
        let context = format!("OAuth2 token from {token_uri}");
        let resp = http.post(token_uri).form(&form).send().await.map_err(|e| PortError::io(&context, e))?;
        let status = resp.status();
        let body = resp.bytes().await.map_err(|e| PortError::io(&context, e))?;
        if !status.is_success() {
            return Err(super::status::status_error(&context, status, &body));
        }
        let answer: TokenResponse = serde_json::from_slice(&body)
            .map_err(|e| PortError::Invalid(format!("{context}: not a token response: {e}")))?;
        let life = Duration::from_secs(answer.expires_in.unwrap_or(3600));
        let good_until = Instant::now() + life.saturating_sub(Duration::from_secs(60)).max(life / 2);
        *fetched = Some(Fetched { token: answer.access_token.clone(), good_until });
        Ok(Some(answer.access_token))
    }
}
