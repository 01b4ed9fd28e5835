//! Bottlerocket's user data against upstream's golden launch-template
//! tests (`br_userdata_*`) and the cases of its launch-template suite.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

use super::supports_default_bind;
use crate::nodeclass::{AmiFamily, KubeletConfiguration, MaxPods};
use crate::userdata::tests::suite_input;
use crate::userdata::toml::{self, Table, Value};
use crate::userdata::{UserDataError, UserDataInput, user_data};

/// Upstream fills its goldens with `fmt.Sprintf`: the class name, the
/// node pool's label key and name, and `%%` for `%`.
fn merged_golden(text: &str) -> String {
    text.replace("'%s' = '%s'", "'karpenter.sh/nodepool' = 'default'")
        .replace("%s", "default")
        .replace("%%", "%")
}

fn input_golden(text: &str) -> String {
    text.replace("%s", "karpenter.sh/nodepool")
        .replace("%%", "%")
}

/// Upstream's Bottlerocket context: the suite's input with a pool taint and
/// a startup taint.
fn br_input(custom: Option<&str>) -> UserDataInput {
    let mut input = suite_input(AmiFamily::Bottlerocket, custom);
    input.taints = vec![
        taint("foo", "bar", "NoExecute"),
        taint("baz", "bin", "NoExecute"),
    ];
    input
}

fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.to_owned(),
        value: Some(value.to_owned()).filter(|v| !v.is_empty()),
        effect: effect.to_owned(),
        time_added: None,
    }
}

fn parsed(text: &str) -> Table {
    toml::parse(text).unwrap_or_else(|e| panic!("not TOML: {e}\n{text}"))
}

/// The value at a dotted path of keys.
fn at<'a>(table: &'a Table, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let value = table.iter().find(|(k, _)| k == first).map(|(_, v)| v)?;
    match (rest.is_empty(), value) {
        (true, value) => Some(value),
        (false, Value::Table(inner)) => at(inner, rest),
        _ => None,
    }
}

fn kubernetes<'a>(doc: &'a Table, key: &str) -> Option<&'a Value> {
    at(doc, &["settings", "kubernetes", key])
}

fn string(s: &str) -> Value {
    Value::String(s.to_owned())
}

#[test]
fn matches_upstreams_goldens_as_parsed_toml() {
    let custom = input_golden(include_str!("../testdata/br_userdata_input.golden"));
    let cases = [
        (
            Some(custom.as_str()),
            include_str!("../testdata/br_userdata_merged.golden"),
        ),
        (
            None,
            include_str!("../testdata/br_userdata_unmerged.golden"),
        ),
    ];
    for (custom, expected) in cases {
        let got = user_data(&br_input(custom)).unwrap();
        assert_eq!(parsed(&got), parsed(&merged_golden(expected)), "{got}");
    }
}

#[test]
fn writes_upstreams_layout_byte_for_byte() {
    // Upstream compares the bytes: sorted maps, known settings in its field
    // order, plain keys before sub-tables, literal strings.
    let custom = input_golden(include_str!("../testdata/br_userdata_input.golden"));
    let cases = [
        (
            Some(custom.as_str()),
            include_str!("../testdata/br_userdata_merged.golden"),
        ),
        (
            None,
            include_str!("../testdata/br_userdata_unmerged.golden"),
        ),
    ];
    for (custom, expected) in cases {
        let got = user_data(&br_input(custom)).unwrap();
        assert_eq!(got, merged_golden(expected));
    }
}

#[test]
fn karpenter_owned_keys_override_the_class_and_the_rest_is_kept() {
    let custom = "top-level = 1\n\
        [settings.kubernetes]\n\
        cluster-name = 'theirs'\n\
        max-pods = 9999999999\n\
        cluster-certificate = 'theirs'\n\
        cloud-provider = 'external'\n\
        allowed-unsafe-sysctls = ['net.core.somaxconn']\n\
        not-a-setting = true\n\
        [settings.kubernetes.node-labels]\n\
        'karpenter.sh/nodepool' = 'theirs'\n\
        'team' = 'a'\n\
        [settings.kubernetes.node-taints]\n\
        theirs = ['x:NoSchedule']\n\
        [settings.host-containers.admin]\n\
        enabled = true\n";
    let mut input = br_input(Some(custom));
    input.ca_bundle = None;
    let doc = parsed(&user_data(&input).unwrap());
    assert_eq!(
        kubernetes(&doc, "cluster-name"),
        Some(&string("test-cluster"))
    );
    assert_eq!(kubernetes(&doc, "max-pods"), Some(&Value::Integer(110)));
    // Upstream sets the certificate from the cluster, even to nothing.
    assert_eq!(kubernetes(&doc, "cluster-certificate"), None);
    assert_eq!(
        kubernetes(&doc, "cloud-provider"),
        Some(&string("external"))
    );
    assert_eq!(
        kubernetes(&doc, "allowed-unsafe-sysctls"),
        Some(&Value::Array(vec![string("net.core.somaxconn")]))
    );
    assert_eq!(kubernetes(&doc, "not-a-setting"), None);
    assert_eq!(at(&doc, &["top-level"]), None);
    let labels = ["settings", "kubernetes", "node-labels"];
    let label = |key: &str| at(&doc, &[&labels[..], &[key]].concat()).cloned();
    assert_eq!(label("karpenter.sh/nodepool"), Some(string("default")));
    assert_eq!(label("team"), Some(string("a")));
    assert_eq!(
        at(&doc, &["settings", "kubernetes", "node-taints", "theirs"]),
        None
    );
    assert_eq!(
        at(&doc, &["settings", "host-containers", "admin", "enabled"]),
        Some(&Value::Boolean(true))
    );
}

