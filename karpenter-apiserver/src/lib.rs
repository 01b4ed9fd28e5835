//! A Kubernetes API server in memory, served over HTTP/1.1 on 127.0.0.1:
//! the test double `karpenter-kube`'s tests talk to with a real
//! [`kube::Client`].
//!
//! It serves any kind in its table (by default what karpenter reads and
//! writes: Nodes, Pods, Namespaces, PersistentVolumes and their claims,
//! Events, DaemonSets, PodDisruptionBudgets, StorageClasses, CSINodes, Leases,
//! NodePools, NodeClaims, NodeOverlays, AKSNodeClasses, EC2NodeClasses, and what
//! CapacityBuffers refer to: CapacityBuffers, PodTemplates, Deployments,
//! StatefulSets and ReplicaSets) with the verbs kube-rs uses: get, list,
//! watch (with bookmarks, resumption from a resourceVersion, and 410 Expired
//! once history is gone), create, replace (with resourceVersion
//! preconditions), merge, JSON and apply patches, the `/status`
//! subresource, deletion with finalizers, and the Pod Eviction subresource
//! checked against PodDisruptionBudgets. Errors are `Status` bodies, which
//! kube-rs reads as `kube::Error::Api`.
//!
//! Tests seed and inspect objects directly ([`ApiServer::put`],
//! [`ApiServer::get`]...), break things ([`ApiServer::disconnect_watches`],
//! [`ApiServer::compact`], [`ApiServer::inject`]) and check what the client
//! did ([`ApiServer::requests`], [`ApiServer::verbs_used`]).
//!
//! ```
//! use k8s_openapi::api::core::v1::Node;
//! use karpenter_apiserver::ApiServer;
//! use kube::Api;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ApiServer::start().await?;
//! let mut node = Node::default();
//! node.metadata.name = Some("node-a".into());
//! server.put(&node)?;
//!
//! let nodes: Api<Node> = Api::all(server.client());
//! let read = nodes.get("node-a").await?;
//! assert_eq!(read.metadata.generation, Some(1));
//! assert!(server.verbs_used().contains(&("".into(), "nodes".into(), "get".into())));
//! # Ok(())
//! # }
//! ```
//!
//! # Deviations from a real API server
//!
//! - No authentication, authorization, admission, defaulting or schema
//!   validation: objects are stored as the JSON sent.
//! - Strategic merge patches are applied as JSON merge patches (lists are
//!   replaced, not merged by key; `$patch` directives are not understood).
//! - Server-side apply is a merge patch that creates a missing object; field
//!   ownership and conflicts are not tracked (the field manager is only
//!   logged), and the body must be JSON (as kube-rs sends it), not YAML.
//! - Pods are removed at once when deleted (no kubelet, no grace period);
//!   list pages (`limit`, `continue`) list what is there when each is asked
//!   for, not the first page's snapshot;
//!   `dryRun` and `propagationPolicy` are ignored; nothing garbage-collects
//!   owned objects.
//! - The core and `events.k8s.io` Events are stored apart.
//! - [`ApiServer::compact`] ends open watches with 410 too (a real
//!   compaction only affects watches that fall behind).

mod eviction;
mod faults;
mod http;
mod log;
mod patch;
mod paths;
mod resources;
mod selector;
mod shared;
mod status;
mod store;
mod watch;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

pub use faults::{Fault, PathMatch};
pub use log::RecordedRequest;
pub use paths::Verb;
pub use resources::{ResourceType, StatusOnCreate};
pub use status::ApiError;

use selector::Filter;
use shared::{Options, Shared, lock};
use store::{ResourceId, Store};

/// Why the server could not start, or a test helper failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Binding 127.0.0.1 failed.
    #[error("binding 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
    /// Writing a kubeconfig failed.
    #[error("writing the kubeconfig: {0}")]
    Kubeconfig(#[source] std::io::Error),
    /// The store refused the write, as it would over HTTP.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The object does not serialize to a JSON object.
    #[error("the object does not serialize as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The server does not serve this kind (see [`Builder::resource`]).
    #[error("the server does not serve {0}")]
    UnknownResource(String),
}

/// Sets up an [`ApiServer`] before starting it.
#[derive(Clone, Debug)]
pub struct Builder {
    options: Options,
    types: Vec<ResourceType>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            options: Options::default(),
            types: ResourceType::defaults(),
        }
    }
}

