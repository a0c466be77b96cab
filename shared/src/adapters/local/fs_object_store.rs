//! `ObjectStore` on the local file system, addressed by `file://` URIs (bare absolute paths are
//! accepted too). Writes go to a temporary file and are renamed into place, so readers see the
//! old or the new content; `put_if_absent` links a file into place, which fails atomically if the
//! name is taken. On Linux that file is unnamed until it is linked (`O_TMPFILE`): a crash leaves
//! nothing behind and nothing is unlinked afterwards; elsewhere it is a temporary file.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;

use crate::PortError;
use crate::ports::object_store::check_range;
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

/// `file:///a/b` (and Hadoop's `file:/a/b`, as Iceberg Java names the files it writes) → `/a/b`;
/// a bare absolute path is returned as is. A host (`file://h/a`) or a relative path is refused.
pub fn uri_to_path(uri: &str) -> Result<PathBuf, PortError> {
    let p = uri.strip_prefix("file://").or_else(|| uri.strip_prefix("file:")).unwrap_or(uri);
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

/// Makes `path` hold `body` only if the name is free (`Conflict` otherwise), all at once for
/// readers: the bytes are written first, then linked to the name.
fn create_new(uri: &str, path: &Path, body: &[u8]) -> Result<(), PortError> {
    let link_err = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::AlreadyExists => PortError::Conflict(format!("{uri} exists")),
        _ => io_err(uri, "create", e),
    };
    #[cfg(target_os = "linux")]
    if let Some(done) = unnamed::create_new(path, body) {
        return done.map_err(link_err);
    }
    create_new_named(uri, path, body, link_err)
}

/// `create_new` through a named temporary file, linked to the name, then unlinked.
fn create_new_named(
    uri: &str,
    path: &Path,
    body: &[u8],
    link_err: impl FnOnce(std::io::Error) -> PortError,
) -> Result<(), PortError> {
    let tmp = write_temp(uri, path, body)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(link_err)
}

/// Linux's unnamed files (`open(2)`, `O_TMPFILE`): written in the target's folder, then given
/// their name by `linkat` through `/proc/self/fd`. Unlike a named temporary file, nothing is
/// left behind by a crash and nothing has to be unlinked, which matters beyond the saved
/// syscall: ext4 without a journal skips every inode freed in the last minute or so when it
/// allocates a new one, so an ingest that unlinked one temporary file per data file paid a
/// scan that grew with every file it wrote (12% of its CPU time on such a file system).
#[cfg(target_os = "linux")]
mod unnamed {
    use std::io::Write;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};
    use rustix::io::Errno;

    /// `None` when unnamed files cannot be made here (no `/proc`, or a file system or kernel
    /// without `O_TMPFILE`): the caller falls back to a named temporary file.
    pub(super) fn create_new(path: &Path, body: &[u8]) -> Option<std::io::Result<()>> {
        static PROC_FD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*PROC_FD.get_or_init(|| Path::new("/proc/self/fd").is_dir()) {
            return None;
        }
        let dir = path.parent()?;
        let fd = match open_unnamed(dir) {
            Err(Errno::NOENT) => {
                if let Err(e) = std::fs::create_dir_all(dir) {
                    return Some(Err(e));
                }
                open_unnamed(dir)
            }
            r => r,
        };
        let fd = match fd {
            Ok(fd) => fd,
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => return None,
            Err(e) => return Some(Err(e.into())),
        };
        let mut file = std::fs::File::from(fd);
        Some(file.write_all(body).and_then(|()| link(&file, path)))
    }

    fn open_unnamed(dir: &Path) -> rustix::io::Result<rustix::fd::OwnedFd> {
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        rustix::fs::openat(CWD, dir, flags, Mode::from_bits_truncate(0o666))
    }

    fn link(file: &std::fs::File, path: &Path) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let by_fd = format!("/proc/self/fd/{}", file.as_raw_fd());
        Ok(rustix::fs::linkat(CWD, by_fd.as_str(), CWD, path, AtFlags::SYMLINK_FOLLOW)?)
    }
}

