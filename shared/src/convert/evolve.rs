//! Schema evolution: how a table's schema follows its producers' Avro writer schemas.
//!
//! Two halves, both pure:
//!
//! - [`evolve`], on the writer: the schema a file needs, from the table's schema and the file's
//!   (mapped from Avro by `convert::schema`, with fresh ids). Fields are matched by name, then by
//!   the file field's Avro `aliases` (a rename), then by a name the column had in an earlier
//!   schema of the table (a producer still on an old name). A file field the table lacks adds an
//!   optional column at the end of its struct with ids above the table's `last-column-id`; a
//!   wider primitive promotes the column (`int` → `long`, `float` → `double`, decimal precision
//!   widening); an optional field makes a required column optional; nested structs, list
//!   elements and map values evolve the same way. Anything else is refused with the field's
//!   path, and the object is quarantined: a type change that is no promotion, a new required
//!   field without a default, a required column the file lacks, a change to a key column
//!   (partition source, sort or dedup key: only making it optional is allowed), a new name that
//!   is a partition field's, the name of a column another engine dropped (it is not brought back
//!   under a new id unasked).
//! - [`rebase`], on the committer: replays a file's [`SchemaChange`]s onto the table's current
//!   schema, which may have moved on since the writer read it, and checks that every field id in
//!   the file means the same column there. A column added by the writer must either be absent
//!   from the table with an id no one has used (then it is added) or be exactly there already
//!   (another file added the same column); an id the table has given to another column, or
//!   dropped, is a conflict: the file must be written again against the table as it is now.
//!   This is how no value ever lands under a wrong field id.
//!
//! Field ids are the committer's: a writer only proposes them, and they become the table's in
//! the snapshot that commits the first data needing them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use iceberg::spec::{
    ListType, MapType, NestedField, NestedFieldRef, PrimitiveType, Schema, SchemaRef, StructType, Type,
};
use serde::{Deserialize, Serialize};

use super::compat::{mismatch, promotes};
use crate::{Error, Result};

/// One step of a schema change, as a writer proposes it and the committer replays it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum SchemaChange {
    /// A new optional column, with its proposed ids, at the end of the struct that is the type
    /// of field `parent` (the top level when absent).
    AddColumn {
        /// Id of the field whose type is the struct receiving the column.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<i32>,
        /// The column, its nested fields included.
        field: NestedFieldRef,
    },
    /// A column's primitive type widened.
    Promote {
        /// The column.
        id: i32,
        /// Its new type.
        to: PrimitiveType,
    },
    /// A required column made optional.
    MakeOptional {
        /// The column.
        id: i32,
    },
    /// A column renamed (the file's field declares the old name among its Avro aliases).
    Rename {
        /// The column.
        id: i32,
        /// Its name before.
        from: String,
        /// Its name after.
        to: String,
    },
}

impl std::fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaChange::AddColumn { field, .. } => {
                write!(f, "add {} {} (id {})", field.name, field.field_type, field.id)
            }
            SchemaChange::Promote { id, to } => write!(f, "promote id {id} to {to}"),
            SchemaChange::MakeOptional { id } => write!(f, "make id {id} optional"),
            SchemaChange::Rename { id, from, to } => write!(f, "rename id {id} from {from} to {to}"),
        }
    }
}

/// What the Avro schema says of a file field beyond its Iceberg type (by the field's id in the
/// file's own schema).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldExtras {
    /// Avro `aliases`: names the field had before.
    pub aliases: Vec<String>,
    /// Whether the Avro field declares a `default`.
    pub has_default: bool,
    /// That default as an Iceberg value, for the types whose default is carried exactly (see
    /// `convert::schema`): what a column added for the field takes as its `initial-default` and
    /// `write-default` in a table with column defaults (format v3).
    pub default: Option<iceberg::spec::Literal>,
}

/// What the table allows to change, besides its schema.
#[derive(Debug, Clone, Default)]
pub struct Constraints {
    /// Columns that are partition sources, sort keys or dedup keys: never promoted or renamed.
    pub key_columns: HashSet<i32>,
    /// Partition field names of every spec the table has had: no new or renamed column may
    /// take one (Iceberg refuses such a schema).
    pub partition_names: HashSet<String>,
    /// The table's earlier schemas (for columns a producer still calls by an old name).
    pub history: Vec<SchemaRef>,
    /// Whether a new column takes its Avro field's default as its `initial-default` and
    /// `write-default` (format v3 tables): rows written before it then read that value.
    pub defaults: bool,
}

