//! The scan copy's file (`<store database>.vectors`): a 64-byte header, one int8 record
//! per vector (`quant`), then the keys (`key`).
//!
//! Header (little-endian): magic, version, dim, count, hash of the embedder id, the
//! store's stamp (its random id and change generation), length of the keys, checksum
//! (records, keys, then the header before it). A file is used only when all of these
//! match what the store says now; otherwise, or when it is short or its checksum is
//! wrong, it is rebuilt from SQLite. It is written under a temporary name and renamed
//! into place, never rewritten in place: a process that mapped the old file keeps a
//! valid mapping (of the unlinked inode) until it notices the new stamp.
//! Not flushed to disk (a cache): a file cut short by a crash fails its checksum.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::key::Key;
use super::quant;

pub const HEADER: usize = 64;
const MAGIC: &[u8; 8] = b"HRVYVEC\0";
const VERSION: u32 = 1;
/// Bytes scanned (and, when mapped, released) per step of a pass over the records.
pub const STEP: usize = 1 << 20;

/// Which store, and how far its changes had gone, a copy was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub store: i64,
    pub generation: i64,
}

/// What a sidecar was built for; a file of anything else is stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dim: usize,
    pub model: u64,
    pub stamp: Stamp,
}

/// `<database>.vectors`
pub fn path_for(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".vectors");
    PathBuf::from(name)
}

/// FNV-1a of a name (the embedder id in the header).
pub fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A running checksum over pieces of bytes, a word at a time. The same pieces in the same
/// order give the same sum, so readers hash record by record as writers do.
#[derive(Clone, Copy)]
pub struct Checksum(u64);

impl Checksum {
    pub fn new() -> Self {
        Self(0x9e37_79b9_7f4a_7c15)
    }

    pub fn add(&mut self, bytes: &[u8]) {
        // Whole words as plain loads (a copy into a buffer per word cost a `memcpy` call
        // each: most of a 100k-record check); the last short word zero-padded.
        let words = bytes.chunks_exact(8);
        let tail = words.remainder();
        for word in words {
            let w = [
                word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
            ];
            self.mix(u64::from_le_bytes(w));
        }
        if !tail.is_empty() {
            let mut w = [0u8; 8];
            w[..tail.len()].copy_from_slice(tail);
            self.mix(u64::from_le_bytes(w));
        }
    }

    fn mix(&mut self, word: u64) {
        self.0 = (self.0 ^ word)
            .wrapping_mul(0x0100_0000_01b3)
            .rotate_left(29);
    }
}

/// The fields of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub id: Identity,
    pub count: usize,
    pub keys_len: usize,
    pub checksum: u64,
}

impl Header {
    /// The 56 bytes before the checksum, then the checksum.
    pub fn to_bytes(self) -> [u8; HEADER] {
        let mut b = [0u8; HEADER];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(self.id.dim as u32).to_le_bytes());
        b[16..24].copy_from_slice(&(self.count as u64).to_le_bytes());
        b[24..32].copy_from_slice(&self.id.model.to_le_bytes());
        b[32..40].copy_from_slice(&self.id.stamp.store.to_le_bytes());
        b[40..48].copy_from_slice(&self.id.stamp.generation.to_le_bytes());
        b[48..56].copy_from_slice(&(self.keys_len as u64).to_le_bytes());
        b[56..64].copy_from_slice(&self.checksum.to_le_bytes());
        b
    }

    /// `None` when the bytes are not a header of this version.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let u64_at = |at: usize| b.get(at..at + 8)?.try_into().ok().map(u64::from_le_bytes);
        let u32_at = |at: usize| b.get(at..at + 4)?.try_into().ok().map(u32::from_le_bytes);
        if b.get(..8)? != MAGIC || u32_at(8)? != VERSION {
            return None;
        }
        Some(Self {
            id: Identity {
                dim: u32_at(12)? as usize,
                model: u64_at(24)?,
                stamp: Stamp {
                    store: u64_at(32)? as i64,
                    generation: u64_at(40)? as i64,
                },
            },
            count: usize::try_from(u64_at(16)?).ok()?,
            keys_len: usize::try_from(u64_at(48)?).ok()?,
            checksum: u64_at(56)?,
        })
    }

    /// Total file length this header promises (`None` on overflow).
    pub fn file_len(&self) -> Option<usize> {
        self.count
            .checked_mul(quant::record_len(self.id.dim))?
            .checked_add(HEADER)?
            .checked_add(self.keys_len)
    }
}

