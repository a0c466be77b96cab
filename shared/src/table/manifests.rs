//! A snapshot's manifest list and what is known of its manifests' contents, in memory bounded by
//! what a commit needs rather than by the table's size.
//!
//! A table's manifests hold every live data file with its column statistics: parsed, an entry
//! takes about ten kilobytes, so a table of a million files would not fit a Lambda. A committer
//! therefore keeps, of each manifest it knows, either its parsed entries or only a *digest*: the
//! sorted 64-bit hashes of its live files' paths (8 bytes an entry). Entries stay parsed for the
//! manifests the next manifest merge will read (the bin of the newest manifest, at most the merge
//! target's worth: the `merge` module) and, during a commit, for those holding a path it removes
//! or checks; every other manifest keeps only its digest, decided as each is read, so that even a
//! cold start never holds them all parsed, and is read again only when a commit names a path
//! whose hash its digest holds, or merges it. A digest never misses a path it holds, so a
//! manifest whose digest lacks a path does not hold it live; a collision only costs a read.
//!
//! Planning compaction needs every live file but none of its statistics: [`Manifests::scan_live`]
//! reads the manifests a few at a time and hands each live entry to the caller, keeping nothing.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use iceberg::spec::{
    Manifest, ManifestContentType, ManifestEntry, ManifestFile, ManifestList, ManifestStatus, TableMetadata,
};

use super::lineage;
use crate::ports::ObjectStore;
use crate::{Error, Result};

/// Manifests read at once (a compactor's plan reads every manifest of a big table).
pub(crate) const READ_PARALLEL: usize = 16;

/// A snapshot's manifest list and the contents known of its manifests.
#[derive(Debug, Clone, Default)]
pub struct Manifests {
    /// The manifest list, in order.
    pub list: Vec<ManifestFile>,
    contents: HashMap<String, Content>,
}

/// What is kept of one manifest's contents.
#[derive(Debug, Clone)]
enum Content {
    /// Its entries, inheritance resolved.
    Parsed(Arc<Vec<ManifestEntry>>),
    /// The sorted hashes of its live entries' paths.
    Digest(Arc<Vec<u64>>),
}

impl Content {
    fn parsed(&self) -> Option<&Arc<Vec<ManifestEntry>>> {
        match self {
            Content::Parsed(entries) => Some(entries),
            Content::Digest(_) => None,
        }
    }

    /// Whether the manifest may hold one of `hashes` (sorted) live.
    fn may_hold(&self, hashes: &[u64]) -> bool {
        match self {
            Content::Parsed(entries) => {
                entries.iter().any(|e| e.is_alive() && hashes.binary_search(&path_hash(e.file_path())).is_ok())
            }
            Content::Digest(digest) => hashes.iter().any(|h| digest.binary_search(h).is_ok()),
        }
    }
}

/// The hash a digest keeps of a data file's path (this process's hasher: digests never leave it).
fn path_hash(path: &str) -> u64 {
    let mut h = DefaultHasher::new();
    path.hash(&mut h);
    h.finish()
}

/// Whether a live entry of `entries` has a path whose hash is in `hashes` (sorted).
fn holds(entries: &[ManifestEntry], hashes: &[u64]) -> bool {
    entries.iter().any(|e| e.is_alive() && hashes.binary_search(&path_hash(e.file_path())).is_ok())
}

fn digest(entries: &[ManifestEntry]) -> Vec<u64> {
    let mut d: Vec<u64> = entries.iter().filter(|e| e.is_alive()).map(|e| path_hash(e.file_path())).collect();
    d.sort_unstable();
    d.dedup();
    d
}

impl Manifests {
    /// The current snapshot's manifest list (empty for a table without snapshots); counts the
    /// objects read in `reads`.
    pub async fn load(store: &dyn ObjectStore, meta: &TableMetadata, reads: &mut u32) -> Result<Self> {
        let Some(snap) = meta.current_snapshot() else { return Ok(Manifests::default()) };
        *reads += 1;
        let bytes = store.get(snap.manifest_list()).await?;
        let list = ManifestList::parse_with_version(&bytes, meta.format_version())?.consume_entries().into_iter();
        Ok(Manifests { list: list.collect(), contents: HashMap::new() })
    }

