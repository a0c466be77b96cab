//! Turning command-line paths into source objects.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use floe::adapters::local::path_to_uri;
use floe::ports::{ObjectMeta, ObjectStore};

/// Expands files and folders (recursively, `*.avro`) into absolute paths, sorted, deduplicated.
pub(crate) fn expand(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = vec![];
    for p in paths {
        let abs = std::path::absolute(p).with_context(|| format!("bad path {}", p.display()))?;
        let meta = std::fs::metadata(&abs).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            let before = out.len();
            walk(&abs, &mut out)?;
            if out.len() == before {
                eprintln!("warning: no *.avro files under {}", p.display());
            }
        } else {
            out.push(abs);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let p = entry.path();
        let ft = entry.file_type()?;
        if ft.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("avro")) {
            out.push(p);
        }
    }
    Ok(())
}

/// Source objects for the given paths, through the object store (so identities match).
pub(crate) async fn objects(store: &dyn ObjectStore, paths: &[PathBuf]) -> anyhow::Result<Vec<ObjectMeta>> {
    let files = expand(paths)?;
    if files.is_empty() {
        bail!(
            "no Avro files found in {}",
            paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    }
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        out.push(store.head(&path_to_uri(&f)).await?);
    }
    Ok(out)
}
