//! `deploy/aws/`: the controller's IAM policy grants exactly the calls the
//! provider makes, and the Deployment's environment is settings the
//! controller reads and accepts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use karpenter_aws::AwsSettings;
use karpenter_aws::settings::SETTINGS;
use serde_json::Value;

fn aws_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/aws")
}

fn read(file: &str) -> String {
    let path = aws_dir().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every call the provider makes: `Ec2Api`'s EC2 and Pricing calls (with
/// `RunInstances`, which `CreateFleet` performs), the SSM parameters of AMI
/// aliases, the interruption queue, the node role and its instance
/// profiles (with their tagging), and the cluster's endpoint discovery.
const ACTIONS: &[&str] = &[
    "ec2:CreateFleet",
    "ec2:CreateLaunchTemplate",
    "ec2:CreateTags",
    "ec2:DeleteLaunchTemplate",
    "ec2:DescribeCapacityReservations",
    "ec2:DescribeImages",
    "ec2:DescribeInstanceStatus",
    "ec2:DescribeInstanceTypeOfferings",
    "ec2:DescribeInstanceTypes",
    "ec2:DescribeInstances",
    "ec2:DescribeLaunchTemplates",
    "ec2:DescribePlacementGroups",
    "ec2:DescribeSecurityGroups",
    "ec2:DescribeSpotPriceHistory",
    "ec2:DescribeSubnets",
    "ec2:RunInstances",
    "ec2:TerminateInstances",
    "eks:DescribeCluster",
    "iam:AddRoleToInstanceProfile",
    "iam:CreateInstanceProfile",
    "iam:DeleteInstanceProfile",
    "iam:GetInstanceProfile",
    "iam:ListInstanceProfiles",
    "iam:PassRole",
    "iam:RemoveRoleFromInstanceProfile",
    // No call names it: tags given to CreateInstanceProfile may be
    // authorised as tagging (upstream grants it the same way).
    "iam:TagInstanceProfile",
    "pricing:GetProducts",
    "sqs:DeleteMessage",
    "sqs:GetQueueUrl",
    "sqs:ReceiveMessage",
    "ssm:GetParameter",
];

/// A policy element that is one string or a list of them.
fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().expect("a string").to_owned())
            .collect(),
        other => panic!("not a string or list: {other}"),
    }
}

fn statements() -> Vec<Value> {
    let policy: Value = serde_json::from_str(&read("iam-policy.json")).expect("the policy is JSON");
    assert_eq!(policy["Version"], "2012-10-17");
    policy["Statement"].as_array().expect("statements").clone()
}

#[test]
fn the_policy_grants_each_call_the_provider_makes_and_no_other() {
    let mut granted = BTreeSet::new();
    let mut sids = BTreeSet::new();
    for statement in statements() {
        let sid = statement["Sid"].as_str().expect("a Sid").to_owned();
        assert!(sids.insert(sid.clone()), "{sid} twice");
        assert_eq!(statement["Effect"], "Allow", "{sid}");
        let actions = strings(&statement["Action"]);
        assert!(statement["Resource"].is_string() || statement["Resource"].is_array());
        let unique: BTreeSet<&String> = actions.iter().collect();
        assert_eq!(unique.len(), actions.len(), "{sid} lists an action twice");
        for action in &actions {
            assert!(!action.contains('*'), "{sid}: a wildcard action {action}");
            granted.insert(action.clone());
        }
    }
    let want: BTreeSet<String> = ACTIONS.iter().map(|a| (*a).to_owned()).collect();
    assert_eq!(want.len(), ACTIONS.len(), "ACTIONS names one twice");
    assert_eq!(granted, want);
}

#[test]
fn only_reads_are_granted_on_every_resource_and_writes_are_scoped() {
    for statement in statements() {
        let sid = statement["Sid"].as_str().unwrap_or_default();
        let actions = strings(&statement["Action"]);
        let unscoped = strings(&statement["Resource"]).iter().any(|r| r == "*");
        // IAM cannot scope ListInstanceProfiles to a resource (upstream
        // grants it on every one too).
        let reads = actions.iter().all(|a| {
            a.starts_with("ec2:Describe")
                || a == "pricing:GetProducts"
                || a == "iam:ListInstanceProfiles"
        });
        if unscoped {
            assert!(reads, "{sid} grants a write on every resource");
        }
        // Resources Karpenter makes (and the node role it passes) are
        // written only under upstream's tag conditions; images, subnets
        // and security groups are the account's and carry none.
        let karpenter_made = [
            ":fleet/",
            ":instance/",
            ":volume/",
            ":network-interface/",
            ":launch-template/",
            ":spot-instances-request/",
            ":instance-profile/",
            ":role/",
        ];
        let writes = actions.iter().any(|a| {
            let op = a.split(':').nth(1).unwrap_or_default();
            !(op.starts_with("Describe") || op.starts_with("Get"))
        });
        let on_karpenter_made = strings(&statement["Resource"])
            .iter()
            .any(|r| karpenter_made.iter().any(|kind| r.contains(kind)));
        if writes && on_karpenter_made {
            assert!(
                statement["Condition"].is_object(),
                "{sid} writes without upstream's conditions"
            );
        }
    }
}

/// The Deployment's `env` entries with a literal value, by name.
fn deployment_env() -> BTreeMap<String, String> {
    let text = read("deployment.yaml");
    let mut env = BTreeMap::new();
    let mut name: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(n) = line.strip_prefix("- name: ") {
            name = Some(n.to_owned());
        } else if let (Some(n), Some(v)) = (name.take(), line.strip_prefix("value: ")) {
            env.insert(n, v.trim_matches('"').to_owned());
        }
    }
    env
}

#[test]
fn the_deployment_gives_settings_the_controller_reads_and_accepts() {
    let env = deployment_env();
    let known: BTreeSet<&str> = SETTINGS
        .iter()
        .flat_map(|s| std::iter::once(s.variable).chain(s.aliases.iter().copied()))
        .collect();
    for name in env.keys() {
        assert!(known.contains(name.as_str()), "{name} is read by nothing");
    }
    for required in SETTINGS.iter().filter(|s| s.required) {
        assert!(env.contains_key(required.variable), "{}", required.variable);
    }
    // Filled in as the README says, the settings are valid.
    let filled: BTreeMap<String, String> = env
        .into_iter()
        .map(|(k, v)| {
            let v = v
                .replace("<cluster-name>", "demo")
                .replace("<region>", "us-west-2")
                .replace(
                    "<cluster-endpoint-host>",
                    "ABC.gr7.us-west-2.eks.amazonaws.com",
                )
                .replace("<base64 CA bundle>", "LS0tLS1CRUdJTi0tLS0tCg==")
                .replace("<queue-name>", "demo");
            assert!(
                !v.contains('<'),
                "{k}: a placeholder the README does not name"
            );
            (k, v)
        })
        .collect();
    let settings = AwsSettings::from_lookup(|name| filled.get(name).cloned()).expect("valid");
    assert_eq!(settings.cluster_name, "demo");
    assert_eq!(settings.region.as_deref(), Some("us-west-2"));
    let defaults = AwsSettings::from_lookup(|name| (name == "CLUSTER_NAME").then(|| "demo".into()))
        .expect("valid");
    assert_eq!(
        settings.vm_memory_overhead_percent,
        defaults.vm_memory_overhead_percent
    );
    assert_eq!(settings.ami_refresh_interval, defaults.ami_refresh_interval);
    assert_eq!(settings.feature_gates, defaults.feature_gates);
}
