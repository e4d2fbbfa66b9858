//! The `vectors` table every store keeps (keyed by text hash and embedder id), the store's
//! stamp that tells a scan copy it is stale, and the row reads that fill a
//! [`VectorCache`] from SQLite. The arithmetic and the copy itself are `crate::vector`'s.

use rusqlite::{params, Connection, Row};

use crate::vector::{to_blob, Filler, Key, Stamp, VectorCache};

#[cfg(test)]
mod tests;

/// The vectors table and the store's stamp; created by every store that keeps vectors.
///
/// The stamp is a random store id (a file replaced by another store never matches an
/// old copy) and a generation that triggers move on every change of `vectors` and of
/// the tables a store names with [`watch`], in any process: the scan copy
/// ([`VectorCache`]) is rebuilt when it moves.
///
/// A rowid table on purpose: a 384-float vector (1.5 KB) is larger than what an index
/// b-tree (which a `WITHOUT ROWID` table is) keeps in its page, so every vector there
/// spilled to an overflow page and the scan was several times slower (measured in
/// `benches/retrieval.rs`).
pub const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS vectors(
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    v BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS vectors_key ON vectors(hash, model);
CREATE TABLE IF NOT EXISTS vector_stamp(
    id INTEGER PRIMARY KEY CHECK (id = 0),
    store INTEGER NOT NULL,
    generation INTEGER NOT NULL
);
INSERT OR IGNORE INTO vector_stamp(id, store, generation) VALUES (0, random(), 0);
CREATE TRIGGER IF NOT EXISTS vectors_vstamp_insert AFTER INSERT ON vectors BEGIN
    UPDATE vector_stamp SET generation = generation + 1 WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS vectors_vstamp_update AFTER UPDATE ON vectors BEGIN
    UPDATE vector_stamp SET generation = generation + 1 WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS vectors_vstamp_delete AFTER DELETE ON vectors BEGIN
    UPDATE vector_stamp SET generation = generation + 1 WHERE id = 0; END;";

/// Stores vectors (one transaction is the caller's business).
pub fn put(conn: &Connection, model: &str, items: &[(String, Vec<f32>)]) -> rusqlite::Result<()> {
    let mut stmt =
        conn.prepare_cached("INSERT OR REPLACE INTO vectors(hash, model, v) VALUES (?1, ?2, ?3)")?;
    for (hash, v) in items {
        stmt.execute(params![hash, model, to_blob(v)])?;
    }
    Ok(())
}

/// The store's stamp (see [`SCHEMA`]): its random id and change generation.
pub fn stamp(conn: &Connection) -> rusqlite::Result<Stamp> {
    let mut stmt =
        conn.prepare_cached("SELECT store, generation FROM vector_stamp WHERE id = 0")?;
    stmt.query_row([], |r| {
        Ok(Stamp {
            store: r.get(0)?,
            generation: r.get(1)?,
        })
    })
}

/// Maps and checks the scan copy of `model`'s vectors before the first scan needs it
/// (see [`VectorCache::warm`]); true when it is ready (never without an embedder).
pub fn warm<K: Key>(
    conn: &Connection,
    cache: &VectorCache<K>,
    model: Option<&str>,
) -> rusqlite::Result<bool> {
    match model {
        Some(model) => Ok(cache.warm(stamp(conn)?, model)),
        None => Ok(false),
    }
}

/// Triggers that move the stamp when a row of `table` (the rows a store's vector scan
/// joins, e.g. `chunks`) is added, changed or removed. `table` is a constant of the
/// caller, never user input.
pub fn watch(table: &str) -> String {
    ["INSERT", "UPDATE", "DELETE"]
        .iter()
        .map(|op| {
            format!(
                "CREATE TRIGGER IF NOT EXISTS {table}_vstamp_{} AFTER {op} ON {table} BEGIN \
                 UPDATE vector_stamp SET generation = generation + 1 WHERE id = 0; END;\n",
                op.to_lowercase()
            )
        })
        .collect()
}

impl<K: Key> VectorCache<K> {
    /// The `k` rows nearest to the unit vector `q` among those `keep` accepts, with their
    /// (int8-rounded) similarity. `sql` selects the key columns and, last, the vector
    /// BLOB, with `?1` bound to `model`; `read_key` turns a row into a key. The copy is
    /// rebuilt when `stamp` (see [`stamp`]) differs from the one it was built for.
    #[allow(clippy::too_many_arguments)]
    pub fn top_k(
        &self,
        conn: &Connection,
        stamp: Stamp,
        sql: &str,
        model: &str,
        read_key: impl Fn(&Row<'_>) -> rusqlite::Result<K>,
        q: &[f32],
        k: usize,
        keep: impl Fn(&K) -> bool + Sync,
    ) -> rusqlite::Result<Vec<(K, f32)>> {
        let rows = |fill: &mut Filler<K>| read_rows(conn, sql, model, &read_key, fill);
        self.top_k_with(stamp, model, q, k, keep, &rows, |e| {
            rusqlite::Error::ToSqlConversionFailure(Box::new(e))
        })
    }
}

/// Feeds the rows of `sql` into `fill`, the vector BLOB being the last column.
fn read_rows<K: Key>(
    conn: &Connection,
    sql: &str,
    model: &str,
    read_key: &dyn Fn(&Row<'_>) -> rusqlite::Result<K>,
    fill: &mut Filler<K>,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([model])?;
    while let Some(r) = rows.next()? {
        let blob = r.get_ref(r.as_ref().column_count() - 1)?.as_blob()?;
        if fill.accepts(blob) && !fill.push(read_key(r)?) {
            break;
        }
    }
    Ok(())
}
