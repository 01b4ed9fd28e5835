//! Holding the Lease: renewing it in the background, reporting its loss,
//! and releasing it.

use std::future::Future;

use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::LeaderError;
use super::decision::{self, Decision};
use super::elector::{Attempt, LeaderElector};
use super::store::LeaseStore;

/// This replica's leadership: the Lease is renewed every retry period by a
/// background task until [`release`](Self::release), or until it is lost —
/// renewal failing past the renew deadline, or another candidate holding
/// the Lease. Once lost, the caller must stop acting as leader (and exit or
/// acquire again). Dropping it stops renewing without releasing: the Lease
/// then expires.
#[derive(Debug)]
pub struct Leadership {
    lease_name: String,
    lost: watch::Receiver<bool>,
    release: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), LeaderError>>>,
}

impl<S: LeaseStore> LeaderElector<S> {
    /// Waits until this candidate holds the Lease, trying every retry
    /// period, and returns the [`Leadership`] renewing it. `None` when
    /// `shutdown` completes first. Errors other than a refused access
    /// (401, 403) are logged and retried, as are lost races (409).
    pub async fn acquire(
        &self,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Option<Leadership>, LeaderError> {
        tokio::pin!(shutdown);
        let mut waiting_on: Option<String> = None;
        loop {
            let attempt = tokio::select! {
                biased;
                () = &mut shutdown => return Ok(None),
                attempt = tokio::time::timeout(self.config.renew_deadline, self.attempt(false)) => attempt,
            };
            match attempt {
                Ok(Ok(Attempt::Held)) => {
                    tracing::info!(
                        lease = %self.lease_name,
                        identity = %self.identity,
                        "acquired leadership"
                    );
                    return Ok(Some(Leadership::start(self)));
                }
                Ok(Ok(Attempt::Waiting { holder, until })) => {
                    if waiting_on.as_ref() != Some(&holder) {
                        tracing::info!(
                            lease = %self.lease_name,
                            %holder,
                            %until,
                            "waiting for the leader's lease to expire"
                        );
                        waiting_on = Some(holder);
                    }
                }
                Ok(Err((verb, error))) => self.check_retryable(verb, error)?,
                Err(_) => tracing::warn!(
                    lease = %self.lease_name,
                    "acquiring leadership timed out; retrying"
                ),
            }
            tokio::select! {
                biased;
                () = &mut shutdown => return Ok(None),
                () = tokio::time::sleep(self.config.retry_period) => {}
            }
        }
    }
}

impl Leadership {
    /// Starts renewing the Lease `elector` just acquired.
    pub(super) fn start<S: LeaseStore>(elector: &LeaderElector<S>) -> Self {
        let (lost_tx, lost) = watch::channel(false);
        let (release, release_rx) = oneshot::channel();
        let task = tokio::spawn(renew(elector.clone(), lost_tx, release_rx));
        Self {
            lease_name: elector.lease_name.clone(),
            lost,
            release: Some(release),
            task: Some(task),
        }
    }

    /// Whether leadership has ended (lost, or released).
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// A receiver whose value turns `true` when leadership ends.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.lost.clone()
    }

    /// Completes when leadership ends (at once if it has).
    pub fn lost(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut lost = self.lost.clone();
        async move {
            // An error means the renewal task is gone: leadership too.
            let _ = lost.wait_for(|lost| *lost).await;
        }
    }

    /// Stops renewing and gives the Lease up (no holder, a one-second
    /// duration), so that another candidate takes over at once rather than
    /// after the lease duration. Nothing to do when leadership was lost.
    pub async fn release(mut self) -> Result<(), LeaderError> {
        if let Some(release) = self.release.take() {
            // The task may have ended (leadership lost): then nothing to release.
            let _ = release.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(LeaderError::Task)?,
            None => Ok(()),
        }
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            tracing::debug!(lease = %self.lease_name, "leadership dropped; no longer renewing");
            task.abort();
        }
    }
}

/// The renewal loop: renews the Lease every retry period until released or
/// lost, telling `lost` when leadership ends.
async fn renew<S: LeaseStore>(
    elector: LeaderElector<S>,
    lost: watch::Sender<bool>,
    mut release: oneshot::Receiver<()>,
) -> Result<(), LeaderError> {
    let config = elector.config;
    let lease = elector.lease_name.as_str();
    let mut renewed_at = Instant::now();
    loop {
        tokio::select! {
            biased;
            _ = &mut release => return give_up(&elector, &lost).await,
            () = tokio::time::sleep(config.retry_period) => {}
        }
        let deadline = renewed_at + config.renew_deadline;
        let outcome = tokio::select! {
            biased;
            _ = &mut release => return give_up(&elector, &lost).await,
            outcome = tokio::time::timeout_at(deadline, elector.attempt(true)) => outcome,
        };
        match outcome {
            Ok(Ok(Attempt::Held)) => {
                renewed_at = Instant::now();
                tracing::trace!(lease = %elector.lease_name, "renewed leadership");
            }
            Ok(Ok(Attempt::Waiting { holder, .. })) => {
                tracing::warn!(lease, %holder, "leadership lost: the lease is no longer ours");
                lost.send_replace(true);
                return Ok(());
            }
            Ok(Err((verb, error))) if Instant::now() < deadline => {
                tracing::warn!(lease, verb, %error, "renewing leadership failed; retrying");
            }
            Ok(Err(_)) | Err(_) => {
                tracing::error!(
                    lease,
                    renew_deadline = ?config.renew_deadline,
                    "leadership lost: no renewal within the renew deadline"
                );
                lost.send_replace(true);
                return Ok(());
            }
        }
    }
}

/// Ends leadership, then clears the Lease's holder if it is still this
/// candidate (read afresh: it may have moved since the last renewal).
/// Bounded by the renew deadline.
async fn give_up<S: LeaseStore>(
    elector: &LeaderElector<S>,
    lost: &watch::Sender<bool>,
) -> Result<(), LeaderError> {
    lost.send_replace(true);
    let lease = elector.lease_name.clone();
    let release = async {
        let read = elector.store.get(&lease).await?;
        let now = (elector.clock)();
        match read {
            Some(read)
                if decision::decide(Some(&read), &elector.identity, now) == Decision::Renew =>
            {
                let released = decision::released(&read, now);
                elector.store.replace(&lease, &released).await.map(Some)
            }
            _ => Ok(None),
        }
    };
    match tokio::time::timeout(elector.config.renew_deadline, release).await {
        Ok(Ok(Some(_))) => {
            tracing::info!(%lease, identity = %elector.identity, "released leadership");
            Ok(())
        }
        Ok(Ok(None)) => {
            tracing::info!(%lease, "leadership ended; the lease was no longer ours to release");
            Ok(())
        }
        Ok(Err(source)) => Err(LeaderError::Release { lease, source }),
        Err(_) => Err(LeaderError::ReleaseTimeout { lease }),
    }
}
