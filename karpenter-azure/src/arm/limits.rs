//! What the client waits for and trusts: timeouts, the deadline of an
//! operation, how big an answer may be, how many pages a list may have, and
//! which origin a URL must name to get the token.

use std::future::Future;
use std::time::Duration;

use reqwest::Url;
use tokio::time::Instant;

use super::ArmError;

/// How long the client waits and how much it reads. Every limit ends a call
/// that would otherwise hang on, or fill memory from, a misbehaving server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// How long to wait for a TCP (and TLS) connection. Default 10 s: a
    /// reachable ARM endpoint connects in well under a second.
    pub connect_timeout: Duration,
    /// How long one request may take, from sending it to the last byte of
    /// its answer; a request that takes longer fails and is retried like any
    /// other transport failure. Default 60 s: ARM answers in seconds, and a
    /// minute leaves room to download a Resource SKUs answer of several MiB.
    pub request_timeout: Duration,
    /// How long one operation may take in all: a GET, a PUT or DELETE with
    /// the polls of its long-running operation, or every page of a list,
    /// retries and waits included. A wait that would end past it (a
    /// `Retry-After`, a backoff, a poll interval) is not slept: the operation
    /// fails with [`ArmError::Deadline`] at once. Default 10 minutes: longer
    /// than a VM takes to create, shorter than the 15 minutes upstream
    /// Karpenter gives a launched node to register.
    pub operation_deadline: Duration,
    /// The largest answer read, in bytes; a larger one fails with
    /// [`ArmError::TooLarge`] and is not retried. Default 32 MiB. The
    /// largest answer the provider asks for is a region's Resource SKUs, in
    /// one page: the list of every region at once (an entry per size and
    /// region) has been reported at 3 MB in 2018, 13 MB in 2019 and over
    /// 20 MB in 2021, and one region's is a small part of it.
    pub max_body_bytes: usize,
    /// The most pages a list may have. Default 10,000: a region's Retail
    /// Prices come 100 items a page, a few hundred pages.
    pub max_pages: u32,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            operation_deadline: Duration::from_secs(10 * 60),
            max_body_bytes: 32 * 1024 * 1024,
            max_pages: 10_000,
        }
    }
}

/// When the operation under way must be over.
#[derive(Clone, Copy, Debug)]
pub(super) struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub(super) fn after(budget: Duration) -> Self {
        // A century is no deadline at all, in practice, and adds without
        // overflowing where `Duration::MAX` would not.
        let century = Duration::from_secs(100 * 365 * 86_400);
        Deadline {
            at: Instant::now() + budget.min(century),
            budget,
        }
    }

    fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    fn passed(&self, detail: String) -> ArmError {
        ArmError::Deadline {
            deadline: self.budget,
            detail,
        }
    }

    /// `work`, unless the deadline passes first; `doing` says what was cut
    /// short.
    pub(super) async fn run<T>(
        &self,
        work: impl Future<Output = Result<T, ArmError>>,
        doing: impl FnOnce() -> String,
    ) -> Result<T, ArmError> {
        tokio::time::timeout_at(self.at, work)
            .await
            .unwrap_or_else(|_| Err(self.passed(doing())))
    }

    /// Sleeps `wait`, unless `asked` (what the server asked for, at least
    /// `wait`) ends past the deadline: then fails at once, since waiting less
    /// than the server asked would only be refused again, and waiting as long
    /// would leave no time to finish.
    pub(super) async fn sleep(
        &self,
        wait: Duration,
        asked: Duration,
        why: impl FnOnce() -> String,
    ) -> Result<(), ArmError> {
        let remaining = self.remaining();
        if asked.max(wait) >= remaining {
            return Err(self.passed(format!(
                "{} asks a wait of {asked:?}, {remaining:?} left",
                why()
            )));
        }
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

/// `Ok` when `url` names the origin (scheme, host and port) of `home`, the
/// endpoint it belongs to; else [`ArmError::UntrustedUrl`].
pub(super) fn require_origin(url: &str, home: &str) -> Result<(), ArmError> {
    if same_origin(url, home) {
        Ok(())
    } else {
        Err(ArmError::UntrustedUrl {
            url: url.to_owned(),
            trusted: origin_of(home),
        })
    }
}

/// Whether `url` names the same origin as `home`. When either cannot be
/// parsed, the URL is not trusted.
fn same_origin(url: &str, home: &str) -> bool {
    match (Url::parse(url), Url::parse(home)) {
        (Ok(url), Ok(home)) => url.origin().is_tuple() && url.origin() == home.origin(),
        _ => false,
    }
}

/// The origin of `url` as text, for an error message.
fn origin_of(url: &str) -> String {
    Url::parse(url)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| url.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_scheme_host_and_port_is_the_same_origin() {
        let home = "https://management.azure.com";
        for same in [
            "https://management.azure.com/subscriptions/s?api-version=1",
            "https://MANAGEMENT.azure.com/x",
            "https://management.azure.com:443/x",
        ] {
            assert!(same_origin(same, home), "{same}");
        }
        for other in [
            "http://management.azure.com/x",
            "https://management.azure.com:8443/x",
            "https://management.azure.com.example.org/x",
            "https://management.azure.com@example.org/x",
            "https://example.org/?next=https://management.azure.com/x",
            "/subscriptions/relative",
            "",
        ] {
            assert!(!same_origin(other, home), "{other}");
        }
        assert!(same_origin(
            "http://127.0.0.1:8080/a",
            "http://127.0.0.1:8080"
        ));
        assert!(!same_origin(
            "http://127.0.0.1:8081/a",
            "http://127.0.0.1:8080"
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_past_the_deadline_is_not_slept() {
        let deadline = Deadline::after(Duration::from_secs(10));
        let started = Instant::now();
        deadline
            .sleep(Duration::from_secs(2), Duration::from_secs(2), String::new)
            .await
            .expect("fits");
        assert_eq!(started.elapsed(), Duration::from_secs(2));
        // A short wait, but the server asked for more than is left.
        let error = deadline
            .sleep(Duration::from_secs(1), Duration::from_secs(9), || {
                "retry".to_owned()
            })
            .await
            .expect_err("past the deadline");
        assert!(matches!(error, ArmError::Deadline { .. }), "{error}");
        assert_eq!(started.elapsed(), Duration::from_secs(2), "not slept");
    }
}
