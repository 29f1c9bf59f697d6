//! The one pass/fail vocabulary of the suite.
//!
//! Every check ends in a [`Verdict`]: a verifier gate, a reader's conformance case, a kernel
//! case. Richer outcomes keep their own detail and map onto it — a kernel that crashed is a
//! `Fail` with its error class (`cuda::Status`), a known failure of a reader is a case that
//! does not fail the run (`corpus::runner::Status`) — so "did it pass" is asked one way
//! everywhere, and the words printed for it (`PASS`/`FAIL`/`SKIP`, `pass`/`fail`/`skip` in
//! JSON) come from here.

use serde::Serialize;

/// Whether a check passed, failed, or did not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// The check ran and its rule holds.
    Pass,
    /// The check ran and its rule is broken (or it could not be judged on what it was given).
    Fail,
    /// The check did not run; whoever reports it names what would open it.
    Skip,
}

impl Verdict {
    /// The word in human reports: `PASS`, `FAIL`, `SKIP`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "SKIP",
        }
    }

    /// The name in JSON reports: `pass`, `fail`, `skip`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Skip => "skip",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Verdict;

    #[test]
    fn words_and_names_are_the_same_word_in_two_cases() {
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Skip] {
            assert_eq!(v.word().to_lowercase(), v.name());
            assert_eq!(
                serde_json::to_value(v).unwrap(),
                serde_json::Value::from(v.word())
            );
        }
    }
}
