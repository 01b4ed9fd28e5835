//! What a launch template carries beyond its image when nodes join a real
//! cluster, as upstream's launch template builder fills it: the class's
//! volumes (else the family's), metadata options (else the resolver's),
//! detailed monitoring and the network interfaces.

use karpenter_core::cloudprovider::CloudProviderError;
use karpenter_core::resources::milli_value;

use super::join::JoinConfig;
use crate::ec2::{
    LaunchTemplateBlockDeviceMapping, LaunchTemplateEbsBlockDevice, LaunchTemplateMetadataOptions,
    LaunchTemplateNetworkInterface,
};
use crate::launch::LaunchTemplate;
use crate::nodeclass::{AmiFamily, BlockDevice, BlockDeviceMapping, EC2NodeClass};

/// Bytes in a GiB: EC2 sizes volumes in GiB.
const GIB: i64 = 1 << 30;
/// Regions whose instance metadata service has no IPv6 endpoint: upstream
/// leaves `HttpProtocolIpv6` unset there.
const NO_IMDS_IPV6_REGIONS: [&str; 6] = [
    "us-iso-east-1",
    "us-iso-west-1",
    "us-isob-east-1",
    "us-isob-west-1",
    "us-isof-south-1",
    "us-isof-east-1",
];

/// The family's default volumes, for a class that lists none: a 20 GiB
/// encrypted gp3 root (50 GiB on Windows), Bottlerocket's 4 GiB OS volume
/// and 20 GiB data volume; none for Custom (the image's own).
fn default_mappings(family: AmiFamily) -> Vec<LaunchTemplateBlockDeviceMapping> {
    let volume = |device: &str, gib: i64| LaunchTemplateBlockDeviceMapping {
        device_name: Some(device.to_owned()),
        ebs: Some(LaunchTemplateEbsBlockDevice {
            encrypted: Some(true),
            volume_type: Some("gp3".to_owned()),
            volume_size: Some(gib),
            ..LaunchTemplateEbsBlockDevice::default()
        }),
    };
    match family {
        AmiFamily::AL2 | AmiFamily::AL2023 => vec![volume("/dev/xvda", 20)],
        AmiFamily::Bottlerocket => vec![volume("/dev/xvda", 4), volume("/dev/xvdb", 20)],
        AmiFamily::Custom => Vec::new(),
        _ => vec![volume("/dev/sda1", 50)],
    }
}

/// The volumes of a template for `class`.
///
/// # Errors
///
/// [`CloudProviderError::Create`] naming `spec.blockDeviceMappings[i]` when
/// a volume size cannot be read.
pub(crate) fn block_device_mappings(
    class: &EC2NodeClass,
    family: AmiFamily,
) -> Result<Vec<LaunchTemplateBlockDeviceMapping>, CloudProviderError> {
    let mappings = class
        .spec
        .block_device_mappings
        .as_deref()
        .unwrap_or_default();
    if mappings.is_empty() {
        return Ok(default_mappings(family));
    }
    mappings
        .iter()
        .enumerate()
        .map(|(i, m)| class_mapping(i, m))
        .collect()
}

fn class_mapping(
    index: usize,
    mapping: &BlockDeviceMapping,
) -> Result<LaunchTemplateBlockDeviceMapping, CloudProviderError> {
    // Upstream always sends an EBS request, empty when the class has none.
    let ebs = mapping.ebs.clone().unwrap_or_default();
    Ok(LaunchTemplateBlockDeviceMapping {
        device_name: mapping.device_name.clone(),
        ebs: Some(ebs_request(index, &ebs)?),
    })
}

fn ebs_request(
    index: usize,
    ebs: &BlockDevice,
) -> Result<LaunchTemplateEbsBlockDevice, CloudProviderError> {
    let volume_size = ebs
        .volume_size
        .as_ref()
        .map(|q| {
            milli_value(q).map_err(|e| CloudProviderError::Create {
                reason: "LaunchTemplateCreationFailed".to_owned(),
                message: format!("spec.blockDeviceMappings[{index}].ebs.volumeSize: {e}"),
                source: Some(Box::new(e)),
            })
        })
        .transpose()?
        // Rounded up to whole GiB, as upstream does.
        .map(|milli| (milli / 1000 + GIB - 1).div_euclid(GIB));
    Ok(LaunchTemplateEbsBlockDevice {
        delete_on_termination: ebs.delete_on_termination,
        encrypted: ebs.encrypted,
        volume_type: ebs.volume_type.clone(),
        // Upstream sends no IOPS or throughput for a zero.
        iops: ebs.iops.filter(|&v| v != 0),
        throughput: ebs.throughput.filter(|&v| v != 0),
        kms_key_id: ebs.kms_key_id.clone(),
        snapshot_id: ebs.snapshot_id.clone(),
        volume_initialization_rate: ebs.volume_initialization_rate,
        volume_size,
    })
}

