//! AWS adapters (feature `aws`): S3 object store, SQS queue, DynamoDB, Glue or S3 Tables table pointer,
//! and DynamoDB lock and ledger. Every client is built once from one `SdkConfig` with a single TLS stack
//! (rustls + ring); the standard `AWS_ENDPOINT_URL` points them all at LocalStack or moto, and
//! S3 then uses path-style addressing. No SDK type leaves this module: errors become
//! `PortError`s here.

mod dynamodb_ledger;
mod dynamodb_lock;
mod dynamodb_table_pointer;
pub mod emf;
mod error;
mod glue_table_pointer;
mod s3_object_store;
mod s3tables_table_pointer;
pub mod secrets;
mod sqs_queue;

use std::sync::Arc;

pub use dynamodb_ledger::{DynamoDbLedger, MARKS_IN_FLIGHT};
pub use dynamodb_lock::DynamoDbLock;
pub use dynamodb_table_pointer::DynamoDbTablePointer;
pub use glue_table_pointer::GlueTablePointer;
pub use s3_object_store::{S3ObjectStore, split_s3_uri};
pub use s3tables_table_pointer::S3TablesPointer;
pub use sqs_queue::{CLAIM_CHECK_THRESHOLD, SENT_FOR_ATTRIBUTE, SqsQueue};

use crate::ports::{NoopMetrics, ObjectStore, Ports, RetryPolicy, TablePointer};
use crate::{Error, PortError, Result};

/// Which catalog holds the table pointers (`FLOE_CATALOG`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Catalog {
    /// A DynamoDB table in Iceberg Java's `DynamoDbCatalog` layout (`FLOE_CATALOG_TABLE`).
    #[default]
    DynamoDb,
    /// The AWS Glue Data Catalog of this account, or of `catalog_id` (`FLOE_GLUE_CATALOG_ID`).
    Glue {
        /// Another account's catalog, for cross-account set-ups.
        catalog_id: Option<String>,
        /// Keep an archived Glue table version per commit (`FLOE_GLUE_SKIP_ARCHIVE=false`; by
        /// default the archive is skipped, as Iceberg Java does).
        keep_archive: bool,
    },
    /// An Amazon S3 table bucket (`FLOE_S3TABLES_BUCKET_ARN`): namespaces and tables are
    /// created in it on first sight, each table's files live where S3 Tables puts them.
    S3Tables {
        /// `arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME`.
        bucket_arn: String,
    },
    /// An Iceberg REST catalog (`FLOE_REST_URI` and the other `FLOE_REST_*` settings): the
    /// catalog writes metadata.json, Floe sends each commit as changes.
    Rest(crate::adapters::rest::RestSettings),
}

impl Catalog {
    /// Parses `FLOE_CATALOG` (`dynamodb`, the default, `glue`, `s3tables` or `rest`), with
    /// `FLOE_GLUE_CATALOG_ID` and `FLOE_GLUE_SKIP_ARCHIVE` (`true`, the default, or `false`) for
    /// Glue, `FLOE_S3TABLES_BUCKET_ARN` for S3 Tables and `FLOE_REST_*` for a REST catalog
    /// ([`RestSettings::parse`](crate::adapters::rest::RestSettings::parse)), read through `var`.
    pub fn parse(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let vars = crate::settings::Vars::new(&var);
        let keep_archive = !vars.flag("FLOE_GLUE_SKIP_ARCHIVE", true)?;
        match vars.get("FLOE_CATALOG").unwrap_or_else(|| "dynamodb".into()).to_ascii_lowercase().as_str() {
            "dynamodb" => Ok(Catalog::DynamoDb),
            "rest" => Ok(Catalog::Rest(crate::adapters::rest::RestSettings::parse(&var)?)),
            "glue" => Ok(Catalog::Glue { catalog_id: vars.get("FLOE_GLUE_CATALOG_ID"), keep_archive }),
            "s3tables" => match vars.get("FLOE_S3TABLES_BUCKET_ARN") {
                Some(arn) if arn.starts_with("arn:") && arn.contains(":s3tables:") && arn.contains(":bucket/") => {
                    Ok(Catalog::S3Tables { bucket_arn: arn })
                }
                Some(arn) => Err(Error::Config(format!(
                    "FLOE_S3TABLES_BUCKET_ARN must be a table bucket ARN (arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME), \
                     got `{arn}`"
                ))),
                None => Err(Error::Config(
                    "FLOE_CATALOG=s3tables needs FLOE_S3TABLES_BUCKET_ARN (the table bucket's ARN)".into(),
                )),
            },
            other => Err(Error::Config(format!(
                "FLOE_CATALOG must be `dynamodb`, `glue`, `s3tables` or `rest`, got `{other}`"
            ))),
        }
    }
}

