//! Images resolved from aliases and terms, against upstream's AMI
//! controller tests.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use serde_json::json;

use super::{class, context, now};
use crate::ec2::{Image, InMemoryEc2, Tag};
use crate::nodeclass::resolve::{ResolveError, resolve_status};
use crate::nodeclass::{Ami, EC2NodeClass};

const ARCH: &str = "kubernetes.io/arch";
const GPU: &str = "karpenter.k8s.aws/instance-gpu-count";
const ACCELERATOR: &str = "karpenter.k8s.aws/instance-accelerator-count";

fn req(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
    }
}

/// Upstream's test images: `<arch>-<variant>` named, tagged `Name`.
fn image(name: &str, arch: &str, created: Timestamp) -> Image {
    Image {
        image_id: format!("ami-{name}"),
        name: name.into(),
        architecture: arch.into(),
        owner_id: "amazon".into(),
        creation_date: Some(created),
        state: "available".into(),
        tags: vec![Tag::new("Name", name)],
        ..Image::default()
    }
}

fn upstream_images() -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new("us-west-2");
    let later = now() + SignedDuration::from_mins(1);
    for (name, arch) in [
        ("amd64-standard", "x86_64"),
        ("amd64-nvidia", "x86_64"),
        ("amd64-neuron", "x86_64"),
        ("arm64-standard", "arm64"),
        ("arm64-nvidia", "arm64"),
    ] {
        ec2.add_image(image(name, arch, now()));
    }
    ec2.add_image(image("amd64-standard-new", "x86_64", later));
    ec2
}

async fn amis(ec2: &InMemoryEc2, class: &EC2NodeClass, ssm: &[(&str, &str)]) -> Vec<Ami> {
    let mut context = context();
    for (name, id) in ssm {
        context.ssm_parameters.insert((*name).into(), (*id).into());
    }
    match resolve_status(ec2, class, &context).await {
        Ok(status) => status.amis.unwrap_or_default(),
        Err(error) => panic!("{error}"),
    }
}

fn ami(name: &str, requirements: Vec<NodeSelectorRequirement>) -> Ami {
    Ami {
        id: format!("ami-{name}"),
        name: Some(name.into()),
        requirements,
        ..Ami::default()
    }
}

fn standard(arch: &str) -> Vec<NodeSelectorRequirement> {
    vec![
        req(ARCH, "In", &[arch]),
        req(GPU, "DoesNotExist", &[]),
        req(ACCELERATOR, "DoesNotExist", &[]),
    ]
}

#[tokio::test]
async fn al2023_alias_images_carry_their_variants_requirements() {
    let root = "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023";
    let ssm: Vec<(String, &str)> = [
        ("x86_64/standard", "ami-amd64-standard"),
        ("x86_64/nvidia", "ami-amd64-nvidia"),
        ("x86_64/neuron", "ami-amd64-neuron"),
        ("arm64/standard", "ami-arm64-standard"),
        ("arm64/nvidia", "ami-arm64-nvidia"),
    ]
    .into_iter()
    .map(|(path, id)| (format!("{root}/{path}/recommended/image_id"), id))
    .collect();
    let ssm: Vec<(&str, &str)> = ssm.iter().map(|(n, id)| (n.as_str(), *id)).collect();
    let class = class(json!({"amiFamily": null, "amiSelectorTerms": [{"alias": "al2023@latest"}]}));
    let found = amis(&upstream_images(), &class, &ssm).await;
    assert_eq!(found.len(), 5);
    let expected = [
        ami("amd64-standard", standard("amd64")),
        ami(
            "amd64-nvidia",
            vec![req(ARCH, "In", &["amd64"]), req(GPU, "Exists", &[])],
        ),
        ami(
            "amd64-neuron",
            vec![req(ARCH, "In", &["amd64"]), req(ACCELERATOR, "Exists", &[])],
        ),
        ami("arm64-standard", standard("arm64")),
        ami(
            "arm64-nvidia",
            vec![req(ARCH, "In", &["arm64"]), req(GPU, "Exists", &[])],
        ),
    ];
    for ami in expected {
        assert!(found.contains(&ami), "missing {ami:?} in {found:?}");
    }
}

