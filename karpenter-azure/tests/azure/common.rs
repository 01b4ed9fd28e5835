//! What the provider tests share: a fake ARM on 127.0.0.1 (a stateful
//! wiremock responder), the provider on it, a pool and claims.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use karpenter_azure::NetworkOptions;
use karpenter_azure::arm::{ArmClient, RetryPolicy, StaticCredential};
use karpenter_azure::{AzureCloudProvider, AzureConfig};
use karpenter_core::api::{NodeClaim, NodePool};
use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// ARM as far as the provider uses it: NICs and VMs in one resource group,
/// VM creation as a long-running operation, sizes that fail to allocate.
#[derive(Clone, Default)]
pub(crate) struct FakeArm {
    pub state: Arc<Mutex<State>>,
}

#[derive(Default)]
pub(crate) struct State {
    /// The server's address, for operation URLs.
    pub base: String,
    pub vms: BTreeMap<String, Value>,
    pub nics: BTreeMap<String, Value>,
    /// (vmSize, zone) pairs Azure has no capacity for.
    pub sold_out: BTreeSet<(String, String)>,
    /// The bodies of VM PUTs, in order.
    pub vm_puts: Vec<Value>,
    pub nic_puts: Vec<Value>,
    /// The paths of community gallery image version lists, in order.
    pub gallery_lists: Vec<String>,
}

fn not_found() -> ResponseTemplate {
    ResponseTemplate::new(404)
        .set_body_json(json!({"error": {"code": "ResourceNotFound", "message": "not found"}}))
}

impl Respond for FakeArm {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let mut state = self.state.lock().expect("state");
        let path = request.url.path().to_owned();
        let method = request.method.as_str();
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let name = path.rsplit('/').next().unwrap_or_default().to_owned();
        if let Some(operation) = path.strip_prefix("/operations/") {
            let _ = operation;
            return ResponseTemplate::new(200).set_body_json(json!({"status": "Succeeded"}));
        }
        if path == "/api/retail/prices" {
            return ResponseTemplate::new(200).set_body_json(json!({"Items": [
                {"armSkuName": "Standard_D2s_v3", "armRegionName": "eastus", "retailPrice": 0.1, "skuName": "D2s v3", "productName": "Virtual Machines DSv3 Series", "meterName": "D2s v3"},
                {"armSkuName": "Standard_D2s_v3", "armRegionName": "eastus", "retailPrice": 0.012, "skuName": "D2s v3 Spot", "productName": "Virtual Machines DSv3 Series", "meterName": "D2s v3 Spot"},
            ], "NextPageLink": null}));
        }
        if path.contains("/communityGalleries/") && path.ends_with("/versions") {
            // Every image has one version, the one AKS published last.
            state.gallery_lists.push(path);
            return ResponseTemplate::new(200).set_body_json(json!({"value": [
                {"name": "202505.27.0", "location": "eastus", "properties": {"publishedDate": "2025-05-27T17:40:04.2453383+00:00"}},
            ]}));
        }
        if path.contains("/networkInterfaces/") {
            return match method {
                "PUT" => {
                    state.nic_puts.push(body.clone());
                    state.nics.insert(name.clone(), body.clone());
                    ResponseTemplate::new(200).set_body_json(body)
                }
                "DELETE" => match state.nics.remove(&name) {
                    Some(_) => ResponseTemplate::new(200),
                    None => ResponseTemplate::new(204),
                },
                _ => ResponseTemplate::new(405),
            };
        }
        if path.ends_with("/virtualMachines") {
            let value: Vec<Value> = state.vms.values().cloned().collect();
            return ResponseTemplate::new(200).set_body_json(json!({"value": value}));
        }
        if path.contains("/virtualMachines/") {
            return match method {
                "PUT" => {
                    state.vm_puts.push(body.clone());
                    let size = body["properties"]["hardwareProfile"]["vmSize"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let zone = body["zones"][0].as_str().unwrap_or("0").to_owned();
                    if state.sold_out.contains(&(size.clone(), zone)) {
                        return ResponseTemplate::new(409).set_body_json(json!({
                            "error": {"code": "ZonalAllocationFailed", "message": format!("Allocation failed for {size}")},
                        }));
                    }
                    let mut vm = body.clone();
                    vm["name"] = json!(name);
                    vm["properties"]["provisioningState"] = json!("Succeeded");
                    state.vms.insert(name.clone(), vm.clone());
                    let operation = format!("{}/operations/{name}", state.base);
                    ResponseTemplate::new(201)
                        .insert_header("Azure-AsyncOperation", operation.as_str())
                        .set_body_json(vm)
                }
                "GET" => match state.vms.get(&name) {
                    Some(vm) => ResponseTemplate::new(200).set_body_json(vm.clone()),
                    None => not_found(),
                },
                "DELETE" => match state.vms.remove(&name) {
                    Some(_) => ResponseTemplate::new(200),
                    None => not_found(),
                },
                _ => ResponseTemplate::new(405),
            };
        }
        not_found()
    }
}

pub(crate) fn config() -> AzureConfig {
    AzureConfig {
        subscription: "sub-1".into(),
        resource_group: "MC_rg_cluster_eastus".into(),
        region: "eastus".into(),
        cluster_name: "cluster".into(),
        subnet_id: "/subscriptions/sub-1/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes".into(),
        ssh_public_key: "ssh-ed25519 AAAA test".into(),
        custom_data: None,
        join: None,
        network: NetworkOptions::default(),
    }
}

pub(crate) async fn provider() -> (MockServer, FakeArm, AzureCloudProvider<ArmClient>) {
    let server = MockServer::start().await;
    let arm = FakeArm::default();
    arm.state.lock().expect("state").base = server.uri();
    Mock::given(any())
        .respond_with(arm.clone())
        .mount(&server)
        .await;
    let client = ArmClient::new(
        Arc::new(StaticCredential::new("provider-test-token")),
        "sub-1",
        "MC_rg_cluster_eastus",
    )
    .with_base_url(server.uri())
    .with_prices_url(format!("{}/api/retail/prices", server.uri()))
    .with_retry(RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        poll_interval: Duration::from_millis(1),
        max_polls: 5,
    });
    (server, arm, AzureCloudProvider::new(client, config()))
}

pub(crate) fn pool() -> NodePool {
    serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "requirements": [],
            "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
        }}},
    }))
    .expect("a NodePool")
}

pub(crate) fn claim(name: &str, requirements: Value) -> NodeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
            "requirements": requirements,
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
        },
    }))
    .expect("a NodeClaim")
}