/// Where a copy's bytes go while it is built: a temporary file beside the sidecar, or
/// memory (a store without a file, or a directory that cannot be written).
enum Sink {
    File {
        out: BufWriter<File>,
        temp: PathBuf,
        path: PathBuf,
    },
    Memory(Vec<u8>),
}

/// A finished copy: the file (renamed into place) or the bytes, header included.
pub enum Built {
    File(File),
    Memory(Vec<u8>),
}

/// Streams records into a sidecar without holding the vectors.
pub struct Builder<K> {
    sink: Sink,
    id: Identity,
    keys: Vec<K>,
    key_bytes: Vec<u8>,
    record: Vec<u8>,
    sum: Checksum,
}

impl<K: Key> Builder<K> {
    /// Into a temporary file beside `path` when there is one and it can be created.
    pub fn new(path: Option<&Path>, id: Identity) -> Self {
        let sink = path
            .and_then(|p| temp_sink(p).map_err(|e| warn_unwritable(p, &e)).ok())
            .unwrap_or_else(|| Sink::Memory(vec![0; HEADER]));
        Self {
            sink,
            id,
            keys: Vec::new(),
            key_bytes: Vec::new(),
            record: Vec::with_capacity(quant::record_len(id.dim)),
            sum: Checksum::new(),
        }
    }

    pub fn dim(&self) -> usize {
        self.id.dim
    }

    /// Adds one vector of `id.dim` components.
    pub fn push(&mut self, key: K, v: &[f32]) -> std::io::Result<()> {
        self.record.clear();
        quant::encode(v, &mut self.record);
        self.sum.add(&self.record);
        match &mut self.sink {
            Sink::File { out, .. } => out.write_all(&self.record)?,
            Sink::Memory(bytes) => bytes.extend_from_slice(&self.record),
        }
        key.encode(&mut self.key_bytes);
        self.keys.push(key);
        Ok(())
    }

    /// Writes keys and header; a file is renamed into place.
    pub fn finish(mut self) -> std::io::Result<(Built, Vec<K>)> {
        self.sum.add(&self.key_bytes);
        let mut header = Header {
            id: self.id,
            count: self.keys.len(),
            keys_len: self.key_bytes.len(),
            checksum: 0,
        };
        self.sum.add(&header.to_bytes()[..56]);
        header.checksum = self.sum.0;
        let head = header.to_bytes();
        let built = match self.sink {
            Sink::Memory(mut bytes) => {
                bytes.extend_from_slice(&self.key_bytes);
                bytes[..HEADER].copy_from_slice(&head);
                Built::Memory(bytes)
            }
            Sink::File { out, temp, path } => {
                let file = finish_file(out, &self.key_bytes, &head);
                let file = file.and_then(|f| std::fs::rename(&temp, &path).map(|()| f));
                if file.is_err() {
                    let _ = std::fs::remove_file(&temp);
                }
                Built::File(file?)
            }
        };
        Ok((built, self.keys))
    }
}

fn temp_sink(path: &Path) -> std::io::Result<Sink> {
    remove_orphans(path);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp.{}.{nanos}", std::process::id()));
    let temp = PathBuf::from(temp);
    let mut out = BufWriter::new(File::create_new(&temp)?);
    out.write_all(&[0; HEADER])?;
    Ok(Sink::File {
        out,
        temp,
        path: path.to_path_buf(),
    })
}

