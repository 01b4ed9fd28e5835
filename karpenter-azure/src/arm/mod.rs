//! A small client for Azure Resource Manager: JSON over HTTPS with a bearer
//! token, retries with backoff on throttling (429) and server errors (5xx)
//! that honour `Retry-After`, long-running operations polled through
//! `Azure-AsyncOperation` or `Location`, and `nextLink` paging. The
//! provider talks to it through [`ComputeApi`], which tests can fake;
//! [`InMemoryCompute`] is one in memory (simulations, tests).
//!
//! A server is not trusted to behave: every request has a timeout and every
//! operation a deadline, answers are read up to a size limit, lists up to a
//! number of pages ([`ClientLimits`]), and the token goes only to the origin
//! of the ARM endpoint, never to a link an answer names elsewhere.

mod compute;
mod credential;
mod limits;
mod memory;
mod transport;

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::Value;
use thiserror::Error;

pub use compute::{ARM_SCOPE, ComputeApi, ComputeApiVersions, PriceItem, price_tables};
#[cfg(feature = "azure-identity")]
pub use credential::AzureIdentityCredential;
pub use credential::{AccessToken, Secret, StaticCredential, TokenCredential};
pub use limits::ClientLimits;
pub use memory::{IN_MEMORY_GROUP_ID, InMemoryCompute, load_balancer, network_security_group};

use limits::require_origin;
use transport::{Answer, Operation, error_of};

use crate::failures::AzureError;

/// Why an ARM call failed. Each error keeps its cause as its
/// [`source`](std::error::Error::source): walk the chain to see why a
/// request failed (a refused connection, a timeout, a JSON syntax error).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ArmError {
    /// ARM answered with an error (or a long-running operation ended in one).
    #[error("ARM {status}: {code}: {message}")]
    Azure {
        /// The HTTP status (for an operation that failed, the final poll's).
        status: u16,
        /// The ARM error code.
        code: String,
        /// The ARM error message.
        message: String,
    },
    /// The request did not get an answer (connection, TLS, timeout); the
    /// source is the HTTP client's error, without the URL (named here).
    #[error("ARM request to {url} failed")]
    Transport {
        /// The URL requested.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// No token could be had; the source is the credential's error.
    #[error("no ARM token")]
    Auth {
        /// The credential's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The answer was not the JSON ARM sends.
    #[error("unexpected ARM answer (HTTP {status}) from {url}")]
    Decode {
        /// The URL that answered.
        url: String,
        /// The answer's HTTP status.
        status: u16,
        /// Why it could not be read.
        #[source]
        source: serde_json::Error,
    },
    /// A listing's pages did not end: more than
    /// [`ClientLimits::max_pages`], or a page linking back to an earlier
    /// one.
    #[error("listing stopped at {url}: {detail}")]
    Paging {
        /// The page's URL.
        url: String,
        /// What was wrong.
        detail: String,
    },
    /// Retries ran out; the source is the last failure.
    #[error("gave up after {attempts} attempts")]
    GaveUp {
        /// How many were made.
        attempts: u32,
        /// The last failure.
        #[source]
        last: Box<ArmError>,
    },
    /// A long-running operation was still running after
    /// [`RetryPolicy::max_polls`] polls.
    #[error("{url} still in progress after {polls} polls")]
    StillRunning {
        /// The resource.
        url: String,
        /// How many polls were made.
        polls: u32,
    },
    /// The operation ran out of time: its deadline
    /// ([`ClientLimits::operation_deadline`]) passed, or a wait (ARM's
    /// `Retry-After`, a backoff, a poll interval) would have ended past it
    /// and was not begun.
    #[error("ARM operation out of time (deadline {deadline:?}): {detail}")]
    Deadline {
        /// The operation's deadline.
        deadline: Duration,
        /// What was under way, or what the wait was for.
        detail: String,
    },
    /// An answer was larger than [`ClientLimits::max_body_bytes`].
    #[error("ARM answer from {url} larger than {limit} bytes")]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// A URL (an answer's `nextLink`, `NextPageLink`, `Location` or
    /// `Azure-AsyncOperation`, or one given to [`ArmClient::list`]) names
    /// another origin than the endpoint it belongs to: it was not requested.
    #[error("refused {url}: only {trusted} is trusted here")]
    UntrustedUrl {
        /// The URL refused.
        url: String,
        /// The origin (scheme, host, port) that is trusted.
        trusted: String,
    },
}

impl ArmError {
    /// Whether trying again later may succeed: every failure but ARM's own
    /// answers in the 4xx range other than 429 (throttling), which say what
    /// is wrong with the request itself (also when retries ran out on one).
    /// A transport failure, a server error, a token that could not be had,
    /// an answer that could not be read, an operation out of time may all
    /// go differently next time.
    pub fn is_retryable(&self) -> bool {
        match self {
            ArmError::Azure { status, .. } => !(400..500).contains(status) || *status == 429,
            ArmError::GaveUp { last, .. } => last.is_retryable(),
            _ => true,
        }
    }

    /// The error as the failure cache reads it, when ARM gave a code.
    pub fn azure_error(&self) -> Option<AzureError> {
        match self {
            ArmError::Azure { code, message, .. } => Some(AzureError {
                code: code.clone(),
                message: message.clone(),
            }),
            _ => None,
        }
    }

    /// Whether this is ARM's not-found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ArmError::Azure { status: 404, .. })
    }
}

