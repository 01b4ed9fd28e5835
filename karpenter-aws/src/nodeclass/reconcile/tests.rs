//! Status reconciles over `InMemoryEc2` and `InMemoryParameters`: SSM read
//! and cached, its failures, the requeue periods, and change detection.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use karpenter_core::api::{ConditionStatus, Conditions};
use serde_json::{Value, json};

use super::{ReconcileError, Reconciled, SsmCache, Validation, reconcile_status};
use crate::ec2::{
    self, CapacityReservation, Ec2Error, Image, InMemoryEc2, InMemoryParameters, Operation,
    ParameterApi, SecurityGroup, Tag,
};
use crate::iam::{InMemoryIam, InstanceProfiles};
use crate::nodeclass::EC2NodeClass;
use crate::nodeclass::condition_types as types;
use crate::nodeclass::resolve::ResolveContext;

/// The parameter `al2023@latest` reads for standard x86-64 nodes on 1.31.
const AL2023_X86: &str =
    "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id";

fn now() -> Timestamp {
    "2024-06-01T12:00:00Z"
        .parse()
        .unwrap_or_else(|e| panic!("test time: {e}"))
}

fn context(at: Timestamp) -> ResolveContext {
    ResolveContext {
        cluster_name: "test-cluster".into(),
        region: "us-west-2".into(),
        kubernetes_version: "1.31".into(),
        now: at,
        ..ResolveContext::default()
    }
}

/// A class whose subnets and groups are tagged `discovery: test`, with
/// `spec` merged over that.
fn class(spec: Value) -> EC2NodeClass {
    let mut base = json!({
        "role": "KarpenterNodeRole-test",
        "subnetSelectorTerms": [{"tags": {"discovery": "test"}}],
        "securityGroupSelectorTerms": [{"tags": {"discovery": "test"}}],
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
    });
    if let (Some(base), Some(spec)) = (base.as_object_mut(), spec.as_object()) {
        base.extend(spec.clone());
    }
    let class = json!({"metadata": {
        "name": "default", "uid": "uid-1", "generation": 1,
        "creationTimestamp": "2024-05-01T00:00:00Z",
    }, "spec": base});
    serde_json::from_value(class).unwrap_or_else(|e| panic!("test class: {e}"))
}

/// An IAM where the classes' role exists.
fn iam() -> InMemoryIam {
    let iam = InMemoryIam::new();
    iam.add_role("KarpenterNodeRole-test");
    iam
}

/// An EC2 with a tagged subnet and group, and image `ami-std`.
fn ec2() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new("us-west-2");
    ec2.add_subnet(ec2::Subnet {
        subnet_id: "subnet-1".into(),
        availability_zone: "us-west-2a".into(),
        available_ip_address_count: 100,
        tags: vec![Tag::new("discovery", "test")],
        ..ec2::Subnet::default()
    });
    ec2.add_security_group(SecurityGroup {
        group_id: "sg-1".into(),
        group_name: "nodes".into(),
        tags: vec![Tag::new("discovery", "test")],
        ..SecurityGroup::default()
    });
    ec2.add_image(Image {
        image_id: "ami-std".into(),
        name: "al2023-standard".into(),
        architecture: "x86_64".into(),
        state: "available".into(),
        ..Image::default()
    });
    ec2
}

/// SSM with the standard x86-64 parameter naming `ami-std`.
fn ssm() -> InMemoryParameters {
    let ssm = InMemoryParameters::new();
    ssm.set(AL2023_X86, "ami-std");
    ssm
}

