//! The three API calls leader election makes.

use std::future::Future;

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use kube::api::PostParams;

/// Where Leases are read and written: [`Api<Lease>`] on the namespace
/// holding the Lease (or a stand-in in tests).
pub trait LeaseStore: Clone + Send + Sync + 'static {
    /// Reads the Lease `name`; `None` when there is none.
    fn get(&self, name: &str) -> impl Future<Output = Result<Option<Lease>, kube::Error>> + Send;

    /// Creates `lease`; fails with 409 AlreadyExists when one of that name
    /// exists.
    fn create(&self, lease: &Lease) -> impl Future<Output = Result<Lease, kube::Error>> + Send;

    /// Replaces the Lease `name` with `lease`; fails with 409 Conflict unless
    /// `lease`'s resourceVersion is still the stored one.
    fn replace(
        &self,
        name: &str,
        lease: &Lease,
    ) -> impl Future<Output = Result<Lease, kube::Error>> + Send;
}

impl LeaseStore for Api<Lease> {
    async fn get(&self, name: &str) -> Result<Option<Lease>, kube::Error> {
        self.get_opt(name).await
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, kube::Error> {
        Api::create(self, &PostParams::default(), lease).await
    }

    async fn replace(&self, name: &str, lease: &Lease) -> Result<Lease, kube::Error> {
        Api::replace(self, name, &PostParams::default(), lease).await
    }
}

/// The API server's status code in `error`, when it answered with one.
pub(super) fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}
