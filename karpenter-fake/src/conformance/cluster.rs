//! The suite every [`Cluster`] runs: its reads answer, and its NodeClaim
//! writes keep the contract written on the trait (create refuses a taken
//! name, update replaces but keeps a deletion under way, delete only asks and
//! may be asked again, remove takes the claim away, calls on objects that
//! are not there say so, and evicting a pod that is gone is no error).
//!
//! It creates one NodeClaim, named `karpenter-conformance-<n>` after the
//! claims already there, and removes it again; it touches nothing else. It
//! asks the cluster about a Node and a Pod by names no cluster uses.

use karpenter_core::api::NodeClaim;
use karpenter_core::cluster::{Cluster, ClusterError, Eviction};
use karpenter_core::pods::PodKey;
use karpenter_core::scheduling::DISRUPTED_NO_SCHEDULE_TAINT;

use super::check::{Check, Checks, check};

/// The label the suite's update sets.
const UPDATED_LABEL: &str = "conformance.karpenter.sh/updated";
/// A name no Node or Pod of a real cluster has.
const NOBODY: &str = "karpenter-conformance-nobody";

/// Runs every check against `cluster`.
pub async fn run_cluster(cluster: &dyn Cluster) -> Vec<Check> {
    let mut checks = Checks::default();
    checks.record("the reads answer", reads(cluster).await);
    let claims = match cluster.node_claims().await {
        Ok(claims) => claims,
        Err(error) => {
            checks.record("NodeClaims are listed", Err(error.to_string()));
            return checks.into_vec();
        }
    };
    let name = free_name(&claims);
    checks.record(
        "a created NodeClaim is listed",
        created(cluster, &name).await,
    );
    checks.record(
        "creating a taken name is AlreadyExists",
        taken(cluster, &name).await,
    );
    checks.record(
        "an update replaces the NodeClaim",
        updated(cluster, &name).await,
    );
    checks.record(
        "delete asks for deletion, again and again, and updates keep it",
        deleting(cluster, &name).await,
    );
    checks.record(
        "remove takes the NodeClaim away",
        removed(cluster, &name).await,
    );
    checks.record(
        "writes to NodeClaims that are not there are NotFound",
        claims_not_found(cluster, &name).await,
    );
    checks.record(
        "writes to a Node or Pod that is not there are NotFound",
        others_not_found(cluster).await,
    );
    checks.record(
        "evicting a pod that is not there leaves nothing to do",
        evicting_nobody(cluster).await,
    );
    checks.into_vec()
}

/// Every read answers.
async fn reads(cluster: &dyn Cluster) -> Result<(), String> {
    let failed = |what: &str, e: ClusterError| format!("{what}: {e}");
    cluster
        .node_pools()
        .await
        .map_err(|e| failed("NodePools", e))?;
    cluster.nodes().await.map_err(|e| failed("Nodes", e))?;
    cluster.pods().await.map_err(|e| failed("Pods", e))?;
    cluster
        .daemon_sets()
        .await
        .map_err(|e| failed("DaemonSets", e))?;
    cluster
        .pod_disruption_budgets()
        .await
        .map_err(|e| failed("PodDisruptionBudgets", e))?;
    cluster
        .persistent_volumes()
        .await
        .map_err(|e| failed("PersistentVolumes", e))?;
    cluster
        .persistent_volume_claims()
        .await
        .map_err(|e| failed("PersistentVolumeClaims", e))?;
    cluster
        .storage_classes()
        .await
        .map_err(|e| failed("StorageClasses", e))?;
    Ok(())
}

/// A claim name the cluster does not use yet.
fn free_name(claims: &[NodeClaim]) -> String {
    (0..)
        .map(|n| format!("karpenter-conformance-{n}"))
        .find(|name| claims.iter().all(|c| c.name() != Some(name.as_str())))
        .unwrap_or_default()
}

/// The suite's claim: a name, a pool label and no requirements.
fn claim(name: &str) -> NodeClaim {
    let mut claim = NodeClaim::default();
    claim.metadata.name = Some(name.to_owned());
    claim.metadata.labels = Some(
        [(
            karpenter_core::scheduling::NODE_POOL_LABEL_KEY.to_owned(),
            "karpenter-conformance".to_owned(),
        )]
        .into(),
    );
    claim
}

/// The claim `name` as the cluster has it now.
async fn read(cluster: &dyn Cluster, name: &str) -> Result<Option<NodeClaim>, String> {
    let claims = cluster.node_claims().await.map_err(|e| e.to_string())?;
    Ok(claims.into_iter().find(|c| c.name() == Some(name)))
}

