//! The launch and instance calls' answers in EC2's XML: fleets, launch
//! templates, instances, state changes and status checks.

use karpenter_aws::ec2::{
    CreateFleetError, CreateFleetInstance, CreateFleetOutput, FleetLaunchTemplateOverrides,
    Instance, InstanceState, InstanceStateChange, InstanceStatus, LaunchTemplate,
};

use super::xml::{node, nonempty, opt, set, tags, text, time, values};

/// EC2's numeric code of a state, which its answers carry with the name.
fn state_code(state: InstanceState) -> u16 {
    match state {
        InstanceState::Pending => 0,
        InstanceState::Running => 16,
        InstanceState::ShuttingDown => 32,
        InstanceState::Terminated => 48,
        InstanceState::Stopping => 64,
        InstanceState::Stopped => 80,
    }
}

fn state(name: &str, state: InstanceState) -> String {
    node(
        name,
        &(text("code", state_code(state)) + &text("name", state.as_str())),
    )
}

pub(crate) fn create_fleet(out: &CreateFleetOutput) -> String {
    [
        text("fleetId", &out.fleet_id),
        set("fleetInstanceSet", out.instances.iter().map(fleet_instance)),
        set("errorSet", out.errors.iter().map(fleet_error)),
    ]
    .concat()
}

fn fleet_instance(i: &CreateFleetInstance) -> String {
    [
        overrides(&i.launch_template_and_overrides),
        nonempty("lifecycle", &i.lifecycle),
        values("instanceIds", &i.instance_ids),
        text("instanceType", &i.instance_type),
    ]
    .concat()
}

fn fleet_error(e: &CreateFleetError) -> String {
    [
        overrides(&e.launch_template_and_overrides),
        nonempty("lifecycle", &e.lifecycle),
        text("errorCode", &e.error_code),
        text("errorMessage", &e.error_message),
    ]
    .concat()
}

fn overrides(o: &FleetLaunchTemplateOverrides) -> String {
    let inner = [
        text("instanceType", &o.instance_type),
        nonempty("subnetId", &o.subnet_id),
        nonempty("availabilityZone", &o.availability_zone),
        opt("imageId", o.image_id.as_deref()),
        opt("priority", o.priority),
    ]
    .concat();
    node("launchTemplateAndOverrides", &node("overrides", &inner))
}

pub(crate) fn launch_template(t: &LaunchTemplate) -> String {
    [
        text("launchTemplateId", &t.launch_template_id),
        text("launchTemplateName", &t.launch_template_name),
        time("createTime", t.create_time),
        tags(&t.tags),
    ]
    .concat()
}

/// One instance; `DescribeInstances` gives each its own reservation.
pub(crate) fn instance(i: &Instance) -> String {
    let groups = set(
        "groupSet",
        i.security_group_ids.iter().map(|g| text("groupId", g)),
    );
    [
        text("instanceId", &i.instance_id),
        text("imageId", &i.image_id),
        state("instanceState", i.state),
        text("instanceType", &i.instance_type),
        time("launchTime", i.launch_time),
        node("placement", &text("availabilityZone", &i.availability_zone)),
        nonempty("subnetId", &i.subnet_id),
        groups,
        opt("instanceLifecycle", i.instance_lifecycle.as_deref()),
        opt(
            "capacityReservationId",
            i.capacity_reservation_id.as_deref(),
        ),
        tags(&i.tags),
    ]
    .concat()
}

pub(crate) fn state_change(c: &InstanceStateChange) -> String {
    [
        text("instanceId", &c.instance_id),
        state("currentState", c.current_state),
        state("previousState", c.previous_state),
    ]
    .concat()
}

/// One status: the instance check carries the impaired time, as EC2
/// gives it in the check's details.
pub(crate) fn instance_status(s: &InstanceStatus) -> String {
    let details = s
        .impaired_since
        .map(|since| {
            set(
                "details",
                [text("name", "reachability")
                    + &text("status", "failed")
                    + &time("impairedSince", since)],
            )
        })
        .unwrap_or_default();
    let events = set(
        "eventsSet",
        s.events.iter().map(|e| {
            text("code", &e.code)
                + &text("description", &e.description)
                + &e.not_before
                    .map(|t| time("notBefore", t))
                    .unwrap_or_default()
        }),
    );
    [
        text("instanceId", &s.instance_id),
        text("availabilityZone", &s.availability_zone),
        state("instanceState", s.instance_state),
        node(
            "instanceStatus",
            &(nonempty("status", &s.instance_status) + &details),
        ),
        node("systemStatus", &nonempty("status", &s.system_status)),
        events,
    ]
    .concat()
}
