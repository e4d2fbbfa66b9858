//! The scan copy of a store's vectors: int8 records (`quant`) in a memory-mapped file
//! beside the store's database (`sidecar`), or in memory for a store without a file.
//!
//! Peak memory is the point. An f32 copy in RAM costs 1.5 KB per 384-dimension vector
//! (150 MB for 100k chunks); an int8 record costs 388 bytes, and those bytes live in the
//! OS page cache, not in the process: the scan walks the mapping a step (`sidecar::STEP`)
//! at a time and tells the kernel it no longer needs each step's pages (`MADV_DONTNEED`),
//! so the process's resident set grows by one step, not by the copy. The next scan maps
//! the pages again from the page cache (minor faults, no disk reads while it stays
//! cached). Only the keys stay in RAM.
//!
//! A file found on disk is checked (its checksum) by the first scan, in the same pass
//! that scores its records: checking it first walked 40 MB twice for a 100k-chunk RAG
//! store (≈ 30 ms of a session start). A file that fails is rebuilt and scanned again,
//! so no score from a damaged file is ever returned.
//!
//! The copy is rebuilt (one query over the store's rows) when the store's [`Stamp`]
//! differs from the one it was built for: a change in this process or another moves the
//! stamp (triggers keep it), and a process that finds a file of the current stamp maps
//! it without reading SQLite at all. The rows come through a callback ([`Filler`]):
//! reading them from SQLite is `storage::vectors`'s job.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use memmap2::{Mmap, UncheckedAdvice};

use super::key::Key;
use super::sidecar::{
    self, Builder, Built, Header, Identity, Refused, Stamp, Verify, HEADER, STEP,
};
use super::{extend_from_blob, quant, TopK};

/// A store's vectors held for exact scans (see the module docs): loaded on first use and
/// again whenever the store's stamp moves.
pub struct VectorCache<K> {
    sidecar: Option<PathBuf>,
    loaded: RefCell<Option<Loaded<K>>>,
}

struct Loaded<K> {
    id: Identity,
    model: String,
    keys: Vec<K>,
    bytes: Bytes,
    /// The header of a file found on disk whose records the first scan checks.
    unchecked: Cell<Option<Header>>,
}

enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// Drops `len` bytes' pages from `at` out of this process (a mapping only; the page
    /// cache keeps them).
    fn release(&self, at: usize, len: usize) {
        if let Bytes::Mapped(m) = self {
            // SAFETY: a read-only, shared mapping of a file that is only ever replaced by
            // rename, never written in place: a dropped page is read back unchanged on the
            // next access, and no reference into the range outlives this call's caller.
            let _ = unsafe { m.unchecked_advise_range(UncheckedAdvice::DontNeed, at, len) };
        }
    }
}

impl<K> Default for VectorCache<K> {
    /// Kept in memory (stores without a file: in-memory databases, the Go tool's stores).
    fn default() -> Self {
        Self {
            sidecar: None,
            loaded: RefCell::new(None),
        }
    }
}

impl<K> VectorCache<K> {
    /// Kept in the file `sidecar` (see [`super::sidecar_path`]).
    pub fn with_file(sidecar: PathBuf) -> Self {
        Self {
            sidecar: Some(sidecar),
            loaded: RefCell::new(None),
        }
    }
}

impl<K: Key> VectorCache<K> {
    /// The `k` rows nearest to the unit vector `q` among those `keep` accepts, with their
    /// (int8-rounded) similarity. `rows` feeds a store's rows into a new copy (see
    /// [`Filler`]; `storage::vectors` reads them from SQLite) and `io_error` turns a
    /// failure to hold the copy into the caller's error. The copy is rebuilt when `stamp`
    /// differs from the one it was built for.
    #[allow(clippy::too_many_arguments)]
    pub fn top_k_with<E>(
        &self,
        stamp: Stamp,
        model: &str,
        q: &[f32],
        k: usize,
        keep: impl Fn(&K) -> bool + Sync,
        rows: &dyn Fn(&mut Filler<K>) -> Result<(), E>,
        io_error: fn(std::io::Error) -> E,
    ) -> Result<Vec<(K, f32)>, E> {
        let id = Identity {
            dim: q.len(),
            model: sidecar::name_hash(model),
            stamp,
        };
        let mut slot = self.loaded.borrow_mut();
        if !slot
            .as_ref()
            .is_some_and(|l| l.id == id && l.model == model)
        {
            *slot = None;
            *slot = Some(self.load(id, model, rows, io_error)?);
        }
        let Some(loaded) = slot.as_ref() else {
            return Ok(Vec::new());
        };
        match loaded.scan(q, k, &keep) {
            Ok(found) => Ok(found),
            Err(why) => {
                *slot = None;
                let rebuilt = slot.insert(self.rebuild(id, model, &why, rows, io_error)?);
                Ok(rebuilt.scan(q, k, &keep).unwrap_or_default())
            }
        }
    }

