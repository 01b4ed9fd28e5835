//! EKS `DescribeCluster`: what a joining node needs that the settings may
//! leave out (the endpoint, the CA, the service CIDR AL2023's nodeadm
//! asks for), as upstream reads it.

use super::error::sdk_error;
use crate::ec2::{Ec2Error, Operation};

/// An EKS cluster as `DescribeCluster` describes it, as far as nodes need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EksCluster {
    /// The cluster's name.
    pub name: String,
    /// The API server's URL.
    pub endpoint: Option<String>,
    /// The cluster CA, base64 PEM.
    pub certificate_authority: Option<String>,
    /// The Service CIDR: IPv4's when the cluster has one, else IPv6's.
    pub service_cidr: Option<String>,
    /// The Kubernetes version (`1.34`).
    pub version: Option<String>,
}

/// `DescribeCluster` of `name`.
pub(crate) async fn describe_cluster(
    client: &aws_sdk_eks::Client,
    name: &str,
) -> Result<EksCluster, Ec2Error> {
    let op = Operation::DescribeCluster;
    let answer = client
        .describe_cluster()
        .name(name)
        .send()
        .await
        .map_err(|e| sdk_error(op, e))?;
    let Some(cluster) = answer.cluster() else {
        return Err(Ec2Error::Transport {
            operation: op,
            source: format!("the answer for {name} has no cluster").into(),
        });
    };
    let network = cluster.kubernetes_network_config();
    let cidr = network
        .and_then(|n| n.service_ipv4_cidr())
        .or_else(|| network.and_then(|n| n.service_ipv6_cidr()));
    Ok(EksCluster {
        name: cluster.name().unwrap_or(name).to_owned(),
        endpoint: cluster.endpoint().map(str::to_owned),
        certificate_authority: cluster
            .certificate_authority()
            .and_then(|c| c.data())
            .map(str::to_owned),
        service_cidr: cidr.map(str::to_owned),
        version: cluster.version().map(str::to_owned),
    })
}
