//! The fake cloud of `--provider fake`, as upstream's kwok provider: a
//! launch picks an offering from the instance types it was given and
//! creates the Node object itself, Ready at once; the cluster's Nodes are
//! the cloud's instances. It keeps nothing in memory, so a restarted
//! controller finds every instance again, and the controller runs end to
//! end against any API server (kind, or a test's own).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::{Node, NodeCondition, NodeSpec, NodeStatus, NodeSystemInfo};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use karpenter_core::api::{NodeClaim, NodePool, Quantities};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, LaunchRank, RepairPolicy,
};
use karpenter_core::cluster::Cluster;
use karpenter_core::scheduling::{LABEL_ARCH_STABLE, LABEL_OS_STABLE, WellKnownLabels};
use karpenter_fake::FakeCloudProvider;
use kube::Api;
use kube::api::{DeleteParams, PostParams};

use crate::KubeCluster;

/// The label on every Node this provider launched.
pub const LAUNCHED_LABEL: &str = "karpenter.kwok.sh/launched";
/// The annotation that hands a Node to a kwok controller, where one runs
/// (on kind, it keeps the Node's status as a kubelet would).
pub const KWOK_ANNOTATION: &str = "kwok.x-k8s.io/node";
/// The provider ID scheme.
pub const PROVIDER_ID_PREFIX: &str = "kwok://";

/// The fake cloud whose instances are Node objects, as upstream's kwok
/// provider: a launch picks an offering from the instance types it was given
/// and creates the Node itself, Ready at once. It keeps nothing in memory
/// (its instances are the Nodes labelled [`LAUNCHED_LABEL`]), so a
/// restarted controller finds every instance again.
pub struct KwokProvider {
    offerings: FakeCloudProvider,
    cluster: KubeCluster,
    field_manager: String,
}

impl fmt::Debug for KwokProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KwokProvider").finish_non_exhaustive()
    }
}

impl KwokProvider {
    /// A provider launching `instance_types` as Nodes of `cluster`, written
    /// under `field_manager`.
    pub fn new(
        instance_types: Vec<InstanceType>,
        cluster: KubeCluster,
        field_manager: impl Into<String>,
    ) -> Self {
        KwokProvider {
            offerings: FakeCloudProvider::new(instance_types),
            cluster,
            field_manager: field_manager.into(),
        }
    }

    fn nodes_api(&self) -> Api<Node> {
        Api::all(self.cluster.client().clone())
    }

    /// The Nodes this provider launched.
    async fn instances(&self) -> Result<Vec<Arc<Node>>, CloudProviderError> {
        let nodes = self
            .cluster
            .nodes()
            .await
            .map_err(|e| CloudProviderError::api("listing Nodes", true, e))?;
        Ok(nodes
            .into_iter()
            .filter(|node| label(node, LAUNCHED_LABEL).is_some())
            .collect())
    }
}

fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

fn provider_id(node: &Node) -> Option<&str> {
    node.spec.as_ref()?.provider_id.as_deref()
}

/// The Node that stands for the launched claim `hydrated`.
fn node_for(hydrated: &NodeClaim, name: &str, provider_id: &str) -> Node {
    let mut labels = hydrated.metadata.labels.clone().unwrap_or_default();
    labels.insert("kubernetes.io/hostname".into(), name.into());
    labels.insert(LAUNCHED_LABEL.into(), "true".into());
    let status = hydrated.status.clone().unwrap_or_default();
    let quantities = |q: Option<Quantities>| q.map(Quantities::into_map);
    let now = Time(jiff::Timestamp::now());
    Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: Some(BTreeMap::from([(KWOK_ANNOTATION.into(), "fake".into())])),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: Some(NodeSpec {
            provider_id: Some(provider_id.into()),
            taints: hydrated.spec.taints.clone().filter(|t| !t.is_empty()),
            ..NodeSpec::default()
        }),
        status: Some(NodeStatus {
            capacity: quantities(status.capacity),
            allocatable: quantities(status.allocatable),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: Some("KubeletReady".into()),
                message: Some("launched by karpenter-controller's fake provider".into()),
                last_heartbeat_time: Some(now.clone()),
                last_transition_time: Some(now),
            }]),
            node_info: Some(NodeSystemInfo {
                architecture: labels.get(LABEL_ARCH_STABLE).cloned().unwrap_or_default(),
                operating_system: labels.get(LABEL_OS_STABLE).cloned().unwrap_or_default(),
                ..NodeSystemInfo::default()
            }),
            ..NodeStatus::default()
        }),
    }
}

