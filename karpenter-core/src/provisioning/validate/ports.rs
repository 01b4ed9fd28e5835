//! Host ports: which a pod binds, which conflict, and the check that no two pods
//! on one node bind conflicting ones.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::PodSpec;

use super::index::{Checker, Host, Placed};
use super::pods::{is_terminal, pod_key, spec_of};
use super::{Rule, Subject, Violation};
use crate::provisioning::plan::ProvisioningPlan;

/// A host port a pod binds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct HostPort {
    protocol: String,
    ip: String,
    port: i32,
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.port, self.protocol)
    }
}

pub(super) fn host_ports(spec: &PodSpec) -> Vec<HostPort> {
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let mut ports: Vec<HostPort> = containers
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            Some(HostPort {
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_string()),
                ip: p.host_ip.clone().unwrap_or_default(),
                port: p.host_port.filter(|&port| port > 0)?,
            })
        })
        .collect();
    ports.sort();
    ports.dedup();
    ports
}

pub(super) fn ports_conflict(a: &HostPort, b: &HostPort) -> bool {
    let any = |ip: &str| ip.is_empty() || ip == "0.0.0.0";
    a.port == b.port && a.protocol == b.protocol && (any(&a.ip) || any(&b.ip) || a.ip == b.ip)
}

impl<'s> Checker<'s> {
    /// Host ports of the pods on each claim, and on each existing node with the
    /// pods running there.
    pub(super) fn check_host_ports(
        &self,
        plan: &ProvisioningPlan,
        placed: &[Placed<'s>],
        out: &mut Vec<Violation>,
    ) {
        let mut by_host: BTreeMap<&Host, Vec<&Placed<'s>>> = BTreeMap::new();
        for p in placed {
            by_host.entry(&p.host).or_default().push(p);
        }
        for (host, pods) in by_host {
            let mut used: Vec<(String, HostPort)> = Vec::new();
            if let Host::Node(name) = host {
                for pod in self
                    .bound
                    .get(name.as_str())
                    .into_iter()
                    .flatten()
                    .filter(|p| !is_terminal(p))
                {
                    used.extend(
                        host_ports(spec_of(pod))
                            .into_iter()
                            .map(|port| (pod_key(pod), port)),
                    );
                }
            }
            for p in pods {
                for port in host_ports(spec_of(p.pod)) {
                    if let Some((other, _)) = used.iter().find(|(_, u)| ports_conflict(u, &port)) {
                        let place = match host {
                            Host::Claim(i) => {
                                format!("claim #{i} ({})", plan.node_claims[*i].node_pool)
                            }
                            Host::Node(name) => format!("node {name:?}"),
                        };
                        out.push(Violation {
                            rule: Rule::HostPort,
                            subject: Subject::Pod(p.key.clone()),
                            detail: format!("binds host port {port} on {place}, as {other} does"),
                        });
                    }
                    used.push((p.key.clone(), port));
                }
            }
        }
    }
}