/// The schema a file needs.
#[derive(Debug, Clone)]
pub struct Evolution {
    /// The table's schema with the changes applied: the schema the file is written with.
    pub schema: Schema,
    /// The changes, in order (empty when the table's schema holds the file as it is).
    pub changes: Vec<SchemaChange>,
    /// The table's `last-column-id` after the changes.
    pub last_column_id: i32,
    /// For columns the file calls by another name (an old one): the column's dotted path in
    /// `schema` → the file's name for it.
    pub names: HashMap<String, String>,
}

/// The evolution of `table` (whose `last-column-id` is `last_column_id`) that holds a file with
/// schema `file` (mapped from Avro, with the file's own ids, which `extras` is keyed by).
pub(crate) fn evolve(
    table: &Schema,
    last_column_id: i32,
    file: &Schema,
    extras: &HashMap<i32, FieldExtras>,
    constraints: &Constraints,
) -> Result<Evolution> {
    let mut e = Evolver { extras, constraints, next_id: last_column_id + 1, changes: vec![], names: HashMap::new() };
    let root = e.merge_struct(file.as_struct(), table.as_struct(), None, "")?;
    let schema = Schema::builder()
        .with_schema_id(table.schema_id())
        .with_identifier_field_ids(table.identifier_field_ids())
        .with_fields(root.fields().to_vec())
        .build()?;
    Ok(Evolution { schema, changes: e.changes, last_column_id: e.next_id - 1, names: e.names })
}

struct Evolver<'a> {
    extras: &'a HashMap<i32, FieldExtras>,
    constraints: &'a Constraints,
    next_id: i32,
    changes: Vec<SchemaChange>,
    names: HashMap<String, String>,
}

/// How a file field found its column.
enum Found {
    Name,
    Alias,
    OldName,
}

