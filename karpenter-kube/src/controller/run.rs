//! The controller's main loop: connect, watch, wait for the first sync,
//! take the Lease, then reconcile every `--interval` until SIGTERM (or once).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use karpenter_core::cloudprovider::CloudProvider;
use karpenter_core::cluster::Cluster;
use karpenter_core::disruption::{CommandReason, DisruptionOptions, plan_disruption_with};
use karpenter_core::driver::{Driver, DriverOptions, Event, Report, SpawnBlocking, Step};
use karpenter_core::features::FeatureGate;
use karpenter_core::pods::is_pending;
use karpenter_core::provisioning::{ProvisioningOptions, plan_provisioning_with};
use karpenter_core::scheduling::NODE_POOL_LABEL_KEY;
use kube::Client;
use kube::runtime::events::Reporter;
use tokio::sync::watch;

use super::args::{Args, Listen};
use super::error::RunError;
use super::http::{Readiness, Server};
use super::kube_config::{client, kube_config};
use super::leader::{LeaderElectionConfig, LeaderElector, Leadership, default_identity};
use super::metrics::{Metrics, reason};
use super::provider::{check, provider};
use crate::{EventRecorder, KubeCluster, KubeClusterOptions};

/// Runs the controller as `args` say, until SIGTERM (or after one round
/// with `--once`).
pub async fn run(args: Args) -> Result<(), RunError> {
    let (stop, stopping) = watch::channel(false);
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down: finishing the write in flight");
        let _ = stop.send(true);
    });
    run_until(args, stopping).await
}

/// Runs the controller until `stopping` turns true.
pub async fn run_until(args: Args, stopping: watch::Receiver<bool>) -> Result<(), RunError> {
    // Settings first: a controller that cannot run says everything wrong
    // before it connects, serves or elects anything.
    check(&args)?;
    let config = kube_config(&args).await?;
    let client = client(&args, config.clone())?;

    let identity = default_identity();
    let events = if args.dry_run {
        EventRecorder::disabled()
    } else {
        EventRecorder::new(
            client.clone(),
            Reporter {
                controller: "karpenter".into(),
                instance: Some(identity.clone()),
            },
        )
    };
    let gates = args.planning.feature_gates();
    let options = KubeClusterOptions::default()
        .with_field_manager(args.field_manager.clone())
        .with_events(events.clone())
        .with_node_overlays(gates.is_on(FeatureGate::NodeOverlay))
        .with_capacity_buffers(gates.is_on(FeatureGate::CapacityBuffer));
    let cluster = KubeCluster::with_options(client.clone(), options);
    let (provider, background) = provider(&args, &config, &cluster).await?;
    let metrics = Arc::new(Metrics::new());
    let readiness = Readiness::new();
    serve(args.metrics_addr, &metrics, &readiness, &stopping).await?;
    serve(args.health_addr, &metrics, &readiness, &stopping).await?;

    let mut stopped = stopping.clone();
    tokio::select! {
        synced = cluster.wait_until_synced(args.sync_timeout) => synced?,
        _ = stopped.wait_for(|s| *s) => return Ok(()),
    }
    readiness.set_ready();

    let leadership = match leader(&args, &client, &identity)? {
        Some(elector) => {
            let mut stopped = stopping.clone();
            let shutdown = async move {
                let _ = stopped.wait_for(|s| *s).await;
            };
            match elector.acquire(shutdown).await? {
                Some(leadership) => Some(leadership),
                None => return Ok(()),
            }
        }
        None => None,
    };
    // What the cloud writes (statuses, interruption) runs on the leader only.
    if let Some(start) = background {
        start(&stopping);
    }

    let result = reconcile_loop(
        &args,
        provider,
        &cluster,
        &metrics,
        &events,
        &leadership,
        stopping,
    )
    .await;
    if let Some(leadership) = leadership {
        // A failed release only makes the next leader wait out the Lease.
        if let Err(error) = leadership.release().await {
            tracing::warn!(%error, "releasing the Lease failed");
        }
    }
    result
}