/// Where the AWS adapters point. Binaries fill it from the environment ([`AwsSettings::from_lookup`]).
#[derive(Debug, Clone, Default)]
pub struct AwsSettings {
    /// A custom endpoint (LocalStack, moto): `AWS_ENDPOINT_URL`. Also switches S3 to path-style.
    pub endpoint_url: Option<String>,
    /// Where table pointers live.
    pub catalog: Catalog,
    /// DynamoDB table of the catalog (Iceberg Java `DynamoDbCatalog` layout).
    pub catalog_table: String,
    /// DynamoDB table of the committer lock (Iceberg Java `DynamoDbLockManager` layout).
    pub lock_table: String,
    /// DynamoDB table of the ledger and quarantine.
    pub ledger_table: String,
    /// SQS URL of the commit queue.
    pub commit_queue_url: String,
    /// `FLOE_WAREHOUSE`: `s3://bucket/prefix` under which table locations live.
    pub warehouse: String,
    /// S3 prefix for manifests too large for one SQS message (claim checks).
    pub claim_check_prefix: String,
    /// Whether to create the DynamoDB tables at cold start if they are missing
    /// (`FLOE_CREATE_DYNAMODB_TABLES`, default `true`). A deployment that manages them (the
    /// Terraform module) sets `false`: the functions then neither describe nor create tables,
    /// and their roles need no such permission.
    pub create_dynamodb_tables: bool,
    /// SQS URL of the writers' (ingest) queue: `FLOE_INGEST_QUEUE_URL`. The committer sends
    /// the sources of an overlapping manifest back there, so it requires it
    /// ([`AwsSettings::ingest_queue`]).
    pub ingest_queue_url: Option<String>,
    /// How long committed and quarantine ledger records live (`FLOE_LEDGER_TTL_DAYS`, whole
    /// days; unset: forever). It must outlive every resend of the same object: the Terraform
    /// module sets it past the landing bucket's expiry.
    pub ledger_ttl: Option<std::time::Duration>,
    /// Ledger lookups read eventually consistent items (not from the environment: the writer's
    /// cold start sets it, [`writer_cold_start`]; see
    /// [`DynamoDbLedger::with_eventually_consistent_lookups`]).
    pub eventually_consistent_lookups: bool,
}

/// Default DynamoDB catalog table (as Iceberg Java's `DynamoDbCatalog`).
pub const DEFAULT_CATALOG_TABLE: &str = "iceberg";
/// Default DynamoDB lock table.
pub const DEFAULT_LOCK_TABLE: &str = "floe_locks";
/// Default DynamoDB ledger table.
pub const DEFAULT_LEDGER_TABLE: &str = "floe_ledger";

impl AwsSettings {
    /// Reads `AWS_ENDPOINT_URL`, `FLOE_CATALOG`, `FLOE_GLUE_CATALOG_ID`, `FLOE_GLUE_SKIP_ARCHIVE`,
    /// `FLOE_CATALOG_TABLE`, `FLOE_LOCK_TABLE`, `FLOE_LEDGER_TABLE`, `FLOE_COMMIT_QUEUE_URL`,
    /// `FLOE_INGEST_QUEUE_URL`, `FLOE_CREATE_DYNAMODB_TABLES`, `FLOE_LEDGER_TTL_DAYS` and `FLOE_WAREHOUSE`
    /// (claim checks go under `<FLOE_WAREHOUSE>/_floe/claims`), through `var` (binaries pass
    /// [`settings::env`](crate::settings::env)).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let vars = crate::settings::Vars::new(&var);
        let warehouse = vars.get("FLOE_WAREHOUSE").unwrap_or_default();
        let named = |k: &str, default: &str| vars.get(k).unwrap_or_else(|| default.into());
        Ok(AwsSettings {
            endpoint_url: vars.get("AWS_ENDPOINT_URL"),
            catalog: Catalog::parse(&var)?,
            ingest_queue_url: vars.get("FLOE_INGEST_QUEUE_URL"),
            ledger_ttl: vars.days("FLOE_LEDGER_TTL_DAYS")?,
            eventually_consistent_lookups: false,
            create_dynamodb_tables: vars.flag("FLOE_CREATE_DYNAMODB_TABLES", true)?,
            catalog_table: named("FLOE_CATALOG_TABLE", DEFAULT_CATALOG_TABLE),
            lock_table: named("FLOE_LOCK_TABLE", DEFAULT_LOCK_TABLE),
            ledger_table: named("FLOE_LEDGER_TABLE", DEFAULT_LEDGER_TABLE),
            commit_queue_url: vars.get("FLOE_COMMIT_QUEUE_URL").unwrap_or_default(),
            claim_check_prefix: format!("{}/_floe/claims", warehouse.trim_end_matches('/')),
            warehouse: warehouse.trim_end_matches('/').to_string(),
        })
    }
}

