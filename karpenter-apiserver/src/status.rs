//! Failures answered with a Kubernetes `Status` body, as kube-rs parses them.

use serde_json::{Value, json};

/// A request the server refuses, answered with a `Status` body
/// (`{"kind":"Status","status":"Failure","reason":..,"code":..}`), which
/// kube-rs reads back as `kube::Error::Api`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// The HTTP status code (404, 409, 410, 422, 429...).
    pub code: u16,
    /// The machine-readable reason: `NotFound`, `AlreadyExists`, `Conflict`...
    pub reason: String,
    /// What went wrong, worded as the real server words it where it matters.
    pub message: String,
    /// The `details` object of the Status (`name`, `group`, `kind`, `causes`).
    pub details: Option<Value>,
}

impl ApiError {
    /// A failure with this code, reason and message, without details.
    pub fn new(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
        }
    }

    /// The same failure with a `details` object.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 400 BadRequest.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object (`resource` is `plural[.group]`).
    pub(crate) fn not_found(resource: &str, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{resource} \"{name}\" not found"))
            .with_details(json!({ "name": name, "kind": plural_of(resource) }))
    }

    /// 404 NotFound for a path the server does not serve.
    pub(crate) fn no_such_path() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 405 MethodNotAllowed.
    pub(crate) fn method_not_allowed(method: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!("the server does not allow this method on the requested resource: {method}"),
        )
    }

    /// 409 AlreadyExists.
    pub(crate) fn already_exists(resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{resource} \"{name}\" already exists"),
        )
        .with_details(json!({ "name": name, "kind": plural_of(resource) }))
    }

    /// 409 Conflict: the object changed since the client read it.
    pub(crate) fn conflict(resource: &str, name: &str) -> Self {
        Self::conflict_because(
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with this explanation.
    pub(crate) fn conflict_because(resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {resource} \"{name}\": {why}"),
        )
        .with_details(json!({ "name": name, "kind": plural_of(resource) }))
    }

    /// 410 Expired: a watch asked for history the server no longer keeps.
    pub(crate) fn expired(asked: u64, oldest: u64) -> Self {
        Self::new(
            410,
            "Expired",
            format!("too old resource version: {asked} ({oldest})"),
        )
    }

    /// 413 RequestEntityTooLarge.
    pub(crate) fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("request body is larger than {limit} bytes"),
        )
    }

    /// 415 UnsupportedMediaType.
    pub(crate) fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!("the body of the request was in an unknown format: {content_type}"),
        )
    }

    /// 422 Invalid.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new(422, "Invalid", message)
    }

    /// The `Status` object answered for this failure.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

/// A `Status` reporting success with this code.
pub(crate) fn success(code: u16, details: Option<Value>) -> Value {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": code,
    });
    if let Some(details) = details {
        status["details"] = details;
    }
    status
}

fn plural_of(resource: &str) -> &str {
    resource.split('.').next().unwrap_or(resource)
}
