//! What a test or simulation does to [`InMemoryEc2`] besides calling the
//! API: adding resources, moving the clock, running capacity out, reclaiming
//! spot instances and injecting faults.

use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::{ACCOUNT, InMemoryEc2};
use crate::ec2::{
    CapacityReservation, CreateFleetInput, Ec2Error, Image, InMemoryQueue, Instance, InstanceState,
    InstanceStatus, InstanceStatusEvent, LaunchTemplateData, Operation, SecurityGroup, Subnet,
    TargetCapacityType,
};

impl InMemoryEc2 {
    /// Adds (or replaces) a subnet; an empty zone ID is filled in from the
    /// zone's name.
    pub fn add_subnet(&self, mut subnet: Subnet) {
        let mut state = self.lock();
        if subnet.availability_zone_id.is_empty() {
            subnet.availability_zone_id = state.zone_id(&subnet.availability_zone);
        }
        state.subnets.insert(subnet.subnet_id.clone(), subnet);
    }

    /// Adds (or replaces) a security group.
    pub fn add_security_group(&self, group: SecurityGroup) {
        self.lock()
            .security_groups
            .insert(group.group_id.clone(), group);
    }

    /// Adds (or replaces) an image.
    pub fn add_image(&self, image: Image) {
        self.lock().images.insert(image.image_id.clone(), image);
    }

    /// Adds (or replaces) a capacity reservation; an empty zone ID is
    /// filled in from the zone's name.
    pub fn add_capacity_reservation(&self, mut reservation: CapacityReservation) {
        let mut state = self.lock();
        if reservation.availability_zone_id.is_empty() {
            reservation.availability_zone_id = state.zone_id(&reservation.availability_zone);
        }
        let id = reservation.capacity_reservation_id.clone();
        state.reservations.insert(id, reservation);
    }

    /// Sets the clock, which stamps launches, templates and events.
    pub fn set_now(&self, now: Timestamp) {
        self.lock().now = now;
    }

    /// Moves the clock on by `by`.
    pub fn advance(&self, by: SignedDuration) {
        let mut state = self.lock();
        state.now = state.now.saturating_add(by).unwrap_or(state.now);
    }

    /// From now on at most `count` more instances of `instance_type` launch
    /// in `zone` as `capacity_type`; beyond that, `CreateFleet` answers
    /// `InsufficientInstanceCapacity` for them. Unlimited until set.
    pub fn set_capacity(
        &self,
        instance_type: &str,
        zone: &str,
        capacity_type: TargetCapacityType,
        count: u32,
    ) {
        let key = (instance_type.to_owned(), zone.to_owned(), capacity_type);
        self.lock().capacity.insert(key, count);
    }

    /// Sets the spot price of `instance_type` in `zone`; unset, it is 70 %
    /// of the on-demand price, as upstream's fake has it.
    pub fn set_spot_price(&self, instance_type: &str, zone: &str, price: f64) {
        let key = (instance_type.to_owned(), zone.to_owned());
        self.lock().spot_prices.insert(key, price);
    }

    /// Makes the next call of `operation` fail with `error`; several
    /// injected for one operation fail its next calls in turn.
    pub fn fail_next(&self, operation: Operation, error: Ec2Error) {
        self.lock().faults.push(operation, error);
    }

    /// Sends spot interruption warnings to `queue` from now on.
    pub fn attach_queue(&self, queue: InMemoryQueue) {
        self.lock().queue = Some(queue);
    }

    /// Puts an instance that was already running (a simulation's starting
    /// node) into EC2 as given, taking one free address of its subnet and,
    /// when it runs in a capacity reservation, one place of that
    /// reservation, as its launch did. Whether it was put in: `false` when
    /// a live instance of that ID is already there (nothing changes then).
    ///
    /// Its address and place are taken even from a subnet or reservation
    /// that has none left: the instance exists, and EC2 counts it.
    pub fn insert_instance(&self, instance: Instance) -> bool {
        let mut state = self.lock();
        let live = (state.instances.get(&instance.instance_id))
            .is_some_and(|i| i.state != InstanceState::Terminated);
        if live {
            return false;
        }
        if let Some(subnet) = state.subnets.get_mut(&instance.subnet_id) {
            subnet.available_ip_address_count = subnet.available_ip_address_count.saturating_sub(1);
        }
        let reservation = instance.capacity_reservation_id.as_ref();
        if let Some(r) = reservation.and_then(|id| state.reservations.get_mut(id)) {
            r.available_instance_count = r.available_instance_count.saturating_sub(1);
        }
        state
            .instances
            .insert(instance.instance_id.clone(), instance);
        true
    }