async fn created(cluster: &dyn Cluster, name: &str) -> Result<(), String> {
    cluster
        .create_node_claim(claim(name))
        .await
        .map_err(|e| format!("create: {e}"))?;
    let listed = read(cluster, name).await?;
    check(listed.is_some(), || format!("{name} is not listed"))
}

async fn taken(cluster: &dyn Cluster, name: &str) -> Result<(), String> {
    match cluster.create_node_claim(claim(name)).await {
        Err(ClusterError::AlreadyExists { .. }) => Ok(()),
        other => Err(format!("a second create gave {other:?}")),
    }
}

async fn updated(cluster: &dyn Cluster, name: &str) -> Result<(), String> {
    let mut claim = read(cluster, name)
        .await?
        .ok_or_else(|| format!("{name} is gone"))?;
    claim
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert(UPDATED_LABEL.to_owned(), "true".to_owned());
    cluster
        .update_node_claim(claim)
        .await
        .map_err(|e| format!("update: {e}"))?;
    let read_back = read(cluster, name).await?;
    let label = read_back
        .as_ref()
        .and_then(|c| c.metadata.labels.as_ref())
        .and_then(|l| l.get(UPDATED_LABEL));
    check(label.is_some_and(|v| v == "true"), || {
        format!("the update's label did not stay: {read_back:?}")
    })
}

async fn deleting(cluster: &dyn Cluster, name: &str) -> Result<(), String> {
    cluster
        .delete_node_claim(name)
        .await
        .map_err(|e| format!("delete: {e}"))?;
    let asked = read(cluster, name).await?;
    let Some(mut claim) = asked else {
        return Err("delete took the claim away; it only asks for deletion".into());
    };
    if claim.metadata.deletion_timestamp.is_none() {
        return Err("delete did not set deletionTimestamp".into());
    }
    cluster
        .delete_node_claim(name)
        .await
        .map_err(|e| format!("a second delete: {e}"))?;
    // An update that does not carry the timestamp does not call the
    // deletion off, as the API server keeps it.
    claim.metadata.deletion_timestamp = None;
    cluster
        .update_node_claim(claim)
        .await
        .map_err(|e| format!("update while deleting: {e}"))?;
    let kept = read(cluster, name)
        .await?
        .is_some_and(|c| c.metadata.deletion_timestamp.is_some());
    check(kept, || "an update called the deletion off".into())
}

async fn removed(cluster: &dyn Cluster, name: &str) -> Result<(), String> {
    cluster
        .remove_node_claim(name)
        .await
        .map_err(|e| format!("remove: {e}"))?;
    let gone = read(cluster, name).await?.is_none();
    check(gone, || format!("{name} is still listed"))
}

/// Whether `result` is NotFound; else what it was, for the failure.
fn not_found(what: &str, result: Result<(), ClusterError>) -> Result<(), String> {
    match result {
        Err(ClusterError::NotFound { .. }) => Ok(()),
        other => Err(format!("{what} gave {other:?}")),
    }
}

async fn claims_not_found(cluster: &dyn Cluster, gone: &str) -> Result<(), String> {
    not_found("update", cluster.update_node_claim(claim(gone)).await)?;
    not_found("delete", cluster.delete_node_claim(gone).await)?;
    not_found("remove", cluster.remove_node_claim(gone).await)
}

async fn others_not_found(cluster: &dyn Cluster) -> Result<(), String> {
    let mut node = k8s_openapi::api::core::v1::Node::default();
    node.metadata.name = Some(NOBODY.to_owned());
    not_found("update_node", cluster.update_node(node).await)?;
    not_found(
        "taint_node",
        cluster
            .taint_node(NOBODY, DISRUPTED_NO_SCHEDULE_TAINT.to_taint())
            .await,
    )?;
    not_found(
        "untaint_node",
        cluster
            .untaint_node(NOBODY, DISRUPTED_NO_SCHEDULE_TAINT.key)
            .await,
    )?;
    let pod = PodKey::new("default", NOBODY);
    not_found("nominate_pod", cluster.nominate_pod(&pod, NOBODY).await)
}

async fn evicting_nobody(cluster: &dyn Cluster) -> Result<(), String> {
    match cluster.evict_pod(&PodKey::new("default", NOBODY)).await {
        Ok(Eviction::Evicted) => Ok(()),
        other => Err(format!("gave {other:?}")),
    }
}