    fn load<E>(
        &self,
        id: Identity,
        model: &str,
        rows: &dyn Fn(&mut Filler<K>) -> Result<(), E>,
        io_error: fn(std::io::Error) -> E,
    ) -> Result<Loaded<K>, E> {
        match self.sidecar.as_deref().map(|p| open(p, id)) {
            Some(Ok((bytes, keys, header))) => {
                Ok(Loaded::new(id, model, keys, bytes, Some(header)))
            }
            Some(Err(why)) => self.rebuild(id, model, &why, rows, io_error),
            None => self.rebuild(id, model, &Refused::Missing, rows, io_error),
        }
    }

    /// Maps and checks a current file before the first scan needs it, so that scan only
    /// scores: a session start does this while the embedder loads (the query's vector
    /// is not known yet, so the dimension is the file's). Nothing happens when a copy is
    /// loaded already, or the file is missing, stale or damaged: the first scan deals with
    /// those as it always does (rebuilds, warns about damage). True when a checked copy
    /// of `model` for `stamp` is ready.
    pub fn warm(&self, stamp: Stamp, model: &str) -> bool {
        let mut slot = self.loaded.borrow_mut();
        let wanted = |l: &Loaded<K>| l.id.stamp == stamp && l.model == model;
        if slot.as_ref().is_some_and(|l| !wanted(l)) {
            *slot = None;
        }
        if slot.is_none() {
            let Some(path) = self.sidecar.as_deref() else {
                return false;
            };
            let found = sidecar::peek_dim(path).and_then(|dim| {
                let id = Identity {
                    dim,
                    model: sidecar::name_hash(model),
                    stamp,
                };
                open(path, id)
                    .map(|(bytes, keys, header)| Loaded::new(id, model, keys, bytes, Some(header)))
            });
            match found {
                Ok(loaded) => *slot = Some(loaded),
                Err(_) => return false,
            }
        }
        match slot.as_ref().map(Loaded::check) {
            Some(Ok(())) => true,
            Some(Err(_)) => {
                *slot = None;
                false
            }
            None => false,
        }
    }

    /// A new copy from the store's rows, in place of a file refused for `why` (a corrupt
    /// one is worth a warning; a missing or stale one is normal).
    fn rebuild<E>(
        &self,
        id: Identity,
        model: &str,
        why: &Refused,
        rows: &dyn Fn(&mut Filler<K>) -> Result<(), E>,
        io_error: fn(std::io::Error) -> E,
    ) -> Result<Loaded<K>, E> {
        let path = self.sidecar.as_deref();
        if let (Some(path), Refused::Corrupt(why)) = (path, why) {
            tracing::warn!(
                "vector copy {}: {why}; rebuilding it from the store",
                path.display()
            );
        }
        let (bytes, keys) = build(path, id, rows, io_error)?;
        Ok(Loaded::new(id, model, keys, bytes, None))
    }
}

/// What a store's rows are fed into when a copy is built: each row's vector BLOB, then,
/// when [`Filler::accepts`] it, the row's key (read only then).
pub struct Filler<K> {
    builder: Builder<K>,
    v: Vec<f32>,
    failed: Option<std::io::Error>,
}

impl<K: Key> Filler<K> {
    fn new(builder: Builder<K>) -> Self {
        let v = Vec::with_capacity(builder.dim());
        Self {
            builder,
            v,
            failed: None,
        }
    }

    /// Whether `blob` holds a vector of the copy's dimension (a BLOB of another size is
    /// skipped) and the copy can still take it.
    pub fn accepts(&mut self, blob: &[u8]) -> bool {
        self.v.clear();
        self.failed.is_none() && extend_from_blob(&mut self.v, blob, self.builder.dim())
    }

