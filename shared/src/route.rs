//! Routing: which tables a source object goes to, and which of its rows each one takes.
//!
//! A `floe.toml` names tables with key `prefixes`; an object goes to the tables of its longest
//! matching prefix (its *group*). Within a group, tables may split the rows by a field's value
//! (`route_by = "event_type"`, `route_values = ["click"]`): each such table takes the rows whose
//! value (as text) it lists, and the rows no table lists (or with no value) go to the group's
//! catch-all table (one with no `route_by`), or else to `[routing] default_table`. An object no
//! prefix matches is quarantined (kind `unrouted`), or goes to the default table with
//! `[routing] unmatched = "default"`. Every row has exactly one destination; configurations
//! where one could have none or two are refused when the file is read.
//!
//! Each table is written and committed on its own (its own writer batch, ledger entries, lock
//! and snapshots), so one table's contention or poison never holds up another's.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::config::{FloeToml, TableConfig};
pub use crate::config::{RoutingSection, RowRoute};
use crate::{Error, Result, TableIdent};

/// Where objects go: `floe.toml`'s routes, or everything to one default table.
#[derive(Debug, Clone)]
pub struct Router {
    config: Option<Arc<FloeToml>>,
    default_table: TableIdent,
}

impl Router {
    /// Routes with `config` if given, else everything to `default_table` (which
    /// `[routing] default_table` overrides).
    pub fn new(config: Option<FloeToml>, default_table: TableIdent) -> Self {
        let default_table = config
            .as_ref()
            .and_then(|c| c.routing.default_table.as_ref())
            .and_then(|t| t.parse().ok())
            .unwrap_or(default_table);
        Router { config: config.map(Arc::new), default_table }
    }

    /// The tables an object with this key (an `s3://bucket/key` URI, or a key) goes to, each
    /// with the rows it takes; empty if none (the object is to be quarantined as unrouted).
    pub fn route(&self, uri: &str) -> Result<Vec<TableConfig>> {
        let Some(cfg) = &self.config else {
            return Ok(vec![TableConfig::new(self.default_table.clone())]);
        };
        let key = uri.strip_prefix("s3://").and_then(|r| r.split_once('/')).map_or(uri, |(_, k)| k);
        let best = cfg.tables.iter().flat_map(|t| t.prefixes.iter().flatten()).filter(|p| key.starts_with(p.as_str()));
        let Some(prefix) = best.max_by_key(|p| p.len()) else {
            return match cfg.routing.unmatched.as_deref() {
                Some("default") => Ok(vec![cfg.table_config(&self.default_table)?]),
                _ => Ok(vec![]),
            };
        };
        self.group(cfg, prefix)
    }

    /// Whether any object could be routed to `table`.
    pub fn reaches(&self, table: &TableIdent) -> bool {
        let Some(cfg) = &self.config else { return *table == self.default_table };
        let named = cfg.tables.iter().any(|t| t.name.as_deref() == Some(&table.to_string()) && t.prefixes.is_some());
        let fallback = *table == self.default_table
            && (cfg.routing.unmatched.as_deref() == Some("default") || cfg.tables.iter().any(|t| t.route_by.is_some()));
        named || fallback
    }

    /// A table's settings (from `floe.toml` if any), taking every row.
    pub fn settings(&self, table: &TableIdent) -> Result<TableConfig> {
        match &self.config {
            Some(cfg) => cfg.table_config(table),
            None => Ok(TableConfig::new(table.clone())),
        }
    }

    /// Where an object bound for `table` (a quarantine record's) is to be written again, each
    /// table with the rows it takes: the group of the longest of the prefixes that can send
    /// objects to `table` (its own, or those of the groups it is the default table of) that
    /// `uri` contains, so that every table of the group gets its rows and `table` only its own.
    pub fn tables_of(&self, table: &TableIdent, uri: &str) -> Result<Vec<TableConfig>> {
        let Some(cfg) = &self.config else { return Ok(vec![TableConfig::new(table.clone())]) };
        let mut best: Option<&str> = None;
        for p in cfg.tables.iter().flat_map(|t| t.prefixes.iter().flatten()) {
            let reaches = self.group(cfg, p)?.iter().any(|c| c.table == *table);
            let in_uri = uri.contains(&format!("/{p}")) || uri.starts_with(p.as_str());
            if reaches && in_uri && best.is_none_or(|b| p.len() > b.len()) {
                best = Some(p);
            }
        }
        match best {
            Some(p) => Ok(self.group(cfg, p)?),
            None => Ok(vec![cfg.table_config(table)?]),
        }
    }