/// How hard the client tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt, on 429, 5xx and transport failures
    /// (a request past [`ClientLimits::request_timeout`] among them).
    pub max_retries: u32,
    /// The first backoff (doubled each retry) when no `Retry-After` says.
    pub base_delay: Duration,
    /// The longest wait between attempts or polls: a longer `Retry-After`
    /// is cut to it, unless it ends past the operation's deadline (then the
    /// operation fails at once, see [`ClientLimits::operation_deadline`]).
    pub max_delay: Duration,
    /// The wait between polls of a long-running operation when no
    /// `Retry-After` says.
    pub poll_interval: Duration,
    /// How many polls before giving up.
    pub max_polls: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            poll_interval: Duration::from_secs(5),
            max_polls: 360,
        }
    }
}

/// The client. `Debug` shows where it points, never its token.
#[derive(Clone)]
pub struct ArmClient {
    http: reqwest::Client,
    base_url: String,
    credential: Arc<dyn TokenCredential>,
    retry: RetryPolicy,
    limits: ClientLimits,
    subscription: String,
    resource_group: String,
    versions: ComputeApiVersions,
    prices_url: String,
}

impl fmt::Debug for ArmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ArmClient")
            .field("base_url", &self.base_url)
            .field("subscription", &self.subscription)
            .field("resource_group", &self.resource_group)
            .field("credential", &self.credential)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The HTTP client: the connect timeout is the client's, not a request's.
///
/// # Panics
///
/// As `reqwest::Client::new` does, when the TLS backend cannot be set up.
fn http_client(limits: &ClientLimits) -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(limits.connect_timeout)
        .build()
        .unwrap_or_else(|e| panic!("the HTTP client cannot be built: {e}"))
}

impl ArmClient {
    /// A client for `subscription` and the node resource group, against
    /// public Azure (`https://management.azure.com`), with the default
    /// [`RetryPolicy`] and [`ClientLimits`].
    ///
    /// # Panics
    ///
    /// As `reqwest::Client::new` does, when the TLS backend cannot be set up.
    pub fn new(
        credential: Arc<dyn TokenCredential>,
        subscription: impl Into<String>,
        resource_group: impl Into<String>,
    ) -> Self {
        let limits = ClientLimits::default();
        ArmClient {
            http: http_client(&limits),
            base_url: "https://management.azure.com".to_owned(),
            credential,
            retry: RetryPolicy::default(),
            limits,
            subscription: subscription.into(),
            resource_group: resource_group.into(),
            versions: ComputeApiVersions::default(),
            prices_url: "https://prices.azure.com/api/retail/prices".to_owned(),
        }
    }

    /// This client against another ARM endpoint (a sovereign cloud, a test
    /// server). Its origin (scheme, host, port) is the only one the token is
    /// sent to.
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// This client with another Retail Prices endpoint. Lists under it go
    /// without a token, and their pages must stay on its origin.
    pub fn with_prices_url(mut self, url: impl Into<String>) -> Self {
        self.prices_url = url.into();
        self
    }

    /// This client with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// This client with other timeouts and limits.
    ///
    /// # Panics
    ///
    /// As `reqwest::Client::new` does, when the TLS backend cannot be set up.
    pub fn with_limits(mut self, limits: ClientLimits) -> Self {
        self.http = http_client(&limits);
        self.limits = limits;
        self
    }

    /// A full URL for an ARM path (`/subscriptions/...`), or a URL as given.
    fn url(&self, path: &str) -> String {
        if path.starts_with("http://") || path.starts_with("https://") {
            path.to_owned()
        } else {
            format!("{}{path}", self.base_url)
        }
    }

    /// Follows a long-running operation started by `answer` to its end:
    /// through `Azure-AsyncOperation` (a status document) or `Location`
    /// (202 until done). Returns the final resource when it is known.
    async fn finish(
        &self,
        answer: Answer,
        resource_url: &str,
        operation: &Operation,
    ) -> Result<Value, ArmError> {
        let (url, status_document) = match (answer.async_operation, answer.location) {
            (Some(url), _) => (url, true),
            (None, Some(url)) if answer.status == StatusCode::ACCEPTED => (url, false),
            _ => return Ok(answer.body),
        };
        // `send` would refuse it too, but only after the first wait.
        require_origin(&url, &self.base_url)?;
        let mut asked = answer.retry_after;
        for poll_number in 1..=self.retry.max_polls {
            let wait = asked.unwrap_or(self.retry.poll_interval);
            let why = || format!("polling {url}");
            operation
                .deadline
                .sleep(wait.min(self.retry.max_delay), wait, why)
                .await?;
            let poll = self.call(Method::GET, &url, None, operation).await?;
            tracing::debug!(
                resource = resource_url,
                poll = poll_number,
                status = poll.status.as_u16(),
                state = poll.body.get("status").and_then(serde_json::Value::as_str),
                "long-running operation polled"
            );
            if !status_document {
                if poll.status != StatusCode::ACCEPTED {
                    return Ok(poll.body);
                }
            } else {
                match poll.body.get("status").and_then(Value::as_str) {
                    Some("Succeeded") => {
                        // The resource as it now stands (a delete has none).
                        return match self.call(Method::GET, resource_url, None, operation).await {
                            Ok(resource) => Ok(resource.body),
                            Err(e) if e.is_not_found() => Ok(Value::Null),
                            Err(e) => Err(e),
                        };
                    }
                    Some("Failed") | Some("Canceled") => {
                        return Err(error_of(poll.status.as_u16(), &poll.body));
                    }
                    _ => {}
                }
            }
            asked = poll.retry_after;
        }
        Err(ArmError::StillRunning {
            url: resource_url.to_owned(),
            polls: self.retry.max_polls,
        })
    }

