//! The sentences a diagnosis is made of: what was found, and how much it matters.

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Works as it is.
    Ok,
    /// Works, but not as intended.
    Warning,
    /// Clusters are refused or fought over until it is fixed.
    Error,
}

/// One sentence of the diagnosis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// What was found and what to do.
    pub message: String,
}

impl Finding {
    pub(super) fn new(severity: Severity, message: impl Into<String>) -> Finding {
        Finding {
            severity,
            message: message.into(),
        }
    }
}