/// Removes `<path>.tmp.<pid>.<nanos>` files left by a process that died while writing
/// one (killed, or the machine went down). Where `/proc` shows which processes live, a
/// file is an orphan when its process is gone; elsewhere, when it is a day old. Files of
/// this process and of live ones may be in flight and are left alone.
pub fn remove_orphans(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.tmp.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let proc_lists_pids = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|rest| rest.split('.').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let orphan = if pid == std::process::id() {
            false
        } else if proc_lists_pids {
            !Path::new("/proc").join(pid.to_string()).exists()
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 24 * 3600)
        };
        if orphan && std::fs::remove_file(entry.path()).is_ok() {
            tracing::info!(
                "removed {}, left by a process that died while writing it",
                entry.path().display()
            );
        }
    }
}

fn warn_unwritable(path: &Path, e: &std::io::Error) {
    tracing::warn!(
        "cannot write the vector copy {}: {e}; vectors are kept in memory instead",
        path.display()
    );
}

fn finish_file(mut out: BufWriter<File>, keys: &[u8], head: &[u8]) -> std::io::Result<File> {
    out.write_all(keys)?;
    out.seek(SeekFrom::Start(0))?;
    out.write_all(head)?;
    out.into_inner().map_err(|e| e.into_error())
}

/// Why a file on disk was not used.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Missing,
    /// Built for another stamp, embedder or dimension: normal after a change.
    Stale,
    /// Not a sidecar of this version, short, or failing its checksum.
    Corrupt(String),
}

/// The dimension the file at `path` says its records have (from its header alone), for a
/// caller that knows the store and the embedder but not yet a vector.
pub fn peek_dim(path: &Path) -> Result<usize, Refused> {
    use std::io::Read;
    let mut head = Vec::with_capacity(HEADER);
    File::open(path)
        .and_then(|f| f.take(HEADER as u64).read_to_end(&mut head))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Refused::Missing,
            _ => Refused::Corrupt(e.to_string()),
        })?;
    Header::parse(&head)
        .map(|h| h.id.dim)
        .ok_or_else(|| Refused::Corrupt("no valid header".into()))
}

/// The header of `bytes` when it describes `id` and promises exactly `bytes.len()`.
pub fn check_header(bytes: &[u8], id: Identity) -> Result<Header, Refused> {
    let header = Header::parse(bytes).ok_or_else(|| Refused::Corrupt("no valid header".into()))?;
    if header.id != id {
        return Err(Refused::Stale);
    }
    if header.file_len() != Some(bytes.len()) {
        return Err(Refused::Corrupt(format!(
            "{} bytes where the header promises {:?}",
            bytes.len(),
            header.file_len()
        )));
    }
    Ok(header)
}

/// The keys of a file whose header `check_header` accepted. Its records are not read
/// here: the first scan checks them as it reads them (see [`Verify`]), so a session start
/// walks the file once, not twice.
pub fn keys<K: Key>(bytes: &[u8], header: &Header) -> Result<Vec<K>, Refused> {
    let records_end = HEADER + header.count * quant::record_len(header.id.dim);
    let mut input = &bytes[records_end..];
    let keys: Option<Vec<K>> = (0..header.count).map(|_| K::decode(&mut input)).collect();
    match keys {
        Some(keys) if input.is_empty() => Ok(keys),
        _ => Err(Refused::Corrupt("keys do not decode".into())),
    }
}

/// The checksum of a file whose header `check_header` accepted, taken record by record
/// in file order as a scan reads them, then over the keys and the header.
pub struct Verify {
    sum: Checksum,
    header: Header,
}

impl Verify {
    pub fn new(header: Header) -> Self {
        Self {
            sum: Checksum::new(),
            header,
        }
    }

    /// Adds the next record (the writer adds each record alone, so must the reader).
    pub fn record(&mut self, record: &[u8]) {
        self.sum.add(record);
    }

    /// Whether the whole file `bytes` holds its checksum, once every record was added.
    pub fn finish(mut self, bytes: &[u8]) -> Result<(), Refused> {
        let records_end = HEADER + self.header.count * quant::record_len(self.header.id.dim);
        self.sum.add(&bytes[records_end..]);
        self.sum.add(&bytes[..56]);
        if self.sum.0 == self.header.checksum {
            Ok(())
        } else {
            Err(Refused::Corrupt("checksum mismatch".into()))
        }
    }
}
