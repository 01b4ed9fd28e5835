//! The Azure provider against a fake ARM on 127.0.0.1 (a stateful wiremock
//! responder): the conformance suite, the request shapes, insufficient
//! capacity through the failure cache, drift.

use crate::common::{claim, config, pool, provider};
use karpenter_azure::AKSNodeClass;
use karpenter_core::cloudprovider::{CloudProvider, CloudProviderError};
use serde_json::{Value, json};

#[tokio::test]
async fn the_azure_provider_conforms() {
    let (_server, arm, provider) = provider().await;
    let checks = karpenter_fake::conformance::run(&provider, &pool()).await;
    let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // The AKS labels (`karpenter.azure.com/sku-family`, ...) are well known, and
    // a claim selecting one launches.
    for name in [
        "every label of the instance types is well known",
        "a claim selecting a provider label launches a type with it",
    ] {
        assert!(checks.iter().any(|c| c.name == name), "{name}: {checks:#?}");
    }
    assert!(
        arm.state.lock().expect("state").vms.is_empty(),
        "the suite cleans up"
    );
}

#[tokio::test]
async fn a_spot_launch_sends_upstreams_request_shapes() {
    let (_server, arm, provider) = provider().await;
    let mut class: AKSNodeClass = serde_json::from_value(json!({
        "metadata": {"name": "default"},
        "spec": {"imageFamily": "Ubuntu2204", "osDiskSizeGB": 64, "tags": {"team/name": "web"}},
    }))
    .expect("a class");
    class.metadata.labels = None;
    provider.apply_node_class(class);
    let wanted = claim(
        "default-x1",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-2"]},
        ]),
    );
    let launched = provider.create(&wanted).await.expect("launched");
    let status = launched.status.as_ref().expect("a status");
    assert_eq!(
        status.provider_id.as_deref(),
        Some(
            "azure:///subscriptions/sub-1/resourceGroups/mc_rg_cluster_eastus/providers/Microsoft.Compute/virtualMachines/aks-default-x1"
        )
    );
    let labels = launched.metadata.labels.as_ref().expect("labels");
    assert_eq!(labels["topology.kubernetes.io/zone"], "eastus-2");
    assert_eq!(labels["karpenter.sh/capacity-type"], "spot");
    assert_eq!(labels["karpenter.azure.com/sku-cpu"], "2");
    assert!(status.allocatable.is_some() && status.capacity.is_some());
    let state = arm.state.lock().expect("state");
    let vm = &state.vm_puts[0];
    assert_eq!(vm["location"], "eastus");
    assert_eq!(vm["zones"], json!(["2"]));
    assert_eq!(
        vm["properties"]["hardwareProfile"]["vmSize"],
        "Standard_D2s_v3"
    );
    assert_eq!(vm["properties"]["priority"], "Spot");
    assert_eq!(vm["properties"]["evictionPolicy"], "Delete");
    assert_eq!(vm["properties"]["billingProfile"]["maxPrice"], -1);
    assert_eq!(
        vm["properties"]["storageProfile"]["osDisk"]["diskSizeGB"],
        64
    );
    assert_eq!(
        vm["properties"]["osProfile"]["linuxConfiguration"]["disablePasswordAuthentication"],
        true
    );
    assert_eq!(vm["tags"]["karpenter.sh_nodepool"], "default");
    assert_eq!(vm["tags"]["karpenter.azure.com_cluster"], "cluster");
    assert_eq!(vm["tags"]["compute.aks.billing"], "linux");
    assert_eq!(vm["tags"]["team_name"], "web");
    let nic_id = vm["properties"]["networkProfile"]["networkInterfaces"][0]["id"]
        .as_str()
        .expect("a NIC");
    assert!(
        nic_id.ends_with("/networkInterfaces/aks-default-x1"),
        "{nic_id}"
    );
    let nic = &state.nic_puts[0];
    assert_eq!(
        nic["properties"]["ipConfigurations"][0]["properties"]["subnet"]["id"],
        config().subnet_id
    );
    // D2s_v3 records AcceleratedNetworkingEnabled=True.
    assert_eq!(nic["properties"]["enableAcceleratedNetworking"], true);
}

