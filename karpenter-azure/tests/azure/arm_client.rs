//! The ARM client against a server on 127.0.0.1 that checks the requests and
//! plays ARM's answers: long-running operations, throttling, server errors,
//! error bodies, paging.

use std::sync::Arc;
use std::time::Duration;

use karpenter_azure::arm::{
    ArmClient, ArmError, ComputeApi, RetryPolicy, StaticCredential, price_tables,
};
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const VM: &str = "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-default-1";

fn client(server: &MockServer) -> ArmClient {
    ArmClient::new(
        Arc::new(StaticCredential::new("token-123")),
        "sub-1",
        "mc_rg",
    )
    .with_base_url(server.uri())
    .with_prices_url(format!("{}/api/retail/prices", server.uri()))
    .with_retry(RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
        poll_interval: Duration::from_millis(1),
        max_polls: 10,
    })
}

#[tokio::test]
async fn a_put_follows_its_async_operation_to_the_end() {
    let server = MockServer::start().await;
    let operation = format!("{}/operations/op-1", server.uri());
    Mock::given(method("PUT"))
        .and(path(VM))
        .and(query_param("api-version", "2024-07-01"))
        .and(header("authorization", "Bearer token-123"))
        .and(body_partial_json(json!({"properties": {"hardwareProfile": {"vmSize": "Standard_D2s_v5"}}})))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("Azure-AsyncOperation", operation.as_str())
                .set_body_json(json!({"name": "aks-default-1", "properties": {"provisioningState": "Creating"}})),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/operations/op-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "InProgress"})))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/operations/op-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "Succeeded"})))
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"name": "aks-default-1", "properties": {"provisioningState": "Succeeded"}}),
        ))
        .mount(&server)
        .await;
    let body = json!({"location": "eastus", "properties": {"hardwareProfile": {"vmSize": "Standard_D2s_v5"}}});
    let vm = client(&server)
        .create_vm("aks-default-1", &body)
        .await
        .expect("created");
    assert_eq!(vm["properties"]["provisioningState"], "Succeeded");
    let polls = server
        .received_requests()
        .await
        .expect("recorded")
        .iter()
        .filter(|r| r.url.path() == "/operations/op-1")
        .count();
    assert_eq!(polls, 3);
}

#[tokio::test]
async fn a_failed_operation_reports_azures_error() {
    let server = MockServer::start().await;
    let operation = format!("{}/operations/op-2", server.uri());
    Mock::given(method("PUT"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(201).insert_header("Azure-AsyncOperation", operation.as_str()),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/operations/op-2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "status": "Failed",
            "error": {"code": "ZonalAllocationFailed", "message": "Allocation failed in zone 2"},
        })))
        .mount(&server)
        .await;
    let error = client(&server)
        .create_vm("aks-default-1", &json!({}))
        .await
        .expect_err("failed");
    let azure = error.azure_error().expect("an Azure error");
    assert_eq!(azure.code, "ZonalAllocationFailed");
    assert_eq!(azure.message, "Allocation failed in zone 2");
}

#[tokio::test]
async fn a_delete_follows_its_location_until_done_and_a_missing_vm_is_not_an_error() {
    let server = MockServer::start().await;
    let location = format!("{}/locations/del-1", server.uri());
    Mock::given(method("DELETE"))
        .and(path(VM))
        .and(query_param("forceDeletion", "true"))
        .respond_with(
            ResponseTemplate::new(202)
                .insert_header("Location", location.as_str())
                .insert_header("Retry-After", "0"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/locations/del-1"))
        .respond_with(ResponseTemplate::new(202))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/locations/del-1"))
        .respond_with(ResponseTemplate::new(200))
        .with_priority(2)
        .mount(&server)
        .await;
    let arm = client(&server);
    assert!(arm.delete_vm("aks-default-1").await.expect("deleted"));
    // Gone now: ARM answers 404, which is not an error.
    Mock::given(method("DELETE"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(json!({"error": {"code": "ResourceNotFound", "message": "gone"}})),
        )
        .mount(&server)
        .await;
    assert!(!arm.delete_vm("aks-default-1").await.expect("not there"));
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(json!({"error": {"code": "ResourceNotFound", "message": "gone"}})),
        )
        .mount(&server)
        .await;
    assert_eq!(arm.get_vm("aks-default-1").await.expect("a answer"), None);
}

#[tokio::test]
async fn throttling_and_server_errors_are_retried_honouring_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(503)
                .set_body_json(json!({"error": {"code": "ServiceUnavailable", "message": "busy"}})),
        )
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"name": "aks-default-1"})))
        .with_priority(3)
        .mount(&server)
        .await;
    let vm = client(&server)
        .get_vm("aks-default-1")
        .await
        .expect("after retries");
    assert_eq!(vm, Some(json!({"name": "aks-default-1"})));
    assert_eq!(server.received_requests().await.expect("recorded").len(), 3);
}

