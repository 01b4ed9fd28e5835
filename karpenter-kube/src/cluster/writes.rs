//! Writes that survive a `409 Conflict`: each starts from the copy the
//! caller has (usually the watch store's), and when the API server says that
//! copy is stale it reads the object afresh and makes the same change again,
//! a bounded number of times.

use karpenter_core::cluster::ClusterError;
use kube::Api;
use kube::api::PostParams;
use serde_json::Value;

use super::errors::{cluster_error, is_conflict, retryable};
use super::merge::apply;
use super::ordered::{Ordered, Watched};
use super::overlay::Overlay;

/// How many fresh reads a write makes after conflicts before it gives up
/// (the driver tries again at its next reconcile).
pub(crate) const CONFLICT_RETRIES: usize = 5;

/// The endpoint a replace goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// The object (metadata and spec; a kind with a status subresource keeps
    /// its status).
    Main,
    /// The `/status` subresource.
    Status,
}

/// One object to write: where, and as what.
pub(crate) struct Target<'a, K: Watched> {
    pub(crate) api: &'a Api<K>,
    pub(crate) params: &'a PostParams,
    pub(crate) kind: &'static str,
    pub(crate) name: &'a str,
}

impl<K: Watched + serde::Serialize> Target<'_, K> {
    /// The object as the API server has it now.
    pub(crate) async fn fresh(&self) -> Result<K, ClusterError> {
        self.api
            .get(self.name)
            .await
            .map_err(|e| cluster_error(self.kind, self.name, e))
    }

    /// The version `copy` was read from, so that diffing `copy` against it
    /// gives the caller's change alone, not the undoing of what others
    /// wrote since the caller read. Found by `copy`'s `resourceVersion`
    /// among this process's writes and the versions the store keeps, else
    /// read afresh. A copy older than every version known is refused with a
    /// retryable error (read again, then change); a copy without a
    /// `resourceVersion` (made, not read) is taken to change the newest
    /// version known.
    pub(crate) async fn base_of(
        &self,
        copy: &K,
        written: &Overlay<K>,
        store: &Ordered<K>,
    ) -> Result<K, ClusterError> {
        let namespace = copy.meta().namespace.as_deref();
        let newest = || written.get(store, namespace, self.name);
        let Some(version) = copy.meta().resource_version.as_deref() else {
            return match newest() {
                Some(base) => Ok(std::sync::Arc::unwrap_or_clone(base)),
                None => self.fresh().await,
            };
        };
        if let Some(base) = written.at_version(store, namespace, self.name, version) {
            return Ok(std::sync::Arc::unwrap_or_clone(base));
        }
        let fresh = self.fresh().await?;
        let now = fresh.meta().resource_version.as_deref();
        if now == Some(version) {
            return Ok(fresh);
        }
        Err(retryable(format!(
            "{} {}: the copy to write was read at resourceVersion {version}, no longer known \
             (now {}); read it again and make the change on that",
            self.kind,
            self.name,
            now.unwrap_or("unset")
        )))
    }

    /// Applies `change` to `current` (read afresh when `None`) and replaces
    /// `part` with the result; after a conflict, reads afresh and applies it
    /// again. `change` says whether it changed anything: when it did not,
    /// nothing is written and `None` returned; else the object as written.
    pub(crate) async fn modify(
        &self,
        current: Option<K>,
        part: Part,
        mut change: impl FnMut(&mut K) -> bool,
    ) -> Result<Option<K>, ClusterError> {
        let mut current = match current {
            Some(current) => current,
            None => self.fresh().await?,
        };
        for _ in 0..CONFLICT_RETRIES {
            let mut desired = current;
            if !change(&mut desired) {
                return Ok(None);
            }
            let written = match part {
                Part::Main => self.api.replace(self.name, self.params, &desired).await,
                Part::Status => {
                    self.api
                        .replace_status(self.name, self.params, &desired)
                        .await
                }
            };
            match written {
                Ok(written) => return Ok(Some(written)),
                Err(error) if is_conflict(&error) => {
                    tracing::debug!(
                        kind = self.kind,
                        name = self.name,
                        "conflict; reading afresh"
                    );
                    current = self.fresh().await?;
                }
                Err(error) => return Err(cluster_error(self.kind, self.name, error)),
            }
        }
        Err(retryable(format!(
            "{} {}: still conflicting after {CONFLICT_RETRIES} fresh reads",
            self.kind, self.name
        )))
    }

    /// Applies the merge patch `patch` to `current` and replaces `part` with
    /// the result, as [`modify`](Self::modify) does.
    pub(crate) async fn patch(
        &self,
        current: Option<K>,
        part: Part,
        patch: &Value,
    ) -> Result<Option<K>, ClusterError> {
        let kind = self.kind;
        let name = self.name;
        let mut failed = None;
        let written = self
            .modify(current, part, |object| {
                match patched(object, patch) {
                    Ok(next) => *object = next,
                    Err(error) => {
                        failed = Some(error);
                        return false;
                    }
                }
                true
            })
            .await?;
        match failed {
            Some(error) => Err(ClusterError::Api {
                message: format!("{kind} {name}: the change does not make a valid object: {error}"),
                retryable: false,
                source: Some(Box::new(error)),
            }),
            None => Ok(written),
        }
    }
}

/// `object` with the merge patch `patch` applied.
fn patched<K: Watched + serde::Serialize>(
    object: &K,
    patch: &Value,
) -> Result<K, serde_json::Error> {
    let mut value = serde_json::to_value(object)?;
    apply(&mut value, patch);
    serde_json::from_value(value)
}
