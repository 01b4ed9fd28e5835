//! Upstream's option cases (`pkg/operator/options/suite_test.go`) as far as
//! they apply to reading by name, every problem at once, and the defaults.

use std::collections::BTreeMap;
use std::time::Duration;

use super::parse::{feature_gates, go_bool, go_duration};
use super::*;

fn read(pairs: &[(&str, &str)]) -> Result<AwsSettings, SettingsError> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    AwsSettings::from_lookup(|name| map.get(name).cloned())
}

fn problems(pairs: &[(&str, &str)]) -> Vec<(&'static str, &'static str)> {
    match read(pairs) {
        Ok(settings) => panic!("expected problems, got {settings:?}"),
        Err(e) => e.problems.iter().map(|p| (p.variable, p.flag)).collect(),
    }
}

/// Settings by variable, and the (variable, flag) a problem names.
type Pairs<'a> = &'a [(&'a str, &'a str)];

const MINUTE: Duration = Duration::from_secs(60);

#[test]
fn every_upstream_setting_is_read_from_its_variable() {
    // Upstream's "fallback to env vars" case, with a CA bundle that is
    // base64 (upstream's `env-bundle` is not; this reader checks it).
    let settings = read(&[
        ("CLUSTER_CA_BUNDLE", "ZW52LWJ1bmRsZQ=="),
        ("CLUSTER_NAME", "env-cluster"),
        ("CLUSTER_ENDPOINT", "https://env-cluster"),
        ("ISOLATED_VPC", "true"),
        ("EKS_CONTROL_PLANE", "true"),
        ("VM_MEMORY_OVERHEAD_PERCENT", "0.1"),
        ("INTERRUPTION_QUEUE", "env-cluster"),
        ("RESERVED_ENIS", "10"),
        ("DISABLE_DRY_RUN", "false"),
        ("ENABLE_ZONAL_SHIFT", "true"),
        ("AMI_REFRESH_INTERVAL", "30m"),
        ("SUBNET_REFRESH_INTERVAL", "15m"),
        ("AWS_FEATURE_GATES", "NodeClassCEL=true"),
        ("AWS_REGION", "us-west-2"),
    ])
    .expect("valid");
    let expected = AwsSettings {
        cluster_name: "env-cluster".into(),
        cluster_endpoint: Some("https://env-cluster".into()),
        cluster_ca_bundle: Some("ZW52LWJ1bmRsZQ==".into()),
        isolated_vpc: true,
        eks_control_plane: true,
        vm_memory_overhead_percent: 0.1,
        interruption_queue: Some("env-cluster".into()),
        reserved_enis: 10,
        disable_dry_run: false,
        enable_zonal_shift: true,
        ami_refresh_interval: 30 * MINUTE,
        subnet_refresh_interval: 15 * MINUTE,
        feature_gates: AwsFeatureGates {
            node_class_cel: true,
        },
        region: Some("us-west-2".into()),
    };
    assert_eq!(settings, expected);
}

#[test]
fn a_cluster_name_alone_takes_upstreams_defaults() {
    let settings = read(&[("CLUSTER_NAME", "test-cluster")]).expect("valid");
    assert_eq!(settings.ami_refresh_interval, MINUTE);
    assert_eq!(settings.subnet_refresh_interval, MINUTE);
    assert_eq!(settings.vm_memory_overhead_percent, 0.075);
    assert_eq!(settings.reserved_enis, 0);
    assert!(!settings.feature_gates.node_class_cel);
    assert_eq!(settings.region, None, "absent region is left to the SDK");
    assert_eq!(
        settings,
        AwsSettings {
            cluster_name: "test-cluster".into(),
            ..AwsSettings::default()
        }
    );
}

#[test]
fn blank_values_count_as_unset() {
    let settings = read(&[
        ("CLUSTER_NAME", " demo "),
        ("CLUSTER_ENDPOINT", "  "),
        ("RESERVED_ENIS", ""),
        ("AMI_REFRESH_INTERVAL", " "),
    ])
    .expect("valid");
    assert_eq!(settings.cluster_name, "demo");
    assert_eq!(settings.cluster_endpoint, None);
    assert_eq!(settings.ami_refresh_interval, MINUTE);
}