impl Evolver<'_> {
    fn merge_struct(
        &mut self,
        file: &StructType,
        table: &StructType,
        parent: Option<i32>,
        path: &str,
    ) -> Result<StructType> {
        let mut out: Vec<NestedFieldRef> = table.fields().to_vec();
        let mut matched: HashSet<i32> = HashSet::new();
        for f in file.fields() {
            match self.find(f, table) {
                Some((i, how)) => {
                    let t = &table.fields()[i];
                    if !matched.insert(t.id) {
                        let why = format!("two fields of the file map to the column `{}`", t.name);
                        return Err(Error::schema(join(path, &f.name), why));
                    }
                    let name = match how {
                        Found::Alias => self.rename(f, t, table, path)?,
                        Found::OldName => {
                            self.names.insert(join(path, &t.name), f.name.clone());
                            t.name.clone()
                        }
                        Found::Name => t.name.clone(),
                    };
                    let merged = self.merge_field(f, t, &join(path, &name))?;
                    out[i] = Arc::new(NestedField { name, ..merged });
                }
                None => out.push(self.add(f, table, parent, path)?),
            }
        }
        if let Some(t) = table.fields().iter().find(|t| t.required && !matched.contains(&t.id)) {
            let why = "the table requires this field but the file does not have it";
            return Err(Error::schema(join(path, &t.name), why));
        }
        Ok(StructType::new(out))
    }

    fn find(&self, f: &NestedField, table: &StructType) -> Option<(usize, Found)> {
        let at = |name: &str| table.fields().iter().position(|t| t.name == name);
        if let Some(i) = at(&f.name) {
            return Some((i, Found::Name));
        }
        let aliases = self.extras.get(&f.id).map(|x| x.aliases.as_slice()).unwrap_or_default();
        if let Some(i) = aliases.iter().find_map(|a| at(a)) {
            return Some((i, Found::Alias));
        }
        // A column the table once called by the file's name (renamed since), newest schema first.
        let old = |t: &NestedFieldRef| {
            self.constraints.history.iter().rev().any(|s| s.field_by_id(t.id).is_some_and(|o| o.name == f.name))
        };
        table.fields().iter().position(old).map(|i| (i, Found::OldName))
    }

    /// The id of a column named `name` in an earlier schema's struct under `parent` (the top
    /// level when `None`) that the current schema no longer has: a column dropped since, which
    /// a producer still sending it must not bring back under a new id unasked (Floe never drops
    /// one; another engine's drop is a decision). Reached only for names no current column has
    /// or had, so any such id is gone.
    fn dropped(&self, name: &str, parent: Option<i32>) -> Option<i32> {
        let struct_of = |s: &Schema| match parent {
            None => Some(s.as_struct().clone()),
            Some(id) => match s.field_by_id(id)?.field_type.as_ref() {
                Type::Struct(st) => Some(st.clone()),
                _ => None,
            },
        };
        self.constraints
            .history
            .iter()
            .rev()
            .find_map(|s| struct_of(s)?.fields().iter().find(|o| o.name == name).map(|o| o.id))
    }

    fn rename(&mut self, f: &NestedField, t: &NestedField, table: &StructType, path: &str) -> Result<String> {
        if ids_of(t).iter().any(|id| self.constraints.key_columns.contains(id)) {
            let why = format!(
                "renaming `{}`, a key column (a partition source, sort or dedup key) or a struct holding one, is not supported",
                t.name
            );
            return Err(Error::schema(join(path, &f.name), why));
        }
        if table.fields().iter().any(|o| o.name == f.name) {
            return Err(Error::schema(join(path, &f.name), "the table has another column of this name"));
        }
        if self.constraints.partition_names.contains(&join(path, &f.name)) {
            return Err(Error::schema(join(path, &f.name), "a column cannot take the name of a partition field"));
        }
        self.changes.push(SchemaChange::Rename { id: t.id, from: t.name.clone(), to: f.name.clone() });
        Ok(f.name.clone())
    }

    fn add(&mut self, f: &NestedField, table: &StructType, parent: Option<i32>, path: &str) -> Result<NestedFieldRef> {
        let fpath = join(path, &f.name);
        let has_default = self.extras.get(&f.id).is_some_and(|x| x.has_default);
        if f.required && !has_default {
            let why = "a new required field without a default cannot be added: the rows already in the table have no value for it";
            return Err(Error::schema(fpath, why));
        }
        if self.constraints.partition_names.contains(&fpath) {
            return Err(Error::schema(fpath, "a new column cannot take the name of a partition field"));
        }
        if let Some(dropped) = self.dropped(&f.name, parent) {
            let why = format!(
                "the table had this column (field id {dropped}) and it was dropped: its values are not written back as a \
                 new column. Add the column to the table again to land them (then replay), or stop the producer sending it"
            );
            return Err(Error::schema(fpath, why));
        }
        debug_assert!(table.fields().iter().all(|t| t.name != f.name));
        let id = self.fresh();
        let ty = self.reassign(&f.field_type);
        let default = match self.constraints.defaults {
            true => self.extras.get(&f.id).and_then(|x| x.default.clone()),
            false => None,
        };
        let field = Arc::new(NestedField {
            id,
            required: false,
            field_type: Box::new(ty),
            initial_default: default.clone(),
            write_default: default,
            ..f.clone()
        });
        self.changes.push(SchemaChange::AddColumn { parent, field: field.clone() });
        Ok(field)
    }

    fn fresh(&mut self) -> i32 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// `ty` with fresh ids, in Iceberg's order (every field of a struct, then their children).
    fn reassign(&mut self, ty: &Type) -> Type {
        match ty {
            Type::Primitive(_) => ty.clone(),
            Type::Struct(s) => {
                let ids: Vec<i32> = s.fields().iter().map(|_| self.fresh()).collect();
                let fields = s.fields().iter().zip(ids).map(|(f, id)| {
                    let t = self.reassign(&f.field_type);
                    Arc::new(NestedField { id, field_type: Box::new(t), ..f.as_ref().clone() })
                });
                Type::Struct(StructType::new(fields.collect()))
            }
            Type::List(l) => {
                let id = self.fresh();
                let e = &l.element_field;
                let t = self.reassign(&e.field_type);
                Type::List(ListType::new(Arc::new(NestedField { id, field_type: Box::new(t), ..e.as_ref().clone() })))
            }
            Type::Map(m) => {
                let (kid, vid) = (self.fresh(), self.fresh());
                let (k, v) = (&m.key_field, &m.value_field);
                let kt = self.reassign(&k.field_type);
                let vt = self.reassign(&v.field_type);
                let key = NestedField { id: kid, field_type: Box::new(kt), ..k.as_ref().clone() };
                let value = NestedField { id: vid, field_type: Box::new(vt), ..v.as_ref().clone() };
                Type::Map(MapType::new(Arc::new(key), Arc::new(value)))
            }
        }
    }

    /// The table's field `t` merged with the file's `f` (same column): type and optionality.
    fn merge_field(&mut self, f: &NestedField, t: &NestedField, path: &str) -> Result<NestedField> {
        let ty = self.merge_type(&f.field_type, &t.field_type, t.id, path)?;
        let mut required = t.required;
        if t.required && !f.required {
            self.changes.push(SchemaChange::MakeOptional { id: t.id });
            required = false;
        }
        Ok(with_type(t, ty, required))
    }

    fn merge_type(&mut self, f: &Type, t: &Type, id: i32, path: &str) -> Result<Type> {
        match (f, t) {
            (Type::Primitive(a), Type::Primitive(b)) if promotes(a, b) => Ok(t.clone()),
            (Type::Primitive(a), Type::Primitive(b)) if promotes(b, a) => {
                if self.constraints.key_columns.contains(&id) {
                    let why = format!(
                        "the file has {a} where the table has {b}; promoting a key column (a partition source, sort or dedup key) is not supported"
                    );
                    return Err(Error::schema(path, why));
                }
                self.changes.push(SchemaChange::Promote { id, to: a.clone() });
                Ok(f.clone())
            }
            (Type::Struct(a), Type::Struct(b)) => Ok(Type::Struct(self.merge_struct(a, b, Some(id), path)?)),
            (Type::List(a), Type::List(b)) => {
                let e = self.merge_field(&a.element_field, &b.element_field, &join(path, "element"))?;
                Ok(Type::List(ListType::new(Arc::new(e))))
            }
            (Type::Map(a), Type::Map(b)) => {
                let k = self.merge_field(&a.key_field, &b.key_field, &join(path, "key"))?;
                let v = self.merge_field(&a.value_field, &b.value_field, &join(path, "value"))?;
                Ok(Type::Map(MapType::new(Arc::new(k), Arc::new(v))))
            }
            (a, b) => Err(mismatch(path, a, b)),
        }
    }
}

