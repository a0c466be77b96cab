//! `TablePointer` on an Iceberg REST catalog (Polaris, Nessie, Unity Catalog, Lakekeeper, ...).
//! The catalog writes each metadata.json itself, so Floe sends a commit as changes
//! ([`TablePointer::writes_metadata`]) while still writing its own manifests and manifest list:
//!
//! | REST catalog | Floe |
//! |---|---|
//! | `GET /v1/config` (once, on first use) | the path prefix, and whether `Idempotency-Key` is honoured |
//! | `GET .../namespaces/{ns}/tables/{t}` | `load`: the current `metadata-location` |
//! | `POST .../namespaces` then `.../namespaces/{ns}/register` | `create`: the table's first metadata.json, written by Floe |
//! | `POST .../namespaces/{ns}/tables/{t}` (`updateTable`) | `commit`: requirements `assert-table-uuid`, `assert-ref-snapshot-id` (main); updates `add-snapshot`, `set-snapshot-ref`, `remove-snapshots`, and schema, spec, property and statistics changes ([`changes`]) |
//!
//! A 409 is a lost race unless the table, read back, holds the commit already (an earlier
//! try whose answer was lost). A 5xx or a timeout leaves the outcome unknown: the table is
//! read back the same way, and if the commit is not there (or the read-back fails too) the
//! error goes up, for the port's retries and, past them, the ledger's pending records to
//! settle. The `Idempotency-Key` is derived from the planned commit, so the port's retries of
//! one plan send the same key (a catalog that advertises support then answers a retry of a
//! commit that landed with the stored answer); a re-plan is a new commit with a new key.

mod auth;
mod changes;
mod http;
#[cfg(feature = "aws")]
mod sigv4;
mod status;

use async_trait::async_trait;
use iceberg::spec::TableMetadata;
use reqwest::Method;
use sha2::Digest;

pub use auth::RestAuth;
use http::{Http, json, ok_or_error};
use status::status_error;

use crate::ports::{Committed, Pointer, TableIdent, TablePointer};
use crate::{Error, PortError, Result};

/// Where the REST catalog is and how to sign in to it (`FLOE_REST_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestSettings {
    /// The catalog's base URI, before `/v1` (`FLOE_REST_URI`).
    pub uri: String,
    /// The warehouse to ask the catalog's configuration for (`FLOE_REST_WAREHOUSE`).
    pub warehouse: Option<String>,
    /// Credentials.
    pub auth: RestAuth,
}

impl RestSettings {
    /// Reads `FLOE_REST_URI` (required), `FLOE_REST_WAREHOUSE`, and at most one of
    /// `FLOE_REST_TOKEN` (a bearer token), `FLOE_REST_CREDENTIAL` (`CLIENT_ID:CLIENT_SECRET`
    /// for OAuth2 client credentials, with `FLOE_REST_OAUTH2_SERVER_URI` and `FLOE_REST_SCOPE`)
    /// and `FLOE_REST_SIGV4=true` (AWS SigV4, with `FLOE_REST_SIGNING_REGION` and
    /// `FLOE_REST_SIGNING_NAME`), through `var`.
    pub fn parse(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let vars = crate::settings::Vars::new(&var);
        let var = |k: &str| vars.get(k);
        let uri = var("FLOE_REST_URI").ok_or_else(|| {
            Error::Config("the REST catalog needs FLOE_REST_URI (its base URI, e.g. http://localhost:8181)".into())
        })?;
        let uri = uri.trim().trim_end_matches('/').to_string();
        if !(uri.starts_with("http://") || uri.starts_with("https://")) || uri.len() < "http://x".len() {
            return Err(Error::Config(format!("FLOE_REST_URI must be an http:// or https:// URI, got `{uri}`")));
        }
        let sigv4 = vars.flag("FLOE_REST_SIGV4", false)?;
        let auth = match (var("FLOE_REST_TOKEN"), var("FLOE_REST_CREDENTIAL")) {
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "set FLOE_REST_TOKEN or FLOE_REST_CREDENTIAL for the REST catalog, not both".into(),
                ));
            }
            (Some(_), None) | (None, Some(_)) if sigv4 => {
                return Err(Error::Config(
                    "FLOE_REST_SIGV4=true signs with AWS credentials: unset FLOE_REST_TOKEN and FLOE_REST_CREDENTIAL"
                        .into(),
                ));
            }
            (None, None) if sigv4 => sigv4_auth(&var)?,
            (Some(token), None) => RestAuth::Token(token.trim().to_string()),
            (None, Some(credential)) => {
                let (id, secret) = credential
                    .split_once(':')
                    .filter(|(i, s)| !i.is_empty() && !s.is_empty())
                    .ok_or_else(|| Error::Config("FLOE_REST_CREDENTIAL must be CLIENT_ID:CLIENT_SECRET".into()))?;
                RestAuth::ClientCredentials {
                    client_id: id.to_string(),
                    client_secret: secret.to_string(),
                    token_uri: var("FLOE_REST_OAUTH2_SERVER_URI").unwrap_or_else(|| format!("{uri}/v1/oauth/tokens")),
                    scope: var("FLOE_REST_SCOPE").unwrap_or_else(|| "catalog".into()),
                }
            }
            (None, None) => RestAuth::None,
        };
        // A token, a credential or the tables' metadata in the clear: only where asked for.
        if !vars.flag("FLOE_REST_ALLOW_HTTP", false)? {
            let token_uri = match &auth {
                RestAuth::ClientCredentials { token_uri, .. } => Some(token_uri.as_str()),
                _ => None,
            };
            for (name, u) in [("FLOE_REST_URI", Some(uri.as_str())), ("FLOE_REST_OAUTH2_SERVER_URI", token_uri)] {
                if let Some(u) = u.filter(|u| u.starts_with("http://")) {
                    return Err(Error::Config(format!(
                        "{name} is `{u}`: over http:// the catalog's token, credential and metadata travel in the clear; \
                         use https://, or set FLOE_REST_ALLOW_HTTP=true for a catalog on a network you trust (a local test)"
                    )));
                }
            }
        }
        Ok(RestSettings { uri, warehouse: var("FLOE_REST_WAREHOUSE"), auth })
    }
}

