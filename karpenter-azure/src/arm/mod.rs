//! A small client for Azure Resource Manager: JSON over HTTPS with a bearer
//! token, retries with backoff on throttling (429) and server errors (5xx)
//! that honour `Retry-After`, long-running operations polled through
//! `Azure-AsyncOperation` or `Location`, and `nextLink` paging. The
//! provider talks to it through [`ComputeApi`], which tests can fake.

mod compute;
mod credential;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use thiserror::Error;

pub use compute::{ARM_SCOPE, ComputeApi, ComputeApiVersions, PriceItem, price_tables};
#[cfg(feature = "azure-identity")]
pub use credential::AzureIdentityCredential;
pub use credential::{AccessToken, Secret, StaticCredential, TokenCredential};

use crate::failures::AzureError;

/// Why an ARM call failed.
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
    /// The request did not get an answer (connection, TLS, timeout).
    #[error("ARM request failed: {0}")]
    Transport(String),
    /// No token could be had.
    #[error("no ARM token: {0}")]
    Auth(String),
    /// The answer was not what ARM sends.
    #[error("unexpected ARM answer: {0}")]
    Decode(String),
    /// Retries or polls ran out.
    #[error("gave up after {attempts} attempts: {last}")]
    GaveUp {
        /// How many were made.
        attempts: u32,
        /// The last failure.
        last: String,
    },
}

impl ArmError {
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
    /// Retries after the first attempt, on 429 and 5xx.
    pub max_retries: u32,
    /// The first backoff (doubled each retry) when no `Retry-After` says.
    pub base_delay: Duration,
    /// The longest wait between attempts.
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
            .finish_non_exhaustive()
    }
}

/// An answer: status, headers, body (JSON or nothing).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

/// `Retry-After`: seconds, or an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = jiff::fmt::rfc2822::parse(text).ok()?.timestamp();
    let wait = when.duration_since(jiff::Timestamp::now());
    Some(wait.unsigned_abs()).filter(|_| wait.is_positive())
}