/// The metadata options of a template: the class's (each absent field at
/// the CRD's default), else upstream's resolver defaults; instance tags
/// always off, since account defaults could otherwise turn them on and
/// Karpenter's tag keys are not valid there.
pub(super) fn metadata_options(
    class: &EC2NodeClass,
    join: &JoinConfig,
    region: &str,
) -> LaunchTemplateMetadataOptions {
    let mut options = match &class.spec.metadata_options {
        Some(set) => {
            let resolved = set.resolved();
            LaunchTemplateMetadataOptions {
                http_endpoint: Some(resolved.http_endpoint),
                http_protocol_ipv6: Some(resolved.http_protocol_ipv6),
                http_put_response_hop_limit: Some(resolved.http_put_response_hop_limit),
                http_tokens: Some(resolved.http_tokens),
                instance_metadata_tags: None,
            }
        }
        None => LaunchTemplateMetadataOptions {
            http_endpoint: Some("disabled".to_owned()),
            http_protocol_ipv6: Some(if join.ipv6() { "enabled" } else { "disabled" }.to_owned()),
            http_put_response_hop_limit: Some(2),
            http_tokens: Some("required".to_owned()),
            instance_metadata_tags: None,
        },
    };
    options.instance_metadata_tags = Some("disabled".to_owned());
    if NO_IMDS_IPV6_REGIONS.contains(&region) {
        options.http_protocol_ipv6 = None;
    }
    options
}

