//! Host ports: two pods cannot bind the same protocol and port on a node unless
//! they bind different, specific addresses (an empty or `0.0.0.0` address takes
//! the port on every address).

use k8s_openapi::api::core::v1::PodSpec;

/// One host port a pod binds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct HostPort {
    pub protocol: String,
    pub ip: String,
    pub port: i32,
}

impl HostPort {
    /// Whether the two cannot be bound on one node.
    pub(crate) fn conflicts(&self, other: &HostPort) -> bool {
        let any = |ip: &str| ip.is_empty() || ip == "0.0.0.0";
        self.port == other.port
            && self.protocol == other.protocol
            && (any(&self.ip) || any(&other.ip) || self.ip == other.ip)
    }
}

impl std::fmt::Display for HostPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.port, self.protocol)
    }
}

/// The host ports of a pod's containers (init containers bind theirs only while
/// they run, as Kubernetes counts them too).
pub(crate) fn host_ports(spec: &PodSpec) -> Vec<HostPort> {
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let mut ports: Vec<HostPort> = containers
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            let port = p.host_port.filter(|&port| port > 0)?;
            Some(HostPort {
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_string()),
                ip: p.host_ip.clone().unwrap_or_default(),
                port,
            })
        })
        .collect();
    ports.sort();
    ports.dedup();
    ports
}

/// Whether any port of `wanted` conflicts with one of `used`.
pub(crate) fn conflict(used: &[HostPort], wanted: &[HostPort]) -> Option<HostPort> {
    wanted
        .iter()
        .find(|w| used.iter().any(|u| u.conflicts(w)))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(protocol: &str, ip: &str, port: i32) -> HostPort {
        HostPort {
            protocol: protocol.into(),
            ip: ip.into(),
            port,
        }
    }

    #[test]
    fn same_port_conflicts_unless_protocol_or_specific_addresses_differ() {
        assert!(conflict(&[port("TCP", "", 80)], &[port("TCP", "10.0.0.1", 80)]).is_some());
        assert!(conflict(&[port("TCP", "0.0.0.0", 80)], &[port("TCP", "", 80)]).is_some());
        assert!(conflict(&[port("UDP", "", 80)], &[port("TCP", "", 80)]).is_none());
        assert!(
            conflict(
                &[port("TCP", "10.0.0.1", 80)],
                &[port("TCP", "10.0.0.2", 80)]
            )
            .is_none()
        );
        assert!(conflict(&[port("TCP", "", 80)], &[port("TCP", "", 81)]).is_none());
    }
}
