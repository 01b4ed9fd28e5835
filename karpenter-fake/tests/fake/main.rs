//! The fake crate's integration tests, one binary (linking every dependency
//! once rather than per file): the conformance suites, the in-memory
//! cluster's Deployments, and the driver against the fake cloud and the
//! in-memory cluster, one module per behaviour. `support` holds the world
//! the driver tests step and check.

mod support;

mod cluster_conformance;
mod cluster_deployments;
mod conformance;
mod driver_adopted_cloud;
mod driver_capacity_buffers;
mod driver_commands;
mod driver_daemon_sets;
mod driver_disruption_reasons;
mod driver_drain;
mod driver_nominations;
mod driver_pool_changes;
mod driver_reports;
mod driver_validation;
mod driver_volumes;
mod end_to_end;
