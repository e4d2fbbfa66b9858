//! The scan copy end to end: a small SQLite store, its sidecar file, rebuilds.

use super::*;
use crate::vector::{dot, normalize, sidecar_path, text_hash, TopK};

const SQL: &str =
    "SELECT i.id, v.v FROM items i JOIN vectors v ON v.hash = i.hash AND v.model = ?1";
const MODEL: &str = "test-embedder";

fn store(path: &std::path::Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, hash TEXT NOT NULL);",
    )
    .unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.execute_batch(&watch("items")).unwrap();
    conn
}

/// Unit vector along axis `i`, tilted slightly towards axis `i + 1` (well separated).
fn axis(i: usize, dim: usize) -> Vec<f32> {
    let mut v = vec![0.0; dim];
    v[i % dim] = 1.0;
    v[(i + 1) % dim] = 0.1 * (i % 3) as f32;
    normalize(&mut v);
    v
}

fn add(conn: &Connection, id: i64, v: &[f32]) {
    let hash = text_hash(&id.to_string());
    conn.execute(
        "INSERT INTO items(id, hash) VALUES (?1, ?2)",
        params![id, hash],
    )
    .unwrap();
    put(conn, MODEL, &[(hash, v.to_vec())]).unwrap();
}

fn search(cache: &VectorCache<i64>, conn: &Connection, sql: &str, q: &[f32], k: usize) -> Vec<i64> {
    cache
        .top_k(
            conn,
            stamp(conn).unwrap(),
            sql,
            MODEL,
            |r| r.get(0),
            q,
            k,
            |_| true,
        )
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// The f32 ranking the copy must reproduce.
fn exact(vectors: &[(i64, Vec<f32>)], q: &[f32], k: usize) -> Vec<i64> {
    let mut top = TopK::new(k);
    for (id, v) in vectors {
        top.push(dot(q, v), *id);
    }
    top.into_sorted().into_iter().map(|(_, id)| id).collect()
}

fn filled(dir: &std::path::Path, n: usize, dim: usize) -> (Connection, Vec<(i64, Vec<f32>)>) {
    let conn = store(&dir.join("store.db"));
    let vectors: Vec<(i64, Vec<f32>)> = (0..n).map(|i| (i as i64 + 1, axis(i, dim))).collect();
    for (id, v) in &vectors {
        add(&conn, *id, v);
    }
    (conn, vectors)
}

#[test]
fn ranking_equals_the_f32_one_from_file_and_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, vectors) = filled(dir.path(), 40, 32);
    let file = VectorCache::with_file(sidecar_path(&dir.path().join("store.db")));
    let memory = VectorCache::default();
    for (i, (_, v)) in vectors.iter().enumerate().step_by(7) {
        let mut q = v.clone();
        q[(i + 5) % 32] += 0.3;
        normalize(&mut q);
        let want = exact(&vectors, &q, 5);
        assert_eq!(search(&file, &conn, SQL, &q, 5), want, "query {i}");
        assert_eq!(search(&memory, &conn, SQL, &q, 5), want, "query {i}");
    }
    assert!(sidecar_path(&dir.path().join("store.db")).is_file());
}

#[test]
fn a_current_file_is_used_without_reading_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, vectors) = filled(dir.path(), 10, 16);
    let path = sidecar_path(&dir.path().join("store.db"));
    search(
        &VectorCache::with_file(path.clone()),
        &conn,
        SQL,
        &vectors[0].1,
        3,
    );
    // Another process (a new cache): a query that cannot run proves the file was enough.
    let later = VectorCache::with_file(path);
    let found = search(
        &later,
        &conn,
        "SELECT no_such_column FROM items",
        &vectors[3].1,
        3,
    );
    assert_eq!(found, exact(&vectors, &vectors[3].1, 3));
}

#[test]
fn a_stale_file_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, mut vectors) = filled(dir.path(), 10, 16);
    let path = sidecar_path(&dir.path().join("store.db"));
    let first = VectorCache::with_file(path.clone());
    search(&first, &conn, SQL, &vectors[0].1, 3);
    let before = std::fs::read(&path).unwrap();
    // Another connection (another process) adds a row: the stamp moves.
    let other = store(&dir.path().join("store.db"));
    let new = axis(13, 16);
    add(&other, 99, &new);
    vectors.push((99, new.clone()));
    assert_eq!(
        search(&first, &conn, SQL, &new, 1),
        [99],
        "seen by the open cache"
    );
    let after = std::fs::read(&path).unwrap();
    assert_ne!(before, after, "the file was rewritten");
    let fresh = VectorCache::with_file(path);
    assert_eq!(
        search(&fresh, &conn, SQL, &new, 3),
        exact(&vectors, &new, 3)
    );
    // Removing a row (not a vector) moves the stamp too.
    other
        .execute("DELETE FROM items WHERE id = 99", [])
        .unwrap();
    assert_ne!(search(&first, &conn, SQL, &new, 1), [99]);
}

