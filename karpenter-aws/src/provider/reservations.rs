//! How many more instances each capacity reservation can start, as
//! upstream's capacity reservation provider keeps it: read from
//! `DescribeCapacityReservations` (active ones), then counted down locally
//! on each launch into one until the next read.

use std::collections::BTreeSet;

use super::{AwsCloudProvider, lock};
use crate::ec2::{DescribeInput, Ec2Api, Ec2Error, Filter};

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// Reads the available instance count of every capacity reservation
    /// the applied classes' statuses name, for their reserved offerings;
    /// every class's types are made again. Returns how many reservations
    /// EC2 reported active.
    ///
    /// # Errors
    ///
    /// The [`Ec2Error`] of `DescribeCapacityReservations`; the counts read
    /// before stay.
    pub async fn refresh_capacity_reservations(&self) -> Result<usize, Ec2Error> {
        let ids: BTreeSet<String> = lock(&self.node_classes)
            .values()
            .filter_map(|c| c.status.as_ref())
            .flat_map(|s| s.capacity_reservations.as_deref().unwrap_or_default())
            .map(|r| r.id.clone())
            .collect();
        if ids.is_empty() {
            return Ok(0);
        }
        let found = self
            .api
            .describe_capacity_reservations(DescribeInput {
                ids: ids.into_iter().collect(),
                filters: vec![Filter::new("state", ["active"])],
            })
            .await?;
        let count = found.capacity_reservations.len();
        let mut options = lock(&self.options);
        for reservation in found.capacity_reservations {
            options.reservation_capacity.insert(
                reservation.capacity_reservation_id,
                reservation.available_instance_count,
            );
        }
        drop(options);
        lock(&self.priced_types).clear();
        Ok(count)
    }

    /// Counts one launch into reservation `id` until the next read.
    pub(super) fn count_reserved_launch(&self, id: &str) {
        let mut options = lock(&self.options);
        if let Some(left) = options.reservation_capacity.get_mut(id) {
            *left = left.saturating_sub(1);
        }
        drop(options);
        lock(&self.priced_types).clear();
    }
}
