//! Who may use a local warehouse at once: processes that write data files and commit them
//! (`floe ingest`, `floe compact`, `floe quarantine replay`) share it; the orphan sweep has it
//! alone.
//!
//! A writer may find an identical data file an interrupted run left behind and name it in a
//! commit instead of writing it again; a sweep running beside it sees that file unreferenced
//! and old and deletes it, and the commit then references a file that is gone. Nor can a sweep
//! tell from the commit queue alone that a writer is about to enqueue. So the sweep holds the
//! warehouse exclusively from before it checks the commit queue until it has deleted, and every
//! writer holds it shared for its whole run. The lock is an advisory `flock` on
//! `.floe/warehouse.lock`, released by the kernel when the process ends, however it ends; every
//! Floe process honours it, other programs do not see it.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use crate::{PortError, Result};

/// A held lock on a warehouse; dropping it releases it.
#[derive(Debug)]
pub struct WarehouseLock {
    _file: File,
}

/// How a warehouse is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarehouseUse {
    /// Writing data files and committing them; many processes at once.
    Write,
    /// Deleting unreferenced files; no other process at all.
    Sweep,
}

impl WarehouseLock {
    /// Takes the warehouse at `dir` for `usage` if no process holds it in a conflicting way;
    /// `None` if one does.
    pub fn try_take(dir: &Path, usage: WarehouseUse) -> Result<Option<Self>> {
        let (path, file) = open(dir)?;
        let taken = match usage {
            WarehouseUse::Write => file.try_lock_shared(),
            WarehouseUse::Sweep => file.try_lock(),
        };
        match taken {
            Ok(()) => Ok(Some(WarehouseLock { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(PortError::io(format!("cannot lock {}", path.display()), e).into()),
        }
    }

    /// Takes the warehouse at `dir` for `usage`, waiting for as long as a conflicting holder
    /// keeps it.
    pub async fn take(dir: &Path, usage: WarehouseUse) -> Result<Self> {
        let (path, file) = open(dir)?;
        tokio::task::spawn_blocking(move || {
            let taken = match usage {
                WarehouseUse::Write => file.lock_shared(),
                WarehouseUse::Sweep => file.lock(),
            };
            taken.map_err(|e| PortError::io(format!("cannot lock {}", path.display()), e))?;
            Ok(WarehouseLock { _file: file })
        })
        .await
        .map_err(|e| crate::Error::internal(format!("warehouse lock task failed: {e}")))?
    }
}

fn open(dir: &Path) -> Result<(PathBuf, File)> {
    let state = dir.join(".floe");
    std::fs::create_dir_all(&state)
        .map_err(|e| PortError::io(format!("cannot create warehouse {}", dir.display()), e))?;
    let path = state.join("warehouse.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .read(true) // a shared lock over NFS is a read lock: the file must be open for reading
        .write(true)
        .open(&path)
        .map_err(|e| PortError::io(format!("cannot open {}", path.display()), e))?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use WarehouseUse::{Sweep, Write};

    #[test]
    fn writers_share_a_warehouse_and_a_sweep_has_it_alone() {
        let dir = tempfile::tempdir().unwrap();
        let a = WarehouseLock::try_take(dir.path(), Write).unwrap().expect("first writer");
        let b = WarehouseLock::try_take(dir.path(), Write).unwrap().expect("writers share");
        assert!(WarehouseLock::try_take(dir.path(), Sweep).unwrap().is_none(), "a sweep beside writers");
        drop(a);
        assert!(WarehouseLock::try_take(dir.path(), Sweep).unwrap().is_none(), "a sweep beside one writer");
        drop(b);
        let sweep = WarehouseLock::try_take(dir.path(), Sweep).unwrap().expect("a sweep once writers are gone");
        assert!(WarehouseLock::try_take(dir.path(), Write).unwrap().is_none(), "a writer during a sweep");
        assert!(WarehouseLock::try_take(dir.path(), Sweep).unwrap().is_none(), "two sweeps");
        drop(sweep);
        WarehouseLock::try_take(dir.path(), Write).unwrap().expect("a writer after the sweep");
    }

    #[tokio::test]
    async fn a_writer_waits_for_a_sweep_to_finish() {
        let dir = tempfile::tempdir().unwrap();
        let sweep = WarehouseLock::try_take(dir.path(), Sweep).unwrap().unwrap();
        let path = dir.path().to_path_buf();
        let writer = tokio::spawn(async move { WarehouseLock::take(&path, Write).await });
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!writer.is_finished(), "the writer went ahead during the sweep");
        drop(sweep);
        writer.await.unwrap().unwrap();
    }
}