impl Builder {
    /// How often watches that allow them get a BOOKMARK (1 s by default).
    #[must_use]
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.options.bookmark_interval = interval;
        self
    }

    /// How many events are kept for watches to resume from (10 000 by
    /// default); a watch from before the oldest gets 410 Expired.
    #[must_use]
    pub fn history_limit(mut self, events: usize) -> Self {
        self.options.history_limit = events;
        self
    }

    /// The largest request body accepted (16 MiB by default); larger ones
    /// get 413.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.options.max_body_bytes = bytes;
        self
    }

    /// How long a watch without `timeoutSeconds` lasts (30 minutes by default).
    #[must_use]
    pub fn default_watch_timeout(mut self, timeout: Duration) -> Self {
        self.options.default_watch_timeout = timeout;
        self
    }

    /// Serves one more kind (or replaces the one with the same group and plural).
    #[must_use]
    pub fn resource(mut self, ty: ResourceType) -> Self {
        self.types.retain(|known| {
            (known.group.as_str(), known.plural.as_str()) != (&ty.group, &ty.plural)
        });
        self.types.push(ty);
        self
    }

    /// Binds 127.0.0.1 on a port the OS picks and serves on tokio tasks
    /// until the last [`ApiServer`] handle drops or
    /// [`shutdown`](ApiServer::shutdown).
    pub async fn start(self) -> Result<ApiServer, Error> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(Error::Bind)?;
        let addr = listener.local_addr().map_err(Error::Bind)?;
        let store = Store::new(self.types, self.options.history_limit);
        let shared = Arc::new(Shared::new(store, self.options));
        tokio::spawn(accept(listener, Arc::clone(&shared)));
        Ok(ApiServer {
            inner: Arc::new(Inner { shared, addr }),
        })
    }
}

/// A running in-memory API server; a cheap handle to clone. The server stops
/// when the last handle drops.
#[derive(Clone, Debug)]
pub struct ApiServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
    }
}

impl ApiServer {
    /// Starts a server with the defaults (see [`Builder`]).
    pub async fn start() -> Result<Self, Error> {
        Builder::default().start().await
    }

