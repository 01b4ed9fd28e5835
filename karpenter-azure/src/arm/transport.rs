//! One request and its answer: the token (to the ARM origin only), retries
//! with backoff on throttling, server errors and transport failures, and the
//! body read a chunk at a time up to the size limit. An [`Operation`] holds
//! what the requests of one call share: the deadline, and the tokens sent,
//! which are scrubbed from the call's error.

use std::sync::Mutex;
use std::time::Duration;

use karpenter_core::error::with_causes;
use reqwest::header::{AUTHORIZATION, HeaderMap, LOCATION, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::limits::{ClientLimits, Deadline, require_origin};
use super::{ARM_SCOPE, ArmClient, ArmError, Secret};

/// One operation under way (a GET, a PUT or DELETE and its polls, a list
/// and its pages).
pub(super) struct Operation {
    /// When it must be over.
    pub(super) deadline: Deadline,
    /// The tokens its requests carried (one, unless the credential renewed
    /// it meanwhile).
    sent: Mutex<Vec<Secret>>,
}

impl Operation {
    /// An operation starting now.
    pub(super) fn start(limits: &ClientLimits) -> Self {
        Operation {
            deadline: Deadline::after(limits.operation_deadline),
            sent: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, token: &Secret) {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        if !sent.contains(token) {
            sent.push(token.clone());
        }
    }

    /// `error` and its causes as one line, every token this operation sent
    /// replaced: what a log may show of a failure not over yet.
    fn shown(&self, error: &ArmError) -> String {
        let text = with_causes(error);
        let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        sent.iter()
            .map(Secret::expose)
            .filter(|token| !token.is_empty())
            .fold(text, |text, token| text.replace(token, "***"))
    }

    /// `result`, with every token this operation sent scrubbed from its
    /// error: a server may echo a request (an error quoting its
    /// `Authorization` header), and errors end up in logs. Data returned is
    /// left as sent.
    pub(super) fn scrub<T>(&self, result: Result<T, ArmError>) -> Result<T, ArmError> {
        result.map_err(|error| {
            let sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
            sent.iter()
                .fold(error, |error, token| error.without(token.expose()))
        })
    }
}

impl ArmError {
    /// This error with every copy of `token` in its text replaced. A token
    /// is long and random: it appears in a message only when echoed.
    fn without(self, token: &str) -> ArmError {
        if token.is_empty() {
            return self;
        }
        let s = |text: String| {
            if text.contains(token) {
                text.replace(token, "***")
            } else {
                text
            }
        };
        match self {
            ArmError::Azure {
                status,
                code,
                message,
            } => ArmError::Azure {
                status,
                code: s(code),
                message: s(message),
            },
            // The HTTP client's and the JSON reader's errors carry no
            // message from the server (the URL, ours, is scrubbed here).
            ArmError::Transport { url, source } => ArmError::Transport {
                url: s(url),
                source,
            },
            ArmError::Decode {
                url,
                status,
                source,
            } => ArmError::Decode {
                url: s(url),
                status,
                source,
            },
            // A credential's error comes before any request is sent.
            ArmError::Auth { source } => ArmError::Auth { source },
            ArmError::Paging { url, detail } => ArmError::Paging {
                url: s(url),
                detail: s(detail),
            },
            ArmError::GaveUp { attempts, last } => ArmError::GaveUp {
                attempts,
                last: Box::new(last.without(token)),
            },
            ArmError::StillRunning { url, polls } => ArmError::StillRunning { url: s(url), polls },
            ArmError::Deadline { deadline, detail } => ArmError::Deadline {
                deadline,
                detail: s(detail),
            },
            ArmError::TooLarge { url, limit } => ArmError::TooLarge { url: s(url), limit },
            ArmError::UntrustedUrl { url, trusted } => ArmError::UntrustedUrl {
                url: s(url),
                trusted: s(trusted),
            },
        }
    }
}

/// An answer: its status, the headers the client reads, and its body (JSON
/// or nothing).
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) body: Value,
    /// `Retry-After`.
    pub(super) retry_after: Option<Duration>,
    /// `Azure-AsyncOperation`.
    pub(super) async_operation: Option<String>,
    /// `Location`.
    pub(super) location: Option<String>,
}

