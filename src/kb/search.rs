//! Finding observations: ranked search (full text and vectors fused by reciprocal rank),
//! the newest of a project, and the knowledge base as a recall silo.

use super::*;

impl KnowledgeBase {
    /// Ranked observations for `query` (full text + vectors, fused by reciprocal rank),
    /// in `project` (all projects when `None`).
    pub fn search(
        &self,
        query: &str,
        project: Option<&str>,
        k: usize,
    ) -> Result<Vec<Observation>, KbError> {
        let pid = match project {
            Some(name) => Some(
                self.project_id(name)?
                    .ok_or_else(|| KbError::NoProject(name.into()))?,
            ),
            None => None,
        };
        let ranking = Ranking::default();
        let pool = ranking.pool(k);
        let mut lexical: Vec<(i64, f64)> = Vec::new();
        if let Some(fts) = fts_query(query) {
            lexical = self
                .tables
                .fts(&fts, pid, pool)
                .map_err(|e| self.db_err(e))?;
        }
        // Evidence on an absolute scale first: the best observation is not relevant by
        // construction.
        let (lexical, nearest) =
            ranking.with_evidence(lexical, self.nearest(query, pid, pool)?, pool);
        let nearest = ranking.keep_similar(nearest);
        let scored = ranking.fuse(&lexical, &nearest);
        let mut out = Vec::new();
        for (id, score) in scored.into_iter().take(k) {
            let mut obs = self.observation(id)?;
            obs.score = score;
            out.push(obs);
        }
        Ok(out)
    }

    /// Maps and checks the vector copy ahead of the first search (see
    /// `vector::VectorCache::warm`); true when it is ready.
    pub fn warm(&self) -> bool {
        let model = self.embedder.as_ref().map(|e| e.model_id());
        self.tables
            .warm_vectors(&self.vectors, model)
            .unwrap_or(false)
    }

    fn nearest(&self, query: &str, pid: Option<i64>, k: usize) -> Result<Vec<(i64, f32)>, KbError> {
        let Some(embedder) = &self.embedder else {
            return Ok(Vec::new());
        };
        let Some(q) = crate::tokens::embed_query(embedder.as_ref(), query, "knowledge-base search")
        else {
            return Ok(Vec::new());
        };
        self.tables
            .nearest(&self.vectors, &q, embedder.model_id(), pid, k)
            .map_err(|e| self.db_err(e))
    }

    /// A project's observations, newest first (at most `limit`).
    pub fn recent(&self, project: &str, limit: usize) -> Result<Vec<Observation>, KbError> {
        let pid = self
            .project_id(project)?
            .ok_or_else(|| KbError::NoProject(project.into()))?;
        let ids = self.tables.recent(pid, limit).map_err(|e| self.db_err(e))?;
        ids.into_iter().map(|id| self.observation(id)).collect()
    }
}

/// An observation as one block line: `- (kb:12 decision) text`.
pub fn observation_line(o: &Observation) -> String {
    let flat = o.text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("- (kb:{} {}) {flat}", o.id, o.kind)
}

/// The knowledge base as a recall silo: the current project's observations relevant to
/// the query go to `[knowledge]`.
pub struct KbSilo<'a>(pub &'a KnowledgeBase);

impl Silo for KbSilo<'_> {
    fn name(&self) -> &str {
        "knowledge"
    }

    fn candidates(&self, query: &str, k: usize) -> Result<Vec<Candidate>, StoreError> {
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let silo_err = |e: KbError| StoreError::Silo(e.to_string());
        let project = self.0.current_project().map_err(silo_err)?;
        let found = self
            .0
            .search(query, Some(&project), k.max(1))
            .map_err(silo_err)?;
        Ok(found
            .iter()
            .map(|o| Candidate {
                id: format!("kb:{}", o.id),
                source: "knowledge".into(),
                section: Section::Knowledge,
                text: observation_line(o),
                score: o.score,
                written: 0,
            })
            .collect())
    }
}
