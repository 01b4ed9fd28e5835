//! The metrics and health endpoints: a small HTTP/1.1 server.
//!
//! | path | answer |
//! | --- | --- |
//! | `/metrics` | 200, [`Metrics::render`] as `text/plain; version=0.0.4` |
//! | `/healthz` | 200 `ok` while the process runs |
//! | `/readyz` | 200 `ok` once [`Readiness::set_ready`] was called, else 503 |
//! | anything else | 404 |
//!
//! Only `GET` and `HEAD` are served (405 otherwise).

mod routes;
#[cfg(test)]
mod tests;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::metrics::Metrics;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long open connections may take to finish once the server stops.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// The pause after a failed `accept` (out of file descriptors, say).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Whether the controller is ready: set after its first sync with the API
/// server. Clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct Readiness(Arc<AtomicBool>);

impl Readiness {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks the controller ready: `/readyz` answers 200 from now on.
    pub fn set_ready(&self) {
        self.set(true);
    }

    /// Sets or clears the flag.
    pub fn set(&self, ready: bool) {
        self.0.store(ready, Ordering::Release);
    }

    /// Whether the flag is set.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The address could not be listened on (in use, not local, not allowed).
    #[error("cannot listen on {addr} for the metrics and health endpoints")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// What every connection's handler reads.
#[derive(Clone)]
struct State {
    metrics: Arc<Metrics>,
    readiness: Readiness,
}

/// The server, bound and not yet serving.
pub struct Server {
    listener: TcpListener,
    local_addr: SocketAddr,
    state: State,
}

impl Server {
    /// Listens on `addr` (port 0 picks a free port: see
    /// [`local_addr`](Self::local_addr)).
    pub async fn bind(
        addr: SocketAddr,
        metrics: Arc<Metrics>,
        readiness: Readiness,
    ) -> Result<Self, HttpError> {
        let bind_error = |source| HttpError::Bind { addr, source };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        Ok(Self {
            listener,
            local_addr,
            state: State { metrics, readiness },
        })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves until `shutdown` completes, then stops accepting, lets open
    /// connections finish their request (for up to 5 s) and returns.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        tracing::info!(addr = %self.local_addr, "serving metrics and health endpoints");
        let (stop, stopped) = watch::channel(false);
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        connections.spawn(connection(stream, peer, self.state.clone(), stopped.clone()));
                    }
                    Err(error) => {
                        tracing::warn!(%error, "accepting a metrics or health connection failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(self.listener);
        // Every receiver may be gone already: nothing to tell then.
        let _ = stop.send(true);
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::debug!("closing metrics connections still open after the grace period");
            connections.shutdown().await;
        }
        tracing::info!(addr = %self.local_addr, "metrics and health endpoints stopped");
    }
}

/// Serves one connection until it closes, or until `stopped` turns true:
/// then the request under way finishes and the connection closes.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    state: State,
    mut stopped: watch::Receiver<bool>,
) {
    let service = service_fn(move |request| {
        let response = routes::respond(&request, &state.metrics, &state.readiness);
        async move { Ok::<_, Infallible>(response) }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        // `is_ok` drops the borrowed value before the next await.
        _ = async { stopped.wait_for(|stop| *stop).await.is_ok() } => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(error) = result {
        tracing::debug!(%peer, %error, "metrics or health connection ended with an error");
    }
}
