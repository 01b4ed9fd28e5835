//! `karpenter-sim --provider aws` on EKS manifests: the default provider
//! rule, types and prices from the embedded EC2 catalog, `--region`,
//! `--spot-prices`, existing nodes priced from their labels, AMI drift.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/scenarios")
        .join(name);
    path.to_str().expect("a UTF-8 path").to_owned()
}

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_karpenter-sim"))
        .args(args)
        .output()
        .expect("run karpenter-sim")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json(output: &Output) -> Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// A file of this test's in the temporary directory, holding `text`.
fn temp_file(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("aws-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write a temporary file");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// The on-demand price of `instance_type` in us-east-1, read from the data
/// the catalog embeds.
fn us_east_1_price(instance_type: &str) -> f64 {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("karpenter-aws/data/prices-on-demand.csv");
    let text = std::fs::read_to_string(path).expect("the price table");
    text.lines()
        .map(|line| line.split(',').collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[0] == "us-east-1" && f[1] == instance_type)
        .and_then(|f| f[2].parse().ok())
        .expect("a us-east-1 price")
}

/// Every claim's launch: (instance type, zone, capacity type, price).
fn launches(plan: &Value) -> Vec<(String, String, String, f64)> {
    let claims = plan["nodeClaims"].as_array().expect("claims");
    claims
        .iter()
        .map(|claim| {
            let launch = &claim["launch"];
            let text = |field: &str| launch[field].as_str().expect(field).to_owned();
            let price = launch["price"].as_f64().expect("a price");
            (
                text("instanceType"),
                text("zone"),
                text("capacityType"),
                price,
            )
        })
        .collect()
}

#[test]
fn eks_manifests_plan_m5_c5_r5_at_us_east_1_prices_by_default() {
    let file = example("eks-basic.yaml");
    let output = sim(&["provision", "-f", &file, "-o", "json"]);
    let plan = json(&output);
    assert!(
        !stderr(&output).contains("AKSNodeClass"),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        plan["unschedulable"].as_array().map(Vec::len),
        Some(0),
        "{plan}"
    );
    let launched = launches(&plan);
    assert!(!launched.is_empty());
    for (instance_type, zone, capacity_type, price) in &launched {
        let family = instance_type.split('.').next().unwrap_or_default();
        assert!(["m5", "c5", "r5"].contains(&family), "{instance_type}");
        assert!(zone.starts_with("us-east-1"), "{zone}");
        assert_eq!(capacity_type, "on-demand");
        assert_eq!(*price, us_east_1_price(instance_type), "{instance_type}");
    }
    // Explicitly, and twice: the same bytes.
    let explicit = sim(&[
        "provision",
        "-f",
        &file,
        "-o",
        "json",
        "--provider",
        "aws",
        "--region",
        "us-east-1",
    ]);
    assert_eq!(output.stdout, explicit.stdout);
    let summary = sim(&["summary", "-f", &file]);
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(text.contains("provider: aws, region us-east-1"), "{text}");
}

#[test]
fn a_region_is_checked_and_one_without_a_table_is_priced_from_us_east_1() {
    let file = example("eks-basic.yaml");
    let bad = sim(&["provision", "-f", &file, "--region", "eastus"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("--region eastus"), "{}", stderr(&bad));
    let output = sim(&[
        "provision",
        "-f",
        &file,
        "--region",
        "eu-west-1",
        "-o",
        "json",
    ]);
    let plan = json(&output);
    assert!(
        stderr(&output).contains("priced from us-east-1"),
        "{}",
        stderr(&output)
    );
    for (instance_type, zone, _, price) in launches(&plan) {
        assert!(zone.starts_with("eu-west-1"), "{zone}");
        assert_eq!(price, us_east_1_price(&instance_type));
    }
}

#[test]
fn a_bad_spot_price_file_names_its_line_and_field() {
    let file = example("eks-basic.yaml");
    let prices = temp_file(
        "bad.csv",
        "instanceType,zone,price\nm5.large,us-east-1a,0.03\nc5.large,us-east-1a,-2\n",
    );
    let output = sim(&["provision", "-f", &file, "--spot-prices", &prices]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains(&format!("{prices}, line 3")), "{message}");
    assert!(message.contains("field price"), "{message}");
    let missing = sim(&[
        "provision",
        "-f",
        &file,
        "--spot-prices",
        "/nonexistent/spot.csv",
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("/nonexistent/spot.csv"));
    // Only the AWS provider takes it.
    let azure = sim(&[
        "provision",
        "-f",
        &file,
        "--provider",
        "azure",
        "--spot-prices",
        &prices,
    ]);
    assert_eq!(azure.status.code(), Some(2));
    assert!(
        stderr(&azure).contains("--provider aws"),
        "{}",
        stderr(&azure)
    );
}

#[test]
fn spot_prices_change_what_launches() {
    let text = std::fs::read_to_string(example("eks-basic.yaml")).expect("the example");
    let spot_allowed = text.replace("values: [on-demand]", "values: [spot, on-demand]");
    assert_ne!(text, spot_allowed);
    let file = temp_file("spot.yaml", &spot_allowed);
    // Before any spot price is known, spot is priced as on-demand, and spot
    // launches first.
    let plan = json(&sim(&["provision", "-f", &file, "-o", "json"]));
    for (instance_type, _, capacity_type, price) in launches(&plan) {
        assert_eq!(capacity_type, "spot");
        assert_eq!(price, us_east_1_price(&instance_type));
    }
    // Listed prices: only m5.xlarge has spot, cheaply; the rest is on-demand.
    let mut csv = "instanceType,zone,price\n".to_owned();
    for zone in ["a", "b", "c"] {
        csv.push_str(&format!("m5.xlarge,us-east-1{zone},0.05\n"));
    }
    let prices = temp_file("spot.csv", &csv);
    let plan = json(&sim(&[
        "provision",
        "-f",
        &file,
        "-o",
        "json",
        "--spot-prices",
        &prices,
    ]));
    let launched = launches(&plan);
    assert!(!launched.is_empty());
    for (instance_type, _, capacity_type, price) in launched {
        assert_eq!(
            (instance_type.as_str(), capacity_type.as_str(), price),
            ("m5.xlarge", "spot", 0.05)
        );
    }
}

#[test]
fn existing_eks_nodes_are_priced_from_their_labels_and_drift_by_image() {
    let file = example("eks-disrupt.yaml");
    let args = [
        "disrupt",
        "-f",
        &file,
        "--now",
        "2026-01-02T00:00:00Z",
        "-o",
        "json",
    ];
    let output = sim(&args);
    let plan = json(&output);
    assert_eq!(output.stdout, sim(&args).stdout, "the same plan twice");
    let commands = plan["commands"].as_array().expect("commands");
    let drifted = commands
        .iter()
        .find(|c| c["reason"] == "Drifted")
        .expect("a drift command");
    assert_eq!(drifted["candidates"], serde_json::json!(["node-b"]));
    assert_eq!(drifted["drift"][0]["reason"], "AMIDrift");
    // node-b is an on-demand m5.xlarge: deleting it saves that price.
    assert_eq!(
        drifted["savingsPerHour"].as_f64(),
        Some(us_east_1_price("m5.xlarge"))
    );
}

#[test]
fn azure_does_not_claim_an_ec2_pool_lacks_its_aks_node_class() {
    let output = sim(&[
        "provision",
        "-f",
        &example("eks-basic.yaml"),
        "--provider",
        "azure",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(!message.contains("which the input lacks"), "{message}");
    assert!(
        message.contains("EC2NodeClass default, an AWS node class"),
        "{message}"
    );
}

#[test]
fn replay_runs_the_aws_provider_by_default_on_eks_manifests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = |p: &str| root.join(p).to_str().expect("a UTF-8 path").to_owned();
    let trace = path("tests/fixtures/replay/morning.yaml");
    let eks = path("examples/replay/eks.yaml");
    // EC2NodeClass documents and no InstanceType: AWS without being asked.
    let args = [
        "replay",
        "-f",
        &eks,
        "--trace",
        &trace,
        "--duration",
        "90m",
        "--step",
        "5m",
    ];
    let out = json(&sim(&[&args[..], &["-o", "json"]].concat()));
    let run = &out["runs"][0];
    assert_eq!(
        run["flags"],
        "--packing upstream --step 5m0s --provider aws --region us-east-1"
    );
    let launched: Vec<&Value> = (run["events"].as_array().expect("events").iter())
        .filter(|e| e["kind"] == "launch")
        .collect();
    assert!(!launched.is_empty(), "{run}");
    for launch in launched {
        let ty = launch["instanceType"].as_str().expect("a type");
        assert!(
            ["m5.", "c5.", "r5."].iter().any(|f| ty.starts_with(f)),
            "{ty}"
        );
        let zone = launch["zone"].as_str().expect("a zone");
        assert!(zone.starts_with("us-east-1"), "{zone}");
    }
    assert_eq!(run["totals"]["disruptions"]["Interrupted"], 2, "{run}");
    // The provider's options are heard, and the run's label says so.
    let options = [
        "--reserved-enis",
        "1",
        "--vm-memory-overhead-percent",
        "0.08",
    ];
    let out = json(&sim(&[&args[..], &options[..], &["-o", "json"]].concat()));
    assert_eq!(
        out["runs"][0]["flags"],
        "--packing upstream --step 5m0s --provider aws --region us-east-1 --reserved-enis 1 \
         --vm-memory-overhead-percent 0.08"
    );
    // A fake provider's cluster and an unknown region are bad input, said
    // so.
    let cluster = path("examples/replay/cluster.yaml");
    let refused = [
        sim(&[
            "replay",
            "-f",
            &cluster,
            "--trace",
            &trace,
            "--provider",
            "aws",
        ]),
        sim(&[&args[..], &["--region", "nowhere"]].concat()),
    ];
    for (output, said) in refused.iter().zip(["InstanceType", "nowhere"]) {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
        assert!(stderr(output).contains(said), "{}", stderr(output));
    }
}

#[test]
fn the_provider_options_are_checked_and_only_for_aws() {
    let file = example("eks-basic.yaml");
    let over = sim(&[
        "provision",
        "-f",
        &file,
        "--vm-memory-overhead-percent",
        "1.5",
    ]);
    assert_eq!(over.status.code(), Some(2), "{}", stderr(&over));
    assert!(
        stderr(&over).contains("--vm-memory-overhead-percent"),
        "{}",
        stderr(&over)
    );
    let set = [
        "--vm-memory-overhead-percent",
        "0.08",
        "--reserved-enis",
        "1",
    ];
    let ok = sim(&[&["provision", "-f", &file][..], &set[..]].concat());
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let azure = sim(&[
        &["summary", "-f", &file, "--provider", "azure"][..],
        &set[..],
    ]
    .concat());
    assert_eq!(azure.status.code(), Some(2), "{}", stderr(&azure));
}

/// One EC2NodeClass and a NodePool of `m5.large` and `m5.xlarge` on
/// demand, then `pods`.
fn m5_cluster(pods: &str) -> String {
    format!(
        "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {{name: default}}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{{alias: al2023@latest}}]
  subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: demo}}}}]
  securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: demo}}}}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: default}}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
      - {{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}}
      - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
{pods}"
    )
}

