//! The describe calls' answers read into this crate's types: instance
//! types and offerings, subnets, security groups, images, capacity
//! reservations, spot prices.

use aws_sdk_ec2::types as sdk;

use super::convert::{count, tags_in, text, time_in, time_text};
use crate::ec2::{
    CapacityReservation, Image, InstanceTypeInfo, InstanceTypeOffering, LocationType,
    SecurityGroup, SpotPrice, Subnet,
};

/// One `DescribeInstanceTypes` entry.
pub(super) fn instance_type(info: &sdk::InstanceTypeInfo) -> InstanceTypeInfo {
    let network = info.network_info();
    InstanceTypeInfo {
        instance_type: info
            .instance_type()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default(),
        default_vcpus: count(info.v_cpu_info().and_then(sdk::VCpuInfo::default_v_cpus)),
        memory_mib: info
            .memory_info()
            .and_then(sdk::MemoryInfo::size_in_mib)
            .and_then(|m| u64::try_from(m).ok())
            .unwrap_or(0),
        supported_architectures: info
            .processor_info()
            .map(|p| {
                p.supported_architectures()
                    .iter()
                    .map(|a| a.as_str().to_owned())
                    .collect()
            })
            .unwrap_or_default(),
        bare_metal: info.bare_metal().unwrap_or(false),
        hypervisor: info.hypervisor().map(|h| h.as_str().to_owned()),
        maximum_network_interfaces: count(network.and_then(default_card_interfaces)),
        ipv4_addresses_per_interface: count(
            network.and_then(sdk::NetworkInfo::ipv4_addresses_per_interface),
        ),
        maximum_efa_interfaces: count(
            network
                .and_then(sdk::NetworkInfo::efa_info)
                .and_then(sdk::EfaInfo::maximum_efa_interfaces),
        ),
        gpu_count: info
            .gpu_info()
            .map(|g| g.gpus().iter().map(|d| count(d.count())).sum())
            .unwrap_or(0),
        supported_usage_classes: info
            .supported_usage_classes()
            .iter()
            .map(|c| c.as_str().to_owned())
            .collect(),
    }
}

/// The network interfaces of the default network card, as upstream counts
/// them; the type's maximum when EC2 lists no cards.
fn default_card_interfaces(network: &sdk::NetworkInfo) -> Option<i32> {
    let default = network.default_network_card_index().unwrap_or(0);
    network
        .network_cards()
        .iter()
        .find(|card| card.network_card_index() == Some(default))
        .and_then(sdk::NetworkCardInfo::maximum_network_interfaces)
        .or_else(|| network.maximum_network_interfaces())
}

/// One `DescribeInstanceTypeOfferings` entry.
pub(super) fn offering(offering: &sdk::InstanceTypeOffering) -> InstanceTypeOffering {
    InstanceTypeOffering {
        instance_type: offering
            .instance_type()
            .map(|t| t.as_str().to_owned())
            .unwrap_or_default(),
        location_type: match offering.location_type() {
            Some(sdk::LocationType::Region) => LocationType::Region,
            Some(sdk::LocationType::AvailabilityZoneId) => LocationType::AvailabilityZoneId,
            _ => LocationType::AvailabilityZone,
        },
        location: text(offering.location()),
    }
}

/// Our location type as the SDK's.
pub(super) fn location_type(location: LocationType) -> sdk::LocationType {
    match location {
        LocationType::Region => sdk::LocationType::Region,
        LocationType::AvailabilityZone => sdk::LocationType::AvailabilityZone,
        LocationType::AvailabilityZoneId => sdk::LocationType::AvailabilityZoneId,
    }
}

/// One `DescribeSubnets` entry.
pub(super) fn subnet(subnet: &sdk::Subnet) -> Subnet {
    Subnet {
        subnet_id: text(subnet.subnet_id()),
        vpc_id: text(subnet.vpc_id()),
        availability_zone: text(subnet.availability_zone()),
        availability_zone_id: text(subnet.availability_zone_id()),
        available_ip_address_count: count(subnet.available_ip_address_count()),
        tags: tags_in(subnet.tags()),
    }
}

/// One `DescribeSecurityGroups` entry.
pub(super) fn security_group(group: &sdk::SecurityGroup) -> SecurityGroup {
    SecurityGroup {
        group_id: text(group.group_id()),
        group_name: text(group.group_name()),
        vpc_id: text(group.vpc_id()),
        tags: tags_in(group.tags()),
    }
}

/// One `DescribeImages` entry.
pub(super) fn image(image: &sdk::Image) -> Image {
    Image {
        image_id: text(image.image_id()),
        name: text(image.name()),
        architecture: image
            .architecture()
            .map(|a| a.as_str().to_owned())
            .unwrap_or_default(),
        owner_id: text(image.owner_id()),
        creation_date: time_text(image.creation_date()),
        deprecation_time: time_text(image.deprecation_time()),
        state: image
            .state()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default(),
        tags: tags_in(image.tags()),
    }
}

/// One `DescribeCapacityReservations` entry.
pub(super) fn capacity_reservation(reservation: &sdk::CapacityReservation) -> CapacityReservation {
    CapacityReservation {
        capacity_reservation_id: text(reservation.capacity_reservation_id()),
        owner_id: text(reservation.owner_id()),
        instance_type: text(reservation.instance_type()),
        availability_zone: text(reservation.availability_zone()),
        availability_zone_id: text(reservation.availability_zone_id()),
        available_instance_count: count(reservation.available_instance_count()),
        total_instance_count: count(reservation.total_instance_count()),
        state: reservation
            .state()
            .map(|s| s.as_str().to_owned())
            .unwrap_or_default(),
        reservation_type: reservation
            .reservation_type()
            .map_or_else(|| "default".to_owned(), |t| t.as_str().to_owned()),
        instance_match_criteria: reservation
            .instance_match_criteria()
            .map(|c| c.as_str().to_owned())
            .unwrap_or_default(),
        interruptible: reservation.interruptible().unwrap_or(false),
        end_date: reservation.end_date().and_then(time_in),
        tags: tags_in(reservation.tags()),
    }
}

/// One `DescribeSpotPriceHistory` entry; `None` when its price is not a
/// number or its time is missing.
pub(super) fn spot_price(price: &sdk::SpotPrice) -> Option<SpotPrice> {
    Some(SpotPrice {
        instance_type: price.instance_type()?.as_str().to_owned(),
        availability_zone: text(price.availability_zone()),
        product_description: price
            .product_description()
            .map(|d| d.as_str().to_owned())
            .unwrap_or_default(),
        spot_price: price.spot_price()?.parse().ok()?,
        timestamp: price.timestamp().and_then(time_in)?,
    })
}
