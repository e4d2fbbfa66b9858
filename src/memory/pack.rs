//! Packing: ranked candidates into the `[memory context]` block under an exact token
//! budget. Factual items (workspace profile, project facts, recent sessions) go first
//! under their own cap, then the best remaining items that fit; an item that does not fit
//! is skipped and packing goes on. Every cost is counted with the loaded model's
//! tokenizer, and the final block is counted again as a whole, so the reported number is
//! exactly what the model gets. Pure: no storage, no model.

use serde::Serialize;

use crate::tokens::TokenCounter;

/// Where an item goes in the block (the order of the variants is the block's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Profile,
    Facts,
    /// Summaries of the last sessions (query-independent, like the facts).
    Sessions,
    Experience,
    Knowledge,
}

impl Section {
    pub fn header(self) -> &'static str {
        match self {
            Section::Profile => "[workspace profile]",
            Section::Facts => "[project facts]",
            Section::Sessions => "[recent sessions]",
            Section::Experience => "[relevant experience]",
            Section::Knowledge => "[knowledge]",
        }
    }

    /// Factual sections share the factual cap, come first and do not depend on the query.
    pub fn is_factual(self) -> bool {
        matches!(self, Section::Profile | Section::Facts | Section::Sessions)
    }
}

/// The first line of the block.
pub const BLOCK_HEADER: &str = "[memory context]";

/// One recallable item, rendered as it will appear in the block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub id: String,
    /// Which silo it came from (`memory`, a RAG store, `knowledge`).
    pub source: String,
    pub section: Section,
    /// The item's line(s) in the block, without the trailing newline.
    pub text: String,
    /// Larger is better; comparable within one silo.
    pub score: f64,
    /// When the item was written or last changed (unix seconds), or any number that
    /// orders its section's items oldest first; 0 where unknown. Factual sections are
    /// listed by it, oldest first ([`render`]).
    pub written: i64,
}

/// An item that made it into the block, with its exact token cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packed {
    #[serde(flatten)]
    pub candidate: Candidate,
    pub tokens: usize,
}

/// The assembled `[memory context]` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Injection {
    /// The exact text injected (empty when nothing was recalled).
    pub text: String,
    /// Tokens of `text` by the model's tokenizer.
    pub tokens: usize,
    pub budget: usize,
    pub items: Vec<Packed>,
    /// Candidates that did not fit.
    pub skipped: usize,
}

impl Injection {
    /// `memory: 7 items, 312/1024 tokens`
    pub fn summary_line(&self) -> String {
        let n = self.items.len();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "memory: {n} item{s}, {}/{} tokens",
            self.tokens, self.budget
        )
    }
}

/// Budget for the block: `floor(n_ctx × budget_pct)`.
pub fn budget(n_ctx: u32, budget_pct: f64) -> usize {
    (f64::from(n_ctx) * budget_pct.clamp(0.0, 1.0)).floor() as usize
}

/// How packing is limited.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub budget: usize,
    /// Share of the budget factual items may use.
    pub factual_share: f64,
    /// Most non-factual items (`usize::MAX` under a budget: the budget decides).
    pub max_relevant: usize,
}

/// Tokens of a short block line (`- ` + a few words + newline): bounds how many
/// candidates a budget could hold.
const MIN_LINE_TOKENS: usize = 12;

/// Most relevance candidates asked of a silo for one budgeted recall.
const MAX_WANTED: usize = 200;

impl Limits {
    /// A budgeted block (the session start): as many relevant items as fit.
    pub fn budgeted(budget: usize, factual_share: f64) -> Self {
        Self {
            budget,
            factual_share,
            max_relevant: usize::MAX,
        }
    }

    /// An unbudgeted list of `k` relevant items (after the factual ones).
    pub fn list(k: usize, factual_share: f64) -> Self {
        Self {
            budget: usize::MAX,
            factual_share,
            max_relevant: k.max(1),
        }
    }

    /// How many relevance hits to ask each silo for: the list's length, or as many as
    /// the budget could hold.
    pub fn wanted(&self) -> usize {
        if self.max_relevant == usize::MAX {
            (self.budget / MIN_LINE_TOKENS).clamp(1, MAX_WANTED)
        } else {
            self.max_relevant.min(MAX_WANTED)
        }
    }
}

