//! The election loop against an in-memory Lease store, on a paused clock.

use std::future::pending;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::core::Status;
use tokio::time::Instant;

use super::*;

const LEASE: &str = "karpenter-leader-election";
const ME: &str = "karpenter-a_1";
const OTHER: &str = "karpenter-b_2";

/// How the store answers every call.
#[derive(Clone, Copy, Default, PartialEq)]
enum Mode {
    #[default]
    Serve,
    Fail(u16),
    Hang,
}

#[derive(Default)]
struct State {
    lease: Option<Lease>,
    version: u64,
    mode: Mode,
}

/// An API server's Lease semantics: AlreadyExists on a second create,
/// Conflict on a replace from a stale resourceVersion.
#[derive(Clone, Default)]
struct FakeStore(Arc<Mutex<State>>);

fn api_error(code: u16, reason: &str) -> kube::Error {
    kube::Error::Api(Status::failure(reason, reason).with_code(code).boxed())
}

impl FakeStore {
    fn set_mode(&self, mode: Mode) {
        self.0.lock().unwrap().mode = mode;
    }

    fn lease(&self) -> Option<Lease> {
        self.0.lock().unwrap().lease.clone()
    }

    fn spec(&self) -> LeaseSpec {
        self.lease()
            .and_then(|lease| lease.spec)
            .unwrap_or_default()
    }

    /// Stores `spec` as if another client had written it.
    fn put(&self, spec: LeaseSpec) {
        let mut state = self.0.lock().unwrap();
        state.version += 1;
        state.lease = Some(Lease {
            metadata: ObjectMeta {
                name: Some(LEASE.into()),
                resource_version: Some(state.version.to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        });
    }

    async fn answer(&self) -> Result<(), kube::Error> {
        let mode = self.0.lock().unwrap().mode;
        match mode {
            Mode::Serve => Ok(()),
            Mode::Fail(code) => Err(api_error(code, "Failed")),
            Mode::Hang => pending().await,
        }
    }

    fn store(&self, lease: &Lease) -> Lease {
        let mut state = self.0.lock().unwrap();
        state.version += 1;
        let mut lease = lease.clone();
        lease.metadata.resource_version = Some(state.version.to_string());
        state.lease = Some(lease.clone());
        lease
    }
}

impl LeaseStore for FakeStore {
    async fn get(&self, name: &str) -> Result<Option<Lease>, kube::Error> {
        self.answer().await?;
        Ok(self
            .lease()
            .filter(|lease| lease.metadata.name.as_deref() == Some(name)))
    }

    async fn create(&self, lease: &Lease) -> Result<Lease, kube::Error> {
        self.answer().await?;
        if self.lease().is_some() {
            return Err(api_error(409, "AlreadyExists"));
        }
        Ok(self.store(lease))
    }

    async fn replace(&self, _: &str, lease: &Lease) -> Result<Lease, kube::Error> {
        self.answer().await?;
        match self.lease() {
            None => Err(api_error(404, "NotFound")),
            Some(stored) if stored.metadata.resource_version != lease.metadata.resource_version => {
                Err(api_error(409, "Conflict"))
            }
            Some(_) => Ok(self.store(lease)),
        }
    }
}

/// The wall clock at `second` past an arbitrary origin.
fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap()
}

/// A wall clock that follows tokio's paused one, from `at(0)` now.
fn paused_clock() -> impl Fn() -> Timestamp + Send + Sync + 'static {
    let start = Instant::now();
    move || at(0).saturating_add(Instant::now() - start).unwrap()
}

fn elector(store: &FakeStore, identity: &str) -> LeaderElector<FakeStore> {
    LeaderElector::new(
        store.clone(),
        LEASE,
        identity,
        LeaderElectionConfig::default(),
    )
    .unwrap()
    .with_clock(paused_clock())
}

fn held_by(holder: &str, renewed: i64) -> LeaseSpec {
    LeaseSpec {
        holder_identity: Some(holder.into()),
        acquire_time: Some(MicroTime(at(renewed))),
        renew_time: Some(MicroTime(at(renewed))),
        lease_duration_seconds: Some(15),
        lease_transitions: Some(2),
        ..LeaseSpec::default()
    }
}

async fn acquired(elector: &LeaderElector<FakeStore>) -> Leadership {
    elector.acquire(pending()).await.unwrap().unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_missing_lease_is_created_and_held() {
    let store = FakeStore::default();
    let start = Instant::now();
    let leadership = acquired(&elector(&store, ME)).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    let spec = store.spec();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.lease_transitions, Some(0));
    assert_eq!(spec.lease_duration_seconds, Some(15));
    assert!(!leadership.is_lost());
}

