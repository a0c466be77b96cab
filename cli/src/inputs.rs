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

/// Each file under `paths` with its routing key: its path relative to the folder argument it
/// was found under (`/`-separated), or its file name for a file argument.
pub(crate) fn keyed(paths: &[PathBuf]) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut roots = vec![];
    for p in paths {
        let abs = std::path::absolute(p).with_context(|| format!("bad path {}", p.display()))?;
        roots.push(if abs.is_dir() { abs } else { abs.parent().map(Path::to_path_buf).unwrap_or_default() });
    }
    let mut out = vec![];
    for f in expand(paths)? {
        let root = roots.iter().filter(|r| f.starts_with(r)).max_by_key(|r| r.as_os_str().len());
        let rel = root.and_then(|r| f.strip_prefix(r).ok()).unwrap_or(&f);
        let key = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
        out.push((f, key));
    }
    Ok(out)
}
