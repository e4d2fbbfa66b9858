//! What the stores ask of SQLite alike: row counts for their status lines, how many rows
//! have a vector of the current embedder, the join their vector scans read (a table's
//! rows with the vector of their text hash), and the note an import leaves.

use std::path::Path;

use rusqlite::{Connection, Row};

use crate::vector::{Key, VectorCache};

/// Rows of `table` (a constant of the caller, never user input).
pub fn count(conn: &Connection, table: &str) -> rusqlite::Result<usize> {
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as usize)
}

/// Rows of `table` whose `hash` column has a vector of `model`.
pub fn count_embedded(conn: &Connection, table: &str, model: &str) -> rusqlite::Result<usize> {
    conn.query_row(
        &format!(
            "SELECT COUNT(*) FROM {table} t WHERE EXISTS \
             (SELECT 1 FROM vectors v WHERE v.hash = t.hash AND v.model = ?1)"
        ),
        [model],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n as usize)
}

/// Records in `meta` where an imported store came from (`from`), and when (`at`).
pub fn mark_imported(conn: &Connection, from: &Path, at: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES ('imported_from', ?1), ('imported_at', ?2)",
        [from.to_string_lossy().into_owned(), at.to_string()],
    )?;
    Ok(())
}

/// A store's rows joined to their vectors, as its scan copy reads them.
pub struct VectorJoin<'a> {
    /// The table (aliased `t` in the other parts).
    pub table: &'a str,
    /// The column holding the text hash the vector is keyed by.
    pub hash: &'a str,
    /// The key columns, e.g. `t.id, t.project_id`.
    pub keys: &'a str,
    /// A condition on `t`, or empty.
    pub filter: &'a str,
}

impl VectorJoin<'_> {
    /// The query: the key columns, then the vector of the embedder bound to `?1`.
    pub fn sql(&self) -> String {
        let VectorJoin {
            table,
            hash,
            keys,
            filter,
        } = self;
        let filter = if filter.is_empty() {
            String::new()
        } else {
            format!(" WHERE {filter}")
        };
        format!(
            "SELECT {keys}, v.v FROM {table} t \
             JOIN vectors v ON v.hash = t.{hash} AND v.model = ?1{filter}"
        )
    }

    /// The `k` rows nearest to the unit vector `q` among those `keep` accepts (see
    /// [`VectorCache::top_k`]), read through `cache`.
    #[allow(clippy::too_many_arguments)]
    pub fn nearest<K: Key>(
        &self,
        conn: &Connection,
        cache: &VectorCache<K>,
        model: &str,
        read_key: impl Fn(&Row<'_>) -> rusqlite::Result<K>,
        q: &[f32],
        k: usize,
        keep: impl Fn(&K) -> bool + Sync,
    ) -> rusqlite::Result<Vec<(K, f32)>> {
        let stamp = super::vectors::stamp(conn)?;
        cache.top_k(conn, stamp, &self.sql(), model, read_key, q, k, keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_join_names_the_hash_column_and_the_filter() {
        let rag = VectorJoin {
            table: "chunks",
            hash: "hash",
            keys: "t.id",
            filter: "",
        };
        assert_eq!(
            rag.sql(),
            "SELECT t.id, v.v FROM chunks t JOIN vectors v ON v.hash = t.hash AND v.model = ?1"
        );
        let memory = VectorJoin {
            table: "memories",
            hash: "vhash",
            keys: "t.id, t.type",
            filter: "t.archived = 0",
        };
        assert!(memory
            .sql()
            .ends_with("v.hash = t.vhash AND v.model = ?1 WHERE t.archived = 0"));
    }
}
