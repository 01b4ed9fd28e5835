//! The request log: what clients asked for, and the RBAC verbs that amounts to.

use std::collections::{BTreeSet, VecDeque};

use crate::paths::Verb;

/// One request the server answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`...
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query string (empty when there is none).
    pub query: String,
    /// The `fieldManager` query parameter.
    pub field_manager: Option<String>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The HTTP status answered (200 for a watch that started streaming).
    pub status: u16,
    /// The RBAC verb, for a resource path.
    pub verb: Option<Verb>,
    /// The API group (empty for the core group), for a resource path.
    pub group: Option<String>,
    /// The resource as RBAC names it (`pods`, `pods/eviction`,
    /// `nodeclaims/status`), for a resource path.
    pub resource: Option<String>,
}

/// The last requests, up to a limit.
#[derive(Debug)]
pub(crate) struct RequestLog {
    entries: VecDeque<RecordedRequest>,
    limit: usize,
}

impl RequestLog {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            limit,
        }
    }

    pub(crate) fn record(&mut self, request: RecordedRequest) {
        self.entries.push_back(request);
        while self.entries.len() > self.limit {
            self.entries.pop_front();
        }
    }

    pub(crate) fn entries(&self) -> Vec<RecordedRequest> {
        self.entries.iter().cloned().collect()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// `(group, resource, verb)` for every resource request logged.
    pub(crate) fn verbs_used(&self) -> BTreeSet<(String, String, String)> {
        self.entries
            .iter()
            .filter_map(|request| {
                Some((
                    request.group.clone()?,
                    request.resource.clone()?,
                    request.verb?.as_str().to_owned(),
                ))
            })
            .collect()
    }
}
