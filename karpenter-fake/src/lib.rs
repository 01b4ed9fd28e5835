//! An in-memory cloud provider and cluster for tests and benchmarks of the karpenter
//! engine.
//!
//! It holds the `karpenter.fake/v1alpha1` `InstanceType` document that scenario
//! files use to describe the fake provider's catalog ([`InstanceTypeDocument`]),
//! generated catalogs ([`catalog`]), workloads ([`workload`]) and running clusters
//! ([`cluster`]), the fake provider's repair policies ([`repair`]), and an
//! in-memory [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider)
//! ([`provider::FakeCloudProvider`]) with a decorator recording calls
//! ([`recording::Recording`]). Fault injection and the conformance suite
//! follow.

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