impl AwsSettings {
    /// The ingest queue's URL, which the committer cannot do without: an overlapping manifest's
    /// sources go back there to be written again, and without it they could only fail forever.
    pub fn ingest_queue(&self) -> Result<&str> {
        self.ingest_queue_url.as_deref().ok_or_else(|| {
            Error::Config(
                "FLOE_INGEST_QUEUE_URL is not set: the committer sends the sources of an overlapping \
                 manifest back to the writers' queue"
                    .into(),
            )
        })
    }
}

/// SDK clients, built once per process (a Lambda cold start).
#[derive(Debug, Clone)]
pub struct Clients {
    /// S3.
    pub s3: aws_sdk_s3::Client,
    /// SQS.
    pub sqs: aws_sdk_sqs::Client,
    /// DynamoDB.
    pub dynamodb: aws_sdk_dynamodb::Client,
    /// Glue.
    pub glue: aws_sdk_glue::Client,
    /// S3 Tables.
    pub s3tables: aws_sdk_s3tables::Client,
    /// The configuration they were built from (for other clients, e.g. CloudWatch in `floe status --aws`).
    pub sdk: aws_config::SdkConfig,
}

impl Clients {
    /// Loads credentials and region the standard way and builds every client.
    pub async fn load(settings: &AwsSettings) -> Self {
        let http = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http).load().await;
        let s3_conf = aws_sdk_s3::config::Builder::from(&sdk).force_path_style(settings.endpoint_url.is_some()).build();
        Clients {
            s3: aws_sdk_s3::Client::from_conf(s3_conf),
            sqs: aws_sdk_sqs::Client::new(&sdk),
            dynamodb: aws_sdk_dynamodb::Client::new(&sdk),
            glue: aws_sdk_glue::Client::new(&sdk),
            s3tables: aws_sdk_s3tables::Client::new(&sdk),
            sdk,
        }
    }
}

/// What every function builds once per cold start.
#[derive(Debug, Clone)]
pub struct ColdStart {
    /// Settings read from the environment.
    pub settings: AwsSettings,
    /// SDK clients.
    pub clients: Clients,
    /// The ports over them.
    pub ports: Ports,
}

/// A function's cold start: telemetry, settings from the environment, clients, ports. A
/// configuration error comes back as its message, which stops the cold start.
pub async fn cold_start(var: impl Fn(&str) -> Option<String>) -> std::result::Result<ColdStart, String> {
    crate::telemetry::init_lambda();
    start(&var, false).await
}

/// The writer's cold start: as [`cold_start`], with ledger lookups that read eventually
/// consistent items (half the read units: the writer's lookup only spares it work, and the
/// committer, which reads consistently, drops what a stale answer lets through).
pub async fn writer_cold_start(var: impl Fn(&str) -> Option<String>) -> std::result::Result<ColdStart, String> {
    crate::telemetry::init_lambda();
    start(&var, true).await
}

/// The settings read through `var`, with the secrets they name by ARN read
/// ([`secrets::resolve`]), the clients, and the ports.
async fn start(var: &impl Fn(&str) -> Option<String>, eventual: bool) -> std::result::Result<ColdStart, String> {
    let settings = AwsSettings::from_lookup(var).map_err(|e| e.to_string())?;
    let clients = Clients::load(&settings).await;
    let secret = secrets::resolve(&clients.sdk, var).await.map_err(|e| e.to_string())?;
    let settings = if secret.is_empty() {
        settings
    } else {
        AwsSettings::from_lookup(|k| secret.get(k).cloned().or_else(|| var(k))).map_err(|e| e.to_string())?
    };
    let settings = AwsSettings { eventually_consistent_lookups: eventual, ..settings };
    let ports = connect_with(&settings, &clients).await.map_err(|e| e.to_string())?;
    Ok(ColdStart { settings, clients, ports })
}