/// Reconciles until stopped; each round's errors are logged, and the next
/// round tries again.
async fn reconcile_loop(
    args: &Args,
    provider: Arc<dyn CloudProvider>,
    cluster: &KubeCluster,
    metrics: &Metrics,
    events: &EventRecorder,
    leadership: &Option<Leadership>,
    mut stopping: watch::Receiver<bool>,
) -> Result<(), RunError> {
    let options = DriverOptions::default()
        .with_disrupt(args.disruption)
        .with_planning(args.planning.options())
        .with_planning_runner(SpawnBlocking);
    // A dry run plans as the driver would: its packing and feature gates,
    // the provider's repair policies.
    let planned = Planned {
        provisioning: ProvisioningOptions::from(options.planning),
        disruption: options.disruption(provider.repair_policies()),
    };
    let mut driver = Driver::new(provider, Arc::new(cluster.clone())).with_options(options);
    loop {
        if leadership.as_ref().is_some_and(Leadership::is_lost) {
            return Err(RunError::LostLease);
        }
        let lost = lease_lost(leadership);
        let round = async {
            if args.dry_run {
                dry_run(&driver, &planned, args).await
            } else {
                reconcile(&mut driver, cluster, metrics, events).await
            }
        };
        // A leader that lost its Lease stops at once, between two requests,
        // as client-go's leaders exit: the new leader may be acting already.
        let round = tokio::select! {
            round = round => round,
            () = lost => return Err(RunError::LostLease),
        };
        if let Err(error) = round {
            if args.once {
                return Err(RunError::Reconcile(error));
            }
            tracing::warn!(error = %karpenter_core::error::with_causes(&error), "reconcile failed; trying again next round");
        }
        if args.once {
            return Ok(());
        }
        let lost = lease_lost(leadership);
        tokio::select! {
            _ = tokio::time::sleep(args.interval) => {}
            _ = stopping.wait_for(|s| *s) => return Ok(()),
            _ = lost => return Err(RunError::LostLease),
        }
    }
}

/// Completes when the Lease is lost; never without leader election.
async fn lease_lost(leadership: &Option<Leadership>) {
    match leadership {
        Some(leadership) => leadership.lost().await,
        None => std::future::pending().await,
    }
}

