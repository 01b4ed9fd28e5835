//! The AWS provider's background work, on upstream's periods: prices
//! (12 h), capacity reservations (1 min), EC2NodeClass status (at each
//! change and each minute), the interruption queue (long polling) and the
//! instance status poll (1 min). A failed pass is logged and tried again;
//! none stops the controller.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use karpenter_aws::EC2NodeClass;
use karpenter_aws::interruption::{InterruptionHandler, poll_instance_status, poll_queue};
use karpenter_aws::nodeclass::reconcile::{SsmCache, reconcile_status};
use karpenter_aws::nodeclass::resolve::ResolveContext;
use karpenter_aws::sdk::{SdkParameters, SdkQueue};
use karpenter_core::cluster::Cluster;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use tokio::sync::watch;

use karpenter_aws::AwsCloudProvider;
use karpenter_aws::sdk::SdkEc2;

use crate::KubeCluster;

/// The provider over the SDK's EC2.
pub(crate) type AwsProvider = AwsCloudProvider<SdkEc2>;

/// How long a loop waits after a failed pass before the next.
const RETRY_AFTER: Duration = Duration::from_secs(10);

/// Upstream's price refresh period.
const PRICE_PERIOD: Duration = Duration::from_secs(12 * 60 * 60);
/// How soon a failed price refresh is tried again.
const PRICE_RETRY: Duration = Duration::from_secs(5 * 60);
/// Upstream's period for capacity reservations, class statuses and the
/// instance status poll.
const MINUTE: Duration = Duration::from_secs(60);

/// What a class's status is resolved against.
#[derive(Clone, Debug)]
pub(crate) struct ClassContext {
    pub(crate) cluster_name: String,
    pub(crate) region: String,
    /// `major.minor`, as alias parameters name it.
    pub(crate) kubernetes_version: String,
    pub(crate) reserved_capacity: bool,
}

/// Prices at once and every 12 hours: spot from EC2, and on-demand from
/// the Pricing API unless `spot_only` (an isolated VPC or GovCloud, whose
/// controller cannot reach it), as upstream.
pub(crate) fn refresh_prices(provider: Arc<AwsProvider>, spot_only: bool) {
    tokio::spawn(async move {
        loop {
            let refreshed = if spot_only {
                provider.refresh_spot_prices().await.map(|spot| (spot, 0))
            } else {
                provider
                    .refresh_prices()
                    .await
                    .map(|r| (r.spot, r.on_demand))
            };
            let pause = match refreshed {
                Ok((spot, on_demand)) => {
                    tracing::info!(spot, on_demand, "read prices");
                    PRICE_PERIOD
                }
                Err(error) => {
                    tracing::warn!(%error, "reading prices failed; the last prices stay");
                    PRICE_RETRY
                }
            };
            tokio::time::sleep(pause).await;
        }
    });
}

/// The classes' capacity reservations' free counts, each minute.
pub(crate) fn refresh_reservations(provider: Arc<AwsProvider>) {
    tokio::spawn(async move {
        loop {
            if let Err(error) = provider.refresh_capacity_reservations().await {
                tracing::warn!(%error, "reading capacity reservations failed");
            }
            tokio::time::sleep(MINUTE).await;
        }
    });
}

/// Each EC2NodeClass's status, resolved when the class changes and every
/// minute (upstream's shortest period), written through the status
/// subresource when it changed, and handed to the provider.
pub(crate) fn class_status(
    provider: Arc<AwsProvider>,
    cluster: KubeCluster,
    parameters: SdkParameters,
    context: ClassContext,
    mut stopping: watch::Receiver<bool>,
) {
    let api: Api<EC2NodeClass> = Api::all(cluster.client().clone());
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut cache = SsmCache::new();
        let mut tick = tokio::time::interval(MINUTE);
        loop {
            tokio::select! {
                changed = stream.next() => match changed {
                    Some(Ok(class)) => {
                        reconcile_class(&provider, &parameters, &api, &context, &mut cache, &class).await;
                    }
                    Some(Err(error)) => tracing::warn!(%error, "watching EC2NodeClasses failed; retrying"),
                    None => return,
                },
                _ = tick.tick() => {
                    for class in reader.state() {
                        reconcile_class(&provider, &parameters, &api, &context, &mut cache, &class).await;
                    }
                }
                _ = stopping.changed() => return,
            }
        }
    });
}

