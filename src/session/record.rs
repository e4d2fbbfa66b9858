//! A session record as data: its title page, its exchanges and its closing notes. Both
//! readers (harvey's Fountain layout in `fountain`, the Go recorder's scenes in `go_record`)
//! produce these; neither format is needed to hold one.

/// The title page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TitlePage {
    pub title: String,
    pub credit: String,
    pub author: String,
    pub date: String,
    pub model: String,
}

/// One user message and the reply to it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exchange {
    /// `YYYY-MM-DD HH:MM:SS`.
    pub when: String,
    pub user: String,
    pub reply: String,
    /// `[[…]]` notes of this scene (recall, tool calls, stats), without the brackets.
    pub notes: Vec<String>,
}

/// A session read back from its record.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    pub title: TitlePage,
    pub user_name: String,
    pub exchanges: Vec<Exchange>,
    /// Notes after the last scene (summary, tags, compression notes).
    pub closing_notes: Vec<String>,
    /// `THE END.` was written: the session closed normally.
    pub ended: bool,
}
