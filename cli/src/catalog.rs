//! `--catalog`: where embedded mode keeps table pointers (`catalog.db` in the warehouse, or an
//! Iceberg REST catalog configured by the `FLOE_REST_*` environment variables).

use std::path::Path;

use anyhow::bail;
use clap::{Args, ValueEnum};
use floe::adapters::local::{self, LocalCatalog, WarehouseLock, WarehouseUse};
use floe::adapters::rest::RestSettings;
use floe::ports::Ports;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CatalogKind {
    /// `catalog.db` in the warehouse (SQLite, PyIceberg's SQL catalog layout).
    Sqlite,
    /// An Iceberg REST catalog: FLOE_REST_URI, FLOE_REST_WAREHOUSE, FLOE_REST_TOKEN or
    /// FLOE_REST_CREDENTIAL (CLIENT_ID:CLIENT_SECRET), FLOE_REST_OAUTH2_SERVER_URI, FLOE_REST_SCOPE.
    Rest,
}

/// The catalog choice shared by the embedded commands.
#[derive(Debug, Clone, Args)]
pub(crate) struct CatalogArg {
    /// Where table pointers live: `sqlite` (catalog.db in the warehouse) or `rest` (an Iceberg
    /// REST catalog, configured by the FLOE_REST_* environment variables; the tables' files
    /// stay in the warehouse directory).
    #[arg(long, value_enum, default_value = "sqlite")]
    catalog: CatalogKind,
}

impl CatalogArg {
    fn resolve(&self) -> anyhow::Result<LocalCatalog> {
        Ok(match self.catalog {
            CatalogKind::Sqlite => LocalCatalog::Sqlite,
            CatalogKind::Rest => {
                LocalCatalog::Rest(RestSettings::parse(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))?)
            }
        })
    }

    /// The warehouse's ports with this catalog. For an existing warehouse (`must_exist`) with
    /// the SQLite catalog, `catalog.db` must be there.
    pub(crate) fn ports(&self, warehouse: &Path, must_exist: bool) -> anyhow::Result<Ports> {
        let catalog = self.resolve()?;
        if must_exist && catalog == LocalCatalog::Sqlite && !warehouse.join("catalog.db").exists() {
            bail!("{} is not a Floe warehouse (no catalog.db); run `floe ingest` first", warehouse.display());
        }
        Ok(local::ports_with(warehouse, &catalog)?)
    }
}

/// Holds `warehouse` for writing data files and committing them until the returned lock is
/// dropped (the process's end): many writers at once, never beside `floe sweep`, which could
/// delete a file a writer is about to commit. While a sweep runs this waits for it, and says so.
pub(crate) async fn hold_for_writing(warehouse: &Path) -> anyhow::Result<WarehouseLock> {
    if let Some(lock) = WarehouseLock::try_take(warehouse, WarehouseUse::Write)? {
        return Ok(lock);
    }
    eprintln!("waiting: `floe sweep` is running on {}; this run starts when it ends", warehouse.display());
    Ok(WarehouseLock::take(warehouse, WarehouseUse::Write).await?)
}