/// How one try went.
enum Try {
    /// An answer to return: any status but 429 and 5xx.
    Done(Answer),
    /// A failure worth another try: what it was, and how long the server
    /// asked to wait.
    Again(ArmError, Option<Duration>),
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
pub(super) fn error_of(status: u16, body: &Value) -> ArmError {
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

/// A transport failure of a request to `url` (reqwest's own text says
/// "error sending request"; why is in its sources).
fn transport(url: &str, error: reqwest::Error) -> ArmError {
    ArmError::Transport {
        url: url.to_owned(),
        source: error.without_url(),
    }
}

impl ArmClient {
    /// One request, retried on 429 and 5xx (and transport failures) with
    /// backoff; any other status is the answer. The token (with `bearer`)
    /// goes to the ARM origin only, whoever named `url`.
    pub(super) async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        bearer: bool,
        operation: &Operation,
    ) -> Result<Answer, ArmError> {
        if bearer {
            require_origin(url, &self.base_url)?;
        }
        let mut attempt = 0;
        loop {
            let deadline = &operation.deadline;
            let once = self.try_once(&method, url, body, bearer, operation);
            let (last, asked) = match deadline.run(once, || format!("{method} {url}")).await? {
                Try::Done(answer) => return Ok(answer),
                Try::Again(last, asked) => (last, asked),
            };
            attempt += 1;
            if attempt > self.retry.max_retries {
                return Err(ArmError::GaveUp {
                    attempts: attempt,
                    last: Box::new(last),
                });
            }
            let backoff = self
                .retry
                .base_delay
                .saturating_mul(1 << (attempt - 1).min(16));
            let wait = asked.unwrap_or(backoff).min(self.retry.max_delay);
            let throttled = matches!(last, ArmError::Azure { status: 429, .. });
            tracing::warn!(
                %method,
                url,
                attempt,
                throttled,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                retry_after = asked.is_some(),
                error = operation.shown(&last),
                "ARM request failed; retrying"
            );
            let why = || format!("{method} {url} after {last}");
            deadline.sleep(wait, asked.unwrap_or(wait), why).await?;
        }
    }

    /// A request whose 2xx answer is the result; anything else an error.
    pub(super) async fn call(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        operation: &Operation,
    ) -> Result<Answer, ArmError> {
        let answer = self.send(method, url, body, true, operation).await?;
        if answer.status.is_success() {
            Ok(answer)
        } else {
            Err(error_of(answer.status.as_u16(), &answer.body))
        }
    }

    /// One try of a request.
    async fn try_once(
        &self,
        method: &Method,
        url: &str,
        body: Option<&Value>,
        bearer: bool,
        operation: &Operation,
    ) -> Result<Try, ArmError> {
        let mut request = self
            .http
            .request(method.clone(), url)
            .timeout(self.limits.request_timeout);
        let token = if bearer {
            Some(self.credential.token(ARM_SCOPE).await?.token)
        } else {
            None
        };
        if let Some(token) = &token {
            operation.record(token);
            request = request.header(AUTHORIZATION, format!("Bearer {}", token.expose()));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => return Ok(Try::Again(transport(url, error), None)),
        };
        let status = response.status();
        let headers = response.headers();
        let asked = retry_after(headers);
        let link = |name| Some(headers.get(name)?.to_str().ok()?.to_owned());
        let async_operation = link("azure-asyncoperation");
        let location = link(LOCATION.as_str());
        let bytes = match self.read_body(response, url).await {
            Ok(bytes) => bytes,
            Err(last @ ArmError::Transport { .. }) => return Ok(Try::Again(last, None)),
            Err(error) => return Err(error),
        };
        let body = if bytes.is_empty() {
            Ok(Value::Null)
        } else {
            serde_json::from_slice(&bytes)
        };
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            // A gateway in front of ARM answers 502 or 503 with an HTML page:
            // retried as ARM's own JSON errors are.
            let last = match body {
                Ok(body) => error_of(status.as_u16(), &body),
                Err(source) => ArmError::Decode {
                    url: url.to_owned(),
                    status: status.as_u16(),
                    source,
                },
            };
            return Ok(Try::Again(last, asked));
        }
        let body = body.map_err(|source| ArmError::Decode {
            url: url.to_owned(),
            status: status.as_u16(),
            source,
        })?;
        Ok(Try::Done(Answer {
            status,
            body,
            retry_after: asked,
            async_operation,
            location,
        }))
    }

    /// The body of `response`, read a chunk at a time so that an answer past
    /// the size limit fails without being held whole; a transport failure
    /// while reading is [`ArmError::Transport`].
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        url: &str,
    ) -> Result<Vec<u8>, ArmError> {
        let limit = self.limits.max_body_bytes;
        let too_large = || ArmError::TooLarge {
            url: url.to_owned(),
            limit,
        };
        // A length announced past the limit fails before a byte is read.
        let announced = response.content_length().unwrap_or(0);
        if announced > limit as u64 {
            return Err(too_large());
        }
        let mut body = Vec::with_capacity(announced as usize);
        while let Some(chunk) = response.chunk().await.map_err(|e| transport(url, e))? {
            if chunk.len() > limit - body.len() {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operations_error_loses_every_token_it_sent() {
        let operation = Operation::start(&ClientLimits::default());
        operation.record(&Secret::new("eyJ0.old"));
        operation.record(&Secret::new("eyJ0.new"));
        let echoed = ArmError::Azure {
            status: 401,
            code: "InvalidAuthenticationToken".to_owned(),
            message: "Bearer eyJ0.old and eyJ0.new, again eyJ0.new".to_owned(),
        };
        let error = operation.scrub::<()>(Err(echoed)).expect_err("an error");
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("eyJ0"), "{shown}");
        assert!(shown.contains("Bearer *** and ***, again ***"), "{shown}");
        // A failure kept inside another is scrubbed too.
        let nested = ArmError::GaveUp {
            attempts: 4,
            last: Box::new(ArmError::Azure {
                status: 503,
                code: "ServerBusy".to_owned(),
                message: "retry eyJ0.new later".to_owned(),
            }),
        };
        let error = operation.scrub::<()>(Err(nested)).expect_err("an error");
        assert!(!format!("{error:?}").contains("eyJ0"), "{error:?}");
        assert!(error.is_retryable());
        // An empty token scrubs nothing.
        let error = ArmError::Paging {
            url: "https://x".to_owned(),
            detail: "text".to_owned(),
        }
        .without("");
        assert_eq!(error.to_string(), "listing stopped at https://x: text");
    }
}
