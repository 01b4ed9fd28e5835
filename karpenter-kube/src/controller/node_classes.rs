//! Every node class the cluster has, and each change, handed to a cloud
//! provider as it arrives: the one watch the Azure and AWS providers
//! share, each with its own class kind.

use std::fmt::Debug;

use futures::StreamExt;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use crate::KubeCluster;

/// Watches every object of kind `K` (AKSNodeClass, EC2NodeClass) in the
/// cluster and calls `apply` with each as listed or changed, until the
/// process ends; a failed watch is logged and resumed with backoff.
pub(crate) fn watch_node_classes<K>(cluster: &KubeCluster, apply: impl Fn(K) + Send + 'static)
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + 'static,
{
    let api: Api<K> = Api::all(cluster.client().clone());
    let stream = watcher(api, watcher::Config::default())
        .default_backoff()
        .applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(class) = stream.next().await {
            match class {
                Ok(class) => apply(class),
                Err(error) => {
                    let kind = K::kind(&());
                    tracing::warn!(%error, "watching {kind}es failed; retrying");
                }
            }
        }
    });
}
