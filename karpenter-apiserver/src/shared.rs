//! The state every connection shares: the store, the signals watches wait
//! on, the faults and the request log.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;

use crate::faults::Faults;
use crate::log::RequestLog;
use crate::store::Store;

/// Tunables, set through the builder.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) bookmark_interval: Duration,
    pub(crate) history_limit: usize,
    pub(crate) max_body_bytes: usize,
    pub(crate) request_log_limit: usize,
    /// How long a watch without `timeoutSeconds` lasts.
    pub(crate) default_watch_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bookmark_interval: Duration::from_secs(1),
            history_limit: 10_000,
            max_body_bytes: 16 << 20,
            request_log_limit: 100_000,
            default_watch_timeout: Duration::from_secs(1800),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Shared {
    store: Mutex<Store>,
    /// The latest resourceVersion, for watches to wake on.
    pub(crate) changes: watch::Sender<u64>,
    /// Bumped to end every open watch.
    pub(crate) disconnects: watch::Sender<u64>,
    /// Set once the server stops.
    pub(crate) shutdown: watch::Sender<bool>,
    pub(crate) faults: Mutex<Faults>,
    pub(crate) log: Mutex<RequestLog>,
    pub(crate) options: Options,
}

impl Shared {
    pub(crate) fn new(store: Store, options: Options) -> Self {
        Self {
            changes: watch::Sender::new(store.resource_version()),
            store: Mutex::new(store),
            disconnects: watch::Sender::new(0),
            shutdown: watch::Sender::new(false),
            faults: Mutex::default(),
            log: Mutex::new(RequestLog::new(options.request_log_limit)),
            options,
        }
    }

    /// Reads the store.
    pub(crate) fn read<T>(&self, read: impl FnOnce(&Store) -> T) -> T {
        read(&lock(&self.store))
    }

    /// Changes the store, then wakes the watches if the resourceVersion moved.
    pub(crate) fn write<T>(&self, write: impl FnOnce(&mut Store) -> T) -> T {
        let (out, rv) = {
            let mut store = lock(&self.store);
            let out = write(&mut store);
            (out, store.resource_version())
        };
        self.changes.send_if_modified(|current| {
            let moved = *current != rv;
            *current = rv;
            moved
        });
        out
    }
}

/// Locks a mutex, even one a panicking thread held (its data stays usable).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