    /// Every instance, terminated ones included, by ID.
    pub fn instances(&self) -> Vec<Instance> {
        self.lock().instances.values().cloned().collect()
    }

    /// What the launch template `name` launches, as it was made.
    pub fn launch_template_data(&self, name: &str) -> Option<LaunchTemplateData> {
        self.lock().templates.get(name).map(|t| t.data.clone())
    }

    /// Every `CreateFleet` input received so far, oldest first, those
    /// failed by an injected fault included.
    pub fn fleet_inputs(&self) -> Vec<CreateFleetInput> {
        self.lock().fleet_inputs.clone()
    }

    /// The last `CreateFleet` input received, if any.
    pub fn last_fleet_input(&self) -> Option<CreateFleetInput> {
        self.lock().fleet_inputs.last().cloned()
    }

    /// The subnet `id`, as it stands.
    pub fn subnet(&self, id: &str) -> Option<Subnet> {
        self.lock().subnets.get(id).cloned()
    }

    /// The capacity reservation `id`, as it stands.
    pub fn capacity_reservation(&self, id: &str) -> Option<CapacityReservation> {
        self.lock().reservations.get(id).cloned()
    }

    /// Reclaims the spot instance `id` as EC2 does: it terminates, and an
    /// attached queue gets EventBridge's "EC2 Spot Instance Interruption
    /// Warning" for it. Whether a live spot instance `id` was there.
    pub fn reclaim_spot(&self, id: &str) -> bool {
        let mut state = self.lock();
        let live_spot = state.instances.get(id).is_some_and(|i| {
            i.instance_lifecycle.as_deref() == Some("spot") && i.state != InstanceState::Terminated
        });
        if !live_spot {
            return false;
        }
        state.terminate(id);
        state.counters.event += 1;
        let body = json!({
            "version": "0",
            "id": format!("00000000-0000-4000-8000-{:012x}", state.counters.event),
            "detail-type": "EC2 Spot Instance Interruption Warning",
            "source": "aws.ec2",
            "account": ACCOUNT,
            "time": state.now.to_string(),
            "region": state.region,
            "resources": [format!("arn:aws:ec2:{}:{ACCOUNT}:instance/{id}", state.region)],
            "detail": {"instance-id": id, "instance-action": "terminate"},
        });
        if let Some(queue) = &state.queue {
            queue.push(body.to_string());
        }
        true
    }

    /// Marks the instance check (or, with `system`, the system check) of
    /// instance `id` impaired from now on, as the impaired-instance poll
    /// sees it.
    pub fn impair(&self, id: &str, system: bool) {
        let mut state = self.lock();
        let now = state.now;
        let status = state.status_entry(id);
        if system {
            status.system_status = "impaired".to_owned();
        } else {
            status.instance_status = "impaired".to_owned();
        }
        status.impaired_since.get_or_insert(now);
    }

    /// Schedules the event `code` (`instance-retirement`,
    /// `system-maintenance`, ...) on instance `id`, due from now.
    pub fn schedule_event(&self, id: &str, code: &str) {
        let mut state = self.lock();
        let now = state.now;
        state.status_entry(id).events.push(InstanceStatusEvent {
            code: code.to_owned(),
            description: format!("The instance is scheduled for {code}"),
            not_before: Some(now),
        });
    }
}

impl super::State {
    /// The status a caller set for instance `id`, made `ok` first.
    fn status_entry(&mut self, id: &str) -> &mut InstanceStatus {
        self.statuses
            .entry(id.to_owned())
            .or_insert_with(|| InstanceStatus {
                instance_id: id.to_owned(),
                instance_status: "ok".to_owned(),
                system_status: "ok".to_owned(),
                ..InstanceStatus::default()
            })
    }

    /// Terminates instance `id` if it is live, giving its subnet address
    /// and reservation place back; its previous state.
    pub(super) fn terminate(&mut self, id: &str) -> Option<InstanceState> {
        let instance = self.instances.get_mut(id)?;
        let previous = instance.state;
        if previous == InstanceState::Terminated {
            return Some(previous);
        }
        instance.state = InstanceState::Terminated;
        let subnet = instance.subnet_id.clone();
        let reservation = instance.capacity_reservation_id.clone();
        if let Some(subnet) = self.subnets.get_mut(&subnet) {
            subnet.available_ip_address_count += 1;
        }
        if let Some(reservation) = reservation.and_then(|r| self.reservations.get_mut(&r)) {
            reservation.available_instance_count += 1;
        }
        Some(previous)
    }
}
