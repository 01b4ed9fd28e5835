//! The spec's own rules and those of its smaller objects: AMI family, role,
//! tags, block devices, metadata options, networking.

use super::super::devices::BlockDeviceMapping;
use super::super::family::AmiFamily;
use super::super::spec::{EC2NodeClassSpec, Tags};
use super::{Problems, is_id};

const AMI_FAMILIES: &[&str] = &[
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Custom",
    "Windows2019",
    "Windows2022",
    "Windows2025",
];

/// `amiFamily`: a known family, required without an alias, and with one
/// either its family or `Custom`.
pub(super) fn ami_family(problems: &mut Problems, spec: &EC2NodeClassSpec) {
    let aliases = spec
        .ami_selector_terms
        .iter()
        .filter_map(|t| t.alias.as_deref());
    let Some(family) = spec.ami_family.as_deref() else {
        if spec.ami_selector_terms.iter().all(|t| t.alias.is_none()) {
            problems.required(
                "amiFamily",
                "must specify amiFamily if amiSelectorTerms does not contain an alias",
            );
        }
        return;
    };
    problems.one_of("amiFamily", family, AMI_FAMILIES);
    let mut seen = Vec::new();
    for alias in aliases {
        // The CRD compares the text before the first `@`.
        let name = alias.split('@').next().unwrap_or_default();
        let Some(aliased) = AmiFamily::from_alias_name(name) else {
            continue;
        };
        if seen.contains(&aliased) || family == aliased.as_str() || family == "Custom" {
            continue;
        }
        seen.push(aliased);
        let article = if aliased == AmiFamily::AL2 || aliased == AmiFamily::AL2023 {
            "an"
        } else {
            "a"
        };
        problems.rule(
            "amiFamily",
            format!("if set, amiFamily must be '{aliased}' or 'Custom' when using {article} {aliased} alias"),
        );
    }
}

/// Exactly one of `role` and `instanceProfile`, neither empty.
pub(super) fn role_and_profile(problems: &mut Problems, spec: &EC2NodeClassSpec) {
    match (&spec.role, &spec.instance_profile) {
        (Some(_), None) | (None, Some(_)) => {}
        (Some(_), Some(_)) | (None, None) => {
            problems.rule(
                "role",
                "must specify exactly one of ['role', 'instanceProfile']",
            );
        }
    }
    if spec.role.as_deref() == Some("") {
        problems.rule("role", "role cannot be empty");
    }
    if spec.instance_profile.as_deref() == Some("") {
        problems.rule("instanceProfile", "instanceProfile cannot be empty");
    }
}

/// Tag keys Karpenter sets itself on what it launches.
const RESTRICTED_TAGS: [&str; 4] = [
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
];

/// `tags`: no empty key, none Karpenter sets itself.
pub(super) fn tags(problems: &mut Problems, tags: Option<&Tags>) {
    let Some(tags) = tags else { return };
    if tags.keys().any(String::is_empty) {
        problems.rule("tags", "empty tag keys aren't supported");
    }
    for key in tags.keys() {
        // The CRD matches the prefix without its slash.
        if key.starts_with("kubernetes.io/cluster") {
            problems.rule(
                format!("tags[{key}]"),
                "tag contains a restricted tag matching kubernetes.io/cluster/",
            );
        } else if RESTRICTED_TAGS.contains(&key.as_str()) {
            problems.rule(
                format!("tags[{key}]"),
                format!("tag contains a restricted tag matching {key}"),
            );
        }
    }
}

const VOLUME_TYPES: &[&str] = &["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"];

/// `blockDeviceMappings`: at most 50, one root volume; each volume sized or
/// from a snapshot.
pub(super) fn block_devices(problems: &mut Problems, mappings: Option<&[BlockDeviceMapping]>) {
    const FIELD: &str = "blockDeviceMappings";
    let Some(mappings) = mappings else { return };
    problems.at_most(FIELD, mappings.len(), 50);
    if mappings.iter().filter(|m| m.is_root_volume()).count() > 1 {
        problems.rule(
            FIELD,
            "must have only one blockDeviceMappings with rootVolume",
        );
    }
    for (i, ebs) in mappings
        .iter()
        .enumerate()
        .filter_map(|(i, m)| Some((i, m.ebs.as_ref()?)))
    {
        let field = format!("{FIELD}[{i}].ebs");
        if ebs.snapshot_id.is_none() && ebs.volume_size.is_none() {
            problems.rule(&field, "snapshotID or volumeSize must be defined");
        }
        if let Some(rate) = ebs.volume_initialization_rate {
            if ebs.snapshot_id.as_deref().is_none_or(str::is_empty) {
                problems.rule(
                    &field,
                    "snapshotID must be set when volumeInitializationRate is set",
                );
            }
            problems.within(format!("{field}.volumeInitializationRate"), rate, 100, 300);
        }
        if let Some(size) = &ebs.volume_size {
            let matches = volume_size_matches(&size.0);
            let pattern = "1-59000Gi, 1-64000G, 1-58Ti or 1-64T (the CRD's pattern)";
            problems.pattern(format!("{field}.volumeSize"), &size.0, pattern, matches);
        }
        if let Some(kind) = &ebs.volume_type {
            problems.one_of(format!("{field}.volumeType"), kind, VOLUME_TYPES);
        }
    }
}