/// Packs candidates best-first: factual ones under `factual_share × budget`, then the
/// rest into what remains. A candidate that does not fit is skipped; packing goes on.
pub fn pack<C: TokenCounter + ?Sized>(
    mut candidates: Vec<Candidate>,
    limits: Limits,
    counter: &C,
) -> Injection {
    candidates.sort_by(|a, b| {
        b.section
            .is_factual()
            .cmp(&a.section.is_factual())
            .then(b.score.total_cmp(&a.score))
            // Equal scores in one order whatever order the sources came in: the session
            // start and `memory_search` gather the same candidates along two paths.
            .then_with(|| a.id.cmp(&b.id))
    });
    let line_cost = |text: &str| counter.count_tokens(&format!("{text}\n"));
    let header_cost = line_cost(BLOCK_HEADER);
    let factual_cap =
        (limits.budget as f64 * limits.factual_share.clamp(0.0, 1.0)).floor() as usize;
    let mut used = header_cost;
    let mut factual_used = 0;
    let mut relevant = 0;
    let mut opened: Vec<Section> = Vec::new();
    let mut chosen: Vec<Packed> = Vec::new();
    let mut skipped = 0;
    for c in candidates {
        let factual = c.section.is_factual();
        if !factual && relevant >= limits.max_relevant {
            skipped += 1;
            continue;
        }
        let header = if opened.contains(&c.section) {
            0
        } else {
            line_cost(c.section.header())
        };
        let cost = line_cost(&c.text);
        let fits_total = used + header + cost <= limits.budget;
        let fits_factual = !factual || factual_used + header + cost <= factual_cap;
        if !(fits_total && fits_factual) {
            skipped += 1;
            continue;
        }
        used += header + cost;
        if factual {
            factual_used += header + cost;
        } else {
            relevant += 1;
        }
        if header > 0 {
            opened.push(c.section);
        }
        chosen.push(Packed {
            candidate: c,
            tokens: cost,
        });
    }
    fit_whole(chosen, skipped, limits.budget, counter)
}

/// Tokenizing pieces and the whole can differ by a merge at a boundary: the whole is what
/// counts, so drops the weakest items until it fits.
fn fit_whole<C: TokenCounter + ?Sized>(
    mut chosen: Vec<Packed>,
    mut skipped: usize,
    budget: usize,
    counter: &C,
) -> Injection {
    loop {
        let text = render(&chosen);
        let tokens = if text.is_empty() {
            0
        } else {
            counter.count_tokens(&text)
        };
        if tokens <= budget || chosen.is_empty() {
            return Injection {
                text,
                tokens,
                budget,
                items: chosen,
                skipped,
            };
        }
        // Relevant items go first, so the factual part (the cached prefix) stays put.
        let weakest = chosen
            .iter()
            .enumerate()
            .min_by(|a, b| {
                let key = |p: &Packed| (!p.candidate.section.is_factual(), p.candidate.score);
                let (fa, sa) = key(a.1);
                let (fb, sb) = key(b.1);
                fb.cmp(&fa).then(sa.total_cmp(&sb))
            })
            .map_or(0, |(i, _)| i);
        chosen.remove(weakest);
        skipped += 1;
    }
}