#[tokio::test]
async fn an_allocation_failure_marks_the_zone_and_the_next_launch_goes_elsewhere() {
    let (_server, arm, provider) = provider().await;
    arm.state
        .lock()
        .expect("state")
        .sold_out
        .insert(("Standard_D4s_v5".into(), "1".into()));
    let pinned = claim(
        "default-y1",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D4s_v5"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-1", "eastus-3"]},
        ]),
    );
    match provider.create(&pinned).await {
        Err(CloudProviderError::InsufficientCapacity { offerings, message }) => {
            assert_eq!(offerings.len(), 1);
            assert_eq!(offerings[0].zone, "eastus-1");
            assert!(message.starts_with("ZonalAllocationFailed"), "{message}");
        }
        other => panic!("expected insufficient capacity, got {other:?}"),
    }
    assert!(
        arm.state.lock().expect("state").nics.is_empty(),
        "the NIC was taken back"
    );
    // ZonalAllocationFailed marks the zone for both capacity types.
    let types = provider.instance_types(&pool()).await.expect("types");
    let d4 = types
        .iter()
        .find(|t| t.name == "Standard_D4s_v5")
        .expect("D4s_v5");
    let unavailable: Vec<String> = d4
        .offerings
        .iter()
        .filter(|o| !o.available)
        .map(|o| format!("{}/{}", o.zone, o.capacity_type))
        .collect();
    assert_eq!(unavailable, ["eastus-1/on-demand", "eastus-1/spot"]);
    let launched = provider.create(&pinned).await.expect("another zone");
    assert_eq!(
        launched.metadata.labels.expect("labels")["topology.kubernetes.io/zone"],
        "eastus-3"
    );
    // The conformance suite's check of unavailable offerings now runs too.
    let checks = karpenter_fake::conformance::run(&provider, &pool()).await;
    assert!(
        checks
            .iter()
            .any(|c| c.name.contains("unavailable offering") && c.outcome.is_ok()),
        "{checks:#?}"
    );
}

#[tokio::test]
async fn a_changed_node_class_drifts_its_nodes_but_a_tag_does_not() {
    let (_server, _arm, provider) = provider().await;
    let class = |spec: Value| -> AKSNodeClass {
        serde_json::from_value(json!({"metadata": {"name": "default"}, "spec": spec}))
            .expect("a class")
    };
    provider.apply_node_class(class(
        json!({"imageFamily": "Ubuntu2204", "tags": {"a": "1"}}),
    ));
    let launched = provider
        .create(&claim("default-z1", json!([])))
        .await
        .expect("launched");
    assert_eq!(provider.is_drifted(&launched).await.expect("checked"), None);
    provider.apply_node_class(class(
        json!({"imageFamily": "Ubuntu2204", "tags": {"a": "2"}}),
    ));
    assert_eq!(provider.is_drifted(&launched).await.expect("checked"), None);
    provider.apply_node_class(class(json!({"imageFamily": "AzureLinux"})));
    assert_eq!(
        provider
            .is_drifted(&launched)
            .await
            .expect("checked")
            .as_deref(),
        Some("NodeClassDrift")
    );
}

#[tokio::test]
async fn live_prices_replace_the_table_and_price_spot_on_its_own() {
    let (_server, _arm, provider) = provider().await;
    let d2 = |types: &[karpenter_core::cloudprovider::InstanceType]| {
        let t = types
            .iter()
            .find(|t| t.name == "Standard_D2s_v3")
            .expect("D2s_v3")
            .clone();
        let price = |ct: &str| {
            t.offerings
                .iter()
                .find(|o| o.capacity_type == ct)
                .map(|o| o.price)
        };
        (price("on-demand"), price("spot"))
    };
    let before = d2(&provider.instance_types(&pool()).await.expect("types"));
    assert_eq!(
        before,
        (Some(0.096), Some(0.096)),
        "the embedded table, spot as on-demand"
    );
    assert_eq!(provider.refresh_prices().await.expect("refreshed"), 1);
    let after = d2(&provider.instance_types(&pool()).await.expect("types"));
    assert_eq!(after, (Some(0.1), Some(0.012)));
}

#[tokio::test]
async fn the_azure_provider_on_the_in_memory_arm_conforms() {
    use karpenter_azure::AzureCloudProvider;
    use karpenter_azure::arm::InMemoryCompute;
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config());
    let checks = karpenter_fake::conformance::run(&provider, &pool()).await;
    let failed: Vec<_> = checks.iter().filter(|c| c.outcome.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(arm.vm_names().is_empty(), "the suite cleans up");
    assert!(arm.nic_names().is_empty(), "NICs go with their VMs");
    // A size sold out in the one zone the claim allows: no capacity, as
    // Azure's allocation failure reads.
    arm.sell_out("Standard_D2s_v3", "1");
    let wanted = claim(
        "default-x9",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-1"]},
        ]),
    );
    let error = provider.create(&wanted).await.expect_err("sold out");
    assert!(
        matches!(error, CloudProviderError::InsufficientCapacity { .. }),
        "{error}"
    );
    assert!(
        arm.nic_names().is_empty(),
        "the NIC of a failed launch is taken away"
    );
    // A spot eviction deletes the VM as a deletion does: its NIC goes too.
    let spot = claim(
        "default-x8",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        ]),
    );
    let launched = provider.create(&spot).await.expect("launched");
    assert_eq!(arm.nic_names().len(), 1);
    let id = launched.status.and_then(|s| s.provider_id).expect("an ID");
    assert!(provider.evict(&id));
    assert!(arm.vm_names().is_empty() && arm.nic_names().is_empty());
}

