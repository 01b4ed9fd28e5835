//! The user data against upstream's golden launch-template tests
//! (`pkg/providers/launchtemplate/testdata`, `bootstrap/mime/test_data`).

use std::collections::BTreeMap;
use std::net::IpAddr;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_openapi::api::core::v1::Taint;

use super::mime::{self, Part};
use super::yaml::looks_like_mapping;
use super::*;
use crate::nodeclass::MaxPods;

/// Upstream's expected documents leave the class and pool names to fill in.
fn golden(text: &str) -> String {
    text.replacen("%s", "default", 1)
        .replacen("%s=%s", "karpenter.sh/nodepool=default", 1)
}

/// The inputs of upstream's launch-template suite: its test cluster, the
/// kube-dns address, `maxPods: 110` and the labels of a provisioned claim.
pub(super) fn suite_input(family: AmiFamily, custom: Option<&str>) -> UserDataInput {
    let labels = [
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ("karpenter.sh/capacity-type", "on-demand"),
        ("karpenter.sh/do-not-sync-taints", "true"),
        ("karpenter.sh/nodepool", "default"),
        ("testing/cluster", "unspecified"),
    ];
    UserDataInput {
        family,
        cluster_name: "test-cluster".into(),
        cluster_endpoint: "https://test-cluster".into(),
        ca_bundle: Some("Y2EtYnVuZGxlCg==".into()),
        cluster_cidr: Some("10.100.0.0/16".into()),
        kube_dns_ip: Some(IpAddr::from([10, 0, 100, 10])),
        kubelet: Some(KubeletConfiguration {
            max_pods: Some(MaxPods::Count(110)),
            ..KubeletConfiguration::default()
        }),
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        taints: Vec::new(),
        custom_user_data: custom.map(str::to_owned),
        instance_store_policy: None,
        ami_version: None,
    }
}

#[test]
fn al2023_matches_upstreams_goldens() {
    let cases = [
        (
            None,
            include_str!("testdata/al2023_userdata_unmerged.golden"),
        ),
        (
            Some(include_str!("testdata/al2023_mime_userdata_input.golden")),
            include_str!("testdata/al2023_mime_userdata_merged.golden"),
        ),
        (
            Some(include_str!("testdata/al2023_yaml_userdata_input.golden")),
            include_str!("testdata/al2023_yaml_userdata_merged.golden"),
        ),
        (
            Some(include_str!("testdata/al2023_shell_userdata_input.golden")),
            include_str!("testdata/al2023_shell_userdata_merged.golden"),
        ),
    ];
    for (index, (custom, expected)) in cases.into_iter().enumerate() {
        let got = user_data(&suite_input(AmiFamily::AL2023, custom)).unwrap();
        // Upstream compares with line breaks removed; the unmerged and MIME
        // goldens also match exactly (a bare class part keeps its final line
        // break before the delimiter, which the other goldens leave out).
        assert_eq!(
            got.replace('\n', ""),
            golden(expected).replace('\n', ""),
            "custom user data {custom:?}"
        );
        if index < 2 {
            assert_eq!(got, golden(expected), "custom user data {custom:?}");
        }
    }
}

#[test]
fn al2_matches_upstreams_goldens() {
    let merged = golden(include_str!("testdata/al2_userdata_merged.golden"));
    let inputs = [
        include_str!("testdata/al2_userdata_input.golden"),
        include_str!("testdata/al2_userdata_content_type_first_input.golden"),
        include_str!("testdata/al2_no_mime_userdata_input.golden"),
    ];
    for custom in inputs {
        let got = user_data(&suite_input(AmiFamily::AL2, Some(custom))).unwrap();
        assert_eq!(got, merged, "custom user data {custom:?}");
    }
    let unmerged = user_data(&suite_input(AmiFamily::AL2, None)).unwrap();
    assert_eq!(
        unmerged,
        golden(include_str!("testdata/al2_userdata_unmerged.golden"))
    );
}

#[test]
fn base64_is_the_text_encoded() {
    let input = suite_input(AmiFamily::AL2023, None);
    let encoded = user_data_base64(&input).unwrap();
    let decoded = String::from_utf8(STANDARD.decode(encoded).unwrap()).unwrap();
    assert_eq!(decoded, user_data(&input).unwrap());
}

