use std::net::IpAddr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::{Service, ServiceSpec};
use karpenter_apiserver::{ApiServer, Fault, ResourceType};
use kube::api::ObjectMeta;

use super::*;

/// A loopback API server that also serves Services.
async fn server() -> ApiServer {
    ApiServer::builder()
        .resource(ResourceType::new("", "v1", "Service", "services").namespaced())
        .start()
        .await
        .expect("the API server starts")
}

fn dns_service(cluster_ip: &str) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some("kube-dns".into()),
            namespace: Some("kube-system".into()),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some(cluster_ip.into()),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an IP")
}

#[tokio::test]
async fn the_dns_address_is_kube_dns_cluster_ip() {
    let server = server().await;
    server.create(&dns_service("10.2.0.10")).expect("created");
    let dns = cluster_dns(&server.client(), None).await.expect("read");
    assert_eq!(dns, ip("10.2.0.10"));
}

#[tokio::test]
async fn a_given_dns_address_wins_and_asks_nothing() {
    let server = server().await;
    server.create(&dns_service("10.2.0.10")).expect("created");
    server.clear_requests();
    let dns = cluster_dns(&server.client(), Some(ip("10.9.9.9")))
        .await
        .expect("given");
    assert_eq!(dns, ip("10.9.9.9"));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn without_kube_dns_the_fallback_is_used() {
    let server = server().await;
    let dns = cluster_dns(&server.client(), None).await.expect("fallback");
    assert_eq!(dns, DEFAULT_CLUSTER_DNS);
    // A headless Service has no address either.
    server.create(&dns_service("None")).expect("created");
    let dns = cluster_dns(&server.client(), None).await.expect("fallback");
    assert_eq!(dns, DEFAULT_CLUSTER_DNS);
}

#[tokio::test]
async fn a_refused_kube_dns_read_is_an_error_not_a_guess() {
    let server = server().await;
    server.create(&dns_service("10.2.0.10")).expect("created");
    server.inject(Fault::new(403, "Forbidden").path_contains("/services/kube-dns"));
    let error = cluster_dns(&server.client(), None)
        .await
        .expect_err("refused");
    assert!(matches!(error, FactsError::KubeDns(_)), "{error:?}");
    assert!(error.to_string().contains("DNS_SERVICE_IP"), "{error}");
}

#[tokio::test]
async fn the_version_is_the_api_servers_without_its_v() {
    let server = server().await;
    let served = server
        .client()
        .apiserver_version()
        .await
        .expect("served")
        .git_version;
    let version = kubernetes_version(&server.client()).await.expect("read");
    assert_eq!(format!("v{version}"), served);
    assert!(!version.starts_with('v'));
}

#[test]
fn only_versions_are_versions() {
    assert_eq!(version_of("v1.31.2").expect("a version"), "1.31.2");
    assert_eq!(version_of("1.30.0").expect("a version"), "1.30.0");
    for bad in ["", "v", "vNext", "latest", "v1"] {
        assert!(
            matches!(version_of(bad), Err(FactsError::BadVersion(_))),
            "{bad}"
        );
    }
}

#[test]
fn the_ca_bundle_is_base64_of_the_pem_certificates() {
    // Any bytes stand for a DER certificate: the bundle carries them as is.
    let first: Vec<u8> = (0..=255).collect();
    let second = vec![7u8; 10];
    let mut config = Config::new("https://10.0.0.1:443".parse().expect("a URI"));
    config.root_cert = Some(vec![first.clone(), second.clone()]);
    let bundle = ca_bundle(&config).expect("a CA");
    let pem = String::from_utf8(STANDARD.decode(bundle).expect("base64")).expect("text");
    let mut decoded = Vec::new();
    for block in pem.split("-----END CERTIFICATE-----\n") {
        let Some(body) = block.strip_prefix("-----BEGIN CERTIFICATE-----\n") else {
            assert!(block.is_empty(), "{block:?}");
            continue;
        };
        assert!(body.lines().all(|line| line.len() <= 64), "{body}");
        let joined: String = body.lines().collect();
        decoded.push(STANDARD.decode(joined).expect("base64 body"));
    }
    assert_eq!(decoded, vec![first, second]);
}

#[test]
fn no_ca_is_refused_unless_the_api_server_is_plain_http() {
    let https = Config::new("https://api.example:443".parse().expect("a URI"));
    let error = ca_bundle(&https).expect_err("no CA");
    assert!(error.to_string().contains("api.example"), "{error}");
    let http = Config::new("http://127.0.0.1:8080".parse().expect("a URI"));
    assert_eq!(ca_bundle(&http).expect("plain http"), "");
}

#[cfg(feature = "azure")]
#[tokio::test]
async fn the_facts_come_together() {
    let server = server().await;
    server.create(&dns_service("10.2.0.10")).expect("created");
    let facts = cluster_facts(&server.config(), &server.client(), None)
        .await
        .expect("read");
    assert_eq!(facts.cluster_dns, ip("10.2.0.10"));
    assert_eq!(facts.ca_bundle, "", "the loopback server is plain http");
    assert!(!facts.kubernetes_version.is_empty());
}
