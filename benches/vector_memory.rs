//! `cargo bench --bench vector_memory`: what a store's scan copy costs in resident
//! memory and time, the old way beside the new one, in one run.
//!
//! A SQLite store of N synthetic unit vectors (384 dimensions), then:
//! 1. an f32 copy in RAM (what `vector::VectorCache` held before: 1.5 KB per vector),
//! 2. the int8 copy in a memory-mapped file as built on first use (`VectorCache`),
//! 3. the same file opened by a new cache (another process finding it current),
//! 4. the int8 copy kept in memory (stores without a file).
//!
//! For each: VmRSS before and after, the peak (VmHWM, reset before the phase through
//! /proc/self/clear_refs; Linux only) and ms per scan (top 15, mean of ROUNDS).
//! HARVEY_BENCH_VECTORS chooses N (default 100000). Needs no model.

use std::time::Instant;

use harvey::storage::vectors;
use harvey::vector::{self, VectorCache};
use rusqlite::{params, Connection};

const DIM: usize = 384;
const ROUNDS: usize = 20;
const SQL: &str =
    "SELECT i.id, v.v FROM items i JOIN vectors v ON v.hash = i.hash AND v.model = ?1";
const MODEL: &str = "synthetic";

fn main() {
    let n = std::env::var("HARVEY_BENCH_VECTORS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("store.db");
    let t = Instant::now();
    let conn = fill(&db, n);
    println!(
        "{n} vectors of {DIM} dimensions written in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let q = unit_vector(&mut 0x1234_5678_9abc_def1);
    f32_copy(&conn, &q);
    let sidecar = vector::sidecar_path(&db);
    phase(
        "int8, mapped file, first use (builds the file)",
        &conn,
        &q,
        || {
            let cache = VectorCache::<i64>::with_file(sidecar.clone());
            let t = Instant::now();
            search(&cache, &conn, &q);
            let build = t.elapsed().as_secs_f64() * 1000.0;
            (format!("first query {build:.0} ms"), cache)
        },
    );
    phase(
        "int8, mapped file, found current (another process)",
        &conn,
        &q,
        || {
            let cache = VectorCache::<i64>::with_file(sidecar.clone());
            let t = Instant::now();
            search(&cache, &conn, &q);
            let open = t.elapsed().as_secs_f64() * 1000.0;
            (format!("first query {open:.0} ms"), cache)
        },
    );
    phase("int8, in memory (no file)", &conn, &q, || {
        let cache = VectorCache::<i64>::default();
        search(&cache, &conn, &q);
        (String::new(), cache)
    });
    let bytes = std::fs::metadata(&sidecar).map(|m| m.len()).unwrap_or(0);
    println!("sidecar file: {:.1} MB", bytes as f64 / 1e6);
}

fn fill(db: &std::path::Path, n: usize) -> Connection {
    let conn = Connection::open(db).expect("open");
    conn.execute_batch("CREATE TABLE items(id INTEGER PRIMARY KEY, hash TEXT NOT NULL);")
        .expect("schema");
    conn.execute_batch(vectors::SCHEMA).expect("schema");
    conn.execute_batch(&vectors::watch("items"))
        .expect("schema");
    conn.execute_batch("BEGIN").expect("begin");
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for i in 0..n {
        let hash = vector::text_hash(&i.to_string());
        conn.execute(
            "INSERT INTO items(id, hash) VALUES (?1, ?2)",
            params![i as i64, hash],
        )
        .expect("insert");
        vectors::put(&conn, MODEL, &[(hash, unit_vector(&mut seed))]).expect("put");
    }
    conn.execute_batch("COMMIT").expect("commit");
    conn
}

fn unit_vector(seed: &mut u64) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    vector::normalize(&mut v);
    v
}

fn search(cache: &VectorCache<i64>, conn: &Connection, q: &[f32]) -> Vec<(i64, f32)> {
    let stamp = vectors::stamp(conn).expect("stamp");
    cache
        .top_k(conn, stamp, SQL, MODEL, |r| r.get(0), q, 15, |_| true)
        .expect("scan")
}

/// The copy the cache held before: every vector as f32 in one array, scanned with
/// `vector::dot`.
fn f32_copy(conn: &Connection, q: &[f32]) {
    phase("f32 copy in RAM (before)", conn, q, || {
        let t = Instant::now();
        let mut keys = Vec::new();
        let mut flat = Vec::new();
        let mut stmt = conn.prepare(SQL).expect("prepare");
        let mut rows = stmt.query([MODEL]).expect("query");
        while let Some(r) = rows.next().expect("row") {
            let blob = r.get_ref(1).expect("blob").as_blob().expect("blob");
            if vector::extend_from_blob(&mut flat, blob, DIM) {
                keys.push(r.get::<_, i64>(0).expect("key"));
            }
        }
        let load = t.elapsed().as_secs_f64() * 1000.0;
        let copy = F32Copy {
            keys,
            flat,
            q: q.to_vec(),
        };
        copy.scan();
        (format!("first query {load:.0} ms"), copy)
    });
}

struct F32Copy {
    keys: Vec<i64>,
    flat: Vec<f32>,
    q: Vec<f32>,
}

impl F32Copy {
    fn scan(&self) -> usize {
        let mut top = vector::TopK::new(15);
        for (key, v) in self.keys.iter().zip(self.flat.chunks_exact(DIM)) {
            top.push(vector::dot(&self.q, v), *key);
        }
        top.into_sorted().len()
    }
}

/// Something that scans once more per round (the loaded copy of a phase).
trait Scan {
    fn scan_again(&self, conn: &Connection, q: &[f32]);
}

impl Scan for F32Copy {
    fn scan_again(&self, _: &Connection, _: &[f32]) {
        self.scan();
    }
}

impl Scan for VectorCache<i64> {
    fn scan_again(&self, conn: &Connection, q: &[f32]) {
        search(self, conn, q);
    }
}

/// Runs `load` (which makes the copy and queries it once), then ROUNDS more scans, and
/// prints resident memory around it.
fn phase<S: Scan>(name: &str, conn: &Connection, q: &[f32], load: impl FnOnce() -> (String, S)) {
    reset_peak();
    let before = status("VmRSS:");
    let (note, copy) = load();
    let peak_load = status("VmHWM:");
    let after_load = status("VmRSS:");
    reset_peak();
    let t = Instant::now();
    for _ in 0..ROUNDS {
        copy.scan_again(conn, q);
    }
    let ms = t.elapsed().as_secs_f64() * 1000.0 / ROUNDS as f64;
    let peak_scan = status("VmHWM:");
    let after = status("VmRSS:");
    drop(copy);
    println!(
        "{name}: {note} | RSS before {} MB, after load {} MB (peak {} MB), during scans peak {} MB, after {} MB | {ms:.1} ms per scan",
        mb(before), mb(after_load), mb(peak_load), mb(peak_scan), mb(after)
    );
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn status(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}

fn mb(bytes: Option<u64>) -> String {
    bytes.map_or("?".into(), |b| format!("{:.1}", b as f64 / 1e6))
}