/// Builds the ports on AWS with fresh clients; see [`connect_with`].
pub async fn connect(settings: &AwsSettings) -> Result<Ports> {
    connect_with(settings, &Clients::load(settings).await).await
}

/// Builds the ports on AWS from `clients`, creating the DynamoDB tables the roles need if they
/// are missing (as Iceberg Java's DynamoDB catalog and lock manager do), unless
/// `create_dynamodb_tables` is off.
pub async fn connect_with(settings: &AwsSettings, clients: &Clients) -> Result<Ports> {
    if settings.commit_queue_url.is_empty() {
        return Err(Error::Config("FLOE_COMMIT_QUEUE_URL is not set".into()));
    }
    let store: Arc<dyn ObjectStore> = Arc::new(S3ObjectStore::new(clients.s3.clone()));
    let pointer: Arc<dyn TablePointer> = match &settings.catalog {
        Catalog::DynamoDb => {
            let pointer = DynamoDbTablePointer::new(clients.dynamodb.clone(), &settings.catalog_table);
            if settings.create_dynamodb_tables {
                pointer.ensure_table().await?;
            }
            Arc::new(pointer)
        }
        Catalog::Glue { catalog_id, keep_archive } => {
            Arc::new(GlueTablePointer::new(clients.glue.clone(), catalog_id.clone()).keep_archive(*keep_archive))
        }
        Catalog::S3Tables { bucket_arn } => Arc::new(S3TablesPointer::new(clients.s3tables.clone(), bucket_arn)),
        Catalog::Rest(rest) => Arc::new(crate::adapters::rest::RestCatalog::new(rest)?),
    };
    let lock = DynamoDbLock::new(clients.dynamodb.clone(), &settings.lock_table);
    let mut ledger =
        DynamoDbLedger::new(clients.dynamodb.clone(), &settings.ledger_table).with_ttl(settings.ledger_ttl);
    if settings.eventually_consistent_lookups {
        ledger = ledger.with_eventually_consistent_lookups();
    }
    if settings.create_dynamodb_tables {
        lock.ensure_table().await?;
        ledger.ensure_table().await?;
    }
    let queue = SqsQueue::new(clients.sqs.clone(), &settings.commit_queue_url)
        .with_claim_check(store.clone(), &settings.claim_check_prefix);
    let ports = Ports {
        store,
        commit_queue: Arc::new(queue),
        pointer,
        ledger: Arc::new(ledger),
        lock: Arc::new(lock),
        metrics: Arc::new(NoopMetrics),
        faults: crate::fault::Faults::default(),
    };
    // The SDK retries throttling a few times itself; this covers longer bursts and the
    // errors it does not retry (timeouts after a request was sent, dropped connections).
    Ok(ports.retrying(RetryPolicy::default()))
}