    fn group(&self, cfg: &FloeToml, prefix: &str) -> Result<Vec<TableConfig>> {
        let members: Vec<_> = cfg.tables.iter().filter(|t| t.prefixes.iter().flatten().any(|p| p == prefix)).collect();
        let routed: Vec<_> = members.iter().filter(|t| t.route_by.is_some()).collect();
        let mut out = vec![];
        let mut taken = BTreeSet::new();
        for t in &routed {
            let mut c = cfg.table_config(&name_of(t)?)?;
            let values: BTreeSet<String> = t.route_values.iter().flatten().cloned().collect();
            taken.extend(values.iter().cloned());
            c.route = Some(RowRoute { column: t.route_by.clone().unwrap_or_default(), values, others: false });
            out.push(c);
        }
        let catch_all = members.iter().find(|t| t.route_by.is_none());
        let rest = match catch_all {
            Some(t) => Some(cfg.table_config(&name_of(t)?)?),
            None if routed.is_empty() => None,
            None => Some(cfg.table_config(&self.default_table)?),
        };
        if let Some(mut c) = rest {
            if let Some(first) = routed.first() {
                let column = first.route_by.clone().unwrap_or_default();
                c.route = Some(RowRoute { column, values: taken, others: true });
            }
            out.push(c);
        }
        Ok(out)
    }
}

fn name_of(t: &crate::config::TableSection) -> Result<TableIdent> {
    t.name.as_deref().ok_or_else(|| Error::Config("a [[table]] has no `name`".into()))?.parse()
}

/// Why an object no table claims is quarantined: the same kind and words whichever entry point
/// (the writer function, `floe ingest`) routed it.
pub fn unrouted() -> crate::Rejection {
    crate::Rejection::new(crate::RejectionKind::Unrouted, "no table of the floe.toml has a prefix matching its key")
}

/// Writer batches by table and row route: each table of an object's group takes the object in
/// a batch of its own, and a table that takes whole objects of one prefix and some rows of
/// another's (a default table shared by groups) writes each in its own batch. Shared by the
/// writer function and `floe ingest`, so both cut batches alike.
#[derive(Debug)]
pub struct Batches<T> {
    by_key: BTreeMap<(TableIdent, Option<String>), (TableConfig, Vec<T>)>,
}

impl<T> Default for Batches<T> {
    fn default() -> Self {
        Batches { by_key: BTreeMap::new() }
    }
}

impl<T: Clone> Batches<T> {
    /// Adds `item` to the batch of each table `tables` (what [`Router::route`] gave) names.
    pub fn add(&mut self, tables: Vec<TableConfig>, item: &T) {
        for cfg in tables {
            let key = (cfg.table.clone(), cfg.route.as_ref().map(ToString::to_string));
            self.by_key.entry(key).or_insert_with(|| (cfg, vec![])).1.push(item.clone());
        }
    }
}

impl<T> IntoIterator for Batches<T> {
    type Item = (TableConfig, Vec<T>);
    type IntoIter = std::collections::btree_map::IntoValues<(TableIdent, Option<String>), (TableConfig, Vec<T>)>;