    /// A [`Builder`] to tune bookmarks, history and the served kinds.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// `http://127.0.0.1:{port}`.
    pub fn url(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// A client configuration for this server: `kube::Config::new(url)`,
    /// kube's defaults included. Among them `default_retry`, with which the
    /// client retries 429, 503 and 504 answers up to 15 times with a backoff
    /// growing to minutes (an eviction a budget refuses included); turn it
    /// off to see those answers at once.
    ///
    /// # Panics
    ///
    /// Never: the URL of a loopback address is a valid URI.
    pub fn config(&self) -> kube::Config {
        let url = self.url().parse().expect("a loopback URL is a valid URI");
        kube::Config::new(url)
    }

    /// A client for this server with kube's defaults (see
    /// [`config`](Self::config)); call it within a tokio runtime.
    ///
    /// # Panics
    ///
    /// If kube cannot build a client for a plain-HTTP loopback URL, which it
    /// always can.
    pub fn client(&self) -> kube::Client {
        kube::Client::try_from(self.config()).expect("kube builds a client for a plain-HTTP URL")
    }

    /// Writes a kubeconfig (JSON, which is YAML) whose current context points
    /// at this server, for a binary started with `--kubeconfig`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let name = "karpenter-apiserver";
        let config = json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{ "name": name, "cluster": { "server": self.url() } }],
            "users": [{ "name": name, "user": {} }],
            "contexts": [{ "name": name, "context": { "cluster": name, "user": name } }],
            "current-context": name,
        });
        let text = serde_json::to_string_pretty(&config)?;
        std::fs::write(path, text).map_err(Error::Kubeconfig)
    }

    /// Creates an object as given (status included, unlike a POST), with a
    /// uid, creationTimestamp, generation and resourceVersion; watches see it.
    /// 409 AlreadyExists if it exists.
    pub fn create<K>(&self, object: &K) -> Result<K, Error>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let value = serde_json::to_value(object)?;
        let id = self.resource_id::<K>()?;
        let namespace = object.meta().namespace.clone();
        let created = self
            .shared()
            .write(|store| store.create(id, namespace.as_deref(), value, true))?;
        Ok(serde_json::from_value(created)?)
    }

    /// Creates or replaces an object as given, status included, whatever its
    /// resourceVersion; watches see it.
    pub fn put<K>(&self, object: &K) -> Result<K, Error>
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let value = serde_json::to_value(object)?;
        let id = self.resource_id::<K>()?;
        let stored = self.shared().write(|store| store.put(id, value))?;
        Ok(serde_json::from_value(stored)?)
    }

    /// The stored object, if any.
    ///
    /// # Panics
    ///
    /// If the stored object does not deserialize as `K`.
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let id = self.resource_id::<K>().ok()?;
        let value = self
            .shared()
            .read(|store| store.get(id, namespace, name).ok().cloned())?;
        Some(from_stored(value))
    }

    /// Every stored object of this kind, in every namespace, by namespace
    /// then name.
    ///
    /// # Panics
    ///
    /// If a stored object does not deserialize as `K`.
    pub fn list<K>(&self) -> Vec<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let Ok(id) = self.resource_id::<K>() else {
            return Vec::new();
        };
        self.shared()
            .read(|store| store.list(id, &Filter::default()))
            .into_iter()
            .map(from_stored)
            .collect()
    }

    /// Removes an object at once, finalizers or not (watches get DELETED);
    /// answers what was removed.
    ///
    /// # Panics
    ///
    /// If the removed object does not deserialize as `K`.
    pub fn remove<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let id = self.resource_id::<K>().ok()?;
        let removed = self
            .shared()
            .write(|store| store.remove(id, namespace, name))?;
        Some(from_stored(removed))
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared().read(Store::resource_version)
    }

    /// Ends every open watch stream (cleanly, as a dropped connection would
    /// end it for the client); clients resume from their last resourceVersion.
    pub fn disconnect_watches(&self) {
        self.shared().disconnects.send_modify(|epoch| *epoch += 1);
    }

    /// Drops the event history: open watches and watches resumed from any
    /// resourceVersion seen so far get 410 Expired, and clients relist.
    pub fn compact(&self) {
        self.shared().write(Store::compact);
    }

    /// Answers matching requests with an error instead of serving them.
    pub fn inject(&self, fault: Fault) {
        lock(&self.shared().faults).inject(fault);
    }

    /// Forgets the faults not used up yet.
    pub fn clear_faults(&self) {
        lock(&self.shared().faults).clear();
    }

    /// The requests answered so far (the latest 100 000), oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared().log).entries()
    }

    /// Forgets the requests answered so far.
    pub fn clear_requests(&self) {
        lock(&self.shared().log).clear();
    }

    /// `(group, resource, verb)` for every resource request answered so far,
    /// in RBAC terms: the group is empty for the core group, a subresource
    /// is written `pods/eviction`, verbs are `get`, `list`, `watch`,
    /// `create`, `update`, `patch`, `delete`, `deletecollection`.
    pub fn verbs_used(&self) -> BTreeSet<(String, String, String)> {
        lock(&self.shared().log).verbs_used()
    }

    /// Stops serving: the listener closes, open watches end and connections
    /// close once their current request is answered.
    pub fn shutdown(&self) {
        self.shared().shutdown.send_replace(true);
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    fn resource_id<K: Resource<DynamicType = ()>>(&self) -> Result<ResourceId, Error> {
        let (group, plural) = (K::group(&()), K::plural(&()));
        self.shared()
            .read(|store| store.resource(&group, &plural))
            .ok_or_else(|| Error::UnknownResource(format!("{}/{plural}", K::api_version(&()))))
    }
}

fn from_stored<K: DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).unwrap_or_else(|error| {
        panic!(
            "a stored object does not deserialize as {}: {error}",
            std::any::type_name::<K>()
        )
    })
}

/// Accepts connections until shutdown.
async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            _ = shutdown.wait_for(|&down| down) => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, Arc::clone(&shared)));
                }
                Err(error) => tracing::warn!(%error, "accepting a connection"),
            },
        }
    }
}

/// Serves one connection until the client closes it or the server stops.
async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    let mut shutdown = shared.shutdown.subscribe();
    let service = service_fn({
        let shared = Arc::clone(&shared);
        move |request| http::serve(Arc::clone(&shared), request)
    });
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let stopping = async {
        let _ = shutdown.wait_for(|&down| down).await;
    };
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "serving a connection");
            }
            return;
        }
        () = stopping => connection.as_mut().graceful_shutdown(),
    }
    if let Err(error) = connection.await {
        tracing::debug!(%error, "closing a connection");
    }
}
