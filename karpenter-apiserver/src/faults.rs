//! Injected failures: requests answered with a chosen error instead of
//! being served.

use serde_json::Value;

use crate::paths::Verb;
use crate::status::ApiError;

/// Which paths a [`Fault`] applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathMatch {
    /// Every path.
    Any,
    /// This exact path (no query).
    Exact(String),
    /// Paths containing this text.
    Contains(String),
}

impl PathMatch {
    fn matches(&self, path: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Exact(exact) => path == exact,
            Self::Contains(part) => path.contains(part.as_str()),
        }
    }
}

/// A failure to answer to matching requests, a number of times:
///
/// ```
/// use karpenter_apiserver::{Fault, Verb};
/// // The next two updates of a NodeClaim's status get 409 Conflict.
/// let fault = Fault::new(409, "Conflict")
///     .method("PUT")
///     .path_contains("/nodeclaims/")
///     .verb(Verb::Update)
///     .times(2);
/// # drop(fault);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    method: Option<String>,
    path: PathMatch,
    verb: Option<Verb>,
    error: ApiError,
    times: usize,
}

impl Fault {
    /// Answers `code` with `reason` to the next request (any method and path).
    pub fn new(code: u16, reason: &str) -> Self {
        Self {
            method: None,
            path: PathMatch::Any,
            verb: None,
            error: ApiError::new(code, reason, format!("injected fault: {reason}")),
            times: 1,
        }
    }

    /// Only requests with this HTTP method (`GET`, `PATCH`...).
    #[must_use]
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_ascii_uppercase());
        self
    }

    /// Only requests on exactly this path.
    #[must_use]
    pub fn path(mut self, path: &str) -> Self {
        self.path = PathMatch::Exact(path.to_owned());
        self
    }

    /// Only requests whose path contains this text.
    #[must_use]
    pub fn path_contains(mut self, part: &str) -> Self {
        self.path = PathMatch::Contains(part.to_owned());
        self
    }

    /// Only requests that amount to this RBAC verb (tells a list from a watch).
    #[must_use]
    pub fn verb(mut self, verb: Verb) -> Self {
        self.verb = Some(verb);
        self
    }

    /// Answers this many matching requests (1 by default).
    #[must_use]
    pub fn times(mut self, times: usize) -> Self {
        self.times = times;
        self
    }

    /// The message of the Status answered.
    #[must_use]
    pub fn message(mut self, message: &str) -> Self {
        self.error.message = message.to_owned();
        self
    }

    /// The `details` of the Status answered.
    #[must_use]
    pub fn details(mut self, details: Value) -> Self {
        self.error.details = Some(details);
        self
    }

    fn matches(&self, method: &str, path: &str, verb: Option<Verb>) -> bool {
        self.method.as_deref().is_none_or(|m| m == method)
            && self.path.matches(path)
            && self.verb.is_none_or(|v| Some(v) == verb)
    }
}

/// The faults still to answer, first injected first matched.
#[derive(Debug, Default)]
pub(crate) struct Faults(Vec<Fault>);

impl Faults {
    pub(crate) fn inject(&mut self, fault: Fault) {
        if fault.times > 0 {
            self.0.push(fault);
        }
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// The error to answer to this request, if a fault matches it (using up
    /// one of its times).
    pub(crate) fn take(
        &mut self,
        method: &str,
        path: &str,
        verb: Option<Verb>,
    ) -> Option<ApiError> {
        let index = self.0.iter().position(|f| f.matches(method, path, verb))?;
        let fault = &mut self.0[index];
        let error = fault.error.clone();
        fault.times -= 1;
        if fault.times == 0 {
            self.0.remove(index);
        }
        Some(error)
    }
}
