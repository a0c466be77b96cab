//! Settings read by name: every `FLOE_*` variable (and the few `AWS_*` ones Floe reads) goes
//! through [`Vars`], over a lookup the binary passes in ([`env`], the process environment; a map
//! in tests), once, at start-up. Values are parsed into types here, at the edge: a value that is
//! malformed or out of range is an error naming the variable, never replaced, clamped or
//! ignored. An empty value is the same as an unset one.
//!
//! The library reads no environment of its own: only the binaries (`functions/`, `cli/`) call
//! [`env`].

use std::time::Duration;

use crate::{Error, Result, TableIdent};

/// The table objects land in when nothing routes them elsewhere (`FLOE_DEFAULT_TABLE`).
pub const DEFAULT_TABLE: &str = "default.events";

/// The process environment, for binaries to pass as the lookup of a settings reader.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Typed reads of settings over a lookup by name.
#[derive(Clone, Copy)]
pub struct Vars<'a>(&'a dyn Fn(&str) -> Option<String>);

impl std::fmt::Debug for Vars<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Vars")
    }
}

impl<'a> Vars<'a> {
    /// Settings looked up through `lookup`.
    pub fn new(lookup: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Vars(lookup)
    }

    /// The value, trimmed; `None` when unset or empty.
    pub fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
    }

    /// Whether the setting has a value.
    pub fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// A whole number of at least `min`.
    pub fn number(&self, name: &str, min: u64) -> Result<Option<u64>> {
        let Some(v) = self.get(name) else { return Ok(None) };
        match v.parse::<u64>() {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(Error::Config(format!("{name} must be a whole number of at least {min}, got `{v}`"))),
        }
    }

    /// A whole number that fits a `usize`, of at least `min`.
    pub fn count(&self, name: &str, min: usize) -> Result<Option<usize>> {
        let n = self.number(name, min as u64)?;
        n.map(|n| usize::try_from(n).map_err(|_| Error::Config(format!("{name} is too large: {n}")))).transpose()
    }

    /// A whole number of seconds, of at least `min`.
    pub fn seconds(&self, name: &str, min: u64) -> Result<Option<Duration>> {
        Ok(self.number(name, min)?.map(Duration::from_secs))
    }

    /// A whole number of hours, at least one.
    pub fn hours(&self, name: &str) -> Result<Option<Duration>> {
        self.scaled(name, 3600)
    }

    /// A whole number of days, at least one.
    pub fn days(&self, name: &str) -> Result<Option<Duration>> {
        self.scaled(name, 86_400)
    }

    fn scaled(&self, name: &str, unit: u64) -> Result<Option<Duration>> {
        let Some(n) = self.number(name, 1)? else { return Ok(None) };
        let secs = n.checked_mul(unit).ok_or_else(|| Error::Config(format!("{name} is too large: {n}")))?;
        Ok(Some(Duration::from_secs(secs)))
    }

    /// `true` or `false` (also `1`/`0`, `yes`/`no`, in any case); `default` when unset.
    pub fn flag(&self, name: &str, default: bool) -> Result<bool> {
        match self.get(name).map(|v| v.to_ascii_lowercase()).as_deref() {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(other) => Err(Error::Config(format!("{name} must be `true` or `false`, got `{other}`"))),
        }
    }

    /// A table name (`NAMESPACE.NAME`).
    pub fn table(&self, name: &str) -> Result<Option<TableIdent>> {
        self.get(name).map(|t| t.parse().map_err(|e| Error::Config(format!("{name}: {e}")))).transpose()
    }

    /// A comma-separated list of table names (`a.b, c.d`).
    pub fn tables(&self, name: &str) -> Result<Option<Vec<TableIdent>>> {
        let parse = |t: &str| t.trim().parse().map_err(|e| Error::Config(format!("{name}: {e}")));
        self.get(name).map(|list| list.split(',').map(parse).collect()).transpose()
    }

    /// `FLOE_DEFAULT_TABLE`, or [`DEFAULT_TABLE`].
    pub fn default_table(&self) -> Result<TableIdent> {
        match self.table("FLOE_DEFAULT_TABLE")? {
            Some(t) => Ok(t),
            None => DEFAULT_TABLE.parse(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<T>(pairs: &[(&str, &str)], f: impl FnOnce(Vars) -> T) -> T {
        let lookup = |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        f(Vars::new(&lookup))
    }

    #[test]
    fn values_are_parsed_at_the_edge_and_never_replaced() {
        with(&[("N", " 12 "), ("EMPTY", ""), ("NEG", "-1"), ("UNIT", "16MB"), ("ZERO", "0")], |v| {
            assert_eq!(v.number("N", 1).unwrap(), Some(12), "trimmed");
            assert_eq!(v.number("EMPTY", 1).unwrap(), None, "empty is unset");
            assert_eq!(v.number("MISSING", 1).unwrap(), None);
            for bad in ["NEG", "UNIT", "ZERO"] {
                let e = v.number(bad, 1).unwrap_err();
                assert!(matches!(e, Error::Config(_)) && e.to_string().contains(bad), "{e}");
            }
            assert_eq!(v.number("ZERO", 0).unwrap(), Some(0));
            assert_eq!(v.hours("N").unwrap(), Some(Duration::from_secs(12 * 3600)));
            assert_eq!(v.days("N").unwrap(), Some(Duration::from_secs(12 * 86_400)));
            assert!(v.days("ZERO").is_err(), "a time to live of no days is refused, not read as none");
        });
        with(&[("HUGE", &u64::MAX.to_string())], |v| {
            assert!(v.hours("HUGE").unwrap_err().to_string().contains("too large"));
        });
    }

    #[test]
    fn flags_take_the_usual_spellings_and_refuse_others() {
        with(&[("A", "TRUE"), ("B", "0"), ("C", "yes"), ("D", "maybe")], |v| {
            assert!(v.flag("A", false).unwrap() && !v.flag("B", true).unwrap() && v.flag("C", false).unwrap());
            assert!(v.flag("UNSET", true).unwrap() && !v.flag("UNSET", false).unwrap());
            assert!(v.flag("D", true).unwrap_err().to_string().contains("D must be `true` or `false`, got `maybe`"));
        });
    }

    #[test]
    fn the_default_table_is_named_once() {
        with(&[], |v| assert_eq!(v.default_table().unwrap().to_string(), DEFAULT_TABLE));
        with(&[("FLOE_DEFAULT_TABLE", "web.clicks")], |v| {
            assert_eq!(v.default_table().unwrap().to_string(), "web.clicks")
        });
        with(&[("FLOE_DEFAULT_TABLE", "clicks")], |v| {
            assert!(v.default_table().unwrap_err().to_string().contains("FLOE_DEFAULT_TABLE"));
        });
    }
}