/// A Parameter Store that counts the calls per name before answering from
/// its inner one.
#[derive(Clone, Default)]
struct Counting {
    inner: InMemoryParameters,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl Counting {
    fn calls(&self, name: &str) -> usize {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.get(name).copied().unwrap_or_default()
    }
}

#[async_trait]
impl ParameterApi for Counting {
    async fn get_parameter(&self, name: &str) -> Result<String, Ec2Error> {
        *self
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_default() += 1;
        self.inner.get_parameter(name).await
    }
}

/// A Parameter Store that fails every call with `code`, throttled or not.
struct Failing {
    code: &'static str,
}

#[async_trait]
impl ParameterApi for Failing {
    async fn get_parameter(&self, _name: &str) -> Result<String, Ec2Error> {
        let (operation, code) = (Operation::GetParameter, self.code.to_owned());
        let message = "refused".to_owned();
        Err(if code == "Throttling" {
            Ec2Error::Throttling {
                operation,
                code,
                message,
            }
        } else {
            Ec2Error::service(operation, &code, message)
        })
    }
}

async fn reconcile(
    ssm: &impl ParameterApi,
    cache: &mut SsmCache,
    class: &EC2NodeClass,
    at: Timestamp,
) -> Result<Reconciled, ReconcileError> {
    reconcile_status(
        &ec2(),
        ssm,
        &iam(),
        cache,
        &mut InstanceProfiles::new(),
        &mut Validation::new(false, true),
        class,
        &context(at),
    )
    .await
}

async fn reconciled(class: &EC2NodeClass) -> Reconciled {
    reconcile(&ssm(), &mut SsmCache::new(), class, now())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn condition(reconciled: &Reconciled, type_: &str) -> Option<(ConditionStatus, String)> {
    let condition = reconciled.status.conditions.find(type_)?;
    Some((
        condition.status,
        condition.reason.clone().unwrap_or_default(),
    ))
}

#[tokio::test]
async fn an_alias_resolves_through_ssm_to_an_image_ec2_has() {
    let done = reconciled(&class(json!({}))).await;
    let amis = done.status.amis.clone().unwrap_or_default();
    assert_eq!(amis.len(), 1);
    assert_eq!(amis[0].id, "ami-std");
    // The standard parameter's image: for nodes without accelerators.
    let keys: Vec<&str> = amis[0]
        .requirements
        .iter()
        .map(|r| r.key.as_str())
        .collect();
    assert!(
        keys.contains(&"karpenter.k8s.aws/instance-gpu-count"),
        "{keys:?}"
    );
    let ready = condition(&done, types::AMIS_READY);
    assert_eq!(
        ready,
        Some((ConditionStatus::True, types::AMIS_READY.into()))
    );
    assert!(done.changed, "a class without a status changes");
}

#[tokio::test]
async fn a_missing_ssm_parameter_finds_no_image_without_failing() {
    let spec = json!({"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami"}]});
    let done = reconciled(&class(spec)).await;
    let ready = condition(&done, types::AMIS_READY);
    assert_eq!(ready, Some((ConditionStatus::False, "AMINotFound".into())));
    assert_eq!(done.status.amis, None);
    assert_eq!(done.requeue.amis, Some(SignedDuration::from_mins(1)));
}

#[tokio::test]
async fn an_ssm_failure_fails_the_reconcile_retryable_as_ssm_says() {
    let class = class(json!({}));
    let mut cache = SsmCache::new();
    let throttled = reconcile(&Failing { code: "Throttling" }, &mut cache, &class, now()).await;
    match throttled {
        Err(error @ ReconcileError::Parameter { .. }) => {
            assert!(error.is_retryable());
            let message = error.to_string();
            assert!(
                message.contains("spec.amiSelectorTerms[].alias"),
                "{message}"
            );
            assert!(message.contains(AL2023_X86), "{message}");
        }
        other => panic!("expected an SSM error, got {other:?}"),
    }
    let denied = reconcile(
        &Failing {
            code: "AccessDenied",
        },
        &mut cache,
        &class,
        now(),
    )
    .await;
    assert!(denied.is_err_and(|error| !error.is_retryable()));
    assert!(cache.is_empty(), "nothing is kept from a failed read");
}

#[tokio::test]
async fn an_alias_ssm_does_not_have_at_all_fails_retryably() {
    let result = reconcile(
        &InMemoryParameters::new(),
        &mut SsmCache::new(),
        &class(json!({})),
        now(),
    )
    .await;
    assert!(result.is_err_and(|error| error.is_retryable()));
}

#[tokio::test]
async fn alias_parameters_are_served_from_the_cache_for_24_hours() {
    let class = class(json!({}));
    let ssm = Counting {
        inner: ssm(),
        ..Counting::default()
    };
    let mut cache = SsmCache::new();
    let hours = |h: i64| now() + SignedDuration::from_hours(h);
    for at in [now(), hours(23)] {
        let done = reconcile(&ssm, &mut cache, &class, at).await;
        assert!(done.is_ok_and(|d| d.status.amis.is_some_and(|a| a[0].id == "ami-std")));
    }
    assert_eq!(ssm.calls(AL2023_X86), 1);
    // SSM lacks the other four: asked again each time, as not kept.
    let arm = AL2023_X86.replace("x86_64", "arm64");
    assert_eq!(ssm.calls(&arm), 2);
    let again = reconcile(&ssm, &mut cache, &class, hours(24)).await;
    assert!(again.is_ok());
    assert_eq!(ssm.calls(AL2023_X86), 2);
}

#[tokio::test]
async fn ssm_parameter_terms_are_kept_for_5_minutes() {
    let spec = json!({"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami"}]});
    let class = class(spec);
    let ssm = Counting::default();
    ssm.inner.set("/my/ami", "ami-std");
    let mut cache = SsmCache::new();
    let minutes = |m: i64| now() + SignedDuration::from_mins(m);
    for at in [now(), minutes(4), minutes(5)] {
        let done = reconcile(&ssm, &mut cache, &class, at).await;
        assert!(done.is_ok_and(|d| d.status.amis.is_some()));
    }
    assert_eq!(ssm.calls("/my/ami"), 2);
}