/// The table's schema after a file's changes, if they change it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rebased {
    /// The new schema (its id is for the metadata builder to assign), if any change applied.
    pub schema: Option<Schema>,
    /// The `last-column-id` after the changes.
    pub last_column_id: i32,
}

/// Replays `changes` onto the table's `current` schema and checks that the file, written with
/// `file`, holds only field ids that mean the same columns there. An `Err` is a conflict (the
/// reason names the column): the file cannot be committed and must be written again.
pub(crate) fn rebase(
    current: &Schema,
    last_column_id: i32,
    file: &Schema,
    changes: &[SchemaChange],
) -> Result<Rebased, String> {
    let mut root = current.as_struct().clone();
    let mut last = last_column_id;
    let mut changed = false;
    for c in changes {
        changed |= replay(&mut root, &mut last, c)?;
    }
    check_file(file.as_struct(), &root)?;
    let schema = if changed {
        let s = Schema::builder()
            .with_schema_id(current.schema_id())
            .with_identifier_field_ids(current.identifier_field_ids())
            .with_fields(root.fields().to_vec())
            .build()
            .map_err(|e| format!("the changed schema is invalid: {e}"))?;
        Some(s)
    } else {
        None
    };
    Ok(Rebased { schema, last_column_id: last })
}

/// Applies one change; `Ok(false)` when the table already has it.
fn replay(root: &mut StructType, last: &mut i32, c: &SchemaChange) -> Result<bool, String> {
    match c {
        SchemaChange::AddColumn { parent, field } => {
            if let Some(have) = find(root, field.id) {
                // Rivals that added it with other defaults wrote other values where the producer gave
                // none: not the same column.
                let same = have.name == field.name
                    && *have.field_type == *field.field_type
                    && parent_of(root, field.id) == *parent
                    && have.initial_default == field.initial_default
                    && have.write_default == field.write_default;
                return if same {
                    Ok(false)
                } else {
                    Err(format!(
                        "the file's new column `{}` has id {}, which the table has given to `{}`",
                        field.name, field.id, have.name
                    ))
                };
            }
            let lowest = ids_of(field).into_iter().min().unwrap_or(field.id);
            if lowest <= *last {
                return Err(format!(
                    "the file's new column `{}` has id {lowest}, which the table has assigned (last column id {})",
                    field.name, *last
                ));
            }
            let siblings = match parent {
                None => Some(&*root),
                Some(p) => find(root, *p).and_then(|f| match f.field_type.as_ref() {
                    Type::Struct(s) => Some(s),
                    _ => None,
                }),
            };
            let Some(siblings) = siblings else {
                return Err(format!("the new column `{}` belongs to a struct the table no longer has", field.name));
            };
            if siblings.fields().iter().any(|s| s.name == field.name) {
                return Err(format!("the table has another column `{}` where the file adds one", field.name));
            }
            *last = (*last).max(ids_of(field).into_iter().max().unwrap_or(field.id));
            *root = add_to(root, *parent, field.clone());
            Ok(true)
        }
        SchemaChange::Promote { id, to } => {
            let have = lookup(root, *id)?;
            let Type::Primitive(from) = have.field_type.as_ref() else {
                return Err(format!("column `{}` is not a primitive", have.name));
            };
            if promotes(to, from) {
                return Ok(false); // already this wide (or wider)
            }
            if !promotes(from, to) {
                return Err(format!("column `{}` is {from} now and cannot be promoted to {to}", have.name));
            }
            let to = Type::Primitive(to.clone());
            *root = update(root, *id, &|f| with_type(f, to.clone(), f.required));
            Ok(true)
        }
        SchemaChange::MakeOptional { id } => {
            if !lookup(root, *id)?.required {
                return Ok(false);
            }
            *root = update(root, *id, &|f| NestedField { required: false, ..f.clone() });
            Ok(true)
        }
        SchemaChange::Rename { id, from, to } => {
            let have = lookup(root, *id)?;
            // Renamed by someone else meanwhile: names do not change values; theirs stays.
            if have.name != *from {
                return Ok(false);
            }
            let taken = siblings_of(root, *id).is_some_and(|s| s.fields().iter().any(|f| f.name == *to));
            if taken {
                return Ok(false);
            }
            *root = update(root, *id, &|f| NestedField { name: to.clone(), ..f.clone() });
            Ok(true)
        }
    }
}

