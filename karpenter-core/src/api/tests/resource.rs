//! The objects as Kubernetes resources: what a Kubernetes client (kube's
//! `Api<K>`, whose `Resource` is implemented for every
//! `k8s_openapi::Resource + Metadata<Ty = ObjectMeta>`) needs to list, watch
//! and write them.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta};
use k8s_openapi::{ClusterResourceScope, ListableResource, Metadata, Resource};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::fixtures;
use crate::api::{NodeClaim, NodePool};

/// What kube's `Api<K>` asks of `K`, checked when the tests build.
fn usable_by_a_client<K>()
where
    K: Resource<Scope = ClusterResourceScope>
        + ListableResource
        + Metadata<Ty = ObjectMeta>
        + DeserializeOwned
        + serde::Serialize
        + Clone
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
}

#[test]
fn node_pools_and_node_claims_are_cluster_scoped_karpenter_resources() {
    usable_by_a_client::<NodePool>();
    usable_by_a_client::<NodeClaim>();
    assert_eq!(<NodePool as Resource>::API_VERSION, "karpenter.sh/v1");
    assert_eq!(<NodePool as Resource>::GROUP, "karpenter.sh");
    assert_eq!(<NodePool as Resource>::VERSION, "v1");
    assert_eq!(<NodePool as Resource>::KIND, "NodePool");
    assert_eq!(<NodePool as Resource>::URL_PATH_SEGMENT, "nodepools");
    assert_eq!(<NodePool as ListableResource>::LIST_KIND, "NodePoolList");
    assert_eq!(<NodeClaim as Resource>::KIND, "NodeClaim");
    assert_eq!(<NodeClaim as Resource>::URL_PATH_SEGMENT, "nodeclaims");
    assert_eq!(<NodeClaim as ListableResource>::LIST_KIND, "NodeClaimList");
    // The kind a client writes is the kind the object writes.
    assert_eq!(<NodePool as Resource>::KIND, NodePool::KIND);
    assert_eq!(<NodeClaim as Resource>::API_VERSION, NodeClaim::API_VERSION);
}

#[test]
fn metadata_is_the_objects_own() {
    let mut pool: NodePool = serde_json::from_value(fixtures::full_nodepool()).expect("parses");
    pool.metadata_mut().resource_version = Some("42".to_owned());
    assert_eq!(pool.metadata.resource_version.as_deref(), Some("42"));
    assert_eq!(Metadata::metadata(&pool).name.as_deref(), Some("default"));
}

/// A list as the API server answers a list call (the shape of kube's
/// `ObjectList`): the items carry no `apiVersion` or `kind`.
#[derive(Deserialize)]
struct List<K> {
    #[serde(rename = "apiVersion")]
    _api_version: String,
    kind: String,
    #[serde(rename = "metadata")]
    _metadata: ListMeta,
    items: Vec<K>,
}

#[test]
fn a_listed_page_reads_without_type_meta_on_its_items() {
    let mut item = fixtures::full_nodepool();
    let object = item.as_object_mut().expect("an object");
    object.remove("apiVersion");
    object.remove("kind");
    let page = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePoolList",
        "metadata": {"resourceVersion": "7"},
        "items": [item],
    });
    let list: List<NodePool> = serde_json::from_value(page).expect("a list page");
    assert_eq!(list.kind, <NodePool as ListableResource>::LIST_KIND);
    assert_eq!(list.items.len(), 1);
    // Written back, the item says what it is, as a create or replace body must.
    let written = serde_json::to_value(&list.items[0]).expect("serializes");
    assert_eq!(written["apiVersion"], "karpenter.sh/v1");
    assert_eq!(written["kind"], "NodePool");
}