#[tokio::test]
async fn an_allocation_failure_marks_its_offering_until_it_runs_out_then_the_list_is_shared_again()
{
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use jiff::Timestamp;
    use karpenter_azure::AzureCloudProvider;
    use karpenter_azure::arm::InMemoryCompute;

    let seconds = Arc::new(AtomicI64::new(1_800_000_000));
    let clock = Arc::clone(&seconds);
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config())
        .with_clock(move || Timestamp::from_second(clock.load(Ordering::SeqCst)).expect("a time"));
    let offered = |types: &[karpenter_core::cloudprovider::InstanceType]| {
        types
            .iter()
            .find(|t| t.name == "Standard_D2s_v3")
            .expect("D2s_v3")
            .offerings
            .iter()
            .find(|o| o.zone == "eastus-1" && o.capacity_type == "on-demand")
            .expect("its on-demand offering in zone 1")
            .available
    };
    let before = provider
        .shared_instance_types(&pool())
        .await
        .expect("types");
    assert!(offered(&before));

    arm.sell_out("Standard_D2s_v3", "1");
    let wanted = claim(
        "default-x7",
        json!([
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-1"]},
        ]),
    );
    provider.create(&wanted).await.expect_err("sold out");
    let marked = provider
        .shared_instance_types(&pool())
        .await
        .expect("types");
    assert!(!offered(&marked), "the failed offering is marked");
    assert!(!Arc::ptr_eq(&before, &marked));

    // A day on, the mark has run out: the offering is back and every read
    // shares one list again.
    seconds.fetch_add(86_400, Ordering::SeqCst);
    let first = provider
        .shared_instance_types(&pool())
        .await
        .expect("types");
    let second = provider
        .shared_instance_types(&pool())
        .await
        .expect("types");
    assert!(offered(&first));
    assert!(Arc::ptr_eq(&first, &second), "the priced list is shared");
    assert!(Arc::ptr_eq(&before, &first), "and it is the one made first");
}

#[tokio::test]
async fn each_size_boots_the_status_image_for_its_architecture() {
    use karpenter_azure::AzureCloudProvider;
    use karpenter_azure::arm::{ComputeApi, InMemoryCompute};
    let arm = InMemoryCompute::new();
    let provider = AzureCloudProvider::new(arm.clone(), config());
    let image = |id: &str, arch: &str| {
        json!({"id": id, "requirements": [
            {"key": "karpenter.azure.com/sku-hyperv-generation", "operator": "In", "values": ["2"]},
            {"key": "kubernetes.io/arch", "operator": "In", "values": [arch]},
        ]})
    };
    let amd64 = "/CommunityGalleries/g/images/2204gen2containerd/versions/202611.01.0";
    let arm64 = "/CommunityGalleries/g/images/2204gen2arm64containerd/versions/202611.01.0";
    let class: AKSNodeClass = serde_json::from_value(json!({
        "apiVersion": "karpenter.azure.com/v1beta1",
        "kind": "AKSNodeClass",
        "metadata": {"name": "default"},
        "spec": {},
        "status": {"images": [image(amd64, "amd64"), image(arm64, "arm64")]},
    }))
    .expect("an AKSNodeClass");
    provider.apply_node_class(class);
    for (size, expected) in [("Standard_D2s_v3", amd64), ("Standard_D16plds_v5", arm64)] {
        let wanted = claim(
            &format!("default-{}", size.len()),
            json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [size]}]),
        );
        let launched = provider.create(&wanted).await.expect("launched");
        let name = arm
            .vm_names()
            .into_iter()
            .find(|n| n.ends_with(launched.metadata.name.as_deref().unwrap_or_default()))
            .expect("its VM");
        let vm = arm.get_vm(&name).await.expect("read").expect("the VM");
        let reference = &vm["properties"]["storageProfile"]["imageReference"];
        assert_eq!(
            reference["communityGalleryImageId"],
            json!(expected),
            "{size}"
        );
    }
    // A size no status image is for launches nothing.
    let gen1_only = claim(
        "default-gen1",
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2_v2"]}]),
    );
    let before = arm.vm_names().len();
    let error = provider.create(&gen1_only).await.expect_err("no image");
    assert!(error.to_string().contains("NoCompatibleImage"), "{error}");
    assert_eq!(arm.vm_names().len(), before);
    assert_eq!(arm.nic_names().len(), before, "no NIC left behind");
}