/// The block text: header, then each non-empty section, a factual one's items oldest
/// first ([`Candidate::written`]), the others' in rank order. An added fact then goes
/// last in its section, so the block before it, and the cached prefix holding it, stays
/// the same: with facts newest first, three `harvey memory add`s made the next start
/// prefill 445 tokens again behind the restored head.
pub fn render(items: &[Packed]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut text = format!("{BLOCK_HEADER}\n");
    for section in [
        Section::Profile,
        Section::Facts,
        Section::Sessions,
        Section::Experience,
        Section::Knowledge,
    ] {
        let mut lines: Vec<&Packed> = items
            .iter()
            .filter(|p| p.candidate.section == section)
            .collect();
        if lines.is_empty() {
            continue;
        }
        if section.is_factual() {
            lines.sort_by_key(|p| p.candidate.written);
        }
        text.push_str(section.header());
        text.push('\n');
        for p in lines {
            text.push_str(&p.candidate.text);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::WordCounter;

    fn c(id: &str, section: Section, words: usize, score: f64) -> Candidate {
        let text = format!("- {id} {}", vec!["w"; words.saturating_sub(2)].join(" "));
        Candidate {
            id: id.into(),
            source: "memory".into(),
            section,
            text: text.trim_end().to_string(),
            score,
            written: 0,
        }
    }

    fn limits(budget: usize) -> Limits {
        Limits {
            budget,
            factual_share: 0.5,
            max_relevant: 5,
        }
    }

    #[test]
    fn an_added_fact_goes_last_so_the_block_before_it_stays_the_same() {
        let fact = |id: &str, written: i64, score: f64| Candidate {
            written,
            ..c(id, Section::Facts, 4, score)
        };
        // Facts score newest first (recency), and are listed oldest first.
        let before = vec![fact("old", 100, 1.0), fact("mid", 200, 2.0)];
        let mut after = before.clone();
        after.push(fact("new", 300, 3.0));
        let l = Limits::budgeted(1000, 0.5);
        let before = pack(before, l, &WordCounter).text;
        let after = pack(after, l, &WordCounter).text;
        assert!(after.starts_with(&before), "{before}\n---\n{after}");
        assert!(after.ends_with("- new w w\n"), "{after}");
        // Relevant items keep their rank order.
        let rel = vec![
            Candidate {
                written: 1,
                ..c("weak", Section::Experience, 4, 0.1)
            },
            Candidate {
                written: 9,
                ..c("strong", Section::Experience, 4, 0.9)
            },
        ];
        let text = pack(rel, l, &WordCounter).text;
        assert!(
            text.find("strong").unwrap() < text.find("weak").unwrap(),
            "{text}"
        );
    }

    #[test]
    fn a_large_factual_item_does_not_starve_smaller_relevant_ones() {
        let candidates = vec![
            c("huge_fact", Section::Facts, 80, 5.0),
            c("small_fact", Section::Facts, 5, 4.0),
            c("exp1", Section::Experience, 6, 0.9),
            c("exp2", Section::Experience, 6, 0.8),
        ];
        let inj = pack(candidates, limits(60), &WordCounter);
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert_eq!(ids, vec!["small_fact", "exp1", "exp2"]);
        assert_eq!(inj.skipped, 1);
        assert!(inj.tokens <= 60);
        assert_eq!(inj.tokens, WordCounter.count_tokens(&inj.text));
    }

    #[test]
    fn an_item_that_does_not_fit_is_skipped_not_a_stop() {
        let candidates = vec![
            c("a", Section::Experience, 10, 0.9),
            c("too_big", Section::Experience, 40, 0.8),
            c("b", Section::Experience, 10, 0.7),
        ];
        let inj = pack(candidates, limits(30), &WordCounter);
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert!(inj
            .text
            .starts_with("[memory context]\n[relevant experience]\n- a"));
    }

    #[test]
    fn sections_come_in_block_order_and_respect_the_factual_cap() {
        let candidates = vec![
            c("exp", Section::Experience, 4, 9.0),
            c("fact1", Section::Facts, 10, 2.0),
            c("fact2", Section::Facts, 10, 1.0),
            c("profile", Section::Profile, 4, 0.1),
        ];
        let inj = pack(candidates, limits(40), &WordCounter);
        // Factual cap 20: profile (4 + header 2) + fact1 (10 + header 2) = 18; fact2 no.
        let ids: Vec<&str> = inj.items.iter().map(|p| p.candidate.id.as_str()).collect();
        assert!(ids.contains(&"profile") && ids.contains(&"fact1") && !ids.contains(&"fact2"));
        let order: Vec<usize> = [
            "[workspace profile]",
            "[project facts]",
            "[relevant experience]",
        ]
        .iter()
        .map(|h| inj.text.find(h).unwrap())
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{}", inj.text);
    }

    #[test]
    fn a_budget_packs_every_item_that_fits_not_top_k() {
        let candidates: Vec<Candidate> = (0..40)
            .map(|i| {
                c(
                    &format!("e{i}"),
                    Section::Experience,
                    5,
                    1.0 - f64::from(i) / 100.0,
                )
            })
            .collect();
        let small = pack(candidates.clone(), Limits::budgeted(64, 0.5), &WordCounter);
        let large = pack(candidates, Limits::budgeted(1024, 0.5), &WordCounter);
        assert!(small.items.len() < 15, "{}", small.items.len());
        assert_eq!(
            large.items.len(),
            40,
            "a large budget holds all 40, not top_k"
        );
        assert!(Limits::budgeted(1024, 0.5).wanted() >= 64);
        assert_eq!(Limits::list(5, 0.5).wanted(), 5);
    }

    #[test]
    fn relevant_items_are_capped_at_max_relevant() {
        let candidates = (0..10)
            .map(|i| {
                c(
                    &format!("e{i}"),
                    Section::Experience,
                    3,
                    1.0 - f64::from(i) / 10.0,
                )
            })
            .collect();
        let inj = pack(candidates, limits(1000), &WordCounter);
        assert_eq!(inj.items.len(), 5);
        assert_eq!(inj.skipped, 5);
    }

    #[test]
    fn nothing_recalled_means_no_block() {
        let inj = pack(Vec::new(), limits(100), &WordCounter);
        assert_eq!(inj.text, "");
        assert_eq!(inj.tokens, 0);
    }

    #[test]
    fn budget_is_floor_of_the_share() {
        assert_eq!(budget(4096, 0.25), 1024);
        assert_eq!(budget(2049, 0.25), 512);
        assert_eq!(budget(1000, 2.0), 1000);
    }
}
