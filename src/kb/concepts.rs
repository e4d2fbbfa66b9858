//! Concepts: named ideas that observations are linked to (`/kb concept`, `/kb link`).
use super::*;

impl KnowledgeBase {
    pub(super) fn concepts_of(&self, id: i64) -> Result<Vec<String>, KbError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT c.name FROM links l JOIN concepts c ON c.id = l.concept_id \
                 WHERE l.observation_id = ?1 ORDER BY c.name",
            )
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([id], |r| r.get(0))
            .map_err(|e| self.db_err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.db_err(e))
    }

    pub fn concepts(&self) -> Result<Vec<Concept>, KbError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT c.id, c.name, c.description, \
                 (SELECT COUNT(*) FROM links l WHERE l.concept_id = c.id) FROM concepts c ORDER BY c.name",
            )
            .map_err(|e| self.db_err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Concept {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    description: r.get(2)?,
                    observations: r.get::<_, i64>(3)? as usize,
                })
            })
            .map_err(|e| self.db_err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.db_err(e))
    }

    /// Adds a concept; an existing one gets the new description if one is given.
    pub fn add_concept(&self, name: &str, description: &str) -> Result<i64, KbError> {
        self.writable()?;
        let name = name.trim();
        if name.is_empty() || name.len() > 100 || name.contains('\n') {
            return Err(KbError::Invalid(
                "a concept name is one line of at most 100 characters".into(),
            ));
        }
        if let Some(id) = self.concept_id(name)? {
            if !description.trim().is_empty() {
                self.conn
                    .execute(
                        "UPDATE concepts SET description = ?1 WHERE id = ?2",
                        params![description.trim(), id],
                    )
                    .map_err(|e| self.db_err(e))?;
            }
            return Ok(id);
        }
        self.conn
            .execute(
                "INSERT INTO concepts(name, description, created) VALUES (?1, ?2, ?3)",
                params![name, description.trim(), now_unix()],
            )
            .map_err(|e| self.db_err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    pub(super) fn concept_id(&self, name: &str) -> Result<Option<i64>, KbError> {
        self.conn
            .query_row(
                "SELECT id FROM concepts WHERE name = ?1",
                [name.trim()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.db_err(e))
    }

    /// Links an observation to a concept (the concept is created if it is new).
    /// Returns whether the concept was created.
    pub fn link(&self, observation: i64, concept: &str) -> Result<bool, KbError> {
        self.writable()?;
        self.observation(observation)?;
        let created = self.concept_id(concept)?.is_none();
        let cid = self.add_concept(concept, "")?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO links(observation_id, concept_id) VALUES (?1, ?2)",
                params![observation, cid],
            )
            .map_err(|e| self.db_err(e))?;
        Ok(created)
    }
}
