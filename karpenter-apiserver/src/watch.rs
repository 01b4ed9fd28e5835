//! Watch streams: one JSON event per line, replayed from the history, with
//! bookmarks, timeouts, 410 Expired and forced disconnects.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::{Instant, Interval, MissedTickBehavior};

use crate::selector::Filter;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::store::{Event, EventType, ResourceId};

/// What a watch request asks for.
#[derive(Clone, Debug)]
pub(crate) struct WatchRequest {
    pub(crate) resource: ResourceId,
    pub(crate) filter: Filter,
    /// Replay the events after this resourceVersion; `None` (or 0) starts
    /// with an ADDED event for every current object.
    pub(crate) resource_version: Option<u64>,
    pub(crate) send_initial_events: bool,
    pub(crate) bookmarks: bool,
    pub(crate) timeout: Duration,
}

/// The lines of a watch response, until it times out, is disconnected, the
/// server stops, or the history it needs is gone.
pub(crate) fn stream(
    shared: Arc<Shared>,
    request: WatchRequest,
) -> impl Stream<Item = Bytes> + Send {
    let state = WatchState::start(shared, request);
    futures::stream::unfold(state, |mut state| async move {
        let line = state.next_line().await?;
        Some((line, state))
    })
}

struct WatchState {
    shared: Arc<Shared>,
    resource: ResourceId,
    filter: Filter,
    kind: String,
    api_version: String,
    /// Every event up to here has been looked at.
    cursor: u64,
    pending: VecDeque<Bytes>,
    done: bool,
    changes: watch::Receiver<u64>,
    disconnects: watch::Receiver<u64>,
    shutdown: watch::Receiver<bool>,
    deadline: Instant,
    bookmarks: Option<Interval>,
}

impl WatchState {
    fn start(shared: Arc<Shared>, request: WatchRequest) -> Self {
        let (kind, api_version) = shared.read(|store| {
            let ty = store.resource_type(request.resource);
            (ty.kind.clone(), ty.api_version())
        });
        let bookmarks = request.bookmarks.then(|| {
            let period = shared
                .options
                .bookmark_interval
                .max(Duration::from_millis(1));
            let mut interval = tokio::time::interval_at(Instant::now() + period, period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        let mut state = Self {
            resource: request.resource,
            filter: request.filter,
            kind,
            api_version,
            cursor: 0,
            pending: VecDeque::new(),
            done: false,
            changes: shared.changes.subscribe(),
            disconnects: shared.disconnects.subscribe(),
            shutdown: shared.shutdown.subscribe(),
            deadline: Instant::now() + request.timeout,
            bookmarks,
            shared,
        };
        match request.resource_version.filter(|&rv| rv > 0) {
            Some(rv) => {
                state.cursor = rv;
                state.catch_up();
            }
            None => {
                let (objects, rv) = state.shared.read(|store| {
                    (
                        store.list(state.resource, &state.filter),
                        store.resource_version(),
                    )
                });
                for object in &objects {
                    state.push(EventType::Added, object);
                }
                state.cursor = rv;
                if request.send_initial_events {
                    state.push_bookmark(true);
                }
            }
        }
        state
    }

    async fn next_line(&mut self) -> Option<Bytes> {
        loop {
            if let Some(line) = self.pending.pop_front() {
                return Some(line);
            }
            if self.done || *self.shutdown.borrow() {
                return None;
            }
            let bookmarks = &mut self.bookmarks;
            let tick = async {
                match bookmarks {
                    Some(interval) => interval.tick().await,
                    None => std::future::pending().await,
                }
            };
            // Biased: once told to end, a watch sends nothing more.
            tokio::select! {
                biased;
                _ = self.shutdown.changed() => return None,
                _ = self.disconnects.changed() => return None,
                changed = self.changes.changed() => {
                    if changed.is_err() {
                        return None;
                    }
                    self.catch_up();
                }
                () = tokio::time::sleep_until(self.deadline) => return None,
                _ = tick => {
                    self.catch_up();
                    if !self.done {
                        self.push_bookmark(false);
                    }
                }
            }
        }
    }

    /// Queues the events after the cursor, or a 410 error when they are gone.
    fn catch_up(&mut self) {
        let cursor = self.cursor;
        let result = self.shared.read(|store| {
            store
                .events_after(cursor)
                .map(|events| (events, store.resource_version()))
        });
        match result {
            Ok((events, rv)) => {
                let resource = self.resource;
                for event in events.iter().filter(|e| e.resource == resource) {
                    self.push_event(event);
                }
                self.cursor = self.cursor.max(rv);
            }
            Err(error) => self.push_error(&error),
        }
    }

    /// Queues an event as this watch's filter sees it: an object leaving the
    /// selection is DELETED, one entering it ADDED.
    fn push_event(&mut self, event: &Event) {
        let now = self.filter.matches(&event.object);
        let before = event
            .previous
            .as_deref()
            .is_some_and(|previous| self.filter.matches(previous));
        let kind = match (event.kind, before, now) {
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, false, true) => EventType::Added,
            (EventType::Modified, true, false) => EventType::Deleted,
            (EventType::Modified, false, false) => return,
            (kind, _, true) => kind,
            (_, _, false) => return,
        };
        self.push(kind, &event.object);
    }

    fn push(&mut self, kind: EventType, object: &Value) {
        self.push_line(kind.as_str(), object);
    }

    fn push_bookmark(&mut self, initial_events_end: bool) {
        let mut metadata = json!({ "resourceVersion": self.cursor.to_string() });
        if initial_events_end {
            metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
        }
        let object = json!({
            "kind": self.kind,
            "apiVersion": self.api_version,
            "metadata": metadata,
        });
        self.push_line("BOOKMARK", &object);
    }

    fn push_error(&mut self, error: &ApiError) {
        self.push_line("ERROR", &error.to_status());
        self.done = true;
    }

    fn push_line(&mut self, kind: &str, object: &Value) {
        let object = serde_json::to_string(object).unwrap_or_else(|_| "{}".to_owned());
        let line = format!("{{\"type\":\"{kind}\",\"object\":{object}}}\n");
        self.pending.push_back(Bytes::from(line));
    }
}