#[test]
fn temp_files_of_dead_writers_are_removed_when_the_file_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, vectors) = filled(dir.path(), 4, 16);
    let path = sidecar_path(&dir.path().join("store.db"));
    // A pid that has just exited (reuse within the test is not expected), this process,
    // a live process (init), and a name that is not a temp file of ours.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let named = |tail: &str| dir.path().join(format!("store.db.vectors.tmp.{tail}"));
    let orphan = named(&format!("{dead}.17"));
    let kept = [
        named(&format!("{}.17", std::process::id())),
        named("1.17"),
        named("notapid.17"),
        dir.path().join(format!("other.db.vectors.tmp.{dead}.17")),
    ];
    for file in kept.iter().chain([&orphan]) {
        std::fs::write(file, b"half a vector file").unwrap();
    }
    let cache = VectorCache::with_file(path.clone());
    assert_eq!(search(&cache, &conn, SQL, &vectors[1].1, 1), [vectors[1].0]);
    assert!(path.exists(), "the copy was written");
    assert!(!orphan.exists(), "the dead writer's temp file is gone");
    for file in &kept {
        assert!(file.exists(), "{} must stay", file.display());
    }
}

/// A store of 12 vectors whose copy was written to its file by one search: the
/// connection, the file, a query and the ids it must find.
fn with_a_file(dir: &std::path::Path) -> (Connection, std::path::PathBuf, Vec<f32>, Vec<i64>) {
    let (conn, vectors) = filled(dir, 12, 16);
    let path = sidecar_path(&dir.join("store.db"));
    let q = vectors[4].1.clone();
    let want = exact(&vectors, &q, 4);
    search(&VectorCache::with_file(path.clone()), &conn, SQL, &q, 4);
    (conn, path, q, want)
}

#[test]
fn a_truncated_or_corrupt_file_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, path, q, want) = with_a_file(dir.path());
    let q = &q;
    let good = std::fs::read(&path).unwrap();
    let mut damaged: Vec<Vec<u8>> = [0, 10, 63, 64, 100, good.len() - 1]
        .iter()
        .map(|n| good[..*n].to_vec())
        .collect();
    for at in [0, 13, 70, 200, good.len() - 3] {
        let mut bytes = good.clone();
        bytes[at] ^= 0x5a;
        damaged.push(bytes);
    }
    let mut longer = good.clone();
    longer.extend_from_slice(b"junk");
    damaged.push(longer);
    for (i, bytes) in damaged.iter().enumerate() {
        std::fs::write(&path, bytes).unwrap();
        let cache = VectorCache::with_file(path.clone());
        assert_eq!(search(&cache, &conn, SQL, q, 4), want, "damage {i}");
        assert_eq!(std::fs::read(&path).unwrap(), good, "damage {i}: rebuilt");
    }
}

#[test]
fn an_unwritable_place_keeps_the_copy_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, vectors) = filled(dir.path(), 8, 16);
    let cache = VectorCache::with_file(dir.path().join("missing/dir/store.db.vectors"));
    let q = &vectors[2].1;
    assert_eq!(search(&cache, &conn, SQL, q, 3), exact(&vectors, q, 3));
}

#[test]
fn another_embedder_or_dimension_is_a_different_copy() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, vectors) = filled(dir.path(), 6, 16);
    let cache = VectorCache::with_file(sidecar_path(&dir.path().join("store.db")));
    assert_eq!(search(&cache, &conn, SQL, &vectors[1].1, 1), [2]);
    let other_model = cache
        .top_k(
            &conn,
            stamp(&conn).unwrap(),
            SQL,
            "other",
            |r| r.get(0),
            &vectors[1].1,
            1,
            |_| true,
        )
        .unwrap();
    assert!(other_model.is_empty(), "no vectors of that embedder");
    assert!(
        search(&cache, &conn, SQL, &[1.0; 8], 3).is_empty(),
        "no vectors of 8 dimensions"
    );
}

