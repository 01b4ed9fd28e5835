//! What a conformance suite reports: each check by name, and what was wrong
//! with those that failed.

/// One check and how it went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// `Err` with what was wrong.
    pub outcome: Result<(), CheckFailure>,
}

/// A check that failed: which one, and what was wrong. It shows as
/// `check: reason`, so that a list of failures reads on its own.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{check}: {reason}")]
pub struct CheckFailure {
    /// The failed check's name (its [`Check::name`]).
    pub check: &'static str,
    /// What was wrong.
    pub reason: String,
}

/// The checks of one run, in the order they ran.
#[derive(Default)]
pub(super) struct Checks(Vec<Check>);

impl Checks {
    /// Records how the check `name` went; the checks say what went wrong as
    /// text, and the failure is named here, where the name is known.
    pub(super) fn record(&mut self, name: &'static str, outcome: Result<(), String>) {
        let outcome = outcome.map_err(|reason| CheckFailure {
            check: name,
            reason,
        });
        self.0.push(Check { name, outcome });
    }

    /// The checks, in order.
    pub(super) fn into_vec(self) -> Vec<Check> {
        self.0
    }
}

/// `Ok` when `ok`, else what `why` says.
pub(super) fn check(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why()) }
}
