//! The check that no two pods on one node bind conflicting host ports (which
//! ports a pod binds and which conflict is `provisioning::host_ports`: what
//! Kubernetes counts, not a scheduling decision).

use std::collections::BTreeMap;

use super::index::{Checker, Host, Placed};
use super::pods::{pod_key, spec_of};
use super::violation::{Rule, Subject, Violation};
use crate::pods::PodKey;
use crate::provisioning::demand::host_ports::{HostPort, host_ports};
use crate::provisioning::plan::ProvisioningPlan;

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
            let mut used: Vec<(PodKey, HostPort)> = Vec::new();
            if let Host::Node(name) = host {
                for pod in self.running_on(name) {
                    used.extend(
                        host_ports(spec_of(pod))
                            .into_iter()
                            .map(|port| (pod_key(pod), port)),
                    );
                }
            }
            for p in pods {
                for port in host_ports(spec_of(p.pod)) {
                    if let Some((other, _)) = used.iter().find(|(_, u)| u.conflicts(&port)) {
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
