//! Concepts: named ideas that observations are linked to (`/kb concept`, `/kb link`).
use super::*;

impl KnowledgeBase {
    pub(super) fn concepts_of(&self, id: i64) -> Result<Vec<String>, KbError> {
        self.tables.concepts_of(id).map_err(|e| self.db_err(e))
    }

    pub fn concepts(&self) -> Result<Vec<Concept>, KbError> {
        let rows = self.tables.concepts().map_err(|e| self.db_err(e))?;
        Ok(rows
            .into_iter()
            .map(|c| Concept {
                id: c.id,
                name: c.name,
                description: c.description,
                observations: c.observations,
            })
            .collect())
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
                self.tables
                    .describe_concept(id, description.trim())
                    .map_err(|e| self.db_err(e))?;
            }
            return Ok(id);
        }
        self.tables
            .insert_concept(name, description.trim(), now_unix())
            .map_err(|e| self.db_err(e))
    }

    pub(super) fn concept_id(&self, name: &str) -> Result<Option<i64>, KbError> {
        self.tables
            .concept_id(name.trim())
            .map_err(|e| self.db_err(e))
    }

    /// Links an observation to a concept (the concept is created if it is new).
    /// Returns whether the concept was created.
    pub fn link(&self, observation: i64, concept: &str) -> Result<bool, KbError> {
        self.writable()?;
        self.observation(observation)?;
        let created = self.concept_id(concept)?.is_none();
        let cid = self.add_concept(concept, "")?;
        self.tables
            .link(observation, cid)
            .map_err(|e| self.db_err(e))?;
        Ok(created)
    }
}