#[tokio::test]
async fn a_gateways_html_error_page_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(502)
                .set_body_raw("<html><body>Bad Gateway</body></html>", "text/html"),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"name": "aks-default-1"})))
        .with_priority(2)
        .mount(&server)
        .await;
    let vm = client(&server).get_vm("aks-default-1").await;
    assert_eq!(
        vm.expect("after a retry"),
        Some(json!({"name": "aks-default-1"}))
    );
}

#[tokio::test]
async fn retries_run_out() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    match client(&server).get_vm("aks-default-1").await {
        Err(ArmError::GaveUp { attempts, .. }) => assert_eq!(attempts, 4),
        other => panic!("expected to give up, got {other:?}"),
    }
}

#[tokio::test]
async fn an_arm_error_body_is_read() {
    let server = MockServer::start().await;
    Mock::given(method("PUT"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(409).set_body_json(json!({
            "error": {"code": "SkuNotAvailable", "message": "The requested size for resource is currently not available"},
        })))
        .mount(&server)
        .await;
    let error = client(&server)
        .create_vm("aks-default-1", &json!({}))
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, ArmError::Azure { status: 409, code, .. } if code == "SkuNotAvailable"),
        "{error}"
    );
}

#[tokio::test]
async fn lists_follow_next_links_and_prices_go_without_a_token() {
    let server = MockServer::start().await;
    let list =
        "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines";
    Mock::given(method("GET"))
        .and(path(list))
        .and(query_param("page", "2"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"value": [{"name": "vm-3"}]})),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(list))
        .and(query_param("api-version", "2024-07-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "vm-1"}, {"name": "vm-2"}],
            "nextLink": format!("{}{list}?page=2", server.uri()),
        })))
        .with_priority(10)
        .mount(&server)
        .await;
    let arm = client(&server);
    let names: Vec<String> = arm
        .list_vms()
        .await
        .expect("listed")
        .iter()
        .map(|v| v["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(names, ["vm-1", "vm-2", "vm-3"]);

    Mock::given(method("GET"))
        .and(path("/api/retail/prices"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"Items": [
            {"armSkuName": "Standard_D2s_v5", "armRegionName": "eastus", "retailPrice": 0.019, "skuName": "D2s v5 Spot", "productName": "Virtual Machines Dsv5 Series", "meterName": "D2s v5 Spot"},
        ], "NextPageLink": null})))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/retail/prices"))
        .and(query_param(
            "$filter",
            "priceType eq 'Consumption' and currencyCode eq 'USD' and serviceFamily eq 'Compute' and serviceName eq 'Virtual Machines' and armRegionName eq 'eastus'",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"Items": [
            {"armSkuName": "Standard_D2s_v5", "armRegionName": "eastus", "retailPrice": 0.096, "skuName": "D2s v5", "productName": "Virtual Machines Dsv5 Series", "meterName": "D2s v5"},
            {"armSkuName": "Standard_D2s_v5", "armRegionName": "eastus", "retailPrice": 0.188, "skuName": "D2s v5", "productName": "Virtual Machines Dsv5 Series Windows", "meterName": "D2s v5"},
            {"armSkuName": "Standard_D2s_v5", "armRegionName": "eastus", "retailPrice": 0.02, "skuName": "D2s v5 Low Priority", "productName": "Virtual Machines Dsv5 Series", "meterName": "D2s v5 Low Priority"},
        ], "NextPageLink": format!("{}/api/retail/prices?page=2", server.uri())})))
        .with_priority(10)
        .mount(&server)
        .await;
    let items = arm.retail_prices("eastus").await.expect("prices");
    assert_eq!(items.len(), 4);
    let (on_demand, spot) = price_tables(&items);
    assert_eq!(on_demand.get("Standard_D2s_v5"), Some(&0.096));
    assert_eq!(spot.get("Standard_D2s_v5"), Some(&0.019));
    let requests = server.received_requests().await.expect("recorded");
    for request in requests
        .iter()
        .filter(|r| r.url.path() == "/api/retail/prices")
    {
        assert!(
            !request.headers.contains_key("authorization"),
            "prices are public"
        );
    }
    for request in requests.iter().filter(|r| r.url.path() == list) {
        assert_eq!(
            request
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer token-123")
        );
    }
}

#[tokio::test]
async fn the_client_never_shows_its_token() {
    let server = MockServer::start().await;
    let shown = format!("{:?}", client(&server));
    assert!(!shown.contains("token-123"), "{shown}");
    assert!(shown.contains("sub-1"));
}