/// The CRD's `volumeSize` pattern: a number without leading zeros and a
/// unit. Its `Ti` branch, `([1-9]||[1-5][0-7]|58)`, allows 1-9, 10-17,
/// 20-27, ..., 50-57 and 58 (so `18Ti` is refused), as the API server does.
fn volume_size_matches(size: &str) -> bool {
    let digits_end = size
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(size.len());
    let (number, unit) = size.split_at(digits_end);
    if number.is_empty() || number.starts_with('0') || number.len() > 5 {
        return false;
    }
    let Ok(n) = number.parse::<u32>() else {
        return false;
    };
    match unit {
        "Gi" => n <= 59_000,
        "G" => n <= 64_000,
        "Ti" => n <= 9 || n == 58 || (n < 60 && n % 10 <= 7),
        "T" => n <= 64,
        _ => false,
    }
}

const ENABLED_DISABLED: &[&str] = &["enabled", "disabled"];

/// `instanceStorePolicy`, `metadataOptions`, `ipPrefixCount`, `cpuOptions`.
pub(super) fn scalars(problems: &mut Problems, spec: &EC2NodeClassSpec) {
    if let Some(policy) = &spec.instance_store_policy {
        problems.one_of("instanceStorePolicy", policy, &["RAID0"]);
    }
    if let Some(options) = &spec.metadata_options {
        const FIELD: &str = "metadataOptions";
        if let Some(v) = &options.http_endpoint {
            problems.one_of(format!("{FIELD}.httpEndpoint"), v, ENABLED_DISABLED);
        }
        if let Some(v) = &options.http_protocol_ipv6 {
            problems.one_of(format!("{FIELD}.httpProtocolIPv6"), v, ENABLED_DISABLED);
        }
        if let Some(v) = options.http_put_response_hop_limit {
            problems.within(format!("{FIELD}.httpPutResponseHopLimit"), v, 1, 64);
        }
        if let Some(v) = &options.http_tokens {
            problems.one_of(format!("{FIELD}.httpTokens"), v, &["required", "optional"]);
        }
    }
    if let Some(count) = spec.ip_prefix_count {
        problems.within("ipPrefixCount", count, 0, i64::from(i32::MAX));
    }
    if let Some(nested) = spec
        .cpu_options
        .as_ref()
        .and_then(|c| c.nested_virtualization.as_deref())
    {
        problems.one_of("cpuOptions.nestedVirtualization", nested, ENABLED_DISABLED);
    }
}

/// `networkInterfaces`, `connectionTracking`, `placementGroupSelector`.
pub(super) fn network(problems: &mut Problems, spec: &EC2NodeClassSpec) {
    if let Some(interfaces) = spec.network_interfaces.as_deref() {
        network_interfaces(problems, interfaces);
    }
    if let Some(tracking) = &spec.connection_tracking {
        const FIELD: &str = "connectionTracking";
        let timeouts = [
            (
                "tcpEstablishedTimeout",
                tracking.tcp_established_timeout,
                60,
                432_000,
            ),
            ("udpStreamTimeout", tracking.udp_stream_timeout, 60, 180),
            ("udpTimeout", tracking.udp_timeout, 30, 60),
        ];
        if timeouts.iter().all(|(_, value, _, _)| value.is_none()) {
            problems.rule(
                FIELD,
                "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
            );
        }
        for (name, value, min, max) in timeouts {
            if let Some(value) = value {
                problems.within(format!("{FIELD}.{name}"), value, min, max);
            }
        }
    }
    if let Some(group) = &spec.placement_group_selector {
        const FIELD: &str = "placementGroupSelector";
        match (&group.name, &group.id) {
            (None, None) => problems.rule(FIELD, "expected at least one, got none, ['name', 'id']"),
            (Some(_), Some(_)) => problems.rule(FIELD, "'name' and 'id' are mutually exclusive"),
            _ => {}
        }
        if group.name.as_deref() == Some("") {
            problems.rule(format!("{FIELD}.name"), "may not be empty");
        }
        if let Some(id) = &group.id {
            problems.pattern(
                format!("{FIELD}.id"),
                id,
                "^pg-[0-9a-z]+$",
                is_id(id, "pg-"),
            );
        }
    }
}

/// `networkInterfaces`: at most 150, a primary `interface` at card 0 device
/// 0, unique (card, device) pairs, at most one `efa-only` per card.
fn network_interfaces(
    problems: &mut Problems,
    interfaces: &[super::super::network::NetworkInterface],
) {
    const FIELD: &str = "networkInterfaces";
    problems.at_most(FIELD, interfaces.len(), 150);
    for (i, nic) in interfaces.iter().enumerate() {
        problems.within(
            format!("{FIELD}[{i}].networkCardIndex"),
            nic.network_card_index,
            0,
            i64::from(i32::MAX),
        );
        problems.within(
            format!("{FIELD}[{i}].deviceIndex"),
            nic.device_index,
            0,
            i64::from(i32::MAX),
        );
        let field = format!("{FIELD}[{i}].interfaceType");
        problems.one_of(field, &nic.interface_type, &["interface", "efa-only"]);
    }
    let primary = interfaces.iter().any(|n| {
        n.network_card_index == 0 && n.device_index == 0 && n.interface_type == "interface"
    });
    if !interfaces.is_empty() && !primary {
        problems.rule(
            FIELD,
            "networkInterfaces must include a primary interface with interfaceType='interface'",
        );
    }
    let clash = interfaces.iter().any(|x| {
        let same_slot = interfaces
            .iter()
            .filter(|y| {
                x.network_card_index == y.network_card_index && x.device_index == y.device_index
            })
            .count();
        let efa_on_card = interfaces
            .iter()
            .filter(|y| {
                y.network_card_index == x.network_card_index && y.interface_type == "efa-only"
            })
            .count();
        same_slot != 1 || (x.interface_type == "efa-only" && efa_on_card != 1)
    });
    if clash {
        problems.rule(
            FIELD,
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card",
        );
    }
}