/// Resolves `class`'s status; writes it and hands it to the provider when
/// it changed.
async fn reconcile_class(
    provider: &AwsProvider,
    parameters: &SdkParameters,
    api: &Api<EC2NodeClass>,
    context: &ClassContext,
    cache: &mut SsmCache,
    class: &EC2NodeClass,
) {
    let name = class.metadata.name.clone().unwrap_or_default();
    let resolve = ResolveContext {
        cluster_name: context.cluster_name.clone(),
        region: context.region.clone(),
        kubernetes_version: context.kubernetes_version.clone(),
        now: Timestamp::now(),
        ssm_parameters: BTreeMap::new(),
        reserved_capacity: context.reserved_capacity,
    };
    let reconciled =
        match reconcile_status(provider.api(), parameters, cache, class, &resolve).await {
            Ok(reconciled) => reconciled,
            Err(error) => {
                tracing::warn!(class = name, %error, "resolving the EC2NodeClass status failed");
                return;
            }
        };
    if !reconciled.changed {
        return;
    }
    let patch = Patch::Merge(serde_json::json!({"status": reconciled.status}));
    if let Err(error) = api
        .patch_status(&name, &PatchParams::default(), &patch)
        .await
    {
        tracing::warn!(class = name, %error, "writing the EC2NodeClass status failed");
        return;
    }
    let mut class = class.clone();
    class.status = Some(reconciled.status);
    provider.apply_node_class(class);
}

/// Receives from the interruption queue (20 s long polls, one after
/// another) and acts on each message, until stopped.
pub(crate) fn interruption_queue(
    queue: SdkQueue,
    cluster: KubeCluster,
    handler: Arc<dyn InterruptionHandler>,
    mut stopping: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        loop {
            let claims = match cluster.node_claims().await {
                Ok(claims) => claims,
                Err(error) => {
                    tracing::warn!(%error, "reading NodeClaims for the interruption queue failed");
                    tokio::time::sleep(RETRY_AFTER).await;
                    continue;
                }
            };
            tokio::select! {
                pass = poll_queue(&queue, &claims, handler.as_ref()) => match pass {
                    Ok(pass) if pass.received > 0 => tracing::info!(
                        received = pass.received,
                        acted = pass.acted,
                        deleted = pass.deleted,
                        left = pass.left,
                        "handled interruption messages"
                    ),
                    Ok(_) => {}
                    Err(error) => {
                        tracing::warn!(%error, "receiving from the interruption queue failed");
                        tokio::time::sleep(RETRY_AFTER).await;
                    }
                },
                _ = stopping.changed() => return,
            }
        }
    });
}

/// Polls EC2's instance status each minute and acts on impaired instances
/// and scheduled events, until stopped.
pub(crate) fn instance_status(
    provider: Arc<AwsProvider>,
    cluster: KubeCluster,
    handler: Arc<dyn InterruptionHandler>,
    mut stopping: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(MINUTE);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopping.changed() => return,
            }
            let claims = match cluster.node_claims().await {
                Ok(claims) => claims,
                Err(error) => {
                    tracing::warn!(%error, "reading NodeClaims for the instance status poll failed");
                    continue;
                }
            };
            match poll_instance_status(provider.api(), &claims, Timestamp::now()).await {
                Ok(poll) => {
                    for action in &poll.actions {
                        if let Err(error) = handler.handle(action).await {
                            tracing::warn!(claim = action.claim, %error, "acting on an unhealthy instance failed");
                        }
                    }
                }
                Err(error) => tracing::warn!(%error, "polling instance status failed"),
            }
        }
    });
}
