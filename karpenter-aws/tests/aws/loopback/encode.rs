//! The describe calls' answers in EC2's XML: resources, instance types and
//! offerings, spot prices. Element names are the ones the SDK's
//! deserializers read.

use karpenter_aws::ec2::{
    CapacityReservation, Image, InstanceTypeInfo, InstanceTypeOffering, LocationType,
    PlacementGroup, SecurityGroup, SpotPrice, Subnet,
};

use super::xml::{node, nonempty, opt, set, tags, text, time, values};

pub(crate) fn subnet(s: &Subnet) -> String {
    [
        text("subnetId", &s.subnet_id),
        nonempty("vpcId", &s.vpc_id),
        text("availabilityZone", &s.availability_zone),
        nonempty("availabilityZoneId", &s.availability_zone_id),
        text("availableIpAddressCount", s.available_ip_address_count),
        tags(&s.tags),
    ]
    .concat()
}

pub(crate) fn security_group(g: &SecurityGroup) -> String {
    [
        text("groupId", &g.group_id),
        nonempty("groupName", &g.group_name),
        nonempty("vpcId", &g.vpc_id),
        tags(&g.tags),
    ]
    .concat()
}

pub(crate) fn placement_group(g: &PlacementGroup) -> String {
    let partitions = (g.partition_count > 0).then_some(g.partition_count);
    [
        text("groupId", &g.group_id),
        text("groupName", &g.group_name),
        nonempty("strategy", &g.strategy),
        opt("partitionCount", partitions),
        nonempty("spreadLevel", &g.spread_level),
        nonempty("state", &g.state),
        tags(&g.tags),
    ]
    .concat()
}

pub(crate) fn image(i: &Image) -> String {
    [
        text("imageId", &i.image_id),
        nonempty("name", &i.name),
        nonempty("architecture", &i.architecture),
        nonempty("imageOwnerId", &i.owner_id),
        opt("creationDate", i.creation_date),
        opt("deprecationTime", i.deprecation_time),
        nonempty("imageState", &i.state),
        tags(&i.tags),
    ]
    .concat()
}

pub(crate) fn capacity_reservation(r: &CapacityReservation) -> String {
    [
        text("capacityReservationId", &r.capacity_reservation_id),
        nonempty("ownerId", &r.owner_id),
        text("instanceType", &r.instance_type),
        text("availabilityZone", &r.availability_zone),
        nonempty("availabilityZoneId", &r.availability_zone_id),
        text("availableInstanceCount", r.available_instance_count),
        text("totalInstanceCount", r.total_instance_count),
        nonempty("state", &r.state),
        nonempty("reservationType", &r.reservation_type),
        nonempty("instanceMatchCriteria", &r.instance_match_criteria),
        text("interruptible", r.interruptible),
        r.end_date.map(|d| time("endDate", d)).unwrap_or_default(),
        tags(&r.tags),
    ]
    .concat()
}

pub(crate) fn spot_price(p: &SpotPrice) -> String {
    [
        text("instanceType", &p.instance_type),
        text("availabilityZone", &p.availability_zone),
        text("productDescription", &p.product_description),
        text("spotPrice", p.spot_price),
        time("timestamp", p.timestamp),
    ]
    .concat()
}

/// An instance type; its interfaces given as the type's maximum (no
/// network cards listed), its GPUs as one device of `gpu_count`.
pub(crate) fn instance_type(t: &InstanceTypeInfo) -> String {
    let network = [
        text("maximumNetworkInterfaces", t.maximum_network_interfaces),
        text("ipv4AddressesPerInterface", t.ipv4_addresses_per_interface),
        node(
            "efaInfo",
            &text("maximumEfaInterfaces", t.maximum_efa_interfaces),
        ),
    ]
    .concat();
    let gpus = if t.gpu_count == 0 {
        String::new()
    } else {
        node("gpuInfo", &set("gpus", [text("count", t.gpu_count)]))
    };
    [
        text("instanceType", &t.instance_type),
        node("vCpuInfo", &text("defaultVCpus", t.default_vcpus)),
        node("memoryInfo", &text("sizeInMiB", t.memory_mib)),
        node(
            "processorInfo",
            &values("supportedArchitectures", &t.supported_architectures),
        ),
        text("bareMetal", t.bare_metal),
        opt("hypervisor", t.hypervisor.as_deref()),
        node("networkInfo", &network),
        gpus,
        values("supportedUsageClasses", &t.supported_usage_classes),
    ]
    .concat()
}

pub(crate) fn offering(o: &InstanceTypeOffering) -> String {
    let location_type = match o.location_type {
        LocationType::Region => "region",
        LocationType::AvailabilityZone => "availability-zone",
        LocationType::AvailabilityZoneId => "availability-zone-id",
    };
    [
        text("instanceType", &o.instance_type),
        text("locationType", location_type),
        text("location", &o.location),
    ]
    .concat()
}