    /// Reads and keeps parsed every manifest of the list not parsed yet. Its memory grows with
    /// the table: for tools and tests; the pipeline uses [`Manifests::read_holding`],
    /// [`Manifests::read_parsed`] and [`Manifests::scan_live`].
    pub async fn read_contents(&mut self, store: &dyn ObjectStore, reads: &mut u32) -> Result<()> {
        self.read_where(store, reads, |_, _| true, |_, _| true).await
    }

    /// Makes sure that every data manifest that may hold one of `paths` live is parsed: those
    /// whose digest holds a path's hash, and those not known yet (decided as each is read, so
    /// that a cold start never holds every manifest parsed). Then keeps parsed only those
    /// that hold one, and those `keep` names; the others keep their digest.
    pub async fn read_holding(
        &mut self,
        store: &dyn ObjectStore,
        paths: &HashSet<String>,
        keep: impl Fn(&str) -> bool,
        reads: &mut u32,
    ) -> Result<()> {
        let hashes = path_hashes(paths);
        let needed = |mf: &ManifestFile, known: Option<&Content>| {
            mf.content == ManifestContentType::Data && known.is_none_or(|c| c.may_hold(&hashes))
        };
        if !hashes.is_empty() {
            self.read_where(store, reads, needed, |mf, entries| keep(&mf.manifest_path) || holds(entries, &hashes))
                .await?;
        }
        self.demote(|path, content| keep(path) || content.may_hold(&hashes));
        Ok(())
    }