    /// PUT `body` at `path` and wait for the operation to finish; returns the
    /// resource.
    #[tracing::instrument(name = "arm.put", skip(self, body), err(Display))]
    pub async fn put(
        &self,
        path: &str,
        api_version: &str,
        body: &Value,
    ) -> Result<Value, ArmError> {
        let operation = Operation::start(&self.limits);
        let url = format!("{}?api-version={api_version}", self.url(path));
        let result = async {
            let answer = self.call(Method::PUT, &url, Some(body), &operation).await?;
            self.finish(answer, &url, &operation).await
        };
        operation.scrub(result.await)
    }

    /// GET the resource at `path`; `None` when ARM says 404.
    #[tracing::instrument(name = "arm.get", skip(self), err(Display))]
    pub async fn get(&self, path: &str, api_version: &str) -> Result<Option<Value>, ArmError> {
        let operation = Operation::start(&self.limits);
        let url = format!("{}?api-version={api_version}", self.url(path));
        let result = match self.call(Method::GET, &url, None, &operation).await {
            Ok(answer) => Ok(Some(answer.body)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        };
        operation.scrub(result)
    }

    /// DELETE the resource at `path` (with extra query `parameters`, e.g.
    /// `&forceDeletion=true`) and wait for it to go; `false` when it was not
    /// there.
    #[tracing::instrument(name = "arm.delete", skip(self), err(Display))]
    pub async fn delete(
        &self,
        path: &str,
        api_version: &str,
        parameters: &str,
    ) -> Result<bool, ArmError> {
        let operation = Operation::start(&self.limits);
        let url = format!("{}?api-version={api_version}{parameters}", self.url(path));
        let result = match self.call(Method::DELETE, &url, None, &operation).await {
            Ok(answer) if answer.status == StatusCode::NO_CONTENT => Ok(false),
            Ok(answer) => self.finish(answer, &url, &operation).await.map(|_| true),
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        };
        operation.scrub(result)
    }

    /// Every item of a paged list starting at `url` (an ARM path, or a URL
    /// on the ARM or Retail Prices endpoint): `value` and `nextLink` (ARM), or
    /// `Items` and `NextPageLink` (Retail Prices, sent without a token). A
    /// link to another origin, or back to a page already read, is an error.
    #[tracing::instrument(name = "arm.list", skip(self), err(Display))]
    pub async fn list(&self, url: &str) -> Result<Vec<Value>, ArmError> {
        let operation = Operation::start(&self.limits);
        operation.scrub(self.pages(url, &operation).await)
    }

    /// The items of [`list`](Self::list).
    async fn pages(&self, url: &str, operation: &Operation) -> Result<Vec<Value>, ArmError> {
        let first = self.url(url);
        let public = first.starts_with(&self.prices_url);
        let home = if public {
            &self.prices_url
        } else {
            &self.base_url
        };
        let mut seen = HashSet::new();
        let mut items = Vec::new();
        let mut next = Some(first);
        while let Some(url) = next.take() {
            require_origin(&url, home)?;
            if seen.len() >= self.limits.max_pages as usize {
                let max = self.limits.max_pages;
                return Err(ArmError::Paging {
                    url,
                    detail: format!("more than {max} pages"),
                });
            }
            // A cycle would repeat its pages until the limit or the deadline.
            if !seen.insert(url.clone()) {
                return Err(ArmError::Paging {
                    url,
                    detail: "a page links back to it".to_owned(),
                });
            }
            let answer = self
                .send(Method::GET, &url, None, !public, operation)
                .await?;
            if !answer.status.is_success() {
                return Err(error_of(answer.status.as_u16(), &answer.body));
            }
            let page = answer.body;
            let values = page.get("value").or_else(|| page.get("Items"));
            let values = values.and_then(Value::as_array);
            tracing::debug!(
                page = seen.len(),
                items = values.map_or(0, Vec::len),
                "list page read"
            );
            items.extend(values.cloned().unwrap_or_default());
            next = page
                .get("nextLink")
                .or_else(|| page.get("NextPageLink"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
        }
        Ok(items)
    }
}