#[test]
fn taints_group_by_key_and_labels_are_written() {
    let mut input = br_input(None);
    input.taints = vec![
        taint("dedicated", "gpu", "NoSchedule"),
        taint("dedicated", "", "NoExecute"),
        taint("spot", "", "PreferNoSchedule"),
    ];
    input.labels = BTreeMap::from([("zone".to_owned(), "a".to_owned())]);
    let doc = parsed(&user_data(&input).unwrap());
    let taints = |key: &str| at(&doc, &["settings", "kubernetes", "node-taints", key]).cloned();
    assert_eq!(
        taints("dedicated"),
        Some(Value::Array(vec![
            string("gpu:NoSchedule"),
            string(":NoExecute")
        ]))
    );
    assert_eq!(
        taints("spot"),
        Some(Value::Array(vec![string(":PreferNoSchedule")]))
    );
    // The unregistered taint is added as for every family.
    assert_eq!(
        taints("karpenter.sh/unregistered"),
        Some(Value::Array(vec![string(":NoExecute")]))
    );
    assert_eq!(
        kubernetes(&doc, "node-labels"),
        Some(&Value::Table(vec![("zone".to_owned(), string("a"))]))
    );
}

#[test]
fn kubelet_configuration_becomes_settings() {
    let map = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>()
    };
    let mut input = br_input(Some(
        "[settings.kubernetes.eviction-hard]\n'nodefs.available' = '1%'\n",
    ));
    input.kubelet = Some(KubeletConfiguration {
        cluster_dns: Some(vec!["10.9.9.9".to_owned(), "10.9.9.8".to_owned()]),
        max_pods: Some(MaxPods::Count(35)),
        system_reserved: Some(map(&[("cpu", "2"), ("memory", "3Gi")])),
        kube_reserved: Some(map(&[("ephemeral-storage", "10Gi")])),
        eviction_hard: Some(map(&[("memory.available", "10%")])),
        eviction_soft: Some(map(&[("memory.available", "10%")])),
        eviction_soft_grace_period: Some(map(&[("memory.available", "1m")])),
        eviction_max_pod_grace_period: Some(10),
        image_gc_high_threshold_percent: Some(50),
        image_gc_low_threshold_percent: Some(40),
        cpu_cfs_quota: Some(false),
        ..KubeletConfiguration::default()
    });
    let got = user_data(&input).unwrap();
    let doc = parsed(&got);
    let table = |pairs: &[(&str, &str)]| {
        Value::Table(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), string(v)))
                .collect(),
        )
    };
    assert_eq!(
        kubernetes(&doc, "cluster-dns-ip"),
        Some(&string("10.9.9.9"))
    );
    assert_eq!(kubernetes(&doc, "max-pods"), Some(&Value::Integer(35)));
    assert_eq!(
        kubernetes(&doc, "system-reserved"),
        Some(&table(&[("cpu", "2"), ("memory", "3Gi")]))
    );
    assert_eq!(
        kubernetes(&doc, "kube-reserved"),
        Some(&table(&[("ephemeral-storage", "10Gi")]))
    );
    // The class's kubelet replaces the user data's map, as upstream does.
    assert_eq!(
        kubernetes(&doc, "eviction-hard"),
        Some(&table(&[("memory.available", "10%")]))
    );
    assert_eq!(
        kubernetes(&doc, "eviction-max-pod-grace-period"),
        Some(&Value::Integer(10))
    );
    assert_eq!(
        kubernetes(&doc, "image-gc-high-threshold-percent"),
        Some(&string("50"))
    );
    assert_eq!(
        kubernetes(&doc, "image-gc-low-threshold-percent"),
        Some(&string("40"))
    );
    assert_eq!(
        kubernetes(&doc, "cpu-cfs-quota-enforced"),
        Some(&Value::Boolean(false))
    );
    // Upstream's suite expects these two blocks written as they are here.
    assert!(
        got.contains(
            "[settings.kubernetes.eviction-soft]\n'memory.available' = '10%'\n\n\
         [settings.kubernetes.eviction-soft-grace-period]\n'memory.available' = '1m0s'\n"
        ),
        "{got}"
    );
    assert!(
        got.contains("max-pods = 35\neviction-max-pod-grace-period = 10\n"),
        "{got}"
    );
}