    /// The batches, by table then route.
    fn into_iter(self) -> Self::IntoIter {
        self.by_key.into_values()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    const TOML: &str = r#"
[routing]
default_table = "raw.other"

[[table]]
name = "web.clicks"
prefixes = ["events/"]
route_by = "event_type"
route_values = ["click", "tap"]

[[table]]
name = "web.views"
prefixes = ["events/"]
route_by = "event_type"
route_values = ["view"]

[[table]]
name = "web.audit"
prefixes = ["events/audit/"]
"#;

    fn names(cfgs: &[TableConfig]) -> Vec<String> {
        cfgs.iter().map(|c| format!("{} {}", c.table, c.route.as_ref().map_or("*".into(), |r| r.to_string()))).collect()
    }

    #[test]
    fn objects_go_to_their_longest_prefix_and_rows_by_value() {
        let router = Router::new(Some(FloeToml::parse(TOML).unwrap()), "default.events".parse().unwrap());
        assert_eq!(
            names(&router.route("s3://landing/events/2026/a.avro").unwrap()),
            [
                "web.clicks event_type in [click, tap]",
                "web.views event_type in [view]",
                "raw.other event_type not in [click, tap, view]"
            ]
        );
        assert_eq!(names(&router.route("s3://landing/events/audit/a.avro").unwrap()), ["web.audit *"]);
        assert!(router.route("s3://landing/logs/a.avro").unwrap().is_empty(), "unmatched: quarantined");
        let all = FloeToml::parse(&format!("{TOML}\n")).unwrap();
        let mut all = all;
        all.routing.unmatched = Some("default".into());
        let router = Router::new(Some(all), "default.events".parse().unwrap());
        assert_eq!(names(&router.route("s3://landing/logs/a.avro").unwrap()), ["raw.other *"]);
    }

    #[test]
    fn every_row_goes_to_exactly_one_table() {
        let router = Router::new(Some(FloeToml::parse(TOML).unwrap()), "default.events".parse().unwrap());
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("event_type", DataType::Utf8, true),
        ]));
        let kinds = vec![Some("click"), Some("view"), None, Some("scroll"), Some("tap"), Some("click")];
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Int64Array::from_iter_values(0..6)), Arc::new(StringArray::from(kinds))],
        )
        .unwrap();
        let mut seen = vec![];
        for c in router.route("events/x.avro").unwrap() {
            let rows = c.route.unwrap().filter(&batch).unwrap();
            let ids = rows.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            seen.push((c.table.to_string(), ids.values().to_vec()));
        }
        assert_eq!(
            seen,
            [("web.clicks".into(), vec![0, 4, 5]), ("web.views".into(), vec![1]), ("raw.other".into(), vec![2, 3])]
        );
    }

    #[test]
    fn a_replayed_object_goes_back_to_the_group_its_uri_belongs_to() {
        let toml = format!("{TOML}\n[[table]]\nname = \"web.mixed\"\nprefixes = [\"audit/\", \"mixed/\"]\n");
        let toml = toml.replace("[[table]]\nname = \"web.audit\"\nprefixes = [\"events/audit/\"]\n", "");
        let router = Router::new(Some(FloeToml::parse(&toml).unwrap()), "default.events".parse().unwrap());
        let of = |t: &str, uri: &str| names(&router.tables_of(&t.parse().unwrap(), uri).unwrap());
        // The default table of a split prefix: back to the whole group, each its own rows.
        assert_eq!(of("raw.other", "file:///in/events/x.avro").len(), 3);
        assert_eq!(of("web.views", "s3://b/events/x.avro").len(), 3);
        assert_eq!(of("web.mixed", "file:///in/mixed/x.avro"), ["web.mixed *"]);
        assert!(router.reaches(&"raw.other".parse().unwrap()) && router.reaches(&"web.mixed".parse().unwrap()));
        assert!(!router.reaches(&"web.nothing".parse().unwrap()));
    }

    #[test]
    fn routes_that_lose_or_double_rows_are_refused() {
        let bad = [
            ("[[table]]\nname='a.a'\nprefixes=['e/']\nroute_by='k'\nroute_values=['x']\n", "nowhere to go"),
            ("[[table]]\nname='a.a'\nprefixes=['e/']\n[[table]]\nname='a.b'\nprefixes=['e/']\n", "land in all of them"),
            (
                "[[table]]\nname='a.a'\nprefixes=['e/']\nroute_by='k'\nroute_values=['x']\n[[table]]\nname='a.b'\nprefixes=['e/']\nroute_by='k'\nroute_values=['x']\n[[table]]\nname='a.c'\nprefixes=['e/']\n",
                "routed to both",
            ),
            (
                "[[table]]\nname='a.a'\nprefixes=['e/']\nroute_by='k'\nroute_values=['x']\n[[table]]\nname='a.b'\nprefixes=['e/']\nroute_by='j'\nroute_values=['y']\n[[table]]\nname='a.c'\nprefixes=['e/']\n",
                "several fields",
            ),
            ("[[table]]\nname='a.a'\nprefixes=['e/']\nroute_by='k'\n", "no `route_values`"),
            ("[routing]\nunmatched='default'\n", "needs a `default_table`"),
            (
                "[routing]\ndefault_table='a.a'\n[[table]]\nname='a.a'\nprefixes=['e/']\nroute_by='k'\nroute_values=['x']\n",
                "also where its other rows would go",
            ),
            ("[routing]\nunmatched='drop'\n", "not `drop`"),
        ];
        for (toml, why) in bad {
            let e = FloeToml::parse(toml).unwrap_err().to_string();
            assert!(e.contains(why), "{toml}: {e}");
        }
    }
}
