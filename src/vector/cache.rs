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
        keep: impl Fn(&K) -> bool,
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

    /// The `k` best records `keep` accepts. The first scan of a file found on disk also
    /// takes its checksum and fails (nothing returned) when it does not hold.
    fn scan(
        &self,
        q: &[f32],
        k: usize,
        keep: impl Fn(&K) -> bool,
    ) -> Result<Vec<(K, f32)>, Refused> {
        let rec = quant::record_len(self.id.dim);
        let per_step = (STEP / rec).max(1);
        let bytes = self.bytes.as_slice();
        let records = &bytes[HEADER..HEADER + self.keys.len() * rec];
        let mut verify = self.unchecked.take().map(Verify::new);
        let mut top = TopK::new(k);
        let mut at = HEADER;
        for (recs, keys) in records
            .chunks(per_step * rec)
            .zip(self.keys.chunks(per_step))
        {
            for (r, key) in recs.chunks_exact(rec).zip(keys) {
                if let Some(v) = verify.as_mut() {
                    v.record(r);
                }
                let sim = quant::dot(q, r);
                if top.admits(sim) && keep(key) {
                    top.push(sim, key.clone());
                }
            }
            self.bytes.release(at, recs.len());
            at += recs.len();
        }
        if let Some(v) = verify {
            v.finish(bytes)?;
        }
        Ok(top
            .into_sorted()
            .into_iter()
            .map(|(s, key)| (key, s))
            .collect())
    }
}