#[test]
fn custom_family_passes_the_class_user_data_through() {
    let script = "#!/bin/bash\r\necho as written\n";
    let input = suite_input(AmiFamily::Custom, Some(script));
    assert_eq!(user_data(&input).unwrap(), script);
    let empty = suite_input(AmiFamily::Custom, None);
    assert_eq!(user_data(&empty).unwrap(), "");
}

#[test]
fn unparseable_mime_user_data_names_the_field() {
    let bad = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\n\
               Content-Type: text/plain\n\nnever closed\n";
    for family in [AmiFamily::AL2, AmiFamily::AL2023] {
        let err = user_data(&suite_input(family, Some(bad))).unwrap_err();
        assert!(
            matches!(err, UserDataError::InvalidUserData { .. }),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("spec.userData"), "{err}");
    }
    let not_multipart = "Content-Type: text/plain\n\necho hi\n";
    let err = user_data(&suite_input(AmiFamily::AL2, Some(not_multipart))).unwrap_err();
    assert!(matches!(
        err,
        UserDataError::InvalidUserData {
            source: MimeError::NotMultipart(_)
        }
    ));
}

#[test]
fn al2023_needs_the_cluster_cidr_and_a_base64_ca() {
    let mut input = suite_input(AmiFamily::AL2023, None);
    input.cluster_cidr = None;
    assert_eq!(user_data(&input), Err(UserDataError::MissingClusterCidr));
    let mut input = suite_input(AmiFamily::AL2023, None);
    input.ca_bundle = Some("not base64!".into());
    assert!(matches!(
        user_data(&input),
        Err(UserDataError::InvalidCaBundle { .. })
    ));
}

#[test]
fn families_not_built_yet_are_reported() {
    for family in [AmiFamily::Windows2019, AmiFamily::Windows2022] {
        let err = user_data(&suite_input(family, None)).unwrap_err();
        assert_eq!(err, UserDataError::UnsupportedFamily(family));
    }
}

#[test]
fn al2_reads_ipv6_raid0_and_every_kubelet_flag() {
    let mut input = suite_input(AmiFamily::AL2, None);
    input.kube_dns_ip = Some("fd00::a".parse().unwrap());
    input.instance_store_policy = Some("RAID0".into());
    input.taints = vec![Taint {
        key: "team".into(),
        value: Some("a".into()),
        effect: "NoSchedule".into(),
        time_added: None,
    }];
    let reserved: BTreeMap<String, String> = [
        ("memory".to_owned(), "1Gi".to_owned()),
        ("cpu".to_owned(), "100m".to_owned()),
    ]
    .into();
    input.kubelet = Some(KubeletConfiguration {
        max_pods: Some(MaxPods::Count(42)),
        pods_per_core: Some(4),
        system_reserved: Some(reserved),
        eviction_hard: Some([("memory.available".to_owned(), "5%".to_owned())].into()),
        eviction_soft_grace_period: Some(
            [("memory.available".to_owned(), "90s".to_owned())].into(),
        ),
        image_gc_high_threshold_percent: Some(85),
        cpu_cfs_quota: Some(false),
        ..KubeletConfiguration::default()
    });
    input.labels = [("a".to_owned(), "1".to_owned())].into();
    let text = user_data(&input).unwrap();
    let expected_tail = "--ip-family ipv6 \\\n--dns-cluster-ip 'fd00::a' \\\n\
        --use-max-pods false \\\n--kubelet-extra-args '--node-labels=\"a=1\" \
        --register-with-taints=\"team=a:NoSchedule,karpenter.sh/unregistered:NoExecute\" \
        --max-pods=42 --pods-per-core=4 --system-reserved=\"cpu=100m,memory=1Gi\" \
        --eviction-hard=\"memory.available<5%\" \
        --eviction-soft-grace-period=\"memory.available=1m30s\" --image-gc-high-threshold=85 \
        --cpu-cfs-quota=false' \\\n--local-disks raid0\n--//--\n";
    assert!(text.ends_with(expected_tail), "{text}");
}

