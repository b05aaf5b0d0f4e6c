//! How strictly a run checks the expectations of the transcripts: every output
//! (the matrix, `--json`, `--markdown`, `--junit`) names the mode that ran, so a
//! result is never read in the terms of another mode.

/// The mode of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunMode {
    /// Every expectation of the transcripts exactly as written: the contract's
    /// texts and this implementation's own (its wording, its help, its paths).
    #[default]
    Strict,
}

impl RunMode {
    /// The name in the outputs (`"mode": "strict"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Strict => "strict",
        }
    }

    /// One line for a person: the mode and what it checks.
    pub fn line(self) -> String {
        let what = match self {
            Self::Strict => "every expectation of the transcripts is checked exactly as written",
        };
        format!("mode: {}: {what}", self.name())
    }
}