/// Creates a DynamoDB table with a string hash key (and optional string range key) if missing,
/// on demand capacity, and waits until it is active.
pub(crate) async fn ensure_dynamodb_table(
    client: &aws_sdk_dynamodb::Client,
    name: &str,
    hash: &str,
    range: Option<&str>,
    gsi: Option<(&str, &str, &str)>,
) -> Result<(), PortError> {
    use aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection, ProjectionType,
        ScalarAttributeType, TableStatus,
    };
    if client.describe_table().table_name(name).send().await.is_ok() {
        return Ok(());
    }
    let attr =
        |n: &str| AttributeDefinition::builder().attribute_name(n).attribute_type(ScalarAttributeType::S).build();
    let key = |n: &str, t: KeyType| KeySchemaElement::builder().attribute_name(n).key_type(t).build();
    let mut req = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(hash).map_err(error::build)?)
        .key_schema(key(hash, KeyType::Hash).map_err(error::build)?);
    if let Some(r) = range {
        req = req
            .attribute_definitions(attr(r).map_err(error::build)?)
            .key_schema(key(r, KeyType::Range).map_err(error::build)?);
    }
    if let Some((index, h, r)) = gsi {
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(index)
                .key_schema(key(h, KeyType::Hash).map_err(error::build)?)
                .key_schema(key(r, KeyType::Range).map_err(error::build)?)
                .projection(Projection::builder().projection_type(ProjectionType::KeysOnly).build())
                .build()
                .map_err(error::build)?,
        );
    }
    match req.send().await {
        Ok(_) => {}
        Err(e) if error::code(&e) == Some("ResourceInUseException") => {} // created concurrently
        Err(e) => return Err(error::map(format!("create DynamoDB table {name}"), e)),
    }
    for _ in 0..120 {
        let d = client.describe_table().table_name(name).send().await.map_err(|e| error::map("describe table", e))?;
        if d.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    Err(PortError::Throttled(format!("DynamoDB table {name} did not become active")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_ledger_ttl_is_whole_days_of_at_least_one() {
        let day = std::time::Duration::from_secs(86_400);
        let ttl = |v: &str| {
            let v = v.to_string();
            AwsSettings::from_lookup(move |k| (k == "FLOE_LEDGER_TTL_DAYS").then(|| v.clone())).map(|s| s.ledger_ttl)
        };
        assert_eq!(ttl("").unwrap(), None, "unset");
        assert_eq!(ttl(" 45 ").unwrap(), Some(day * 45));
        for bad in ["0", "-1", "1.5", "30d"] {
            let err = ttl(bad).unwrap_err().to_string();
            assert!(err.contains("FLOE_LEDGER_TTL_DAYS") && err.contains(&format!("`{bad}`")), "{err}");
        }
    }

    use super::*;

    #[test]
    fn glue_skips_its_version_archive_unless_told_otherwise() {
        let glue = |skip: Option<&str>| {
            let skip = skip.map(str::to_string);
            Catalog::parse(|k| match k {
                "FLOE_CATALOG" => Some("glue".into()),
                "FLOE_GLUE_SKIP_ARCHIVE" => skip.clone(),
                _ => None,
            })
        };
        assert_eq!(glue(None).unwrap(), Catalog::Glue { catalog_id: None, keep_archive: false });
        assert_eq!(glue(Some("true")).unwrap(), Catalog::Glue { catalog_id: None, keep_archive: false });
        assert_eq!(glue(Some("FALSE")).unwrap(), Catalog::Glue { catalog_id: None, keep_archive: true });
        let bad = glue(Some("sometimes")).unwrap_err().to_string();
        assert!(bad.contains("FLOE_GLUE_SKIP_ARCHIVE") && bad.contains("sometimes"), "{bad}");
    }

    #[test]
    fn s3_tables_needs_a_table_bucket_arn() {
        let s3tables = |arn: Option<&str>| {
            let arn = arn.map(str::to_string);
            Catalog::parse(|k| match k {
                "FLOE_CATALOG" => Some("S3Tables".into()),
                "FLOE_S3TABLES_BUCKET_ARN" => arn.clone(),
                _ => None,
            })
        };
        let arn = "arn:aws:s3tables:eu-west-1:123456789012:bucket/lake";
        assert_eq!(s3tables(Some(arn)).unwrap(), Catalog::S3Tables { bucket_arn: arn.into() });
        let missing = s3tables(None).unwrap_err().to_string();
        assert!(missing.contains("FLOE_S3TABLES_BUCKET_ARN"), "{missing}");
        let wrong = s3tables(Some("arn:aws:s3:::lake")).unwrap_err().to_string();
        assert!(wrong.contains("table bucket ARN") && wrong.contains("arn:aws:s3:::lake"), "{wrong}");
        let other = Catalog::parse(|k| (k == "FLOE_CATALOG").then(|| "hive".to_string())).unwrap_err().to_string();
        assert!(other.contains("s3tables") && other.contains("hive"), "{other}");
    }

    #[test]
    fn the_committer_requires_the_ingest_queue() {
        let missing = AwsSettings::default().ingest_queue().unwrap_err().to_string();
        assert!(missing.contains("FLOE_INGEST_QUEUE_URL"), "{missing}");
        let set = AwsSettings { ingest_queue_url: Some("https://sqs/q".into()), ..AwsSettings::default() };
        assert_eq!(set.ingest_queue().unwrap(), "https://sqs/q");
    }
}