/// `FLOE_REST_SIGNING_REGION` (or `AWS_REGION`, `AWS_DEFAULT_REGION`) and
/// `FLOE_REST_SIGNING_NAME` (`glue` by default).
fn sigv4_auth(var: &impl Fn(&str) -> Option<String>) -> Result<RestAuth> {
    if cfg!(not(feature = "aws")) {
        return Err(Error::Config("FLOE_REST_SIGV4 needs a build with the `aws` feature".into()));
    }
    let region = ["FLOE_REST_SIGNING_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"]
        .iter()
        .find_map(|k| var(k))
        .ok_or_else(|| Error::Config("FLOE_REST_SIGV4=true needs FLOE_REST_SIGNING_REGION or AWS_REGION".into()))?;
    let service = var("FLOE_REST_SIGNING_NAME").unwrap_or_else(|| "glue".into());
    Ok(RestAuth::SigV4 { region, service })
}

/// The tables of one Iceberg REST catalog.
pub struct RestCatalog {
    http: Http,
}

impl std::fmt::Debug for RestCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RestCatalog")
    }
}

impl RestCatalog {
    /// A catalog client; nothing is sent before the first call.
    pub fn new(settings: &RestSettings) -> Result<Self> {
        Ok(RestCatalog { http: Http::new(&settings.uri, settings.warehouse.clone(), settings.auth.clone())? })
    }

    async fn table_url(&self, t: &TableIdent) -> Result<String, PortError> {
        self.http.url(&format!("namespaces/{}/tables/{}", t.namespace, t.name)).await
    }

    /// The table's current metadata location and metadata, as the catalog serves them.
    async fn read(&self, t: &TableIdent) -> Result<Option<(Pointer, Option<TableMetadata>)>, PortError> {
        let url = self.table_url(t).await?;
        let answer = self.http.call(Method::GET, &url, &[], None, None).await?;
        if answer.status.as_u16() == 404 {
            return Ok(None);
        }
        let answer = ok_or_error(&format!("REST catalog table {t}"), answer)?;
        let v: serde_json::Value = json(&answer.body, &format!("REST catalog table {t}"))?;
        let location = v
            .get("metadata-location")
            .and_then(|l| l.as_str())
            .ok_or_else(|| PortError::Invalid(format!("REST catalog table {t}: no metadata-location in the answer")))?;
        let metadata = v.get("metadata").and_then(|m| serde_json::from_value(m.clone()).ok());
        Ok(Some((pointer(location), metadata)))
    }

