//! Alias parameter names, against the parameters upstream's tests read.

use crate::nodeclass::resolve::{ImageVariant, alias_parameters};
use crate::nodeclass::{Alias, AmiFamily};

fn names(alias: &str, k8s: &str) -> Vec<String> {
    let alias = Alias::parse(alias).unwrap_or_else(|| panic!("alias {alias}"));
    match alias_parameters(&alias, k8s) {
        Ok(parameters) => parameters.into_iter().map(|p| p.name).collect(),
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn al2023_latest_reads_the_five_recommended_parameters() {
    let root = "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023";
    let expected: Vec<String> = [
        "x86_64/standard",
        "x86_64/nvidia",
        "x86_64/neuron",
        "arm64/standard",
        "arm64/nvidia",
    ]
    .iter()
    .map(|build| format!("{root}/{build}/recommended/image_id"))
    .collect();
    assert_eq!(names("al2023@latest", "1.31"), expected);
}

#[test]
fn al2023_pinned_versions_name_the_release() {
    let names = names("al2023@v20240807", "1.30");
    assert_eq!(
        names[0],
        "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.30-v20240807/image_id"
    );
    assert_eq!(
        names[4],
        "/aws/service/eks/optimized-ami/1.30/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.30-v20240807/image_id"
    );
}

#[test]
fn al2_reads_standard_arm_and_gpu_parameters() {
    assert_eq!(
        names("al2@latest", "1.31"),
        [
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id",
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-gpu/recommended/image_id",
        ]
    );
    assert_eq!(
        names("al2@v20240807", "1.31")[1],
        "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/amazon-eks-arm64-node-1.31-v20240807/image_id"
    );
    let gpu = alias_parameters(
        &Alias::parse("al2@latest").unwrap_or_else(|| panic!()),
        "1.31",
    );
    let variants = gpu.map(|p| p[2].variants.clone());
    assert_eq!(
        variants,
        Ok(vec![ImageVariant::Neuron, ImageVariant::Nvidia])
    );
}

#[test]
fn bottlerocket_drops_the_version_prefix() {
    assert_eq!(
        names("bottlerocket@latest", "1.31"),
        [
            "/aws/service/bottlerocket/aws-k8s-1.31/x86_64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.31/arm64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia/x86_64/latest/image_id",
            "/aws/service/bottlerocket/aws-k8s-1.31-nvidia/arm64/latest/image_id",
        ]
    );
    assert_eq!(
        names("bottlerocket@v1.20.4", "1.31")[0],
        "/aws/service/bottlerocket/aws-k8s-1.31/x86_64/1.20.4/image_id"
    );
}

#[test]
fn windows_reads_the_latest_core_image() {
    assert_eq!(
        names("windows2022@latest", "1.31"),
        [
            "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id"
        ]
    );
    assert_eq!(
        names("windows2019@latest", "1.31"),
        [
            "/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-1.31/image_id"
        ]
    );
    assert_eq!(
        names("windows2025@latest", "1.35"),
        [
            "/aws/service/ami-windows-latest/Windows_Server-2025-English-Core-EKS_Optimized-1.35/image_id"
        ]
    );
}

#[test]
fn versions_upstream_refuses() {
    let al2 = Alias {
        family: AmiFamily::AL2,
        version: "latest".into(),
    };
    let refused = alias_parameters(&al2, "1.33").err();
    assert!(refused.is_some_and(|e| {
        e.message
            .starts_with("AL2 aliases are no longer supported on EKS 1.33+")
    }));
    assert!(alias_parameters(&al2, "1.32").is_ok());
    let ws2025 = Alias {
        family: AmiFamily::Windows2025,
        version: "latest".into(),
    };
    let refused = alias_parameters(&ws2025, "1.34").err().map(|e| e.message);
    assert_eq!(
        refused.as_deref(),
        Some("Windows Server 2025 requires EKS version 1.35 or higher, current version: 1.34")
    );
}