#[test]
fn bad_toml_is_refused_naming_spec_user_data() {
    let err = user_data(&br_input(Some("#/bin/bash\n ./not-toml.sh"))).unwrap_err();
    assert!(matches!(err, UserDataError::InvalidToml { .. }), "{err:?}");
    assert!(err.to_string().starts_with("spec.userData"), "{err}");
    assert!(std::error::Error::source(&err).is_some());

    let cases = [
        ("settings = 1", "settings"),
        ("[settings]\nkubernetes = 'x'", "settings.kubernetes"),
        (
            "[settings.kubernetes]\nmax-pods = 'many'",
            "settings.kubernetes.max-pods",
        ),
        (
            "[settings.kubernetes.node-labels]\nteam = 1",
            "settings.kubernetes.node-labels.team",
        ),
        (
            "[settings.bootstrap-commands.x]\nmode = 1",
            "settings.bootstrap-commands.x.mode",
        ),
    ];
    for (custom, key) in cases {
        let err = user_data(&br_input(Some(custom))).unwrap_err();
        assert!(
            matches!(&err, UserDataError::InvalidBottlerocketSetting { key: k, .. } if k == key),
            "{custom}: {err:?}"
        );
    }
}

#[test]
fn raid0_mounts_instance_storage_as_upstream_writes_it() {
    let default_bind = "\n[settings.bootstrap-commands.000-mount-instance-storage]\n\
        commands = [['apiclient', 'ephemeral-storage', 'init'], ['apiclient', 'ephemeral-storage', 'bind']]\n\
        mode = 'always'\nessential = true\n";
    let explicit = "\n[settings.bootstrap-commands.000-mount-instance-storage]\n\
        commands = [['apiclient', 'ephemeral-storage', 'init'], ['apiclient', 'ephemeral-storage', 'bind', '--dirs', '/var/lib/containerd', '/var/lib/kubelet', '/var/log/pods']]\n\
        mode = 'always'\nessential = true\n";
    for (version, expected) in [
        ("latest", default_bind),
        ("v1.46.0", default_bind),
        ("v1.45.0", explicit),
    ] {
        let mut input = br_input(None);
        input.instance_store_policy = Some("RAID0".to_owned());
        input.ami_version = Some(version.to_owned());
        let got = user_data(&input).unwrap();
        assert!(got.contains(expected), "{version}: {got}");
    }
    let mut input = br_input(Some(
        "\n[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n",
    ));
    input.instance_store_policy = Some("RAID0".to_owned());
    input.ami_version = Some("latest".to_owned());
    let got = user_data(&input).unwrap();
    let merged = "\n[settings.bootstrap-commands]\n\
        [settings.bootstrap-commands.000-mount-instance-storage]\n\
        commands = [['apiclient', 'ephemeral-storage', 'init'], ['apiclient', 'ephemeral-storage', 'bind']]\n\
        mode = 'always'\nessential = true\n\n\
        [settings.bootstrap-commands.111-say-hello]\n\
        commands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n";
    assert!(got.contains(merged), "{got}");
    // Without RAID0 no mount command is added.
    let got = user_data(&br_input(None)).unwrap();
    assert!(!got.contains("bootstrap-commands"), "{got}");
}

#[test]
fn default_bind_starts_at_1_46() {
    for (version, expected) in [
        (None, false),
        (Some(""), false),
        (Some("latest"), true),
        (Some("v1.46.0"), true),
        (Some("1.47.2"), true),
        (Some("v2.0.0"), true),
        (Some("v1.45.9"), false),
        (Some("v1.46"), false),
        (Some("vx.y.z"), false),
    ] {
        assert_eq!(supports_default_bind(version), expected, "{version:?}");
    }
}

#[test]
fn written_toml_reads_back_the_same() {
    let text = "[settings.a]\n\"it's\" = \"quote ' and \\\"double\\\"\\n\"\n\
        f = 1.5\nwhole = 2.0\nwhen = 1979-05-27T07:32:00Z\n\
        list = [{ name = 'x', n = 1 }]\n[[settings.b]]\nk = 'v'\n";
    let first = parsed(text);
    let written = toml::write(&first);
    assert_eq!(parsed(&written), first, "{written}");
}

#[test]
fn nesting_too_deep_is_refused_not_followed() {
    // The parser bounds the depth our reader and writer recurse to.
    let header = vec!["a"; 1000].join(".");
    let arrays = format!("{}1{}", "[".repeat(1000), "]".repeat(1000));
    for custom in [
        format!("[settings.{header}]\nk = 1\n"),
        format!("[settings]\nx = {arrays}\n"),
    ] {
        let err = user_data(&br_input(Some(&custom))).unwrap_err();
        assert!(matches!(err, UserDataError::InvalidToml { .. }), "{err:?}");
    }
}