    /// Makes sure that the manifests of the list named in `paths` are parsed (a merge's inputs).
    pub async fn read_parsed(
        &mut self,
        store: &dyn ObjectStore,
        paths: &HashSet<String>,
        reads: &mut u32,
    ) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        self.read_where(store, reads, |mf, _| paths.contains(&mf.manifest_path), |_, _| true).await
    }

    /// Keeps parsed only the manifests `keep` names; of the others, their digests.
    pub fn retain_parsed(&mut self, keep: impl Fn(&str) -> bool) {
        self.demote(|path, _| keep(path));
    }

    /// Replaces each parsed manifest that `keep` (given its path and entries) does not keep by
    /// its digest.
    fn demote(&mut self, keep: impl Fn(&str, &Content) -> bool) {
        for (path, content) in self.contents.iter_mut() {
            if let Content::Parsed(entries) = &*content
                && !keep(path, content)
            {
                *content = Content::Digest(Arc::new(digest(entries)));
            }
        }
    }

    /// Reads the manifests not parsed yet that `needed` asks for (given what is known of each),
    /// [`READ_PARALLEL`] at a time, and keeps each parsed if `keep` says so, else its digest.
    async fn read_where(
        &mut self,
        store: &dyn ObjectStore,
        reads: &mut u32,
        needed: impl Fn(&ManifestFile, Option<&Content>) -> bool,
        keep: impl Fn(&ManifestFile, &[ManifestEntry]) -> bool,
    ) -> Result<()> {
        let mut seen = HashSet::new();
        let wanted: Vec<ManifestFile> = self
            .list
            .iter()
            .filter(|mf| needed(mf, self.contents.get(&mf.manifest_path)) && seen.insert(mf.manifest_path.as_str()))
            .filter(|mf| self.contents.get(&mf.manifest_path).and_then(Content::parsed).is_none())
            .cloned()
            .collect();
        let mut read = vec![];
        each_manifest(store, &wanted, reads, |mf, entries| {
            let content = match keep(mf, &entries) {
                true => Content::Parsed(Arc::new(entries)),
                false => Content::Digest(Arc::new(digest(&entries))),
            };
            read.push((mf.manifest_path.clone(), content));
            Ok(())
        })
        .await?;
        self.contents.extend(read);
        Ok(())
    }

    /// Reads every data manifest of the list and hands each live entry, with its manifest's
    /// index in the list, to `f`; keeps nothing of them (a compactor's plan).
    pub async fn scan_live(
        &self,
        store: &dyn ObjectStore,
        reads: &mut u32,
        f: impl FnMut(u32, &ManifestFile, &ManifestEntry),
    ) -> Result<()> {
        self.scan(ManifestContentType::Data, store, reads, f).await
    }

    /// [`Manifests::scan_live`] of the delete manifests: each live delete file (other engines'
    /// row-level deletes).
    pub async fn scan_live_deletes(
        &self,
        store: &dyn ObjectStore,
        reads: &mut u32,
        f: impl FnMut(u32, &ManifestFile, &ManifestEntry),
    ) -> Result<()> {
        self.scan(ManifestContentType::Deletes, store, reads, f).await
    }

    /// The delete manifests of the list with their entries (read each time: Floe keeps none).
    pub(super) async fn read_deletes(
        &self,
        store: &dyn ObjectStore,
        reads: &mut u32,
    ) -> Result<Vec<(ManifestFile, Vec<ManifestEntry>)>> {
        let deletes: Vec<ManifestFile> =
            self.list.iter().filter(|mf| mf.content == ManifestContentType::Deletes).cloned().collect();
        let mut out = vec![];
        each_manifest(store, &deletes, reads, |mf, entries| {
            out.push((mf.clone(), entries));
            Ok(())
        })
        .await?;
        Ok(out)
    }

    /// Whether the snapshot has delete manifests.
    pub fn has_deletes(&self) -> bool {
        self.list.iter().any(|mf| mf.content == ManifestContentType::Deletes)
    }

    async fn scan(
        &self,
        content: ManifestContentType,
        store: &dyn ObjectStore,
        reads: &mut u32,
        mut f: impl FnMut(u32, &ManifestFile, &ManifestEntry),
    ) -> Result<()> {
        let index: HashMap<&str, u32> =
            self.list.iter().enumerate().map(|(i, mf)| (mf.manifest_path.as_str(), i as u32)).collect();
        let data: Vec<ManifestFile> = self.list.iter().filter(|mf| mf.content == content).cloned().collect();
        let mut seen = HashSet::new();
        let data: Vec<ManifestFile> = data.into_iter().filter(|mf| seen.insert(mf.manifest_path.clone())).collect();
        each_manifest(store, &data, reads, |mf, entries| {
            let i = index[mf.manifest_path.as_str()];
            for e in entries.iter().filter(|e| e.is_alive()) {
                f(i, mf, e);
            }
            Ok(())
        })
        .await
    }

    /// The live data files of the manifests parsed, with the manifest holding each: all of the
    /// snapshot's after [`Manifests::read_contents`], only some otherwise (see
    /// [`Manifests::read_holding`]).
    pub fn live_parsed(&self) -> impl Iterator<Item = (&ManifestFile, &ManifestEntry)> {
        self.list.iter().filter(|mf| mf.content == ManifestContentType::Data).flat_map(move |mf| {
            let entries = self.contents.get(&mf.manifest_path).and_then(Content::parsed);
            entries.map(|e| e.as_slice()).unwrap_or_default().iter().filter(|e| e.is_alive()).map(move |e| (mf, e))
        })
    }

    /// Entries of data files whose content is kept parsed (a measure of a committer's memory).
    pub fn parsed_entries(&self) -> usize {
        self.contents.values().filter_map(Content::parsed).map(|e| e.len()).sum()
    }

    /// Whether `mf` may hold one of `hashes` (sorted) live; a manifest not known may.
    pub(super) fn may_hold(&self, mf: &ManifestFile, hashes: &[u64]) -> bool {
        self.contents.get(&mf.manifest_path).is_none_or(|c| c.may_hold(hashes))
    }

    /// The entries of `mf`, which must have been parsed.
    pub(super) fn entries(&self, mf: &ManifestFile) -> Result<&Arc<Vec<ManifestEntry>>> {
        self.contents
            .get(&mf.manifest_path)
            .and_then(Content::parsed)
            .ok_or_else(|| Error::internal(format!("manifest {} was not read before planning", mf.manifest_path)))
    }

    /// Carries what is known of `mf` from `from` (a kept manifest of the parent snapshot).
    pub(super) fn carry(&mut self, from: &Manifests, mf: &ManifestFile) {
        if let Some(c) = from.contents.get(&mf.manifest_path) {
            self.contents.insert(mf.manifest_path.clone(), c.clone());
        }
    }

    /// Keeps `entries` parsed as the contents of `mf` (a manifest just written).
    pub(super) fn insert_parsed(&mut self, mf: &ManifestFile, entries: Vec<ManifestEntry>) {
        self.contents.insert(mf.manifest_path.clone(), Content::Parsed(Arc::new(entries)));
    }

    /// Writes the row ids that the entries known of each manifest inherit into them, once the
    /// list has given the manifest its range (format v3; nothing to do otherwise).
    pub(super) fn settle_row_ids(&mut self) {
        for mf in &self.list {
            let Some(Content::Parsed(entries)) = self.contents.get_mut(&mf.manifest_path) else { continue };
            if mf.first_row_id.is_some() && lineage::unresolved(entries) {
                lineage::inherit_row_ids(Arc::make_mut(entries).as_mut_slice(), mf);
            }
        }
    }
}