    /// Creates the namespace if it does not exist (looked for first: a principal may use a
    /// namespace without the right to create one).
    async fn ensure_namespace(&self, namespace: &str) -> Result<(), PortError> {
        let there = self.http.url(&format!("namespaces/{namespace}")).await?;
        if self.http.call(Method::HEAD, &there, &[], None, None).await?.status.is_success() {
            return Ok(());
        }
        let url = self.http.url("namespaces").await?;
        let body = serde_json::json!({ "namespace": [namespace], "properties": {} });
        let answer = self.http.call(Method::POST, &url, &[], Some(&body), None).await?;
        match answer.status.as_u16() {
            200..=299 | 409 => Ok(()),
            _ => Err(status_error(&format!("REST catalog namespace {namespace}"), answer.status, &answer.body)),
        }
    }

    /// The table as it stands, if it holds the commit of `next` over `base`.
    async fn holds(&self, t: &TableIdent, base: &TableMetadata, next: &TableMetadata) -> Option<Committed> {
        let (pointer, now) = self.read(t).await.ok()??;
        let now = now?;
        changes::landed(base, next, &now).then_some(Committed { pointer, metadata: Some(now) })
    }
}

fn pointer(location: &str) -> Pointer {
    Pointer { metadata_location: location.to_string(), version: location.to_string() }
}

/// The same key for every try of one planned commit: a UUIDv7 stamped with the commit's time,
/// its other bits from the table, the new head snapshot and sequence number.
fn idempotency_key(next: &TableMetadata) -> String {
    let mut h = sha2::Sha256::new();
    h.update(next.uuid().as_bytes());
    h.update(next.current_snapshot_id().unwrap_or(-1).to_le_bytes());
    h.update(next.last_sequence_number().to_le_bytes());
    h.update(next.last_updated_ms().to_le_bytes());
    let digest = h.finalize();
    let mut bits = [0u8; 10];
    bits.copy_from_slice(&digest[..10]);
    uuid::Builder::from_unix_timestamp_millis(next.last_updated_ms().max(0) as u64, &bits).into_uuid().to_string()
}

