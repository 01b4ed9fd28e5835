use karpenter::scenario::{LoadOptions, Scenario};
#[test]
fn scratch() {
    for f in [
        "provision-basic.yaml",
        "disrupt-basic.yaml",
        "azure-basic.yaml",
    ] {
        let p = format!("../shared/scenario-examples/{f}");
        let s = Scenario::load_files(&[p], &LoadOptions::default());
        match s {
            Ok(s) => println!(
                "{f}: {} objects, {} pods, warnings {:?}",
                s.object_count(),
                s.pods.len(),
                s.warnings
            ),
            Err(e) => println!("{f}: ERROR {e}"),
        }
    }
    let bad = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: 3\n";
    println!(
        "{}",
        Scenario::from_str("bad.yaml", bad, &LoadOptions::default()).unwrap_err()
    );
    let bad = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n---\nkind: Pod\nmetadata:\n  name: y\napiVersion: v1\nspec:\n  containers:\n  - name: a\n    resources: {requests: {cpu: 1}}\n    ports: [{containerPort: abc}]\n";
    println!(
        "{}",
        Scenario::from_str("bad2.yaml", bad, &LoadOptions::default()).unwrap_err()
    );
    let bad = "{\"apiVersion\":\"v1\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":1}]}}],\"kind\":\"List\"}";
    println!(
        "{}",
        Scenario::from_str("bad.json", bad, &LoadOptions::default()).unwrap_err()
    );
    let ok = "kind: Pod\nmetadata:\n  name: y\napiVersion: v1\nspec:\n  containers:\n  - name: a\n    resources: {requests: {cpu: 1}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\n";
    let s = Scenario::from_str("ok.yaml", ok, &LoadOptions::default()).unwrap();
    println!(
        "{:?} {:?}",
        s.pods[0].spec.as_ref().unwrap().containers[0].resources,
        s.warnings
    );
    let bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]\nkind: X\napiVersion: v1\n";
    println!(
        "{}",
        Scenario::from_str("bomb.yaml", bomb, &LoadOptions::default()).unwrap_err()
    );
    let deep = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {}{}\n",
        "[".repeat(10000),
        "]".repeat(10000)
    );
    println!(
        "{}",
        Scenario::from_str("deep.yaml", &deep, &LoadOptions::default()).unwrap_err()
    );
    let deep = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {}{}}}",
        "[".repeat(10000),
        "]".repeat(10000)
    );
    println!(
        "{}",
        Scenario::from_str("deep.json", &deep, &LoadOptions::default()).unwrap_err()
    );
}