/// The sorted, distinct hashes of `paths`, as [`Manifests::may_hold`] takes them.
pub(super) fn path_hashes<'p>(paths: impl IntoIterator<Item = &'p String>) -> Vec<u64> {
    let mut hashes: Vec<u64> = paths.into_iter().map(|p| path_hash(p)).collect();
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// Reads `manifests`, [`READ_PARALLEL`] at a time, and hands each one's entries (inheritance
/// resolved) to `f` in list order.
async fn each_manifest(
    store: &dyn ObjectStore,
    manifests: &[ManifestFile],
    reads: &mut u32,
    mut f: impl FnMut(&ManifestFile, Vec<ManifestEntry>) -> Result<()>,
) -> Result<()> {
    use futures::StreamExt;
    // Boxed and collected first: a stream over a closure's futures loses `Send` here.
    type Fetch<'a> =
        futures::future::BoxFuture<'a, std::result::Result<(&'a ManifestFile, bytes::Bytes), crate::PortError>>;
    let gets: Vec<Fetch<'_>> = manifests
        .iter()
        .map(|mf| -> Fetch<'_> { Box::pin(async move { store.get(&mf.manifest_path).await.map(|b| (mf, b)) }) })
        .collect();
    let mut fetched = futures::stream::iter(gets).buffered(READ_PARALLEL);
    while let Some(got) = fetched.next().await {
        let (mf, bytes) = got?;
        *reads += 1;
        let manifest = Manifest::parse_avro(&bytes)?;
        drop(bytes);
        let (entries, _) = manifest.into_parts();
        let mut entries: Vec<ManifestEntry> =
            entries.into_iter().map(|e| inherit(Arc::unwrap_or_clone(e), mf)).collect();
        lineage::inherit_row_ids(&mut entries, mf);
        f(mf, entries)?;
    }
    Ok(())
}

/// An entry as read, with the values the spec says it inherits from its manifest filled in: an
/// added entry's sequence numbers, and any entry's in a manifest of sequence number 0 (written
/// before the table was format 2), as Iceberg Java's `InheritableMetadataFactory` does.
fn inherit(mut e: ManifestEntry, mf: &ManifestFile) -> ManifestEntry {
    e.snapshot_id = e.snapshot_id.or(Some(mf.added_snapshot_id));
    if e.status == ManifestStatus::Added || mf.sequence_number == 0 {
        e.sequence_number = e.sequence_number.or(Some(mf.sequence_number));
        e.file_sequence_number = e.file_sequence_number.or(Some(mf.sequence_number));
    }
    e
}