fn lookup(root: &StructType, id: i32) -> Result<&NestedField, String> {
    find(root, id).ok_or_else(|| format!("column id {id} is no longer in the table"))
}

/// Every field id of the file must name a column of the same kind in the table, whose type the
/// file's promotes to; every required column of the table must be in the file, and be
/// required there.
fn check_file(file: &StructType, table: &StructType) -> Result<(), String> {
    for t in table.fields() {
        match file.fields().iter().find(|f| f.id == t.id) {
            None if t.required => return Err(format!("the table requires column `{}`, which the file lacks", t.name)),
            None => {}
            Some(f) => check_field(f, t)?,
        }
    }
    if let Some(f) = file.fields().iter().find(|f| table.fields().iter().all(|t| t.id != f.id)) {
        return Err(format!("the file's column `{}` (id {}) is not in the table", f.name, f.id));
    }
    Ok(())
}

fn check_field(f: &NestedField, t: &NestedField) -> Result<(), String> {
    if t.required && !f.required {
        return Err(format!("column `{}` is required in the table and optional in the file", t.name));
    }
    match (f.field_type.as_ref(), t.field_type.as_ref()) {
        (Type::Primitive(a), Type::Primitive(b)) if promotes(a, b) => Ok(()),
        (Type::Struct(a), Type::Struct(b)) => check_file(a, b),
        (Type::List(a), Type::List(b)) => same_id(&a.element_field, &b.element_field),
        (Type::Map(a), Type::Map(b)) => {
            same_id(&a.key_field, &b.key_field).and(same_id(&a.value_field, &b.value_field))
        }
        (a, b) => Err(format!("column `{}` is {b} in the table and {a} in the file", t.name)),
    }
}

fn same_id(f: &NestedField, t: &NestedField) -> Result<(), String> {
    if f.id != t.id {
        return Err(format!("the file's `{}` has id {} where the table's has {}", f.name, f.id, t.id));
    }
    check_field(f, t)
}

/// The field with `id`, at any depth.
fn find(s: &StructType, id: i32) -> Option<&NestedField> {
    s.fields().iter().find_map(|f| if f.id == id { Some(f.as_ref()) } else { find_in(&f.field_type, id) })
}

fn find_in(t: &Type, id: i32) -> Option<&NestedField> {
    match t {
        Type::Primitive(_) => None,
        Type::Struct(s) => find(s, id),
        Type::List(l) => field_or_inner(&l.element_field, id),
        Type::Map(m) => field_or_inner(&m.key_field, id).or_else(|| field_or_inner(&m.value_field, id)),
    }
}

fn field_or_inner(f: &NestedFieldRef, id: i32) -> Option<&NestedField> {
    if f.id == id { Some(f.as_ref()) } else { find_in(&f.field_type, id) }
}

