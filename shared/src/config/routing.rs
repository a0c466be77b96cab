//! `[routing]` and the routes of `floe.toml`'s tables, as settings: their types, and the check
//! that every row of every object has exactly one destination. Routing objects and rows by
//! them is [`crate::route`]'s.

use std::collections::{BTreeMap, BTreeSet};

use arrow_array::{Array, BooleanArray, RecordBatch, StringArray};
use serde::{Deserialize, Serialize};

use super::{FloeToml, TableSection};
use crate::{Error, Result, TableIdent};

/// `[routing]` in `floe.toml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RoutingSection {
    /// What happens to objects no prefix matches: `quarantine` (the default) or `default`.
    pub unmatched: Option<String>,
    /// The table for unmatched objects (with `unmatched = "default"`) and for rows no
    /// value route of their group takes when the group has no catch-all table.
    pub default_table: Option<String>,
}

/// The rows one table takes from an object of its group: those whose `column` (as text) is in
/// `values`, or, for a catch-all, those whose value is in none of its siblings' lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowRoute {
    /// The top-level column routed on.
    pub column: String,
    /// The values.
    pub values: BTreeSet<String>,
    /// Take the rows whose value is *not* in `values` (and those with no value).
    pub others: bool,
}

impl RowRoute {
    /// The rows of `batch` this table takes.
    pub fn filter(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let keep: BooleanArray = match batch.column_by_name(&self.column) {
            None => {
                // An object without the field: its rows have no value (the catch-all's).
                tracing::warn!(column = %self.column, "the route_by field is not in the object; its rows have no value to route by");
                std::iter::repeat_n(Some(self.others), batch.num_rows()).collect()
            }
            Some(col) => {
                let text = arrow_cast::cast(col, &arrow_schema::DataType::Utf8)?;
                let text = text.as_any().downcast_ref::<StringArray>().expect("cast to Utf8");
                text.iter().map(|v| Some(v.is_some_and(|v| self.values.contains(v)) != self.others)).collect()
            }
        };
        Ok(arrow_select::filter::filter_record_batch(batch, &keep)?)
    }
}

impl std::fmt::Display for RowRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values = self.values.iter().cloned().collect::<Vec<_>>().join(", ");
        if self.others {
            write!(f, "{} not in [{values}]", self.column)
        } else {
            write!(f, "{} in [{values}]", self.column)
        }
    }
}

/// Checks `floe.toml`'s routes: every row of every object has exactly one destination.
pub(super) fn validate(cfg: &FloeToml) -> Result<()> {
    match cfg.routing.unmatched.as_deref() {
        None | Some("quarantine") => {}
        Some("default") if cfg.routing.default_table.is_some() => {}
        Some("default") => {
            return Err(Error::Config("[routing] unmatched = \"default\" needs a `default_table`".into()));
        }
        Some(other) => {
            return Err(Error::Config(format!("[routing] unmatched is `quarantine` or `default`, not `{other}`")));
        }
    }
    if let Some(t) = &cfg.routing.default_table {
        t.parse::<TableIdent>().map_err(|e| Error::Config(format!("[routing] default_table: {e}")))?;
    }
    let mut groups: BTreeMap<&str, Vec<&TableSection>> = BTreeMap::new();
    for t in &cfg.tables {
        let name = t.name.as_deref().unwrap_or_default();
        match (&t.route_by, &t.route_values) {
            (Some(_), None) => {
                return Err(Error::Config(format!("table `{name}` has `route_by` but no `route_values`")));
            }
            (None, Some(_)) => {
                return Err(Error::Config(format!("table `{name}` has `route_values` but no `route_by`")));
            }
            (Some(_), Some(v)) if v.is_empty() => {
                return Err(Error::Config(format!("table `{name}` has an empty `route_values`")));
            }
            (Some(_), Some(_)) if t.prefixes.as_ref().is_none_or(Vec::is_empty) => {
                return Err(Error::Config(format!("table `{name}` routes by value but has no `prefixes`")));
            }
            _ => {}
        }
        for p in t.prefixes.iter().flatten() {
            groups.entry(p.as_str()).or_default().push(t);
        }
    }
    for (prefix, members) in groups {
        check_group(cfg, prefix, &members)?;
    }
    Ok(())
}

fn check_group(cfg: &FloeToml, prefix: &str, members: &[&TableSection]) -> Result<()> {
    let name = |t: &TableSection| t.name.clone().unwrap_or_default();
    let catch_alls: Vec<String> = members.iter().filter(|t| t.route_by.is_none()).map(|t| name(t)).collect();
    let routed: Vec<_> = members.iter().filter(|t| t.route_by.is_some()).collect();
    if catch_alls.len() > 1 {
        let why = format!("prefix `{prefix}` goes to several tables ({}) without `route_by`", catch_alls.join(", "));
        return Err(Error::Config(format!("{why}: each object would land in all of them")));
    }
    let columns: BTreeSet<&str> = routed.iter().filter_map(|t| t.route_by.as_deref()).collect();
    if columns.len() > 1 {
        let cols = columns.into_iter().collect::<Vec<_>>().join(", ");
        return Err(Error::Config(format!("prefix `{prefix}` routes by several fields ({cols}); use one")));
    }
    let mut owner: BTreeMap<&str, String> = BTreeMap::new();
    for t in &routed {
        for v in t.route_values.iter().flatten() {
            if let Some(other) = owner.insert(v, name(t)) {
                return Err(Error::Config(format!(
                    "value `{v}` of prefix `{prefix}` is routed to both `{other}` and `{}`",
                    name(t)
                )));
            }
        }
    }
    if let (true, Some(default)) = (catch_alls.is_empty() && !routed.is_empty(), &cfg.routing.default_table)
        && routed.iter().any(|t| t.name.as_deref() == Some(default.as_str()))
    {
        return Err(Error::Config(format!(
            "prefix `{prefix}` routes rows by value to `{default}`, which is also where its other rows would go \
             ([routing] default_table): give the prefix a table without `route_by`, or another default table"
        )));
    }
    if !routed.is_empty() && catch_alls.is_empty() && cfg.routing.default_table.is_none() {
        return Err(Error::Config(format!(
            "prefix `{prefix}` routes rows by value, but rows with other values would have nowhere to go: \
             add a table with this prefix and no `route_by`, or set [routing] default_table"
        )));
    }
    Ok(())
}
