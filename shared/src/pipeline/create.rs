//! Creation of a table on first sight of data for it, in two steps: [`define_table`] derives
//! the first metadata from the first readable object's Avro schema and the table's
//! configuration (a writer's step: it reads, writes nothing), and [`register_table`] writes it
//! as the first metadata.json and creates the catalog entry if absent (a metadata writer's
//! step: the committer's on AWS, through a [`crate::message::CreateRequest`]; embedded, the one
//! process does both in [`ensure_table`]). If another process won the race, its table is loaded
//! instead and this attempt's metadata file is deleted: safe for the same reason commits are,
//! the catalog's conditional write.

use tracing::info;

use crate::config::{EngineConfig, TableConfig, join_terms};
use crate::convert::{avro, schema};
use crate::ports::{ObjectMeta, Ports};
use iceberg::spec::{TableMetadata, TableMetadataBuilder};

use crate::table::{
    PROP_DEDUP_KEY, TableState, create_table_metadata, load_table, metadata_file_uri, partition_spec_text,
    sort_order_text, table_location,
};
use crate::{Error, PortError, Rejection, RejectionKind, Result, TableIdent};

/// Loads `cfg.table`, creating it from the schema of the first readable object if it is
/// missing (embedded mode, where one process holds every role). Objects whose header cannot be
/// read are skipped here (the writer quarantines them). Returns the state and whether this call
/// created the table.
pub async fn ensure_table(
    ports: &Ports,
    engine: &EngineConfig,
    cfg: &TableConfig,
    warehouse: &str,
    objects: &[ObjectMeta],
) -> Result<(TableState, bool)> {
    if let Some(state) = load_checked(ports, cfg).await? {
        return Ok((state, false));
    }
    let definition = define_table(ports, engine, cfg, warehouse, objects).await?;
    let (state, created) = register_table(ports, &cfg.table, &definition.metadata).await?;
    if !created {
        // Another process created it meanwhile, perhaps with other settings.
        check_settings(&state, cfg)?;
    }
    Ok((state, created))
}

/// Loads `cfg.table` if it exists, refusing settings that contradict it.
pub async fn load_checked(ports: &Ports, cfg: &TableConfig) -> Result<Option<TableState>> {
    let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table).await? else {
        return Ok(None);
    };
    check_settings(&state, cfg)?;
    Ok(Some(state))
}

/// A new table's first metadata, and the object whose schema defined it.
#[derive(Debug, Clone)]
pub struct Definition {
    /// The first metadata (no snapshots).
    pub metadata: TableMetadata,
    /// The object whose Avro schema became the table's.
    pub defined_by: String,
}

/// Defines `cfg.table` from the schema of the first readable object, without writing anything.
/// Fails with [`Error::NoTableDefinition`] (every object refused, with its reason) when none
/// can define it.
pub async fn define_table(
    ports: &Ports,
    engine: &EngineConfig,
    cfg: &TableConfig,
    warehouse: &str,
    objects: &[ObjectMeta],
) -> Result<Definition> {
    let mut refused: Vec<(ObjectMeta, Rejection)> = vec![];
    for obj in objects {
        match schema_of(ports, engine, obj).await? {
            Ok(iceberg_schema) => {
                let location = table_location(warehouse, &cfg.table);
                let metadata = create_table_metadata(iceberg_schema, &cfg.new_table(), &location)?;
                return Ok(Definition { metadata, defined_by: obj.uri.clone() });
            }
            Err(r) => refused.push((obj.clone(), r)),
        }
    }
    if refused.is_empty() {
        return Err(Error::Config(format!("table {} does not exist and there is no input to define it", cfg.table)));
    }
    Err(Error::NoTableDefinition { table: cfg.table.to_string(), refused })
}

/// The Iceberg schema of an object's Avro writer schema, or why it cannot define a table.
async fn schema_of(
    ports: &Ports,
    engine: &EngineConfig,
    obj: &ObjectMeta,
) -> Result<std::result::Result<iceberg::spec::Schema, Rejection>> {
    if obj.size == 0 {
        return Ok(Err(Rejection::new(RejectionKind::Empty, "zero-byte object")));
    }
    if obj.size > engine.max_object_bytes {
        let why = format!("{} bytes is over the limit of {}", obj.size, engine.max_object_bytes);
        return Ok(Err(Rejection::new(RejectionKind::TooLarge, why)));
    }
    // The notified version only: one gone since cannot define the table (nor land in it), nor
    // can one that may never be read (archived, access denied): the next object may.
    let bytes = match ports.store.get_version(obj).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(Err(super::write::superseded(obj))),
        Err(crate::PortError::Invalid(why)) => return Ok(Err(Rejection::new(RejectionKind::Unreadable, why))),
        Err(e) => return Err(e.into()),
    };
    let info = match avro::inspect(&bytes) {
        Ok(i) => i,
        Err(r) => return Ok(Err(r)),
    };
    Ok(schema::parse_avro_schema(&info.schema_json)
        .and_then(|s| schema::avro_to_iceberg(&s))
        .map_err(|e| Rejection::new(RejectionKind::Schema, e.to_string())))
}

/// Registers a defined table: writes `metadata` as its first metadata.json (create-only, under
/// a fresh name) and creates the catalog entry if absent. If the table exists by then (created
/// concurrently, or by an earlier attempt of ours whose answer was lost), that table is loaded
/// and this attempt's metadata file deleted, unless the table's metadata log names it. A catalog that places tables itself (S3 Tables)
/// assigns the location first, and the table is moved there before anything is written.
/// Returns the state and whether this call created it.
pub async fn register_table(ports: &Ports, table: &TableIdent, metadata: &TableMetadata) -> Result<(TableState, bool)> {
    let relocated;
    let metadata = match ports.pointer.assign_location(table).await? {
        Some(location) if location != metadata.location() => {
            relocated = TableMetadataBuilder::new_from_metadata(metadata.clone(), None)
                .set_location(location)
                .build()?
                .metadata;
            &relocated
        }
        _ => metadata,
    };
    let meta_uri = metadata_file_uri(metadata.location(), 0);
    ports.store.put_if_absent(&meta_uri, crate::table::metadata_json(metadata)?).await?;
    let created = match ports.pointer.create(table, &meta_uri).await {
        Ok(_) => true,
        Err(PortError::Conflict(_)) => false,
        Err(e) => return Err(e.into()),
    };
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table)
        .await?
        .ok_or_else(|| Error::NoSuchTable(table.to_string()))?;
    let ours = state.pointer.metadata_location == meta_uri;
    // A create of ours that landed although its answer was lost, committed over since, is in
    // the log: that file stays (the history names it).
    let logged = state.metadata.metadata_log().iter().any(|l| l.metadata_file == meta_uri);
    if !ours && !logged && !ports.pointer.manages_files() {
        let _ = ports.store.delete(&meta_uri).await;
    }
    if created {
        info!(%table, "table created");
    }
    Ok((state, ours))
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