#[tokio::test(start_paused = true)]
async fn a_live_holder_is_waited_for_then_taken_over_once_expired() {
    let store = FakeStore::default();
    store.put(held_by(OTHER, 0));
    let start = Instant::now();
    let _leadership = acquired(&elector(&store, ME)).await;
    // Tried every 2 s; the lease ran out at 15 s.
    assert_eq!(start.elapsed(), Duration::from_secs(16));
    let spec = store.spec();
    assert_eq!(spec.holder_identity.as_deref(), Some(ME));
    assert_eq!(spec.lease_transitions, Some(3));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(16))));
}

#[tokio::test(start_paused = true)]
async fn a_released_lease_is_taken_over_at_once() {
    let store = FakeStore::default();
    store.put(LeaseSpec {
        holder_identity: None,
        ..held_by(OTHER, 0)
    });
    let start = Instant::now();
    let _leadership = acquired(&elector(&store, ME)).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(store.spec().holder_identity.as_deref(), Some(ME));
}

#[tokio::test(start_paused = true)]
async fn the_leader_renews_every_retry_period() {
    let store = FakeStore::default();
    let leadership = acquired(&elector(&store, ME)).await;
    tokio::time::sleep(Duration::from_secs(61)).await;
    let spec = store.spec();
    assert_eq!(spec.renew_time, Some(MicroTime(at(60))));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(0))));
    assert!(!leadership.is_lost());
    // A rival keeps waiting.
    let rival = elector(&store, OTHER);
    let attempt = tokio::time::timeout(Duration::from_secs(60), rival.acquire(pending())).await;
    assert!(attempt.is_err(), "the rival took a renewed lease");
}