#[test]
fn al2023_keeps_class_kubelet_fields_and_raid0() {
    let mut input = suite_input(AmiFamily::AL2023, None);
    input.instance_store_policy = Some("RAID0".into());
    let mut kubelet = input.kubelet.take().unwrap();
    kubelet.cluster_dns = Some(vec!["10.0.0.53".into()]);
    kubelet
        .other
        .insert("maxParallelImagePulls".into(), serde_json::json!(3));
    input.kubelet = Some(kubelet);
    input.labels.clear();
    let text = user_data(&input).unwrap();
    // The class's clusterDNS wins over the kube-dns address.
    assert!(
        text.contains("      clusterDNS:\n      - 10.0.0.53\n"),
        "{text}"
    );
    assert!(text.contains("      maxParallelImagePulls: 3\n"), "{text}");
    assert!(
        text.contains("    localStorage:\n      strategy: RAID0\n"),
        "{text}"
    );
    // Without labels there are no flags.
    assert!(!text.contains("flags:"), "{text}");
}

#[test]
fn mime_reads_and_writes_upstreams_archive() {
    let valid = include_str!("testdata/mime_valid.txt");
    let node_config = include_str!("testdata/nodeconfig.txt");
    let shell = include_str!("testdata/shell.txt");
    let parts = mime::parse(valid).unwrap();
    let expected = vec![
        Part::new("application/node.eks.aws", node_config),
        Part::new("text/x-shellscript; charset=\"us-ascii\"", shell),
    ];
    assert_eq!(parts, expected);
    assert_eq!(mime::serialize(&expected), valid);
    let bad = include_str!("testdata/mime_bad_header.txt");
    assert!(matches!(
        mime::parse(bad),
        Err(MimeError::MalformedHeader { line: 1, .. })
    ));
}

#[test]
fn mime_reads_crlf_and_canonicalises_header_names() {
    let crlf = "MIME-Version: 1.0\r\ncontent-type: multipart/mixed; boundary=XYZ\r\n\r\n\
                preamble\r\n--XYZ\r\ncontent-type: text/x-shellscript\r\n\r\necho 1\r\n\
                --XYZ--\r\n";
    let parts = mime::parse(crlf).unwrap();
    assert_eq!(parts, vec![Part::new("text/x-shellscript", "echo 1")]);
}

#[test]
fn node_config_or_shell_is_told_apart_as_upstream_does() {
    assert!(looks_like_mapping(include_str!("testdata/nodeconfig.txt")));
    assert!(looks_like_mapping("# only a comment\n"));
    assert!(looks_like_mapping("---\napiVersion: v1\nitems:\n- a\n"));
    assert!(!looks_like_mapping(include_str!("testdata/shell.txt")));
    assert!(!looks_like_mapping("echo one\necho two\n"));
    assert!(!looks_like_mapping("key: value\necho not yaml\n"));
}

#[test]
fn yaml_quotes_strings_that_would_read_back_otherwise() {
    let value = serde_json::json!({
        "a": "true", "b": "110", "c": "", "d": "x: y", "e": "- item",
        "f": "two\nlines", "g": "--flag=\"v\"", "h": "10.0.100.10",
    });
    let text = super::yaml::to_yaml(&value);
    let expected = "a: \"true\"\nb: \"110\"\nc: \"\"\nd: \"x: y\"\ne: \"- item\"\n\
                    f: \"two\\nlines\"\ng: --flag=\"v\"\nh: 10.0.100.10\n";
    assert_eq!(text, expected);
}

proptest::proptest! {
    /// Whatever the class's user data, every family answers without
    /// panicking, and the MIME families end in Karpenter's own part.
    #[test]
    fn any_class_user_data_is_answered(
        custom in "(MIME-Version: 1.0\n|Content-Type: multipart/mixed; boundary=b\n)?[-a-z:;= \"/\n#{}]{0,80}",
    ) {
        for family in AmiFamily::ALL {
            let result = user_data(&suite_input(family, Some(&custom)));
            if let (AmiFamily::AL2 | AmiFamily::AL2023, Ok(text)) = (family, &result) {
                proptest::prop_assert!(text.ends_with("\n--//--\n"));
            }
        }
    }
}