/// The claim a Node stands for, as `get` and `list` answer.
fn claim_of(node: &Node) -> NodeClaim {
    let mut claim = NodeClaim::default();
    claim.metadata.name = node.metadata.name.clone();
    claim.metadata.labels = node.metadata.labels.clone();
    let status = claim.status.get_or_insert_with(Default::default);
    status.provider_id = provider_id(node).map(str::to_owned);
    let node_status = node.status.clone().unwrap_or_default();
    status.capacity = node_status.capacity.map(Quantities::from);
    status.allocatable = node_status.allocatable.map(Quantities::from);
    claim
}

#[async_trait]
impl CloudProvider for KwokProvider {
    async fn create(&self, claim: &NodeClaim) -> Result<NodeClaim, CloudProviderError> {
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut hydrated = self.offerings.create(claim).await?;
        // The fake only chose the offering; the Node is the instance.
        let _ = self.offerings.delete(&hydrated).await;
        let provider_id = format!("{PROVIDER_ID_PREFIX}{name}");
        hydrated
            .status
            .get_or_insert_with(Default::default)
            .provider_id = Some(provider_id.clone());
        let node = node_for(&hydrated, &name, &provider_id);
        let params = PostParams {
            dry_run: false,
            field_manager: Some(self.field_manager.clone()),
        };
        let api = self.nodes_api();
        let created = match api.create(&params, &node).await {
            Ok(created) => created,
            // A launch whose answer was lost: the Node is there already.
            Err(kube::Error::Api(status)) if status.code == 409 => api
                .get(&name)
                .await
                .map_err(|e| CloudProviderError::api(format!("reading Node {name}"), true, e))?,
            Err(error) => {
                return Err(CloudProviderError::api(
                    format!("creating Node {name}"),
                    true,
                    error,
                ));
            }
        };
        // A Node's create may drop its status (the status subresource's), so
        // it is written again: Ready, with its capacity.
        let mut ready = created;
        ready.status = node.status;
        if let Err(error) = api.replace_status(&name, &params, &ready).await {
            return Err(CloudProviderError::api(
                format!("marking Node {name} ready"),
                true,
                error,
            ));
        }
        Ok(hydrated)
    }

    async fn delete(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        let wanted = claim.status.as_ref().and_then(|s| s.provider_id.clone());
        let instances = self.instances().await?;
        let Some(node) = instances
            .iter()
            .find(|node| provider_id(node).is_some() && provider_id(node) == wanted.as_deref())
        else {
            return Err(CloudProviderError::NodeClaimNotFound {
                provider_id: wanted
                    .or_else(|| claim.metadata.name.clone())
                    .unwrap_or_default(),
            });
        };
        let name = node.metadata.name.clone().unwrap_or_default();
        match self
            .nodes_api()
            .delete(&name, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => {
                Err(CloudProviderError::NodeClaimNotFound {
                    provider_id: provider_id(node).unwrap_or_default().to_owned(),
                })
            }
            Err(error) => Err(CloudProviderError::api(
                format!("deleting Node {name}"),
                true,
                error,
            )),
        }
    }

    async fn get(&self, provider_id_wanted: &str) -> Result<NodeClaim, CloudProviderError> {
        self.instances()
            .await?
            .iter()
            .find(|node| provider_id(node) == Some(provider_id_wanted))
            .map(|node| claim_of(node))
            .ok_or_else(|| CloudProviderError::NodeClaimNotFound {
                provider_id: provider_id_wanted.to_owned(),
            })
    }

    async fn list(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        Ok(self
            .instances()
            .await?
            .iter()
            .map(|node| claim_of(node))
            .collect())
    }

    async fn instance_types(
        &self,
        pool: &NodePool,
    ) -> Result<Vec<InstanceType>, CloudProviderError> {
        self.offerings.instance_types(pool).await
    }

    async fn is_drifted(&self, claim: &NodeClaim) -> Result<Option<String>, CloudProviderError> {
        self.offerings.is_drifted(claim).await
    }

    fn repair_policies(&self) -> Vec<RepairPolicy> {
        self.offerings.repair_policies()
    }

    fn name(&self) -> &str {
        "kwok"
    }

    fn well_known_labels(&self) -> WellKnownLabels {
        self.offerings.well_known_labels()
    }

    fn launch_rank(&self) -> LaunchRank {
        self.offerings.launch_rank()
    }
}
