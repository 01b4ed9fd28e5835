//! [`ClientLimits`]: the deadline, retries and page cap of every call the
//! SDK-backed clients make.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;

/// How long a call may take, how often it is retried and how many pages a
/// describe call may read.
///
/// The defaults bound a call at 90 s in all, each attempt at 30 s, and
/// retry throttling and transient failures up to 3 attempts with
/// exponential backoff and jitter (the SDK's standard strategy, which also
/// spends a retry quota so a failing service is not hammered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientLimits {
    /// Time to open a connection.
    pub connect_timeout: Duration,
    /// Time one attempt may take, from sending to the whole answer read.
    /// A long poll of the interruption queue gets its wait time on top.
    pub attempt_timeout: Duration,
    /// Time a call may take across all its attempts and pauses.
    pub operation_timeout: Duration,
    /// Attempts per call, the first included (1: never retry).
    pub max_attempts: u32,
    /// The first pause before a retry; later pauses double, with jitter.
    pub initial_backoff: Duration,
    /// The longest pause between attempts.
    pub max_backoff: Duration,
    /// The most pages a describe call reads before it fails with
    /// [`Ec2Error::PageLimit`](crate::ec2::Ec2Error::PageLimit). The default
    /// (1,000 pages, a million instances) is far above any real account.
    pub max_pages: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            connect_timeout: Duration::from_secs(5),
            attempt_timeout: Duration::from_secs(30),
            operation_timeout: Duration::from_secs(90),
            max_attempts: 3,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
            max_pages: 1_000,
        }
    }
}

impl ClientLimits {
    /// The SDK's timeouts for these limits, each attempt allowed `extra`
    /// on top (a long poll's wait).
    pub(crate) fn timeouts(&self, extra: Duration) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(self.connect_timeout)
            .operation_attempt_timeout(self.attempt_timeout + extra)
            .operation_timeout(self.operation_timeout.max(self.attempt_timeout + extra))
            .build()
    }

    /// The SDK's standard retry strategy with these attempts and pauses.
    pub(crate) fn retries(&self) -> RetryConfig {
        RetryConfig::standard()
            .with_max_attempts(self.max_attempts.max(1))
            .with_initial_backoff(self.initial_backoff)
            .with_max_backoff(self.max_backoff)
    }
}