/// The ARM error in a body (`{"error": {"code", "message"}}`).
fn error_of(status: u16, body: &Value) -> ArmError {
    let error = body.get("error").unwrap_or(body);
    let text = |key: &str| {
        error
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    ArmError::Azure {
        status,
        code: text("code"),
        message: text("message"),
    }
}

impl ArmClient {
    /// A client for `subscription` and the node resource group, against
    /// public Azure (`https://management.azure.com`).
    pub fn new(
        credential: Arc<dyn TokenCredential>,
        subscription: impl Into<String>,
        resource_group: impl Into<String>,
    ) -> Self {
        ArmClient {
            http: reqwest::Client::new(),
            base_url: "https://management.azure.com".to_owned(),
            credential,
            retry: RetryPolicy::default(),
            subscription: subscription.into(),
            resource_group: resource_group.into(),
            versions: ComputeApiVersions::default(),
            prices_url: "https://prices.azure.com/api/retail/prices".to_owned(),
        }
    }

    /// This client against another ARM endpoint (a sovereign cloud, a test
    /// server).
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// This client with another Retail Prices endpoint.
    pub fn with_prices_url(mut self, url: impl Into<String>) -> Self {
        self.prices_url = url.into();
        self
    }

    /// This client with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
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

    /// One request, retried on 429 and 5xx (and transport failures) with
    /// backoff; any other status is the answer.
    async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        bearer: bool,
    ) -> Result<Answer, ArmError> {
        let mut attempt = 0;
        loop {
            let mut request = self.http.request(method.clone(), url);
            if bearer {
                let token = self.credential.token(ARM_SCOPE).await?;
                request = request.header(AUTHORIZATION, format!("Bearer {}", token.token.expose()));
            }
            if let Some(body) = body {
                request = request.json(body);
            }
            let outcome = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let headers = response.headers().clone();
                    let bytes = response
                        .bytes()
                        .await
                        .map_err(|e| ArmError::Transport(e.to_string()))?;
                    let body = if bytes.is_empty() {
                        Value::Null
                    } else {
                        serde_json::from_slice(&bytes)
                            .map_err(|e| ArmError::Decode(format!("{url}: {e}")))?
                    };
                    let retryable =
                        status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
                    if !retryable {
                        return Ok(Answer {
                            status,
                            headers,
                            body,
                        });
                    }
                    (
                        error_of(status.as_u16(), &body).to_string(),
                        retry_after(&headers),
                    )
                }
                Err(error) => (format!("{url}: {error}"), None),
            };
            attempt += 1;
            if attempt > self.retry.max_retries {
                return Err(ArmError::GaveUp {
                    attempts: attempt,
                    last: outcome.0,
                });
            }
            let backoff = self
                .retry
                .base_delay
                .saturating_mul(1 << (attempt - 1).min(16));
            let wait = outcome.1.unwrap_or(backoff).min(self.retry.max_delay);
            tokio::time::sleep(wait).await;
        }
    }

    /// A request whose 2xx answer is the result; anything else an error.
    async fn call(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Result<Answer, ArmError> {
        let answer = self.send(method, url, body, true).await?;
        if answer.status.is_success() {
            Ok(answer)
        } else {
            Err(error_of(answer.status.as_u16(), &answer.body))
        }
    }

    /// Follows a long-running operation started by `answer` to its end:
    /// through `Azure-AsyncOperation` (a status document) or `Location`
    /// (202 until done). Returns the final resource when it is known.
    async fn finish(&self, answer: Answer, resource_url: &str) -> Result<Value, ArmError> {
        let async_operation = answer
            .headers
            .get("azure-asyncoperation")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let location = answer
            .headers
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if async_operation.is_none()
            && (location.is_none() || answer.status != StatusCode::ACCEPTED)
        {
            return Ok(answer.body);
        }
        let mut wait = retry_after(&answer.headers).unwrap_or(self.retry.poll_interval);
        for _ in 0..self.retry.max_polls {
            tokio::time::sleep(wait.min(self.retry.max_delay)).await;
            if let Some(url) = &async_operation {
                let poll = self.call(Method::GET, url, None).await?;
                match poll.body.get("status").and_then(Value::as_str) {
                    Some("Succeeded") => {
                        // The resource as it now stands (a delete has none).
                        return match self.call(Method::GET, resource_url, None).await {
                            Ok(resource) => Ok(resource.body),
                            Err(e) if e.is_not_found() => Ok(Value::Null),
                            Err(e) => Err(e),
                        };
                    }
                    Some("Failed") | Some("Canceled") => {
                        return Err(error_of(poll.status.as_u16(), &poll.body));
                    }
                    _ => wait = retry_after(&poll.headers).unwrap_or(self.retry.poll_interval),
                }
            } else if let Some(url) = &location {
                let poll = self.call(Method::GET, url, None).await?;
                if poll.status != StatusCode::ACCEPTED {
                    return Ok(poll.body);
                }
                wait = retry_after(&poll.headers).unwrap_or(self.retry.poll_interval);
            }
        }
        Err(ArmError::GaveUp {
            attempts: self.retry.max_polls,
            last: format!("{resource_url} still in progress"),
        })
    }

    /// PUT `body` at `path` and wait for the operation to finish; returns the
    /// resource.
    pub async fn put(
        &self,
        path: &str,
        api_version: &str,
        body: &Value,
    ) -> Result<Value, ArmError> {
        let url = format!("{}?api-version={api_version}", self.url(path));
        let answer = self.call(Method::PUT, &url, Some(body)).await?;
        self.finish(answer, &url).await
    }

    /// GET the resource at `path`; `None` when ARM says 404.
    pub async fn get(&self, path: &str, api_version: &str) -> Result<Option<Value>, ArmError> {
        let url = format!("{}?api-version={api_version}", self.url(path));
        match self.call(Method::GET, &url, None).await {
            Ok(answer) => Ok(Some(answer.body)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// DELETE the resource at `path` (with extra query `parameters`, e.g.
    /// `&forceDeletion=true`) and wait for it to go; `false` when it was not
    /// there.
    pub async fn delete(
        &self,
        path: &str,
        api_version: &str,
        parameters: &str,
    ) -> Result<bool, ArmError> {
        let url = format!("{}?api-version={api_version}{parameters}", self.url(path));
        match self.call(Method::DELETE, &url, None).await {
            Ok(answer) if answer.status == StatusCode::NO_CONTENT => Ok(false),
            Ok(answer) => self.finish(answer, &url).await.map(|_| true),
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Every item of a paged list starting at `url`: `value` and `nextLink`
    /// (ARM), or `Items` and `NextPageLink` (Retail Prices, sent without a
    /// token).
    pub async fn list(&self, url: &str) -> Result<Vec<Value>, ArmError> {
        let public = url.starts_with(&self.prices_url);
        let mut items = Vec::new();
        let mut next = Some(self.url(url));
        let mut pages = 0;
        while let Some(url) = next.take() {
            pages += 1;
            if pages > 10_000 {
                return Err(ArmError::Decode(format!("{url}: more than 10,000 pages")));
            }
            let answer = self.send(Method::GET, &url, None, !public).await?;
            if !answer.status.is_success() {
                return Err(error_of(answer.status.as_u16(), &answer.body));
            }
            let page = answer.body;
            let values = page.get("value").or_else(|| page.get("Items"));
            items.extend(
                values
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
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