/// `f` with type `ty` (a promotion of its own) and optionality `required`; its defaults (format
/// v3) widened with it, as Iceberg Java casts a default to a field's new type.
fn with_type(f: &NestedField, ty: Type, required: bool) -> NestedField {
    use iceberg::spec::{Literal, PrimitiveLiteral as L, PrimitiveType as P};
    let widen = |d: &Option<Literal>| match (d, &ty) {
        (Some(Literal::Primitive(L::Int(v))), Type::Primitive(P::Long)) => Some(Literal::long(i64::from(*v))),
        (Some(Literal::Primitive(L::Float(v))), Type::Primitive(P::Double)) => Some(Literal::double(f64::from(v.0))),
        _ => d.clone(),
    };
    NestedField {
        required,
        initial_default: widen(&f.initial_default),
        write_default: widen(&f.write_default),
        field_type: Box::new(ty),
        ..f.clone()
    }
}

/// The id of the field whose struct type holds `id` (`None` at the top level or if absent).
fn parent_of(root: &StructType, id: i32) -> Option<i32> {
    fn walk(s: &StructType, owner: Option<i32>, id: i32) -> Option<Option<i32>> {
        s.fields().iter().find_map(|f| if f.id == id { Some(owner) } else { walk_type(&f.field_type, f.id, id) })
    }
    fn walk_type(t: &Type, owner: i32, id: i32) -> Option<Option<i32>> {
        match t {
            Type::Primitive(_) => None,
            Type::Struct(s) => walk(s, Some(owner), id),
            Type::List(l) => walk_type(&l.element_field.field_type, l.element_field.id, id),
            Type::Map(m) => walk_type(&m.key_field.field_type, m.key_field.id, id)
                .or_else(|| walk_type(&m.value_field.field_type, m.value_field.id, id)),
        }
    }
    walk(root, None, id).flatten()
}

/// The struct holding the field `id`.
fn siblings_of(root: &StructType, id: i32) -> Option<&StructType> {
    match parent_of(root, id) {
        None => root.fields().iter().any(|f| f.id == id).then_some(root),
        Some(p) => match find(root, p)?.field_type.as_ref() {
            Type::Struct(s) => Some(s),
            _ => None,
        },
    }
}

/// Every id in `f` and below it.
fn ids_of(f: &NestedField) -> Vec<i32> {
    fn walk(t: &Type, out: &mut Vec<i32>) {
        match t {
            Type::Primitive(_) => {}
            Type::Struct(s) => s.fields().iter().for_each(|f| {
                out.push(f.id);
                walk(&f.field_type, out)
            }),
            Type::List(l) => {
                out.push(l.element_field.id);
                walk(&l.element_field.field_type, out)
            }
            Type::Map(m) => {
                for f in [&m.key_field, &m.value_field] {
                    out.push(f.id);
                    walk(&f.field_type, out)
                }
            }
        }
    }
    let mut out = vec![f.id];
    walk(&f.field_type, &mut out);
    out
}

/// `root` with `field` appended to the struct owned by `parent` (the top level when `None`).
fn add_to(root: &StructType, parent: Option<i32>, field: NestedFieldRef) -> StructType {
    match parent {
        None => {
            let mut fields = root.fields().to_vec();
            fields.push(field);
            StructType::new(fields)
        }
        Some(p) => update(root, p, &|f| match f.field_type.as_ref() {
            Type::Struct(s) => {
                let mut fields = s.fields().to_vec();
                fields.push(field.clone());
                NestedField { field_type: Box::new(Type::Struct(StructType::new(fields))), ..f.clone() }
            }
            _ => f.clone(),
        }),
    }
}

/// `s` with the field `id` (at any depth) replaced by `with(field)`.
fn update(s: &StructType, id: i32, with: &dyn Fn(&NestedField) -> NestedField) -> StructType {
    StructType::new(s.fields().iter().map(|f| Arc::new(update_field(f, id, with))).collect())
}

fn update_field(f: &NestedField, id: i32, with: &dyn Fn(&NestedField) -> NestedField) -> NestedField {
    if f.id == id {
        return with(f);
    }
    let ty = match f.field_type.as_ref() {
        Type::Primitive(_) => return f.clone(),
        Type::Struct(s) => Type::Struct(update(s, id, with)),
        Type::List(l) => Type::List(ListType::new(Arc::new(update_field(&l.element_field, id, with)))),
        Type::Map(m) => Type::Map(MapType::new(
            Arc::new(update_field(&m.key_field, id, with)),
            Arc::new(update_field(&m.value_field, id, with)),
        )),
    };
    NestedField { field_type: Box::new(ty), ..f.clone() }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

#[cfg(test)]
#[path = "evolve_tests.rs"]
mod tests;
