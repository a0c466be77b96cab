//! `ObjectStore` on the local file system, addressed by `file://` URIs (bare absolute paths are
//! accepted too). Writes go to a temporary file and are renamed into place, so readers see the
//! old or the new content; `put_if_absent` links the temporary file into place, which fails
//! atomically if the name is taken.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;

use crate::PortError;
use crate::ports::{ObjectMeta, ObjectStore};

/// Files on disk.
#[derive(Debug, Default, Clone)]
pub struct LocalFsObjectStore;

impl LocalFsObjectStore {
    /// A store over the whole local file system.
    pub fn new() -> Self {
        LocalFsObjectStore
    }
}

/// `file:///a/b` → `/a/b`; a bare absolute path is returned as is.
pub fn uri_to_path(uri: &str) -> Result<PathBuf, PortError> {
    let p = uri.strip_prefix("file://").unwrap_or(uri);
    if !p.starts_with('/') {
        return Err(PortError::Invalid(format!("`{uri}` is not a file:// URI or absolute path")));
    }
    Ok(PathBuf::from(p))
}

/// `/a/b` → `file:///a/b`.
pub fn path_to_uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn io_err(uri: &str, what: &str, e: std::io::Error) -> PortError {
    if e.kind() == std::io::ErrorKind::NotFound {
        PortError::NotFound(uri.to_string())
    } else {
        PortError::io(format!("{what} {uri}"), e)
    }
}

fn meta_of(uri: String, m: &std::fs::Metadata) -> ObjectMeta {
    let mtime =
        m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    ObjectMeta {
        modified_ms: Some((mtime / 1_000_000) as i64),
        ..ObjectMeta::new(uri, m.len(), format!("{:x}-{:x}", m.len(), mtime))
    }
}

/// Reads `path` only if it still has `version` before and after the read (size and modification
/// time, the version a listing gave); `None` if it changed or is gone.
fn read_version(uri: &str, path: &Path, version: &str) -> Result<Option<Bytes>, PortError> {
    use std::io::Read;
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(uri, "open", e)),
    };
    let same = |f: &std::fs::File| -> Result<bool, PortError> {
        let m = f.metadata().map_err(|e| io_err(uri, "stat", e))?;
        Ok(meta_of(uri.to_string(), &m).version == version)
    };
    if !same(&f)? {
        return Ok(None);
    }
    let mut body = Vec::new();
    f.read_to_end(&mut body).map_err(|e| io_err(uri, "read", e))?;
    Ok(same(&f)?.then(|| Bytes::from(body)))
}

fn temp_beside(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()))
}

/// Writes `body` to a temporary file beside `path`, creating the folder only when it is
/// missing (a `mkdir` per object was a measurable share of an ingest's CPU).
fn write_temp(uri: &str, path: &Path, body: &[u8]) -> Result<PathBuf, PortError> {
    let tmp = temp_beside(path);
    match std::fs::write(&tmp, body) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_err(uri, "mkdir for", e))?;
            }
            std::fs::write(&tmp, body).map_err(|e| io_err(uri, "write", e))?;
        }
        r => r.map_err(|e| io_err(uri, "write", e))?,
    }
    Ok(tmp)
}

#[async_trait]
impl ObjectStore for LocalFsObjectStore {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        let path = uri_to_path(uri)?;
        let uri = uri.to_string();
        tokio::task::spawn_blocking(move || std::fs::read(&path).map(Bytes::from).map_err(|e| io_err(&uri, "read", e)))
            .await
            .map_err(|e| PortError::io("join", e))?
    }

    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
        let path = uri_to_path(&meta.uri)?;
        let (uri, version) = (meta.uri.clone(), meta.version.clone());
        tokio::task::spawn_blocking(move || read_version(&uri, &path, &version))
            .await
            .map_err(|e| PortError::io("join", e))?
    }

    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        let path = uri_to_path(uri)?;
        let m = std::fs::metadata(&path).map_err(|e| io_err(uri, "stat", e))?;
        if !m.is_file() {
            return Err(PortError::NotFound(uri.to_string()));
        }
        Ok(meta_of(uri.to_string(), &m))
    }

    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let path = uri_to_path(uri)?;
        let uri = uri.to_string();
        tokio::task::spawn_blocking(move || {
            let tmp = write_temp(&uri, &path, &body)?;
            std::fs::rename(&tmp, &path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                io_err(&uri, "rename into", e)
            })
        })
        .await
        .map_err(|e| PortError::io("join", e))?
    }

    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let path = uri_to_path(uri)?;
        let uri = uri.to_string();
        tokio::task::spawn_blocking(move || {
            let tmp = write_temp(&uri, &path, &body)?;
            let linked = std::fs::hard_link(&tmp, &path);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Err(PortError::Conflict(format!("{uri} exists")))
                }
                Err(e) => Err(io_err(&uri, "link into", e)),
            }
        })
        .await
        .map_err(|e| PortError::io("join", e))?
    }

    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        let root = uri_to_path(prefix)?;
        let prefix = prefix.to_string();
        tokio::task::spawn_blocking(move || {
            let mut out = vec![];
            // List the directory the prefix names, or the parent directory of a partial name.
            let (dir, keep): (PathBuf, String) = if root.is_dir() {
                (root.clone(), root.display().to_string())
            } else {
                (root.parent().map(Path::to_path_buf).unwrap_or_default(), root.display().to_string())
            };
            let mut stack = vec![dir];
            while let Some(d) = stack.pop() {
                let entries = match std::fs::read_dir(&d) {
                    Ok(e) => e,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(io_err(&prefix, "list", e)),
                };
                for entry in entries {
                    let entry = entry.map_err(|e| io_err(&prefix, "list", e))?;
                    let p = entry.path();
                    let m = entry.metadata().map_err(|e| io_err(&prefix, "stat", e))?;
                    if m.is_dir() {
                        stack.push(p);
                    } else if m.is_file() && p.display().to_string().starts_with(&keep) {
                        let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
                        if !hidden {
                            out.push(meta_of(path_to_uri(&p), &m));
                        }
                    }
                }
            }
            out.sort_by(|a, b| a.uri.cmp(&b.uri));
            Ok(out)
        })
        .await
        .map_err(|e| PortError::io("join", e))?
    }

    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        let path = uri_to_path(uri)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(uri, "delete", e)),
        }
    }
}
