//! Conditional creation of a table on first sight of data for it.
//!
//! The first metadata.json is written under a fresh name and registered with the catalog's
//! create-if-absent; if another process won the race, its table is loaded instead and this
//! attempt's metadata file is deleted. Creation is the one metadata write outside the
//! committer, and it is safe for the same reason commits are: the catalog's conditional write.

use bytes::Bytes;
use tracing::info;

use crate::config::{EngineConfig, TableConfig, join_terms};
use crate::convert::{avro, schema};
use crate::ports::{ObjectMeta, Ports};
use crate::table::{
    PROP_DEDUP_KEY, TableState, create_table_metadata, load_table, metadata_file_uri, partition_spec_text,
    sort_order_text, table_location,
};
use crate::{Error, PortError, Rejection, Result};

/// Loads `cfg.table`, creating it from the schema of the first readable object if it is
/// missing. Objects whose header cannot be read are skipped here (the writer quarantines them).
/// Returns the state and whether this call created the table.
pub async fn ensure_table(
    ports: &Ports,
    engine: &EngineConfig,
    cfg: &TableConfig,
    warehouse: &str,
    objects: &[ObjectMeta],
) -> Result<(TableState, bool)> {
    if let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table).await? {
        check_settings(&state, cfg)?;
        return Ok((state, false));
    }
    let mut refused: Vec<(ObjectMeta, Rejection)> = vec![];
    for obj in objects {
        if obj.size == 0 {
            refused.push((obj.clone(), Rejection::new("empty", "zero-byte object")));
            continue;
        }
        if obj.size > engine.max_object_bytes {
            let why = format!("{} bytes is over the limit of {}", obj.size, engine.max_object_bytes);
            refused.push((obj.clone(), Rejection::new("too-large", why)));
            continue;
        }
        // The notified version only: one gone since cannot define the table (nor land in it).
        let Some(bytes) = ports.store.get_version(obj).await? else {
            refused.push((obj.clone(), super::write::superseded(obj)));
            continue;
        };
        let info = match avro::inspect(&bytes) {
            Ok(i) => i,
            Err(r) => {
                refused.push((obj.clone(), r));
                continue;
            }
        };
        let iceberg_schema =
            match schema::parse_avro_schema(&info.schema_json).and_then(|s| schema::avro_to_iceberg(&s)) {
                Ok(s) => s,
                Err(e) => {
                    refused.push((obj.clone(), Rejection::new("schema", e.to_string())));
                    continue;
                }
            };
        let location = table_location(warehouse, &cfg.table);
        let metadata = create_table_metadata(iceberg_schema, cfg, &location)?;
        let meta_uri = metadata_file_uri(&location, 0);
        ports.store.put_if_absent(&meta_uri, Bytes::from(serde_json::to_vec(&metadata)?)).await?;
        return match ports.pointer.create(&cfg.table, &meta_uri).await {
            Ok(_) => {
                info!(table = %cfg.table, schema_from = %obj.uri, "table created");
                let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table).await?;
                Ok((state.ok_or_else(|| Error::NoSuchTable(cfg.table.to_string()))?, true))
            }
            Err(PortError::Conflict(_)) => {
                // Created concurrently, or by our own earlier attempt whose answer was lost.
                let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table)
                    .await?
                    .ok_or_else(|| Error::NoSuchTable(cfg.table.to_string()))?;
                let ours = state.pointer.metadata_location == meta_uri;
                if !ours {
                    let _ = ports.store.delete(&meta_uri).await;
                }
                Ok((state, ours))
            }
            Err(e) => Err(e.into()),
        };
    }
    if refused.is_empty() {
        return Err(Error::Config(format!("table {} does not exist and there is no input to define it", cfg.table)));
    }
    Err(Error::NoTableDefinition { table: cfg.table.to_string(), refused })
}

/// Refuses settings that contradict an existing table (changing a table's partitioning, sort
/// order or dedup key is not supported yet); settings left empty defer to the table.
pub fn check_settings(state: &TableState, cfg: &TableConfig) -> Result<()> {
    let m = &state.metadata;
    let schema = m.current_schema();
    let mismatch = |what: &str, table: String, asked: String| {
        Error::Config(format!(
            "table {} exists with {what} `{table}` but `{asked}` was asked for; changing it is not supported yet \
             (drop the flag to use the table's)",
            cfg.table
        ))
    };
    if !cfg.partition_by.is_empty() {
        let (have, want) = (partition_spec_text(m.default_partition_spec(), schema), join_terms(&cfg.partition_by));
        if have != want {
            return Err(mismatch("partitioning", have, want));
        }
    }
    if !cfg.sort_by.is_empty() {
        let (have, want) = (sort_order_text(m.default_sort_order(), schema), join_terms(&cfg.sort_by));
        if have != want {
            return Err(mismatch("sort order", have, want));
        }
    }
    if !cfg.dedup_key.is_empty() {
        let have = m.properties().get(PROP_DEDUP_KEY).cloned().unwrap_or_default();
        let want = cfg.dedup_key.join(",");
        if have != want {
            return Err(mismatch("dedup key", have, want));
        }
    }
    Ok(())
}