#[tokio::test]
async fn resource_skus_are_listed_for_the_region_across_pages() {
    let server = MockServer::start().await;
    let skus = "/subscriptions/sub-1/providers/Microsoft.Compute/skus";
    Mock::given(method("GET"))
        .and(path(skus))
        .and(query_param("api-version", "2021-07-01"))
        .and(query_param("$filter", "location eq 'eastus'"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "Standard_D2s_v5", "resourceType": "virtualMachines", "locations": ["eastus"]}],
            "nextLink": format!("{}{skus}?page=2", server.uri()),
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(skus))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "Standard_D4s_v5", "resourceType": "virtualMachines", "locations": ["eastus"]}],
        })))
        .mount(&server)
        .await;
    let listed = client(&server)
        .resource_skus("eastus")
        .await
        .expect("listed");
    let names: Vec<&str> = listed.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["Standard_D2s_v5", "Standard_D4s_v5"]);
}

#[tokio::test]
async fn load_balancers_and_security_groups_of_the_node_group_are_listed_across_pages() {
    let server = MockServer::start().await;
    let group = "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Network";
    for (kind, first, second) in [
        ("loadBalancers", "kubernetes", "kubernetes-internal"),
        (
            "networkSecurityGroups",
            "aks-agentpool-12345678-nsg",
            "my-nsg",
        ),
    ] {
        let list = format!("{group}/{kind}");
        Mock::given(method("GET"))
            .and(path(list.as_str()))
            .and(query_param("page", "2"))
            .and(header("authorization", "Bearer token-123"))
            .respond_with(
                ResponseTemplate::new(200).set_body_json(json!({"value": [{"name": second}]})),
            )
            .mount(&server)
            .await;
        Mock::given(method("GET"))
            .and(path(list.as_str()))
            .and(query_param("api-version", "2024-05-01"))
            .and(header("authorization", "Bearer token-123"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "value": [{"name": first}],
                "nextLink": format!("{}{list}?page=2", server.uri()),
            })))
            .with_priority(10)
            .mount(&server)
            .await;
    }
    let arm = client(&server);
    let names = |items: Vec<serde_json::Value>| -> Vec<String> {
        items
            .iter()
            .filter_map(|i| i["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(
        names(arm.list_load_balancers().await.expect("listed")),
        ["kubernetes", "kubernetes-internal"]
    );
    assert_eq!(
        names(arm.list_network_security_groups().await.expect("listed")),
        ["aks-agentpool-12345678-nsg", "my-nsg"]
    );
}

#[tokio::test]
async fn a_virtual_network_is_read_from_its_own_group_and_a_missing_one_is_none() {
    let server = MockServer::start().await;
    let vnet = "/subscriptions/sub-1/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/my-vnet";
    Mock::given(method("GET"))
        .and(path(vnet))
        .and(query_param("api-version", "2024-05-01"))
        .and(header("authorization", "Bearer token-123"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "name": "my-vnet",
            "properties": {"resourceGuid": "a519e60a-cac0-40b2-b883-084477fe6f5c"},
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(
            "/subscriptions/sub-1/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/gone",
        ))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "error": {"code": "ResourceNotFound", "message": "not found"},
        })))
        .mount(&server)
        .await;
    let arm = client(&server);
    let found = arm
        .get_virtual_network("net-rg", "my-vnet")
        .await
        .expect("read")
        .expect("there");
    assert_eq!(
        found["properties"]["resourceGuid"],
        "a519e60a-cac0-40b2-b883-084477fe6f5c"
    );
    assert_eq!(
        arm.get_virtual_network("net-rg", "gone")
            .await
            .expect("read"),
        None
    );
}

#[tokio::test]
async fn community_gallery_image_versions_are_listed_in_the_location() {
    let server = MockServer::start().await;
    let versions = "/subscriptions/sub-1/providers/Microsoft.Compute/locations/westeurope/communityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions";
    Mock::given(method("GET"))
        .and(path(versions))
        .and(query_param("api-version", "2024-03-03"))
        .and(header("authorization", "Bearer token-123"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "202505.20.0", "properties": {"publishedDate": "2025-05-20T11:02:51+00:00"}}],
            "nextLink": format!("{}{versions}?page=2", server.uri()),
        })))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(versions))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "202505.27.0", "properties": {"publishedDate": "2025-05-27T17:40:04+00:00"}}],
        })))
        .mount(&server)
        .await;
    let listed = client(&server)
        .list_community_gallery_image_versions(
            "westeurope",
            "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2",
            "2204gen2containerd",
        )
        .await
        .expect("listed");
    let names: Vec<&str> = listed.iter().filter_map(|v| v["name"].as_str()).collect();
    assert_eq!(names, ["202505.20.0", "202505.27.0"]);
}
