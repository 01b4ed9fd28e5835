//! An in-memory cloud provider and cluster for tests and benchmarks of the
//! karpenter engine, driven from outside the code under test (as tower's test
//! double is its own crate).
//!
//! Newcomers start with [`FakeCloudProvider`] (a
//! [`CloudProvider`](karpenter_core::cloudprovider::CloudProvider) over a
//! catalog from [`generate::catalog`]) and [`InMemoryCluster`] (a
//! [`Cluster`](karpenter_core::cluster::Cluster) that also plays the kubelet,
//! the kube-scheduler and the ReplicaSet controller); hand both to
//! [`karpenter_core::driver::Driver`] and step the cluster's clock:
//!
//! ```
//! use std::sync::Arc;
//! use karpenter_core::driver::Driver;
//! use karpenter_fake::generate::catalog::sized_instance_types;
//! use karpenter_fake::{FakeCloudProvider, InMemoryCluster};
//!
//! let provider = Arc::new(FakeCloudProvider::new(sized_instance_types(10)));
//! let cluster = Arc::new(InMemoryCluster::default());
//! let _driver = Driver::new(provider, cluster);
//! ```
//!
//! The rest, all at the crate root:
//! - decorators in object_store's style: [`Recording`] remembers every
//!   [`Call`], [`Flaky`] fails calls at [`FlakyRates`] (and loses launch
//!   answers), [`Latency`] delays them;
//! - the `karpenter.fake/v1alpha1` `InstanceType` document that scenario
//!   files use ([`InstanceTypeDocument`], [`OfferingDocument`]);
//! - [`well_known_labels`], the labels a pod may select on a fake cloud, and
//!   [`repair_policies`], the fake provider's repair policies.
//!
//! Two families keep their own module:
//! - [`conformance`]: the suites every `CloudProvider` and every `Cluster`
//!   implementation runs;
//! - [`generate`]: catalogs, workloads, running clusters and their manifests,
//!   for tests, benchmarks and examples.

// One module per part; callers name the parts from the root, so that moving
// code between these files changes no caller.
mod cluster;
mod deployments;
mod document;
mod faults;
mod provider;
mod recording;
mod repair;

pub mod conformance;
pub mod generate;

pub use cluster::{InMemoryCluster, PodCensus};
pub use document::{InstanceTypeDocument, OfferingDocument, RESERVATION_ID_LABEL};
pub use faults::{Flaky, FlakyRates, Latency};
pub use provider::{FakeCloudProvider, well_known_labels};
pub use recording::{Call, Recording};
pub use repair::repair_policies;

#[cfg(test)]
mod test_support {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    /// Runs a future that never waits (the fake provider's never do).
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut context = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
                return value;
            }
        }
    }
}
