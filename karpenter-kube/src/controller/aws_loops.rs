//! The AWS provider's background work, on upstream's periods: prices
//! (12 h), capacity reservations (1 min), unused launch templates (1 min),
//! the interruption queue (long polling) and the instance status poll
//! (1 min); the EC2NodeClass controller is `aws_classes`. A failed pass is logged and tried again;
//! none stops the controller.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use karpenter_aws::interruption::{InterruptionHandler, poll_instance_status, poll_queue};
use karpenter_aws::sdk::SdkQueue;
use karpenter_core::cluster::Cluster;
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

/// The launch templates this cluster has adopted at once, then those
/// unused for a minute deleted each minute (upstream's template cache,
/// hydrated when it starts leading and evicted every minute).
pub(crate) fn launch_templates(provider: Arc<AwsProvider>, mut stopping: watch::Receiver<bool>) {
    tokio::spawn(async move {
        match provider.adopt_launch_templates().await {
            Ok(found) => tracing::info!(found, "adopted the cluster's launch templates"),
            Err(error) => tracing::warn!(%error, "listing the cluster's launch templates failed"),
        }
        let mut tick = tokio::time::interval(MINUTE);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopping.changed() => return,
            }
            match provider.sweep_launch_templates().await {
                Ok(deleted) if !deleted.is_empty() => {
                    tracing::info!(deleted = deleted.len(), "deleted unused launch templates");
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%error, "deleting unused launch templates failed"),
            }
        }
    });
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