#[tokio::test]
async fn bottlerocket_alias_with_only_some_parameters_resolves_those() {
    // Upstream's vector: no NVIDIA parameter; the x86 image serves both
    // standard and Neuron nodes.
    let ssm = [
        (
            "/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id",
            "ami-amd64-standard",
        ),
        (
            "/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id",
            "ami-arm64-standard",
        ),
    ];
    let class =
        class(json!({"amiFamily": null, "amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}));
    let found = amis(&upstream_images(), &class, &ssm).await;
    assert_eq!(found.len(), 3);
    assert!(found.contains(&ami("amd64-standard", standard("amd64"))));
    assert!(found.contains(&ami("arm64-standard", standard("arm64"))));
    let neuron = vec![req(ARCH, "In", &["amd64"]), req(ACCELERATOR, "Exists", &[])];
    assert!(found.contains(&ami("amd64-standard", neuron)));
}

#[tokio::test]
async fn an_alias_without_any_parameter_is_an_error() {
    let class = class(json!({"amiFamily": null, "amiSelectorTerms": [{"alias": "al2023@latest"}]}));
    let result = resolve_status(&upstream_images(), &class, &context()).await;
    assert!(
        matches!(result, Err(ResolveError::AliasNotResolved { parameters, .. }) if parameters.len() == 5)
    );
}

#[tokio::test]
async fn a_term_keeps_the_newest_image_per_architecture() {
    let class = class(json!({"amiSelectorTerms": [{"tags": {"Name": "amd64-standard*"}}]}));
    let found = amis(&upstream_images(), &class, &[]).await;
    assert_eq!(
        found,
        [ami("amd64-standard-new", vec![req(ARCH, "In", &["amd64"])])]
    );
}

#[tokio::test]
async fn deprecated_images_are_marked_and_lose_to_current_ones() {
    // Upstream's vector: test-ami-3 is deprecated 30 minutes from now.
    let ec2 = InMemoryEc2::new("us-west-2");
    let created: Timestamp = "2021-08-31T00:12:42Z".parse().unwrap_or_else(|_| now());
    let mut deprecated = image("test-ami-3", "x86_64", created);
    deprecated.image_id = "ami-id-789".into();
    deprecated.deprecation_time = Some(now() + SignedDuration::from_mins(30));
    let mut current = image("test-ami-2", "arm64", created);
    current.image_id = "ami-id-456".into();
    ec2.add_image(deprecated.clone());
    ec2.add_image(current);
    let class = class(json!({}));
    let found = amis(&ec2, &class, &[]).await;
    let ids: Vec<&str> = found.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["ami-id-456", "ami-id-789"], "same age: by ID");
    assert!(found.iter().all(|a| a.deprecated.is_none()));

    let mut later = context();
    later.now = now() + SignedDuration::from_mins(40);
    let status = resolve_status(&ec2, &class, &later).await.ok();
    let amis = status.and_then(|s| s.amis).unwrap_or_default();
    assert_eq!(amis[1].deprecated, Some(true));

    // A newer image for amd64 that is not deprecated replaces it.
    let mut replacement = image("test-ami-4", "x86_64", created);
    replacement.image_id = "ami-id-999".into();
    ec2.add_image(replacement);
    let status = resolve_status(&ec2, &class, &later).await.ok();
    let ids: Vec<String> = status
        .and_then(|s| s.amis)
        .unwrap_or_default()
        .into_iter()
        .map(|a| a.id)
        .collect();
    assert_eq!(ids, ["ami-id-456", "ami-id-999"]);
}

#[tokio::test]
async fn a_name_without_owner_finds_only_own_and_amazon_images() {
    let ec2 = upstream_images();
    let mut foreign = image(
        "amd64-standard-foreign",
        "x86_64",
        now() + SignedDuration::from_hours(1),
    );
    foreign.owner_id = "999999999999".into();
    ec2.add_image(foreign);
    let class = class(json!({"amiSelectorTerms": [{"name": "amd64-standard*"}]}));
    let found = amis(&ec2, &class, &[]).await;
    assert_eq!(
        found.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
        ["ami-amd64-standard-new"]
    );
}