/// The network interfaces of `template`: the class's, else one EFA
/// interface per EFA device the template attaches (the first card's at
/// device 0, the rest at 1), else the single primary interface.
pub(super) fn network_interfaces(
    class: &EC2NodeClass,
    join: &JoinConfig,
    template: &LaunchTemplate,
    groups: &[String],
) -> Vec<LaunchTemplateNetworkInterface> {
    let spec = &class.spec;
    let ipv6 = join.ipv6();
    let (ipv4_prefix_count, ipv6_prefix_count) = if ipv6 {
        (None, spec.ip_prefix_count)
    } else {
        (spec.ip_prefix_count, None)
    };
    let base = LaunchTemplateNetworkInterface {
        associate_public_ip_address: spec.associate_public_ip_address,
        ipv4_prefix_count,
        ipv6_prefix_count,
        ipv6_address_count: ipv6.then_some(1),
        primary_ipv6: ipv6.then_some(true),
        groups: groups.to_vec(),
        ..LaunchTemplateNetworkInterface::default()
    };
    if let Some(interfaces) = spec.network_interfaces.as_deref().filter(|i| !i.is_empty()) {
        return interfaces
            .iter()
            .map(|ni| {
                let placed = LaunchTemplateNetworkInterface {
                    network_card_index: Some(ni.network_card_index),
                    device_index: Some(ni.device_index),
                    interface_type: Some(ni.interface_type.clone()),
                    ..base.clone()
                };
                // EC2 refuses addresses and prefixes on an EFA-only interface.
                if ni.interface_type == "efa-only" {
                    LaunchTemplateNetworkInterface {
                        associate_public_ip_address: None,
                        ipv4_prefix_count: None,
                        ipv6_prefix_count: None,
                        ipv6_address_count: None,
                        primary_ipv6: None,
                        ..placed
                    }
                } else {
                    placed
                }
            })
            .collect();
    }
    if template.efa_count > 0 {
        return (0..template.efa_count)
            .map(|card| LaunchTemplateNetworkInterface {
                network_card_index: Some(card),
                device_index: Some(if card == 0 { 0 } else { 1 }),
                interface_type: Some("efa".to_owned()),
                ..base.clone()
            })
            .collect();
    }
    vec![LaunchTemplateNetworkInterface {
        device_index: Some(0),
        ..base
    }]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn class(spec: serde_json::Value) -> EC2NodeClass {
        serde_json::from_value(json!({"metadata": {"name": "c"}, "spec": spec}))
            .expect("an EC2NodeClass")
    }

    fn template(efa_count: i64) -> LaunchTemplate {
        LaunchTemplate {
            name: "t".into(),
            image_id: "ami-1".into(),
            instance_types: vec!["p5.48xlarge".into()],
            max_pods: 100,
            efa_count,
            kube_reserved: Default::default(),
            system_reserved: Default::default(),
            capacity_type: "on-demand".into(),
            reservation: None,
        }
    }

    fn join(dns: &str) -> JoinConfig {
        JoinConfig {
            kube_dns_ip: dns.parse().ok(),
            ..JoinConfig::default()
        }
    }

    #[test]
    fn efa_templates_get_one_efa_interface_per_card() {
        let class = class(json!({"ipPrefixCount": 2}));
        let groups = ["sg-1".to_owned()];
        let interfaces = network_interfaces(&class, &join("10.0.0.10"), &template(3), &groups);
        let placed: Vec<(Option<i64>, Option<i64>)> = interfaces
            .iter()
            .map(|i| (i.network_card_index, i.device_index))
            .collect();
        assert_eq!(
            placed,
            [(Some(0), Some(0)), (Some(1), Some(1)), (Some(2), Some(1))]
        );
        assert!(interfaces.iter().all(|i| {
            i.interface_type.as_deref() == Some("efa")
                && i.ipv4_prefix_count == Some(2)
                && i.ipv6_prefix_count.is_none()
                && i.groups == groups
        }));
    }

    #[test]
    fn an_ipv6_cluster_delegates_ipv6_prefixes() {
        let class = class(json!({"ipPrefixCount": 1}));
        let interfaces = network_interfaces(&class, &join("fd00::a"), &template(0), &[]);
        let [primary] = interfaces.as_slice() else {
            panic!("one interface: {interfaces:?}");
        };
        assert_eq!(primary.ipv4_prefix_count, None);
        assert_eq!(primary.ipv6_prefix_count, Some(1));
        assert_eq!(primary.ipv6_address_count, Some(1));
        assert_eq!(primary.primary_ipv6, Some(true));
    }

    #[test]
    fn efa_only_interfaces_get_no_addresses() {
        let class = class(json!({
            "associatePublicIPAddress": true,
            "networkInterfaces": [
                {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
                {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
            ],
        }));
        let interfaces = network_interfaces(&class, &join("10.0.0.10"), &template(2), &[]);
        let public: Vec<Option<bool>> = interfaces
            .iter()
            .map(|i| i.associate_public_ip_address)
            .collect();
        // The class's interfaces win over the EFA count.
        assert_eq!(public, [Some(true), None]);
    }

    #[test]
    fn bottlerocket_and_custom_default_volumes() {
        let none = class(json!({}));
        let devices = |family| -> Vec<(Option<String>, Option<i64>)> {
            block_device_mappings(&none, family)
                .unwrap_or_default()
                .into_iter()
                .map(|m| (m.device_name, m.ebs.and_then(|e| e.volume_size)))
                .collect()
        };
        assert_eq!(
            devices(AmiFamily::Bottlerocket),
            [
                (Some("/dev/xvda".to_owned()), Some(4)),
                (Some("/dev/xvdb".to_owned()), Some(20))
            ]
        );
        assert!(devices(AmiFamily::Custom).is_empty());
    }

    #[test]
    fn an_unreadable_volume_size_names_its_mapping() {
        let class = class(json!({"blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "lots"}},
        ]}));
        let Err(CloudProviderError::Create { message, .. }) =
            block_device_mappings(&class, AmiFamily::AL2023)
        else {
            panic!("an error");
        };
        assert!(message.starts_with("spec.blockDeviceMappings[0].ebs.volumeSize"));
    }

    #[test]
    fn iso_regions_leave_ipv6_metadata_unset() {
        let class = class(json!({}));
        let iso = metadata_options(&class, &join("10.0.0.10"), "us-iso-east-1");
        assert_eq!(iso.http_protocol_ipv6, None);
        let v6 = metadata_options(&class, &join("fd00::a"), "us-east-1");
        assert_eq!(v6.http_protocol_ipv6.as_deref(), Some("enabled"));
    }
}
