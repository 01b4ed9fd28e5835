//! What the controller reads from the cluster it runs in for a VM to join
//! it (Azure's `ClusterFacts`; the parts of AWS's `JoinConfig` EKS does
//! not give): the CA nodes trust the API server by, the Kubernetes version
//! they run, and the cluster DNS address.
//!
//! The CA comes from the controller's own kube config (in a pod, the
//! service account's `ca.crt`). A config without one is refused unless the
//! API server is plain `http` (a loopback test server): an `https` cluster
//! whose CA the controller cannot name would get nodes that cannot verify
//! it, and a controller that starts anyway would only fail later, per node.

use std::net::{IpAddr, Ipv4Addr};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Service;
#[cfg(feature = "azure")]
use karpenter_azure::ClusterFacts;
use kube::{Api, Client, Config};
use thiserror::Error;

/// The cluster DNS address when `DNS_SERVICE_IP` is unset and the cluster
/// has no `kube-system/kube-dns` Service with a ClusterIP: AKS's default
/// (upstream's fallback too).
pub const DEFAULT_CLUSTER_DNS: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 10));

/// Where the cluster DNS Service lives.
const DNS_NAMESPACE: &str = "kube-system";
/// The cluster DNS Service's name (CoreDNS keeps kube-dns's).
const DNS_SERVICE: &str = "kube-dns";

/// Why the cluster facts could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FactsError {
    /// The kube config names no CA certificate for an `https` API server.
    #[error(
        "the kube config for {server} names no CA certificate, which nodes need to trust \
         the API server (the service account's ca.crt in a pod, certificate-authority-data \
         in a kubeconfig)"
    )]
    NoCa {
        /// The API server the config points at.
        server: String,
    },
    /// The API server's `/version` could not be read.
    #[error("reading the API server's version (/version)")]
    Version(#[source] kube::Error),
    /// The API server's `gitVersion` is not a version (`v1.31.2`).
    #[error("the API server's gitVersion `{0}` is not a Kubernetes version like v1.31.2")]
    BadVersion(String),
    /// The kube-dns Service could not be read (other than it being absent).
    #[error(
        "reading Service {DNS_NAMESPACE}/{DNS_SERVICE} for the cluster DNS address (set \
         DNS_SERVICE_IP to name it instead)"
    )]
    KubeDns(#[source] kube::Error),
}

/// The facts, read from the API server `client` talks to through `config`;
/// `dns_service_ip` (`DNS_SERVICE_IP`) is the DNS address when given.
#[cfg(feature = "azure")]
pub(crate) async fn cluster_facts(
    config: &Config,
    client: &Client,
    dns_service_ip: Option<IpAddr>,
) -> Result<ClusterFacts, FactsError> {
    Ok(ClusterFacts {
        ca_bundle: ca_bundle(config)?,
        kubernetes_version: kubernetes_version(client).await?,
        cluster_dns: cluster_dns(client, dns_service_ip).await?,
    })
}

/// Base64 of the PEM CA certificates of `config`; empty only for a plain
/// `http` API server, which has no certificate to trust.
pub(crate) fn ca_bundle(config: &Config) -> Result<String, FactsError> {
    match config.root_cert.as_deref() {
        Some(certs) if !certs.is_empty() => Ok(STANDARD.encode(pem(certs))),
        _ if config.cluster_url.scheme_str() == Some("http") => {
            tracing::warn!(
                server = %config.cluster_url,
                "the API server is plain http: nodes get no CA certificate"
            );
            Ok(String::new())
        }
        _ => Err(FactsError::NoCa {
            server: config.cluster_url.to_string(),
        }),
    }
}

/// The certificates (DER, as kube keeps them) in PEM, as a node's
/// `ca.crt` holds them.
pub(crate) fn pem(certs: &[Vec<u8>]) -> String {
    let mut text = String::new();
    for der in certs {
        text.push_str("-----BEGIN CERTIFICATE-----\n");
        let body = STANDARD.encode(der);
        // PEM lines are 64 characters; base64 is ASCII, so bytes are chars.
        for line in body.as_bytes().chunks(64) {
            text.push_str(&String::from_utf8_lossy(line));
            text.push('\n');
        }
        text.push_str("-----END CERTIFICATE-----\n");
    }
    text
}

/// The API server's Kubernetes version without its `v` (`1.31.2`).
pub(crate) async fn kubernetes_version(client: &Client) -> Result<String, FactsError> {
    let info = client
        .apiserver_version()
        .await
        .map_err(FactsError::Version)?;
    version_of(&info.git_version)
}

/// `v1.31.2` → `1.31.2`; anything not starting with a digit after the `v`
/// is refused, as no node image could be matched to it.
fn version_of(git_version: &str) -> Result<String, FactsError> {
    let version = git_version.strip_prefix('v').unwrap_or(git_version);
    if version.starts_with(|c: char| c.is_ascii_digit()) && version.contains('.') {
        Ok(version.to_owned())
    } else {
        Err(FactsError::BadVersion(git_version.to_owned()))
    }
}

/// `given`, else the kube-dns Service's ClusterIP, else
/// [`DEFAULT_CLUSTER_DNS`] (with a warning). A failed read other than a
/// missing Service is an error: guessing the address there would launch
/// nodes whose pods cannot resolve names.
pub(crate) async fn cluster_dns(
    client: &Client,
    given: Option<IpAddr>,
) -> Result<IpAddr, FactsError> {
    if let Some(ip) = given {
        return Ok(ip);
    }
    let api: Api<Service> = Api::namespaced(client.clone(), DNS_NAMESPACE);
    let service = api
        .get_opt(DNS_SERVICE)
        .await
        .map_err(FactsError::KubeDns)?;
    let cluster_ip = service
        .as_ref()
        .and_then(|s| s.spec.as_ref())
        .and_then(|spec| spec.cluster_ip.as_deref());
    match cluster_ip.and_then(|ip| ip.parse::<IpAddr>().ok()) {
        Some(ip) => Ok(ip),
        None => {
            tracing::warn!(
                service = format!("{DNS_NAMESPACE}/{DNS_SERVICE}"),
                cluster_ip,
                fallback = %DEFAULT_CLUSTER_DNS,
                "no cluster DNS address in the Service and DNS_SERVICE_IP unset; using the fallback"
            );
            Ok(DEFAULT_CLUSTER_DNS)
        }
    }
}

#[cfg(test)]
mod tests;