    /// Adds the vector just accepted under `key`; false when writing the copy failed
    /// (the caller stops reading rows).
    pub fn push(&mut self, key: K) -> bool {
        match self.builder.push(key, &self.v) {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    fn finish(self) -> Filled<K> {
        match self.failed {
            Some(e) => Err(e),
            None => self.builder.finish(),
        }
    }
}

/// A current sidecar at `path`, mapped, its header and keys checked (its records are
/// checked by the first scan, against the header returned).
fn open<K: Key>(path: &Path, id: Identity) -> Result<(Bytes, Vec<K>, Header), Refused> {
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Refused::Missing,
        _ => Refused::Corrupt(e.to_string()),
    })?;
    // SAFETY: sidecars are replaced by rename, never truncated or written in place, so the
    // mapped bytes do not change under the mapping.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| Refused::Corrupt(e.to_string()))?;
    let bytes = Bytes::Mapped(map);
    let header = sidecar::check_header(bytes.as_slice(), id)?;
    let keys = sidecar::keys(bytes.as_slice(), &header)?;
    bytes.release(0, bytes.as_slice().len());
    Ok((bytes, keys, header))
}

/// Reads the store's rows into a new copy: a file at `path` (renamed into place, then
/// mapped) or, without one or when writing it fails, memory.
fn build<K: Key, E>(
    path: Option<&Path>,
    id: Identity,
    rows: &dyn Fn(&mut Filler<K>) -> Result<(), E>,
    io_error: fn(std::io::Error) -> E,
) -> Result<(Bytes, Vec<K>), E> {
    let io_failed = |e: std::io::Error| {
        if let Some(p) = path {
            tracing::warn!(
                "cannot write the vector copy {}: {e}; keeping it in memory",
                p.display()
            );
        }
    };
    match fill(Builder::new(path, id), rows)? {
        Ok((Built::File(file), keys)) => match unsafe_map(&file) {
            Ok(map) => return Ok((Bytes::Mapped(map), keys)),
            Err(e) => io_failed(e),
        },
        Ok((Built::Memory(bytes), keys)) => return Ok((Bytes::Owned(bytes), keys)),
        Err(e) => io_failed(e),
    }
    match fill(Builder::new(None, id), rows)?.map_err(io_error)? {
        (Built::Memory(bytes), keys) => Ok((Bytes::Owned(bytes), keys)),
        (Built::File(file), keys) => {
            Ok((Bytes::Mapped(unsafe_map(&file).map_err(io_error)?), keys))
        }
    }
}

fn unsafe_map(file: &std::fs::File) -> std::io::Result<Mmap> {
    // SAFETY: as in `open`: the file was just written by this process and is only ever
    // replaced by rename.
    unsafe { Mmap::map(file) }
}

type Filled<K> = std::io::Result<(Built, Vec<K>)>;

fn fill<K: Key, E>(
    builder: Builder<K>,
    rows: &dyn Fn(&mut Filler<K>) -> Result<(), E>,
) -> Result<Filled<K>, E> {
    let mut filler = Filler::new(builder);
    rows(&mut filler)?;
    Ok(filler.finish())
}

impl<K: Clone> Loaded<K> {
    fn new(
        id: Identity,
        model: &str,
        keys: Vec<K>,
        bytes: Bytes,
        unchecked: Option<Header>,
    ) -> Self {
        Self {
            id,
            model: model.to_string(),
            keys,
            bytes,
            unchecked: Cell::new(unchecked),
        }
    }

    /// Takes the checksum of a file found on disk now rather than in the first scan
    /// (see [`VectorCache::warm`]); Ok when it holds or was taken before.
    fn check(&self) -> Result<(), Refused> {
        let Some(header) = self.unchecked.take() else {
            return Ok(());
        };
        let mut verify = Verify::new(header);
        let steps = self.steps();
        for i in 0..steps.count() {
            steps.verify(i, &mut verify);
            steps.release(i);
        }
        verify.finish(self.bytes.as_slice())
    }