fn pod(name: &str, cpu: &str, memory: &str) -> String {
    format!(
        "---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers:
  - name: app
    image: registry.example/app:1
    resources:
      requests: {{cpu: {cpu}, memory: {memory}}}
"
    )
}

/// The instance types of the plan's launches, in order.
fn launched_types(args: &[&str]) -> Vec<String> {
    let plan = json(&sim(args));
    launches(&plan).into_iter().map(|l| l.0).collect()
}

#[test]
fn the_vm_memory_overhead_shapes_what_fits() {
    // m5.large has 8 GiB: 7,577 MiB after 7.5 % overhead, 6,903 MiB
    // allocatable; at 20 % only 5,879 MiB, so the pod needs an xlarge.
    let file = temp_file("overhead.yaml", &m5_cluster(&pod("big", "1", "6500Mi")));
    let base = ["provision", "-f", &file, "-o", "json"];
    assert_eq!(launched_types(&base), ["m5.large"]);
    let dearer = [&base[..], &["--vm-memory-overhead-percent", "0.2"][..]].concat();
    assert_eq!(launched_types(&dearer), ["m5.xlarge"]);
}

#[test]
fn reserved_enis_take_pods_from_every_node() {
    // m5.large: 3 ENIs of 10 addresses, so 29 pods; one ENI kept back
    // leaves 2 x 9 + 2 = 20, and 25 small pods no longer fit it. Upstream's
    // packing keeps adding pods to a claim while any of its types holds
    // them: m5.xlarge (4 x 14 + 2 - 14 = 44 pods) takes all 25.
    let pods: String = (0..25)
        .map(|i| pod(&format!("p{i}"), "10m", "10Mi"))
        .collect();
    let file = temp_file("enis.yaml", &m5_cluster(&pods));
    let base = ["provision", "-f", &file, "-o", "json"];
    assert_eq!(launched_types(&base), ["m5.large"]);
    let reserved = [&base[..], &["--reserved-enis", "1"][..]].concat();
    assert_eq!(launched_types(&reserved), ["m5.xlarge"]);
}
