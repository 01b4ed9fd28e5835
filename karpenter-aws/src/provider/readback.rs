//! `get`, `list` and `delete`: the cluster's instances read back as claims
//! (by their `kubernetes.io/cluster/<name>` and `karpenter.sh/nodepool`
//! tags, as upstream's `List` finds them), and terminated.

use std::collections::BTreeMap;

use karpenter_core::api::{NodeClaim, NodeClassReference};
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType, Offering, hydrate};
use karpenter_core::scheduling::{
    CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_RESERVED, CAPACITY_TYPE_SPOT, NODE_POOL_LABEL_KEY,
};

use super::{AwsCloudProvider, api_error};
use crate::ec2::{DescribeInput, Ec2Api, Filter, Instance, InstanceState, TerminateInstancesInput};
use crate::instancetype::labels::{CAPACITY_RESERVATION_ID, TOPOLOGY_ZONE_ID};
use crate::launch::{parse_provider_id, provider_id};

/// The tag naming the instance's EC2NodeClass.
const NODE_CLASS_TAG: &str = "karpenter.k8s.aws/ec2nodeclass";
/// The tag naming the instance's NodeClaim, once upstream's tagging
/// controller has set it.
const NODE_CLAIM_TAG: &str = "karpenter.sh/nodeclaim";

/// The value of tag `key` on `instance`.
fn tag<'a>(instance: &'a Instance, key: &str) -> Option<&'a str> {
    instance
        .tags
        .iter()
        .find(|t| t.key == key)
        .map(|t| t.value.as_str())
}

