//! `ValidationSucceeded` over `InMemoryEc2`: valid and `Ready`, each dry
//! run's refusal, the checks before the dry runs, the 30-minute memory,
//! `DISABLE_DRY_RUN`, and a failure that leaves the condition.

use jiff::SignedDuration;
use karpenter_core::api::{Condition, ConditionStatus, Conditions};
use serde_json::json;

use super::{class, context, ec2, iam, now, ssm};
use crate::ec2::{
    CreateLaunchTemplateInput, DryRunCall, Ec2Api, Ec2Error, InMemoryEc2, Operation,
    RunInstancesInput, UNAUTHORIZED_OPERATION,
};
use crate::iam::InstanceProfiles;
use crate::nodeclass::EC2NodeClass;
use crate::nodeclass::condition_types as types;
use crate::nodeclass::reconcile::validation::validate;
use crate::nodeclass::reconcile::{
    ReconcileError, Reconciled, SsmCache, VALIDATION_TTL, Validation, reconcile_status,
};
use crate::nodeclass::resolve::conditions::Stamp;

/// A reconcile of `class` over `ec2` `minutes` after [`now`].
pub(super) async fn run(
    ec2: &InMemoryEc2,
    validation: &mut Validation,
    class: &EC2NodeClass,
    minutes: i64,
) -> Result<Reconciled, ReconcileError> {
    let at = now() + SignedDuration::from_mins(minutes);
    reconcile_status(
        ec2,
        &ssm(),
        &iam(),
        &mut SsmCache::new(),
        &mut InstanceProfiles::new(),
        validation,
        class,
        &context(at),
    )
    .await
}

/// `type_`'s status, reason and message.
pub(super) fn condition_of(done: &Reconciled, type_: &str) -> (ConditionStatus, String, String) {
    let c = done.status.conditions.find(type_);
    let c = c.unwrap_or_else(|| panic!("{type_} is set"));
    (
        c.status,
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default(),
    )
}

pub(super) fn validated(done: &Reconciled) -> (ConditionStatus, String, String) {
    condition_of(done, types::VALIDATION_SUCCEEDED)
}

pub(super) fn unauthorized(operation: Operation) -> Ec2Error {
    let message = "You are not authorized to perform this operation.";
    Ec2Error::service(operation, UNAUTHORIZED_OPERATION, message)
}

/// A reconcile that must succeed.
pub(super) async fn done(
    ec2: &InMemoryEc2,
    validation: &mut Validation,
    class: &EC2NodeClass,
) -> Reconciled {
    let done = run(ec2, validation, class, 0).await;
    done.unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn checking() -> Validation {
    Validation::new(false, true)
}

#[tokio::test]
async fn a_good_class_is_valid_and_ready() {
    let mut class = class(json!({}));
    // Placement groups are reconciled elsewhere; True here for this
    // generation, so that only the validation decides `Ready`.
    let placed = json!({"conditions": [{
        "type": types::PLACEMENT_GROUP_READY, "status": "True",
        "reason": types::PLACEMENT_GROUP_READY, "observedGeneration": 1,
        "lastTransitionTime": "2024-05-01T00:00:00Z",
    }]});
    class.status = Some(serde_json::from_value(placed).unwrap_or_else(|e| panic!("{e}")));
    let done = done(&ec2(), &mut checking(), &class).await;
    let (status, reason, _) = validated(&done);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::True, types::VALIDATION_SUCCEEDED)
    );
    assert_eq!(condition_of(&done, "Ready").0, ConditionStatus::True);
}

#[tokio::test]
async fn a_class_without_a_placement_group_turns_ready() {
    // Nothing set beforehand: the status resolution sets
    // `PlacementGroupReady` (no selector) and the validation its own, so
    // a good class is Ready after one reconcile, as on a live cluster.
    let done = done(&ec2(), &mut checking(), &class(json!({}))).await;
    assert_eq!(validated(&done).0, ConditionStatus::True);
    assert_eq!(
        condition_of(&done, types::PLACEMENT_GROUP_READY).0,
        ConditionStatus::True
    );
    assert_eq!(condition_of(&done, "Ready").0, ConditionStatus::True);
}

#[tokio::test]
async fn a_failed_dependency_fails_the_validation_without_asking_ec2() {
    let ec2 = ec2();
    ec2.fail_next(
        Operation::CreateLaunchTemplate,
        unauthorized(Operation::CreateLaunchTemplate),
    );
    let spec = json!({"securityGroupSelectorTerms": [{"tags": {"discovery": "none"}}]});
    let done = done(&ec2, &mut checking(), &class(spec)).await;
    let (status, reason, message) = validated(&done);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "DependenciesNotReady")
    );
    assert_eq!(
        message,
        "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"
    );
    // The injected refusal is still waiting: no template was made.
    let asked = ec2
        .create_launch_template(CreateLaunchTemplateInput::default())
        .await;
    assert!(asked.is_err());
}

#[tokio::test]
async fn an_unknown_dependency_leaves_the_validation_unknown() {
    let class = class(json!({}));
    let stamp = Stamp::of(&class, now());
    let mut conditions: Vec<Condition> = [
        (types::AMIS_READY, ConditionStatus::True),
        (types::SUBNETS_READY, ConditionStatus::True),
        (types::SECURITY_GROUPS_READY, ConditionStatus::True),
        (types::INSTANCE_PROFILE_READY, ConditionStatus::Unknown),
    ]
    .into_iter()
    .map(|(type_, status)| Condition::new(type_, status))
    .collect();
    let status = class.status.clone().unwrap_or_default();
    let mut validation = checking();
    let outcome = validate(
        &ec2(),
        &mut validation,
        &class,
        &status,
        &mut conditions,
        stamp,
        "c",
    )
    .await;
    outcome.unwrap_or_else(|e| panic!("{e}"));
    let found = conditions.find(types::VALIDATION_SUCCEEDED);
    let found = found.unwrap_or_else(|| panic!("set"));
    assert_eq!(found.status, ConditionStatus::Unknown);
    assert_eq!(found.reason.as_deref(), Some("DependenciesNotReady"));
    assert!(validation.is_empty());
}