/// One reconcile: the driver acts; its report becomes events and metrics.
async fn reconcile(
    driver: &mut Driver,
    cluster: &KubeCluster,
    metrics: &Metrics,
    events: &EventRecorder,
) -> Result<(), karpenter_core::Error> {
    // As upstream's NodePool hash controller: the pools' template hashes,
    // for drift.
    cluster.write_hashes().await?;
    let pools = pools_of_claims(cluster).await;
    let report = driver.reconcile(jiff::Timestamp::now()).await?;
    events.record_report(&report);
    count(&report, &pools, metrics);
    let pods = cluster.pods().await?;
    let pending = pods.iter().filter(is_pending).count();
    metrics.set_pending_pods(pending);
    metrics.set_cluster_state(cluster.nodes().await?.len(), cluster.is_synced());
    for timing in &report.timings {
        match timing.step {
            Step::Provisioning => metrics.observe_scheduling(timing.took),
            Step::Disruption => {
                // One search over every method, where upstream times each.
                metrics.observe_disruption_evaluation("all", "", timing.took);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Each claim's NodePool, as the round starts (a terminated claim is gone
/// by the time its report is read).
async fn pools_of_claims(cluster: &KubeCluster) -> BTreeMap<String, String> {
    cluster
        .node_claims()
        .await
        .unwrap_or_default()
        .into_iter()
        .filter_map(|claim| {
            let pool = claim
                .metadata
                .labels
                .as_ref()?
                .get(NODE_POOL_LABEL_KEY)?
                .clone();
            Some((claim.metadata.name?, pool))
        })
        .collect()
}

/// The NodeClaim counters, from what the driver did.
fn count(report: &Report, pools: &BTreeMap<String, String>, metrics: &Metrics) {
    let pool_of = |claim: &str| pools.get(claim).map(String::as_str).unwrap_or_default();
    for event in &report.events {
        match event {
            Event::ClaimCreated { pool, .. } => metrics.claim_created(pool, "provisioning"),
            Event::CommandStarted {
                reason,
                candidates,
                replacements,
                ..
            } => {
                let reason = reason_label(*reason);
                for claim in replacements {
                    metrics.claim_created(pool_of(claim), reason);
                }
                for claim in candidates {
                    metrics.claim_disrupted(pool_of(claim), reason);
                }
            }
            Event::Terminated { claim } => metrics.claim_terminated(pool_of(claim), "deleted"),
            _ => {}
        }
    }
}

/// The `reason` label upstream's NodeClaim counters give a disruption.
fn reason_label(why: CommandReason) -> &'static str {
    match why {
        CommandReason::Empty => reason::EMPTINESS,
        CommandReason::Underutilized => reason::CONSOLIDATION,
        CommandReason::Drifted => reason::DRIFT,
        CommandReason::Expired => reason::EXPIRATION,
        _ => "unhealthy",
    }
}

/// How the driver plans, for a dry run to plan the same way.
struct Planned {
    provisioning: ProvisioningOptions,
    disruption: DisruptionOptions,
}

/// A dry run: plans provisioning and disruption on the cluster as it
/// stands, logs every decision, writes nothing.
async fn dry_run(
    driver: &Driver,
    planned: &Planned,
    args: &Args,
) -> Result<(), karpenter_core::Error> {
    let now = jiff::Timestamp::now();
    let snapshot = driver.snapshot(now).await?;
    let options = planned.provisioning.clone().at(now);
    let plan = plan_provisioning_with(&snapshot, &options);
    for claim in &plan.node_claims {
        let launch = claim.launch.as_ref();
        tracing::info!(
            dry_run = true,
            nodepool = claim.node_pool,
            instance_type = launch.map(|l| l.instance_type.as_str()),
            zone = launch.map(|l| l.zone.as_str()),
            capacity_type = launch.map(|l| l.capacity_type.as_str()),
            price = launch.map(|l| l.price),
            pods = claim.pods.len(),
            "would create a NodeClaim"
        );
    }
    for unplaced in &plan.unschedulable {
        tracing::info!(dry_run = true, pod = %unplaced.pod, reason = %unplaced.reason, "would leave a pod pending");
    }
    if args.disruption {
        let disruption = plan_disruption_with(&snapshot, now, &planned.disruption);
        for command in &disruption.commands {
            tracing::info!(
                dry_run = true,
                reason = ?command.reason,
                candidates = ?command.candidates,
                replacements = command.replacements.len(),
                savings_per_hour = command.savings_per_hour,
                "would disrupt"
            );
        }
        for blocked in &disruption.blocked {
            tracing::info!(
                dry_run = true,
                node = blocked.node,
                reason = blocked.reason,
                "disruption blocked"
            );
        }
    }
    Ok(())
}

/// Serves the metrics and health endpoints on `listen`, until stopped.
async fn serve(
    listen: Listen,
    metrics: &Arc<Metrics>,
    readiness: &Readiness,
    stopping: &watch::Receiver<bool>,
) -> Result<(), RunError> {
    let Listen::On(addr) = listen else {
        return Ok(());
    };
    let server = Server::bind(addr, Arc::clone(metrics), readiness.clone()).await?;
    let mut stopped = stopping.clone();
    tokio::spawn(server.serve(async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    Ok(())
}

/// The elector, with `--leader-elect`.
fn leader(
    args: &Args,
    client: &Client,
    identity: &str,
) -> Result<Option<LeaderElector<kube::Api<Lease>>>, RunError> {
    if !args.leader_elect {
        return Ok(None);
    }
    let namespace = args
        .lease_namespace
        .clone()
        .ok_or(RunError::LeaseNamespace)?;
    let api = kube::Api::namespaced(client.clone(), &namespace);
    let config = LeaderElectionConfig {
        lease_duration: args.lease_duration,
        renew_deadline: args.renew_deadline,
        retry_period: args.retry_period,
    };
    Ok(Some(LeaderElector::new(
        api,
        &args.lease_name,
        identity,
        config,
    )?))
}

/// SIGTERM (what Kubernetes sends) or Ctrl-C.
async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