/// The capacity type an instance runs as.
fn capacity_type_of(instance: &Instance) -> &'static str {
    if instance.capacity_reservation_id.is_some() {
        CAPACITY_TYPE_RESERVED
    } else if instance.instance_lifecycle.as_deref() == Some("spot") {
        CAPACITY_TYPE_SPOT
    } else {
        CAPACITY_TYPE_ON_DEMAND
    }
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// The instance `id`, unless EC2 does not know it or it is terminated.
    pub(super) async fn live_instance(
        &self,
        id: &str,
    ) -> Result<Option<Instance>, CloudProviderError> {
        let input = DescribeInput {
            ids: vec![id.to_owned()],
            filters: Vec::new(),
        };
        match self.api.describe_instances(input).await {
            Ok(found) => Ok(found
                .instances
                .into_iter()
                .find(|i| i.instance_id == id && i.state != InstanceState::Terminated)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(api_error("describing the instance", e)),
        }
    }

    /// [`CloudProvider::get`](karpenter_core::cloudprovider::CloudProvider::get).
    pub(super) async fn get_claim(
        &self,
        provider_id: &str,
    ) -> Result<NodeClaim, CloudProviderError> {
        let not_found = || CloudProviderError::NodeClaimNotFound {
            provider_id: provider_id.to_owned(),
        };
        // An ID that is not EC2's names no instance of EC2's.
        let Ok((_, id)) = parse_provider_id(provider_id) else {
            return Err(not_found());
        };
        match self.live_instance(id).await? {
            Some(instance) => Ok(self.claim_of(&instance)),
            None => Err(not_found()),
        }
    }

    /// [`CloudProvider::list`](karpenter_core::cloudprovider::CloudProvider::list).
    pub(super) async fn list_claims(&self) -> Result<Vec<NodeClaim>, CloudProviderError> {
        let input = DescribeInput {
            ids: Vec::new(),
            filters: vec![
                Filter::new(
                    &format!("tag:kubernetes.io/cluster/{}", self.config.cluster_name),
                    ["owned"],
                ),
                Filter::new("tag-key", [NODE_POOL_LABEL_KEY]),
            ],
        };
        let found = self
            .api
            .describe_instances(input)
            .await
            .map_err(|e| api_error("listing the cluster's instances", e))?;
        Ok(found
            .instances
            .iter()
            .filter(|i| i.state != InstanceState::Terminated)
            .map(|i| self.claim_of(i))
            .collect())
    }

    /// [`CloudProvider::delete`](karpenter_core::cloudprovider::CloudProvider::delete):
    /// terminates the instance; not found once it is terminated or unknown.
    pub(super) async fn terminate(&self, claim: &NodeClaim) -> Result<(), CloudProviderError> {
        let given = claim.status.as_ref().and_then(|s| s.provider_id.clone());
        let not_found = || CloudProviderError::NodeClaimNotFound {
            provider_id: given
                .clone()
                .or_else(|| claim.metadata.name.clone())
                .unwrap_or_default(),
        };
        let Some(Ok((_, id))) = given.as_deref().map(parse_provider_id) else {
            return Err(not_found());
        };
        if self.live_instance(id).await?.is_none() {
            return Err(not_found());
        }
        let input = TerminateInstancesInput {
            instance_ids: vec![id.to_owned()],
        };
        match self.api.terminate_instances(input).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_not_found() => Err(not_found()),
            Err(e) => Err(api_error("terminating the instance", e)),
        }
    }

    /// The instance type `name` as the instance's class shapes it (its
    /// capacity and labels: the unavailable marks do not matter here),
    /// else at the catalog's defaults.
    pub(super) fn type_of(&self, class: Option<&str>, name: &str) -> Option<InstanceType> {
        let shaped = self
            .node_class(class)
            .and_then(|c| self.priced_for(&c).ok())
            .and_then(|types| types.iter().find(|t| t.name == name).cloned());
        shaped.or_else(|| crate::instance_type(self.catalog, name, &self.config.region).ok())
    }

    /// An instance read back as a claim: what `create` hydrated it with, as
    /// far as the instance tells it.
    pub(super) fn claim_of(&self, instance: &Instance) -> NodeClaim {
        let class = tag(instance, NODE_CLASS_TAG);
        let mut claim = NodeClaim::default();
        claim.metadata.name = tag(instance, NODE_CLAIM_TAG).map(str::to_owned);
        claim.spec.node_class_ref = class.map(|name| NodeClassReference {
            group: "karpenter.k8s.aws".to_owned(),
            kind: "EC2NodeClass".to_owned(),
            name: name.to_owned(),
            ..NodeClassReference::default()
        });
        let mut labels = BTreeMap::new();
        if let Some(pool) = tag(instance, NODE_POOL_LABEL_KEY) {
            labels.insert(NODE_POOL_LABEL_KEY.to_owned(), pool.to_owned());
        }
        claim.metadata.labels = Some(labels);
        let capacity_type = capacity_type_of(instance);
        let id = provider_id(&instance.availability_zone, &instance.instance_id);
        let mut offering = Offering::new(instance.availability_zone.clone(), capacity_type, 0.0);
        if let Some(zone_id) = self.zone_id(class, &instance.availability_zone) {
            offering =
                offering.with_requirement(karpenter_core::scheduling::Requirement::in_values(
                    TOPOLOGY_ZONE_ID,
                    [zone_id.as_str()],
                ));
        }
        if let Some(reservation) = &instance.capacity_reservation_id {
            offering =
                offering.with_requirement(karpenter_core::scheduling::Requirement::in_values(
                    CAPACITY_RESERVATION_ID,
                    [reservation.as_str()],
                ));
        }
        let mut claim = match self.type_of(class, &instance.instance_type) {
            Some(it) => hydrate(&claim, &it, &offering, id),
            None => {
                // A type the catalog does not know: the provider ID still.
                let status = claim.status.get_or_insert_with(Default::default);
                status.provider_id = Some(id);
                claim
            }
        };
        let status = claim.status.get_or_insert_with(Default::default);
        status.image_id = Some(instance.image_id.clone()).filter(|i| !i.is_empty());
        claim
    }

    /// The ID of `zone` as the class's resolved subnets give it.
    fn zone_id(&self, class: Option<&str>, zone: &str) -> Option<String> {
        let class = self.node_class(class)?;
        class
            .status
            .as_ref()?
            .subnets
            .as_ref()?
            .iter()
            .find(|s| s.zone == zone)
            .and_then(|s| s.zone_id.clone())
    }
}