    fn steps(&self) -> Steps<'_, K> {
        let rec = quant::record_len(self.id.dim);
        Steps {
            bytes: &self.bytes,
            keys: &self.keys,
            rec,
            per_step: (STEP / rec).max(1),
        }
    }

    /// The `k` best records `keep` accepts. The first scan of a file found on disk also
    /// takes its checksum and fails (nothing returned) when it does not hold; a checked
    /// copy of many steps is scored by more than one thread (see [`shared_top_k`]).
    fn scan(
        &self,
        q: &[f32],
        k: usize,
        keep: impl Fn(&K) -> bool + Sync,
    ) -> Result<Vec<(K, f32)>, Refused>
    where
        K: Send + Sync,
    {
        let steps = self.steps();
        let best = match self.unchecked.take() {
            Some(header) => {
                let mut verify = Verify::new(header);
                let mut top = TopK::new(k);
                for i in 0..steps.count() {
                    steps.verify(i, &mut verify);
                    steps.score(i, q, &keep, &mut top);
                    steps.release(i);
                }
                verify.finish(self.bytes.as_slice())?;
                top.into_sorted()
            }
            None => shared_top_k(&steps, q, k, &keep),
        };
        Ok(best.into_iter().map(|(s, (_, key))| (key, s)).collect())
    }
}

/// A copy's records and keys cut in steps of [`STEP`] bytes: the unit a scan scores,
/// releases, and hands out to its threads.
struct Steps<'a, K> {
    bytes: &'a Bytes,
    keys: &'a [K],
    rec: usize,
    per_step: usize,
}

impl<K: Clone> Steps<'_, K> {
    fn count(&self) -> usize {
        self.keys.len().div_ceil(self.per_step)
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        i * self.per_step..((i + 1) * self.per_step).min(self.keys.len())
    }

    fn records(&self, i: usize) -> std::slice::ChunksExact<'_, u8> {
        let r = self.range(i);
        self.bytes.as_slice()[HEADER + r.start * self.rec..HEADER + r.end * self.rec]
            .chunks_exact(self.rec)
    }

    /// Scores step `i` into `top`, each key with its record's index (which orders ties,
    /// so a scan gives the same list however its steps were shared out).
    fn score(&self, i: usize, q: &[f32], keep: &impl Fn(&K) -> bool, top: &mut TopK<(usize, K)>) {
        let first = self.range(i).start;
        for (n, (r, key)) in self.records(i).zip(&self.keys[self.range(i)]).enumerate() {
            let sim = quant::dot(q, r);
            if top.admits(sim) && keep(key) {
                top.push(sim, (first + n, key.clone()));
            }
        }
    }

    /// Adds step `i`'s records to the checksum, in file order.
    fn verify(&self, i: usize, verify: &mut Verify) {
        self.records(i).for_each(|r| verify.record(r));
    }

    /// Drops step `i`'s pages from the process (see [`Bytes::release`]).
    fn release(&self, i: usize) {
        let r = self.range(i);
        self.bytes
            .release(HEADER + r.start * self.rec, r.len() * self.rec);
    }
}

/// Steps a helper thread must have to be worth starting (8 MB: 20k records of 384
/// dimensions); at most [`MAX_HELPERS`] helpers beside the calling thread.
const STEPS_PER_HELPER: usize = 8;
const MAX_HELPERS: usize = 3;

/// The `k` best of every step, the steps taken in turn by the calling thread and the
/// helpers a big copy is worth (a 100k-record copy: 40 MB, ≈ 9 ms on one 2-core x86
/// thread, mostly bound by reading the pages). Threads take the next step from a shared
/// counter, so a helper that is never scheduled costs nothing but its start. Each keeps
/// its own best `k`; ties are broken by record index, which makes the merged list the
/// one a single pass gives.
fn shared_top_k<K: Clone + Send + Sync>(
    steps: &Steps<'_, K>,
    q: &[f32],
    k: usize,
    keep: &(impl Fn(&K) -> bool + Sync),
) -> Vec<(f32, (usize, K))> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let work = || {
        let mut top = TopK::new(k);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= steps.count() {
                return top.into_sorted();
            }
            steps.score(i, q, keep, &mut top);
            steps.release(i);
        }
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let helpers = (steps.count() / STEPS_PER_HELPER)
        .min(cores.saturating_sub(1))
        .min(MAX_HELPERS);
    if helpers == 0 {
        return work();
    }
    let mut all = std::thread::scope(|s| {
        let started: Vec<_> = (0..helpers).map(|_| s.spawn(work)).collect();
        let mut all = work();
        for h in started {
            // A helper that panicked re-raises here, as a panic of this thread would.
            all.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        all
    });
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1 .0.cmp(&b.1 .0)));
    all.truncate(k);
    all
}