#[tokio::test(start_paused = true)]
async fn failing_renewals_lose_leadership_at_the_renew_deadline() {
    let store = FakeStore::default();
    let start = Instant::now();
    let leadership = acquired(&elector(&store, ME)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    store.set_mode(Mode::Fail(500));
    assert!(!leadership.is_lost());
    leadership.lost().await;
    // Last renewed at 2 s; the attempts at 4, 6, 8 and 10 s failed within
    // the deadline, the one at 12 s past it.
    assert_eq!(start.elapsed(), Duration::from_secs(12));
    assert_eq!(store.spec().renew_time, Some(MicroTime(at(2))));
    assert!(leadership.is_lost());
    assert!(*leadership.subscribe().borrow());
}

#[tokio::test(start_paused = true)]
async fn a_hanging_api_server_loses_leadership_at_the_renew_deadline() {
    let store = FakeStore::default();
    let start = Instant::now();
    let leadership = acquired(&elector(&store, ME)).await;
    store.set_mode(Mode::Hang);
    leadership.lost().await;
    assert_eq!(start.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn another_holder_in_the_lease_loses_leadership_at_the_next_renewal() {
    let store = FakeStore::default();
    let start = Instant::now();
    let leadership = acquired(&elector(&store, ME)).await;
    store.put(held_by(OTHER, 0));
    leadership.lost().await;
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    // The other holder's lease is left alone, released or not.
    leadership.release().await.unwrap();
    assert_eq!(store.spec().holder_identity.as_deref(), Some(OTHER));
}

#[tokio::test(start_paused = true)]
async fn a_cleared_holder_is_not_taken_back_by_the_leader() {
    let store = FakeStore::default();
    let leadership = acquired(&elector(&store, ME)).await;
    store.put(LeaseSpec {
        holder_identity: None,
        ..held_by(ME, 0)
    });
    leadership.lost().await;
    assert_eq!(store.spec().holder_identity, None);
}

#[tokio::test(start_paused = true)]
async fn release_clears_the_holder_for_a_rival_to_take_over_at_once() {
    let store = FakeStore::default();
    let leadership = acquired(&elector(&store, ME)).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let lost = leadership.subscribe();
    leadership.release().await.unwrap();
    assert!(*lost.borrow());
    let spec = store.spec();
    assert_eq!(spec.holder_identity, None);
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert_eq!(spec.renew_time, Some(MicroTime(at(5))));
    let start = Instant::now();
    let _rival = acquired(&elector(&store, OTHER)).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    let spec = store.spec();
    assert_eq!(spec.holder_identity.as_deref(), Some(OTHER));
    assert_eq!(spec.lease_transitions, Some(1));
}

#[tokio::test(start_paused = true)]
async fn a_failed_release_is_an_error_naming_the_lease() {
    let store = FakeStore::default();
    let leadership = acquired(&elector(&store, ME)).await;
    store.set_mode(Mode::Fail(500));
    let error = leadership.release().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("could not release lease {LEASE}")
    );
    assert!(std::error::Error::source(&error).is_some());
}

#[tokio::test(start_paused = true)]
async fn a_hanging_release_times_out() {
    let store = FakeStore::default();
    let leadership = acquired(&elector(&store, ME)).await;
    store.set_mode(Mode::Hang);
    let start = Instant::now();
    let error = leadership.release().await.unwrap_err();
    assert!(
        matches!(error, LeaderError::ReleaseTimeout { .. }),
        "{error}"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn dropping_leadership_stops_renewing() {
    let store = FakeStore::default();
    drop(acquired(&elector(&store, ME)).await);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(store.spec().renew_time, Some(MicroTime(at(0))));
    assert_eq!(store.spec().holder_identity.as_deref(), Some(ME));
}

#[tokio::test(start_paused = true)]
async fn shutdown_ends_the_wait_for_leadership() {
    let store = FakeStore::default();
    store.put(held_by(OTHER, 0));
    let start = Instant::now();
    let outcome = elector(&store, ME)
        .acquire(tokio::time::sleep(Duration::from_secs(5)))
        .await
        .unwrap();
    assert!(outcome.is_none());
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(store.spec().holder_identity.as_deref(), Some(OTHER));
}

#[tokio::test(start_paused = true)]
async fn errors_are_retried_but_refused_access_is_not() {
    let store = FakeStore::default();
    store.set_mode(Mode::Fail(503));
    let candidate = elector(&store, ME);
    let waiting = tokio::time::timeout(Duration::from_secs(7), candidate.acquire(pending())).await;
    assert!(waiting.is_err(), "gave up on a 503");
    store.set_mode(Mode::Serve);
    let _leadership = acquired(&candidate).await;

    let store = FakeStore::default();
    store.set_mode(Mode::Fail(403));
    let error = elector(&store, ME).acquire(pending()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("not allowed to get lease {LEASE}")
    );
    let LeaderError::Forbidden { verb, .. } = error else {
        panic!("{error}");
    };
    assert_eq!(verb, "get");
}

#[tokio::test(start_paused = true)]
async fn of_two_candidates_one_leads_and_the_other_waits() {
    let store = FakeStore::default();
    let first = elector(&store, ME);
    let second = elector(&store, OTHER);
    let (a, b) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(30), first.acquire(pending())),
        tokio::time::timeout(Duration::from_secs(30), second.acquire(pending())),
    );
    assert!(a.is_ok() != b.is_ok(), "exactly one candidate leads");
}

#[tokio::test]
async fn a_conflict_is_a_lost_race_and_retried() {
    let candidate = elector(&FakeStore::default(), ME);
    assert!(
        candidate
            .check_retryable("create", api_error(409, "AlreadyExists"))
            .is_ok()
    );
    assert!(
        candidate
            .check_retryable("update", api_error(409, "Conflict"))
            .is_ok()
    );
    assert!(
        candidate
            .check_retryable("update", api_error(401, "Unauthorized"))
            .is_err()
    );
}

#[test]
fn settings_are_checked() {
    assert_eq!(LeaderElectionConfig::default().validate().ok(), Some(()));
    let bad = [(15, 15, 2), (15, 10, 10), (0, 0, 0), (15, 10, 0)];
    for (lease, renew, retry) in bad {
        let config = LeaderElectionConfig {
            lease_duration: Duration::from_secs(lease),
            renew_deadline: Duration::from_secs(renew),
            retry_period: Duration::from_secs(retry),
        };
        assert!(config.validate().is_err(), "{config:?}");
    }
    let store = FakeStore::default();
    let config = LeaderElectionConfig::default();
    assert!(matches!(
        LeaderElector::new(store.clone(), LEASE, "", config),
        Err(LeaderError::Empty("identity"))
    ));
    assert!(matches!(
        LeaderElector::new(store, "", ME, config),
        Err(LeaderError::Empty("lease name"))
    ));
}

#[test]
fn default_identities_differ_and_name_the_pod() {
    let a = default_identity();
    let b = default_identity();
    assert_ne!(a, b);
    let (base, suffix) = a.rsplit_once('_').unwrap();
    assert!(!base.is_empty());
    assert_eq!(suffix.len(), 16);
    assert!(suffix.chars().all(|c| c.is_ascii_hexdigit()));
}