#[test]
fn upstreams_validation_cases_each_name_their_setting() {
    let name = ("CLUSTER_NAME", "test-cluster");
    let cases: &[(Pairs<'_>, (&str, &str))] = &[
        (&[], ("CLUSTER_NAME", "cluster-name")),
        (
            &[
                name,
                (
                    "CLUSTER_ENDPOINT",
                    "00000000000000000000000.gr7.us-west-2.eks.amazonaws.com",
                ),
            ],
            ("CLUSTER_ENDPOINT", "cluster-endpoint"),
        ),
        (
            &[name, ("VM_MEMORY_OVERHEAD_PERCENT", "-0.01")],
            ("VM_MEMORY_OVERHEAD_PERCENT", "vm-memory-overhead-percent"),
        ),
        (
            &[name, ("RESERVED_ENIS", "-1")],
            ("RESERVED_ENIS", "reserved-enis"),
        ),
        (
            &[name, ("AMI_REFRESH_INTERVAL", "30s")],
            ("AMI_REFRESH_INTERVAL", "ami-refresh-interval"),
        ),
        (
            &[name, ("SUBNET_REFRESH_INTERVAL", "30s")],
            ("SUBNET_REFRESH_INTERVAL", "subnet-refresh-interval"),
        ),
    ];
    for (pairs, want) in cases {
        assert_eq!(problems(pairs), vec![*want], "{pairs:?}");
    }
}

#[test]
fn every_problem_is_reported_at_once_in_table_order_without_values() {
    let bad = [
        ("CLUSTER_ENDPOINT", "http://secret-host.example"),
        ("CLUSTER_CA_BUNDLE", "not*base64secret"),
        ("ISOLATED_VPC", "yessecret"),
        ("VM_MEMORY_OVERHEAD_PERCENT", "NaNsecret"),
        ("RESERVED_ENIS", "tensecret"),
        ("AMI_REFRESH_INTERVAL", "59secret"),
        ("SUBNET_REFRESH_INTERVAL", "59s"),
        ("AWS_FEATURE_GATES", "NodeClassCEL=secret"),
    ];
    let error = read(&bad).expect_err("all bad");
    let named: Vec<&str> = error.problems.iter().map(|p| p.variable).collect();
    assert_eq!(
        named,
        [
            "CLUSTER_NAME",
            "CLUSTER_ENDPOINT",
            "CLUSTER_CA_BUNDLE",
            "ISOLATED_VPC",
            "VM_MEMORY_OVERHEAD_PERCENT",
            "RESERVED_ENIS",
            "AMI_REFRESH_INTERVAL",
            "SUBNET_REFRESH_INTERVAL",
            "AWS_FEATURE_GATES",
        ]
    );
    let text = error.to_string();
    assert!(text.starts_with("9 AWS setting(s)"), "{text}");
    assert!(
        text.contains("CLUSTER_NAME (--cluster-name) is required"),
        "{text}"
    );
    assert!(!text.contains("secret"), "a value leaked: {text}");
}

#[test]
fn the_endpoint_must_be_an_absolute_https_url_with_a_host() {
    for good in [
        "https://ABC.gr7.us-west-2.eks.amazonaws.com",
        "https://10.0.0.1:443/",
        "HTTPS://[fd00::1]:6443",
    ] {
        let settings = read(&[("CLUSTER_NAME", "c"), ("CLUSTER_ENDPOINT", good)]);
        assert_eq!(
            settings.expect(good).cluster_endpoint.as_deref(),
            Some(good)
        );
    }
    for bad in [
        "http://host",
        "https://",
        "https:///path",
        "host:443",
        "https://a b",
    ] {
        let found = problems(&[("CLUSTER_NAME", "c"), ("CLUSTER_ENDPOINT", bad)]);
        assert_eq!(found, [("CLUSTER_ENDPOINT", "cluster-endpoint")], "{bad}");
    }
}

#[test]
fn the_ca_bundle_must_be_base64() {
    let bad = problems(&[("CLUSTER_NAME", "c"), ("CLUSTER_CA_BUNDLE", "abc")]);
    assert_eq!(bad, [("CLUSTER_CA_BUNDLE", "cluster-ca-bundle")]);
    let pem = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==";
    let good = read(&[("CLUSTER_NAME", "c"), ("CLUSTER_CA_BUNDLE", pem)]).expect("base64");
    assert_eq!(good.cluster_ca_bundle.as_deref(), Some(pem));
}

#[test]
fn go_durations_parse_as_go_reads_them() {
    let cases = [
        ("90s", Duration::from_secs(90)),
        ("1m30s", Duration::from_secs(90)),
        ("1h", Duration::from_secs(3600)),
        ("1.5h", Duration::from_secs(5400)),
        ("+2m", Duration::from_secs(120)),
        ("0", Duration::ZERO),
        ("300ms", Duration::from_millis(300)),
        ("1h2m3s4ms5us6ns", Duration::new(3723, 4_005_006)),
        (".5s", Duration::from_millis(500)),
        ("1µs", Duration::from_micros(1)),
    ];
    for (text, want) in cases {
        assert_eq!(go_duration(text), Ok(want), "{text}");
    }
    for bad in ["", "1", "m", "1x", "1.2.3s", "-1m", "1m30", ".s", "1d"] {
        assert!(go_duration(bad).is_err(), "{bad}");
    }
}

#[test]
fn refresh_intervals_of_a_minute_or_more_are_kept() {
    let settings = read(&[
        ("CLUSTER_NAME", "c"),
        ("AMI_REFRESH_INTERVAL", "1m"),
        ("SUBNET_REFRESH_INTERVAL", "60s"),
    ])
    .expect("a minute is allowed");
    assert_eq!(settings.ami_refresh_interval, MINUTE);
    assert_eq!(settings.subnet_refresh_interval, MINUTE);
    let below = problems(&[("CLUSTER_NAME", "c"), ("AMI_REFRESH_INTERVAL", "59.999s")]);
    assert_eq!(below, [("AMI_REFRESH_INTERVAL", "ami-refresh-interval")]);
}

#[test]
fn feature_gates_follow_upstreams_cases() {
    let cel = |text: &str| feature_gates(text).map(|g| g.node_class_cel);
    assert_eq!(cel("NodeClassCEL=true"), Ok(true));
    assert_eq!(cel("NodeClassCEL=false"), Ok(false));
    // Gates not listed keep their defaults; unknown ones are tolerated.
    assert_eq!(cel("Hello=true"), Ok(false));
    assert_eq!(cel("Hello=true,NodeClassCEL=true,World=false"), Ok(true));
    assert_eq!(cel(" NodeClassCEL = 1 , "), Ok(true));
    assert!(cel("NodeClassCEL").is_err());
    assert!(cel("NodeClassCEL=maybe").is_err());
}

#[test]
fn booleans_are_read_as_go_reads_them() {
    for yes in ["1", "t", "T", "true", "TRUE", "True"] {
        assert_eq!(go_bool(yes), Ok(true), "{yes}");
    }
    for no in ["0", "f", "F", "false", "FALSE", "False"] {
        assert_eq!(go_bool(no), Ok(false), "{no}");
    }
    assert!(go_bool("yes").is_err());
    let flags = read(&[
        ("CLUSTER_NAME", "c"),
        ("DISABLE_DRY_RUN", "1"),
        ("ENABLE_ZONAL_SHIFT", "T"),
    ])
    .expect("valid");
    assert!(flags.disable_dry_run && flags.enable_zonal_shift && !flags.isolated_vpc);
}

#[test]
fn the_region_is_aws_region_else_aws_default_region() {
    let both = read(&[
        ("CLUSTER_NAME", "c"),
        ("AWS_REGION", "eu-west-1"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ])
    .expect("valid");
    assert_eq!(both.region.as_deref(), Some("eu-west-1"));
    let fallback =
        read(&[("CLUSTER_NAME", "c"), ("AWS_DEFAULT_REGION", "us-east-1")]).expect("valid");
    assert_eq!(fallback.region.as_deref(), Some("us-east-1"));
}

#[test]
fn reserved_enis_and_overhead_feed_the_instance_type_options() {
    let settings = read(&[
        ("CLUSTER_NAME", "c"),
        ("RESERVED_ENIS", "2"),
        ("VM_MEMORY_OVERHEAD_PERCENT", "0"),
    ])
    .expect("valid");
    let options = settings.instance_type_options();
    assert_eq!(options.reserved_enis, 2);
    assert_eq!(options.vm_memory_overhead_percent, 0.0);
    assert_eq!(options.spot_prices, None);
    let huge = problems(&[("CLUSTER_NAME", "c"), ("RESERVED_ENIS", "4294967296")]);
    assert_eq!(huge, [("RESERVED_ENIS", "reserved-enis")]);
}

#[test]
fn the_table_names_each_setting_once_with_its_flag() {
    let mut variables = std::collections::BTreeSet::new();
    let mut flags = std::collections::BTreeSet::new();
    for setting in SETTINGS {
        assert!(variables.insert(setting.variable), "{}", setting.variable);
        assert!(flags.insert(setting.flag), "{}", setting.flag);
        // Upstream's flags are its variables in kebab case.
        let kebab = setting.variable.to_ascii_lowercase().replace('_', "-");
        assert_eq!(setting.flag, kebab);
        assert!(!setting.help.is_empty());
    }
    let required: Vec<&str> = SETTINGS
        .iter()
        .filter(|s| s.required)
        .map(|s| s.variable)
        .collect();
    assert_eq!(required, ["CLUSTER_NAME"]);
}