#[tokio::test]
async fn found_parts_requeue_on_upstreams_periods() {
    let done = reconciled(&class(json!({}))).await;
    let (one, five) = (SignedDuration::from_mins(1), SignedDuration::from_mins(5));
    assert_eq!(done.requeue.subnets, one);
    assert_eq!(done.requeue.security_groups, five);
    assert_eq!(done.requeue.amis, Some(five));
    assert_eq!(done.requeue.capacity_reservations, None);
    assert_eq!(done.requeue.after(), Some(one));
}

#[tokio::test]
async fn parts_not_found_requeue_within_a_minute() {
    let spec = json!({"securityGroupSelectorTerms": [{"tags": {"discovery": "none"}}]});
    let done = reconciled(&class(spec)).await;
    let ready = condition(&done, types::SECURITY_GROUPS_READY);
    assert_eq!(ready.map(|r| r.0), Some(ConditionStatus::False));
    assert_eq!(done.requeue.security_groups, SignedDuration::from_mins(1));
}

#[tokio::test]
async fn a_refused_alias_stops_the_periodic_reconcile() {
    let mut context = context(now());
    context.kubernetes_version = "1.33".into();
    let class = class(json!({"amiSelectorTerms": [{"alias": "al2@latest"}]}));
    let done = reconcile_status(
        &ec2(),
        &ssm(),
        &iam(),
        &mut SsmCache::new(),
        &mut InstanceProfiles::new(),
        &mut Validation::new(false, true),
        &class,
        &context,
    )
    .await;
    let done = done.unwrap_or_else(|e| panic!("{e}"));
    let ready = condition(&done, types::AMIS_READY);
    assert_eq!(
        ready,
        Some((ConditionStatus::False, "UnsupportedAlias".into()))
    );
    assert_eq!(done.requeue.amis, None);
    assert_eq!(done.requeue.after(), None);
}

/// The requeue with the gate on and one reservation ending `ends_in`
/// from now.
async fn reservation_requeue(
    ends_in: SignedDuration,
) -> (Option<SignedDuration>, Option<SignedDuration>) {
    let ec2 = ec2();
    ec2.add_capacity_reservation(CapacityReservation {
        capacity_reservation_id: "cr-1".into(),
        owner_id: "012345678901".into(),
        instance_type: "m5.large".into(),
        availability_zone: "us-west-2a".into(),
        state: "active".into(),
        instance_match_criteria: "targeted".into(),
        end_date: Some(now() + ends_in),
        ..CapacityReservation::default()
    });
    let class = class(json!({"capacityReservationSelectorTerms": [{"id": "cr-1"}]}));
    let mut context = context(now());
    context.reserved_capacity = true;
    let done = reconcile_status(
        &ec2,
        &ssm(),
        &iam(),
        &mut SsmCache::new(),
        &mut InstanceProfiles::new(),
        &mut Validation::new(false, true),
        &class,
        &context,
    )
    .await;
    let done = done.unwrap_or_else(|e| panic!("{e}"));
    assert!(done.status.capacity_reservations.is_some());
    (done.requeue.capacity_reservations, done.requeue.after())
}

#[tokio::test]
async fn a_reservation_ending_within_the_minute_brings_the_requeue_forward() {
    let soon = SignedDuration::from_secs(30);
    assert_eq!(reservation_requeue(soon).await, (Some(soon), Some(soon)));
    let later = SignedDuration::from_mins(10);
    let minute = Some(SignedDuration::from_mins(1));
    assert_eq!(reservation_requeue(later).await, (minute, minute));
}

#[tokio::test]
async fn an_unchanged_status_is_reported_unchanged() {
    let mut class = class(json!({}));
    let mut cache = SsmCache::new();
    let first = reconcile(&ssm(), &mut cache, &class, now()).await;
    let first = first.unwrap_or_else(|e| panic!("{e}"));
    assert!(first.changed);
    class.status = Some(first.status.clone());
    let later = now() + SignedDuration::from_mins(1);
    let second = reconcile(&ssm(), &mut cache, &class, later).await;
    let second = second.unwrap_or_else(|e| panic!("{e}"));
    assert!(!second.changed, "{:?}", second.status);
    assert_eq!(second.status, first.status);
}

#[test]
fn the_cache_serves_until_its_time_is_up_and_prunes_after() {
    let mut cache = SsmCache::new();
    let ttl = SignedDuration::from_mins(5);
    cache.insert("/a", "ami-a".into(), now(), ttl);
    cache.insert("/b", "ami-b".into(), now() + ttl, ttl);
    let at = now() + ttl;
    assert_eq!(
        cache.get("/a", at - SignedDuration::from_secs(1)),
        Some("ami-a")
    );
    assert_eq!(cache.get("/a", at), None);
    cache.prune(at);
    assert_eq!(cache.len(), 1);
    assert!(cache.remove("/b"));
    assert!(!cache.remove("/b"));
    assert!(cache.is_empty());
}

mod dry_runs;
mod invalidate;
mod profile;
mod validation;