#[async_trait]
impl TablePointer for RestCatalog {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        Ok(self.read(t).await?.map(|(p, _)| p))
    }

    /// Registers the table's first metadata.json (written by Floe) with the catalog.
    async fn create(&self, t: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        self.ensure_namespace(&t.namespace).await?;
        let url = self.http.url(&format!("namespaces/{}/register", t.namespace)).await?;
        let body = serde_json::json!({ "name": t.name, "metadata-location": metadata_location });
        let outcome = match self.http.call(Method::POST, &url, &[], Some(&body), None).await {
            Ok(a) => ok_or_error(&format!("REST catalog register {t}"), a),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(_) => Ok(pointer(metadata_location)),
            Err(PortError::Conflict(why)) => match self.load(t).await {
                Ok(Some(p)) if p.metadata_location == metadata_location => Ok(p),
                _ => Err(PortError::Conflict(why)),
            },
            Err(e) => match self.load(t).await {
                Ok(Some(p)) if p.metadata_location == metadata_location => Ok(p),
                _ => Err(e),
            },
        }
    }

    async fn swap(&self, t: &TableIdent, _expected: &Pointer, _new_location: &str) -> Result<Pointer, PortError> {
        Err(PortError::Invalid(format!(
            "the REST catalog of {t} writes metadata itself: a commit is sent as changes, not a metadata location"
        )))
    }

    fn writes_metadata(&self) -> bool {
        true
    }

    async fn commit(
        &self,
        t: &TableIdent,
        _expected: &Pointer,
        base: &TableMetadata,
        next: &TableMetadata,
    ) -> Result<Committed, PortError> {
        let (requirements, updates) = changes::between(base, next);
        let body = serde_json::json!({
            "identifier": { "namespace": [t.namespace], "name": t.name },
            "requirements": requirements,
            "updates": updates,
        });
        let key = self.http.config().await?.idempotent.then(|| idempotency_key(next));
        let url = self.table_url(t).await?;
        let context = format!("REST catalog commit to {t}");
        let outcome = match self.http.call(Method::POST, &url, &[], Some(&body), key.as_deref()).await {
            Ok(a) => ok_or_error(&context, a),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(a) => {
                let v: serde_json::Value = json(&a.body, &context)?;
                let location = v
                    .get("metadata-location")
                    .and_then(|l| l.as_str())
                    .ok_or_else(|| PortError::Invalid(format!("{context}: no metadata-location in the answer")))?;
                let metadata = v.get("metadata").and_then(|m| serde_json::from_value(m.clone()).ok());
                Ok(Committed { pointer: pointer(location), metadata })
            }
            // Catalogs answer 400 to a stale row range (v3: another writer advanced
            // next-row-id, on any branch): if the table moved since the plan, that is a lost race.
            Err(PortError::Invalid(why)) => match self.read(t).await {
                Ok(Some((_, Some(now)))) if changes::moved(base, &now) => {
                    Err(PortError::Conflict(format!("{why} (the table changed since the plan)")))
                }
                _ => Err(PortError::Invalid(why)),
            },
            Err(e) => match self.holds(t, base, next).await {
                Some(p) => {
                    tracing::info!(table = %t, error = %e, "commit answer lost; the table holds it");
                    Ok(p)
                }
                None => Err(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(vars: &[(&str, &str)]) -> Result<RestSettings> {
        let vars: std::collections::HashMap<String, String> =
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        RestSettings::parse(|k| vars.get(k).cloned())
    }

    #[test]
    fn settings_are_checked_before_any_call() {
        let e = settings(&[]).unwrap_err().to_string();
        assert!(e.contains("FLOE_REST_URI"), "{e}");
        let e = settings(&[("FLOE_REST_URI", "localhost:8181")]).unwrap_err().to_string();
        assert!(e.contains("http://"), "{e}");
        let both = [("FLOE_REST_URI", "http://h"), ("FLOE_REST_TOKEN", "t"), ("FLOE_REST_CREDENTIAL", "a:b")];
        assert!(settings(&both).unwrap_err().to_string().contains("not both"));
        let e = settings(&[("FLOE_REST_URI", "http://h"), ("FLOE_REST_CREDENTIAL", "nosecret")]).unwrap_err();
        assert!(e.to_string().contains("CLIENT_ID:CLIENT_SECRET"), "{e}");
        let plain = [("FLOE_REST_URI", "http://h:1/api/"), ("FLOE_REST_CREDENTIAL", "id:s:e")];
        let e = settings(&plain).unwrap_err().to_string();
        assert!(e.contains("FLOE_REST_URI is `http://h:1/api`") && e.contains("FLOE_REST_ALLOW_HTTP"), "{e}");
        let tls_catalog_plain_tokens = [
            ("FLOE_REST_URI", "https://h"),
            ("FLOE_REST_CREDENTIAL", "a:b"),
            ("FLOE_REST_OAUTH2_SERVER_URI", "http://t"),
        ];
        let e = settings(&tls_catalog_plain_tokens).unwrap_err().to_string();
        assert!(e.contains("FLOE_REST_OAUTH2_SERVER_URI is `http://t`"), "{e}");
        let s = settings(&[plain[0], plain[1], ("FLOE_REST_ALLOW_HTTP", "true")]).expect("allowed");
        assert_eq!(s.uri, "http://h:1/api");
        match s.auth {
            RestAuth::ClientCredentials { client_id, client_secret, token_uri, scope } => {
                assert_eq!((client_id.as_str(), client_secret.as_str()), ("id", "s:e"));
                assert_eq!((token_uri.as_str(), scope.as_str()), ("http://h:1/api/v1/oauth/tokens", "catalog"));
            }
            other => panic!("{other:?}"),
        }
        assert!(
            !format!("{:?}", settings(&[("FLOE_REST_URI", "https://h"), ("FLOE_REST_TOKEN", "sekrit")]))
                .contains("sekrit")
        );
        let signed = [("FLOE_REST_URI", "https://glue.eu-west-1.amazonaws.com/iceberg"), ("FLOE_REST_SIGV4", "true")];
        assert!(
            settings(&[signed[0], ("FLOE_REST_SIGV4", "maybe")]).unwrap_err().to_string().contains("`true` or `false`")
        );
        if cfg!(not(feature = "aws")) {
            // A build without AWS (e.g. `cargo test -p floe` alone) refuses SigV4 outright.
            assert!(settings(&signed).unwrap_err().to_string().contains("`aws` feature"));
            return;
        }
        assert!(settings(&signed).unwrap_err().to_string().contains("FLOE_REST_SIGNING_REGION"));
        let s = settings(&[signed[0], signed[1], ("AWS_REGION", "eu-west-1")]).expect("ok");
        assert_eq!(s.auth, RestAuth::SigV4 { region: "eu-west-1".into(), service: "glue".into() });
        let e = settings(&[signed[0], signed[1], ("AWS_REGION", "eu-west-1"), ("FLOE_REST_TOKEN", "t")]).unwrap_err();
        assert!(e.to_string().contains("unset FLOE_REST_TOKEN"), "{e}");
    }
}