#[test]
fn a_warmed_copy_is_used_as_is_and_a_bad_file_is_still_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (conn, path, q, want) = with_a_file(dir.path());
    let q = &q;
    let now = stamp(&conn).unwrap();

    let warmed = VectorCache::with_file(path.clone());
    assert!(warmed.warm(now, MODEL), "a current file is ready");
    assert!(warmed.warm(now, MODEL), "and stays so");
    // A query that cannot run proves the warmed copy answered alone.
    let broken = "SELECT no_such_column FROM items";
    assert_eq!(search(&warmed, &conn, broken, q, 4), want);

    assert!(
        !VectorCache::<i64>::with_file(path.clone()).warm(now, "another-embedder"),
        "another embedder's copy is not this one"
    );
    assert!(!VectorCache::<i64>::default().warm(now, MODEL), "no file");

    let good = std::fs::read(&path).unwrap();
    for (i, bytes) in [good[..good.len() - 1].to_vec(), {
        let mut b = good.clone();
        b[200] ^= 0x5a;
        b
    }]
    .iter()
    .enumerate()
    {
        std::fs::write(&path, bytes).unwrap();
        let cache = VectorCache::with_file(path.clone());
        assert!(
            !cache.warm(now, MODEL),
            "damage {i} is found by the warm-up"
        );
        assert_eq!(search(&cache, &conn, SQL, q, 4), want, "damage {i}");
        assert_eq!(std::fs::read(&path).unwrap(), good, "damage {i}: rebuilt");
    }

    // Another process adds a row: the file is stale for the new stamp.
    let other = store(&dir.path().join("store.db"));
    add(&other, 99, &axis(13, 16));
    let cache = VectorCache::with_file(path);
    assert!(!cache.warm(stamp(&conn).unwrap(), MODEL), "stale");
    assert_eq!(search(&cache, &conn, SQL, &axis(13, 16), 1), [99]);
}

/// Record `i` of a big copy: one of `distinct` directions (so many records tie), or with
/// `vary`, that direction nudged by `i` (so few do).
fn record(i: usize, dim: usize, distinct: usize, vary: bool) -> Vec<f32> {
    let mut v = axis(i % distinct, dim);
    if vary {
        v[100 + i % 200] += 0.002 * (i % 13) as f32;
        normalize(&mut v);
    }
    v
}

/// The 25 nearest to `q` (every fifth-but-three id left out by `keep`) in a copy of `n`
/// records (see [`record`]), built straight from memory (no SQLite) when needed.
fn big_copy(
    cache: &VectorCache<i64>,
    n: usize,
    dim: usize,
    distinct: usize,
    vary: bool,
    q: &[f32],
) -> Vec<i64> {
    let stamp = Stamp {
        store: 7,
        generation: 1,
    };
    let rows = |fill: &mut crate::vector::Filler<i64>| -> rusqlite::Result<()> {
        for i in 0..n {
            let blob = crate::vector::to_blob(&record(i, dim, distinct, vary));
            if fill.accepts(&blob) && !fill.push(i as i64) {
                break;
            }
        }
        Ok(())
    };
    cache
        .top_k_with(
            stamp,
            MODEL,
            q,
            25,
            |id| id % 5 != 3,
            &rows,
            |e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)),
        )
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

#[test]
fn a_big_copy_shared_out_between_threads_ranks_as_one_pass_does() {
    // 24k records of 384 dimensions: 9 MB, 9 steps, so a helper thread takes part on a
    // machine with two cores or more.
    let (n, dim, distinct) = (24_000, 384, 50);
    let dir = tempfile::tempdir().unwrap();
    let stamp = Stamp {
        store: 7,
        generation: 1,
    };
    for vary in [false, true] {
        let path = dir.path().join(format!("big-{vary}.vectors"));
        let copy = |cache: &VectorCache<i64>, q: &[f32]| big_copy(cache, n, dim, distinct, vary, q);
        let q = axis(7, dim);
        let built = copy(&VectorCache::with_file(path.clone()), &q);
        // A fresh cache checks the file while it scans it: one pass, in file order.
        let one_pass = copy(&VectorCache::with_file(path.clone()), &q);
        assert_eq!(built, one_pass, "vary {vary}");
        if !vary {
            // Every record of direction 7 ties: one pass keeps the first 25 `keep` takes.
            let first: Vec<i64> = (0..n as i64)
                .filter(|i| i % distinct as i64 == 7 && i % 5 != 3)
                .take(25)
                .collect();
            assert_eq!(one_pass, first);
        }
        let warmed = VectorCache::with_file(path.clone());
        assert!(warmed.warm(stamp, MODEL));
        for round in 0..3 {
            assert_eq!(
                copy(&warmed, &q),
                one_pass,
                "vary {vary}, shared scan {round}"
            );
        }
        let mut other = axis(11, dim);
        other[12] += 0.05;
        normalize(&mut other);
        let one_pass = copy(&VectorCache::with_file(path), &other);
        assert_eq!(
            copy(&warmed, &other),
            one_pass,
            "vary {vary}, another query"
        );
    }
}