#[tokio::test]
async fn a_restricted_tag_fails_the_validation() {
    let restricted = [
        "kubernetes.io/cluster/other",
        "karpenter.sh/nodepool",
        "eks:eks-cluster-name",
        "karpenter.k8s.aws/ec2nodeclass",
        "karpenter.sh/nodeclaim",
    ];
    for key in restricted {
        let spec = json!({"tags": {"team": "a", key: "x"}});
        let done = done(&ec2(), &mut checking(), &class(spec)).await;
        let (status, reason, message) = validated(&done);
        assert_eq!(
            (status, reason.as_str()),
            (ConditionStatus::False, "TagValidationFailed"),
            "{key}"
        );
        assert_eq!(message, "tags failed validation requirements");
    }
    // Near misses are the user's own tags.
    for key in [
        "kubernetes.io/cluster/",
        "kubernetes.io/cluster/-x",
        "karpenter.sh/nodepools",
    ] {
        let spec = json!({"tags": {key: "x"}});
        let done = done(&ec2(), &mut checking(), &class(spec)).await;
        assert_eq!(validated(&done).0, ConditionStatus::True, "{key}");
    }
}

#[tokio::test]
async fn invalid_kubelet_configuration_fails_the_validation() {
    let spec = json!({"kubelet": {"evictionHard": {"not.a.signal": "10%"}}});
    let done = done(&ec2(), &mut checking(), &class(spec)).await;
    let (status, reason, message) = validated(&done);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "InvalidKubeletConfiguration")
    );
    assert!(message.contains("not.a.signal"), "{message}");
}

#[tokio::test]
async fn al2023_without_the_cluster_cidr_is_not_valid() {
    let done = done(
        &ec2(),
        &mut Validation::new(false, false),
        &class(json!({})),
    )
    .await;
    let (status, reason, message) = validated(&done);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "ClusterCIDRResolutionFailed")
    );
    assert_eq!(message, "Failed to detect the cluster CIDR");
}

#[tokio::test]
async fn the_outcome_is_kept_for_thirty_minutes_then_asked_again() {
    let ec2 = ec2();
    let class = class(json!({}));
    let mut validation = checking();
    let first = run(&ec2, &mut validation, &class, 0).await;
    assert_eq!(
        validated(&first.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::True
    );
    assert_eq!(validation.len(), 1);

    let op = Operation::CreateLaunchTemplate;
    ec2.fail_next(op, unauthorized(op));
    let within = VALIDATION_TTL.as_mins() - 1;
    let kept = run(&ec2, &mut validation, &class, within).await;
    assert_eq!(
        validated(&kept.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::True
    );

    let lapsed = run(&ec2, &mut validation, &class, VALIDATION_TTL.as_mins()).await;
    let (status, reason, _) = validated(&lapsed.unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        (status, reason.as_str()),
        (
            ConditionStatus::False,
            "CreateLaunchTemplateAuthCheckFailed"
        )
    );

    // The refusal is kept too, and a changed class is asked about afresh.
    let refused = run(&ec2, &mut validation, &class, VALIDATION_TTL.as_mins() + 1).await;
    assert_eq!(
        validated(&refused.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::False
    );
    let mut changed = class.clone();
    changed.spec.tags = Some([("team".to_owned(), "b".to_owned())].into());
    let fresh = run(
        &ec2,
        &mut validation,
        &changed,
        VALIDATION_TTL.as_mins() + 1,
    )
    .await;
    assert_eq!(
        validated(&fresh.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::True
    );
}

#[tokio::test]
async fn with_dry_runs_disabled_nothing_is_asked() {
    let ec2 = ec2();
    for op in [
        Operation::CreateLaunchTemplate,
        Operation::CreateFleet,
        Operation::RunInstances,
    ] {
        ec2.fail_next(op, unauthorized(op));
    }
    let done = done(&ec2, &mut Validation::new(true, true), &class(json!({}))).await;
    assert_eq!(validated(&done).0, ConditionStatus::True);
    let run = RunInstancesInput::default();
    assert!(ec2.dry_run(DryRunCall::RunInstances(run)).await.is_err());
}

#[tokio::test]
async fn a_kubelet_expression_needs_the_node_class_cel_gate() {
    let specs = [
        json!({"kubelet": {"maxPods": "vcpus * 4"}}),
        json!({"kubelet": {"kubeReserved": {"memory": "memory_mib * 0.05"}}}),
    ];
    for spec in specs {
        let class = class(spec);
        let refused = done(&ec2(), &mut checking(), &class).await;
        let (status, reason, message) = validated(&refused);
        assert_eq!(
            (status, reason.as_str()),
            (ConditionStatus::False, "KubeletExpressionsDisabled")
        );
        assert_eq!(
            message,
            "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled"
        );
        let mut gated = checking();
        gated.node_class_cel = true;
        let allowed = done(&ec2(), &mut gated, &class).await;
        assert_eq!(validated(&allowed).0, ConditionStatus::True);
    }
    let quantities = class(json!({"kubelet": {"maxPods": 20, "kubeReserved": {"memory": "1Gi"}}}));
    let plain = done(&ec2(), &mut checking(), &quantities).await;
    assert_eq!(validated(&plain).0, ConditionStatus::True);
}