/// Reads `range` of the file at `path` with one positioned read.
fn read_range(uri: &str, path: &Path, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(path).map_err(|e| io_err(uri, "open", e))?;
    let len = file.metadata().map_err(|e| io_err(uri, "stat", e))?.len();
    check_range(uri, &range, len)?;
    let mut buf = vec![0; (range.end - range.start) as usize];
    file.read_exact_at(&mut buf, range.start).map_err(|e| io_err(uri, "read", e))?;
    Ok(Bytes::from(buf))
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

    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        let path = uri_to_path(uri)?;
        let uri = uri.to_string();
        tokio::task::spawn_blocking(move || read_range(&uri, &path, range))
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
        tokio::task::spawn_blocking(move || create_new(&uri, &path, &body))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_in_both_spellings_name_absolute_paths_only() {
        for ok in ["file:///tmp/wh/a.parquet", "file:/tmp/wh/a.parquet", "/tmp/wh/a.parquet"] {
            assert_eq!(uri_to_path(ok).unwrap(), PathBuf::from("/tmp/wh/a.parquet"), "{ok}");
        }
        for bad in ["file://host/tmp/a", "file:tmp/a", "tmp/a", "s3://b/a"] {
            assert!(matches!(uri_to_path(bad), Err(PortError::Invalid(_))), "{bad}");
        }
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    /// Both ways of creating a file (unnamed on Linux, named elsewhere) make the folder, keep the
    /// first writer's bytes, report the loser as a conflict and leave no temporary file behind.
    #[test]
    fn create_new_keeps_the_first_and_leaves_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let put = tmp.path().join("put.bin");
        std::fs::write(&put, b"mode").unwrap();
        let mode = |p: &Path| std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(p).unwrap().permissions());
        for (way, dir) in [("unnamed", "a/b"), ("named", "c/d")] {
            let path = tmp.path().join(dir).join("x.parquet");
            let uri = path_to_uri(&path);
            let create = |body: &'static [u8]| match way {
                "unnamed" => create_new(&uri, &path, body),
                _ => create_new_named(&uri, &path, body, |e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => PortError::Conflict(uri.clone()),
                    _ => io_err(&uri, "create", e),
                }),
            };
            create(b"first").unwrap_or_else(|e| panic!("{way}: {e}"));
            assert!(matches!(create(b"second"), Err(PortError::Conflict(_))), "{way}: a taken name is a conflict");
            assert_eq!(std::fs::read(&path).unwrap(), b"first", "{way}: the loser did not overwrite");
            assert_eq!(entries(path.parent().unwrap()), ["x.parquet"], "{way}: nothing but the file");
            assert_eq!(mode(&path), mode(&put), "{way}: the same permissions as a put");
        }
    }

    /// Writers racing for one name (two committers' metadata files, say): exactly one wins, the
    /// name holds the winner's bytes whole, and the losers leave nothing behind.
    #[test]
    fn racing_creates_have_one_winner() {
        for round in 0..20 {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("m").join("00001.metadata.json");
            let uri = path_to_uri(&path);
            let barrier = std::sync::Barrier::new(8);
            let results: Vec<(usize, Result<(), PortError>)> = std::thread::scope(|s| {
                let racers: Vec<_> = (0..8)
                    .map(|i| {
                        let (path, uri, barrier) = (&path, &uri, &barrier);
                        s.spawn(move || {
                            let body = vec![b'a' + i as u8; 64 << 10];
                            barrier.wait();
                            (i, create_new(uri, path, &body))
                        })
                    })
                    .collect();
                racers.into_iter().map(|r| r.join().unwrap()).collect()
            });
            let winners: Vec<usize> = results.iter().filter(|(_, r)| r.is_ok()).map(|(i, _)| *i).collect();
            assert_eq!(winners.len(), 1, "round {round}: {results:?}");
            assert!(results.iter().all(|(_, r)| r.is_ok() || matches!(r, Err(PortError::Conflict(_)))));
            assert_eq!(std::fs::read(&path).unwrap(), vec![b'a' + winners[0] as u8; 64 << 10], "round {round}");
            assert_eq!(entries(path.parent().unwrap()), ["00001.metadata.json"], "round {round}");
        }
    }
}
