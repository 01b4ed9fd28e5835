//! An in-memory cloud provider and cluster for tests and benchmarks of the karpenter
//! engine.
//!
//! - [`provider::FakeCloudProvider`]: an in-memory
//!   [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider) over a
//!   configurable catalog ([`catalog`]: `n` sized types, upstream's assorted cross
//!   product), whose offerings can be sold out and restocked;
//! - decorators in object_store's style: [`recording::Recording`] remembers every
//!   call, [`faults::Flaky`] fails calls at seeded rates (and loses launch answers),
//!   [`faults::Latency`] delays them;
//! - [`conformance`]: the suite every `CloudProvider` implementation runs;
//! - [`kube::InMemoryCluster`]: an in-memory
//!   [`Cluster`](karpenter_core::cluster::Cluster) that also plays the kubelet, the
//!   scheduler and the ReplicaSet controller;
//! - the `karpenter.fake/v1alpha1` `InstanceType` document scenario files use
//!   ([`InstanceTypeDocument`]), generated workloads ([`workload`]) and running
//!   clusters ([`cluster`]), and the fake provider's repair policies ([`repair`]).

pub mod catalog;
pub mod cluster;
pub mod conformance;
pub mod document;
pub mod faults;
pub mod kube;
pub mod manifest;
pub mod provider;
pub mod recording;
pub mod repair;
pub mod workload;

pub use document::{InstanceTypeDocument, OfferingDocument};

#[cfg(test)]
mod test_support {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Runs a future that never waits (the fake provider's never do).
    pub fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut context = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
                return value;
            }
        }
    }
}
