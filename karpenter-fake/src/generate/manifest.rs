//! Writing generated objects as `kubectl get -o yaml|json` would print them, for
//! loader tests and benchmarks.
//!
//! Keys are sorted, as kubectl sorts them, except that each item starts with
//! `apiVersion` and `kind`: for Kubernetes' own kinds sorting puts them first
//! anyway, and the scenario format's own kinds (`InstanceType`) are written that way
//! by hand.

use std::collections::HashMap;
use std::fmt::Write as _;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_core::resources::{ResourceList, format_quantity};
use karpenter_core::snapshot::Snapshot;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

/// The keys of an object, `apiVersion` and `kind` first, then the rest sorted.
fn envelope_first(map: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let head = ["apiVersion", "kind"]
        .into_iter()
        .filter_map(|k| map.get_key_value(k));
    head.chain(
        map.iter()
            .filter(|(k, _)| *k != "apiVersion" && *k != "kind"),
    )
}

/// An item serialized with its envelope first.
struct Item<'a>(&'a Value);

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Value::Object(map) = self.0 else {
            return self.0.serialize(serializer);
        };
        let mut out = serializer.serialize_map(Some(map.len()))?;
        for (key, value) in envelope_first(map) {
            out.serialize_entry(key, value)?;
        }
        out.end()
    }
}

/// An instance type as the scenario format's `karpenter.fake/v1alpha1`
/// `InstanceType` document: capacity, overhead and offerings (its labels are the
/// format's defaults, `amd64` and `linux`, and are not written).
pub fn instance_type_document(it: &InstanceType) -> Value {
    let quantities = |list: &ResourceList| -> Value {
        list.iter()
            .map(|(name, milli)| (name.to_string(), json!(format_quantity(milli))))
            .collect::<Map<_, _>>()
            .into()
    };
    json!({
        "apiVersion": "karpenter.fake/v1alpha1",
        "kind": "InstanceType",
        "metadata": {"name": it.name},
        "capacity": quantities(&it.capacity),
        "overhead": quantities(&it.overhead),
        "offerings": it.offerings.iter().map(offering_document).collect::<Vec<_>>(),
    })
}

/// An offering as the `InstanceType` document writes it: a reserved one with
/// its reservation and capacity, an unavailable one saying so.
fn offering_document(offering: &karpenter_core::cloudprovider::Offering) -> Value {
    let mut written = json!({
        "zone": offering.zone,
        "capacityType": offering.capacity_type,
        "price": offering.price,
    });
    if let Some(reservation) = &offering.reservation {
        written["reservationID"] = json!(reservation.id);
        written["capacity"] = json!(reservation.capacity);
    }
    // A reservation with no capacity left reads back unavailable already.
    let reads_unavailable = offering
        .reservation
        .as_ref()
        .is_some_and(|r| r.capacity == 0);
    if !offering.available && !reads_unavailable {
        written["available"] = json!(false);
    }
    written
}

/// The documents `karpenter-sim` reads back as `snapshot`: its NodePools, the
/// instance types they offer (each once), Nodes, NodeClaims, Pods and
/// PodDisruptionBudgets. For generated clusters, whose instance types carry
/// only the default labels.
pub fn snapshot_documents(snapshot: &Snapshot) -> Result<Vec<Value>, serde_json::Error> {
    let mut items = Vec::new();
    for pool in &snapshot.node_pools {
        items.push(serde_json::to_value(pool)?);
    }
    let mut written = std::collections::BTreeSet::new();
    for it in snapshot
        .instance_types
        .values()
        .flat_map(|types| types.iter())
    {
        if written.insert(it.name.as_str()) {
            items.push(instance_type_document(it));
        }
    }
    for node in &snapshot.nodes {
        if let Some(node) = &node.node {
            items.push(serde_json::to_value(node.as_ref())?);
        }
    }
    for node in &snapshot.nodes {
        if let Some(claim) = &node.node_claim {
            items.push(serde_json::to_value(claim)?);
        }
    }
    for pod in &snapshot.pods {
        items.push(serde_json::to_value(pod.to_pod())?);
    }
    for pdb in &snapshot.pod_disruption_budgets {
        items.push(serde_json::to_value(pdb)?);
    }
    Ok(items)
}

/// The list around the items.
struct List<'a>(&'a [Value]);

impl Serialize for List<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items: Vec<Item<'_>> = self.0.iter().map(Item).collect();
        let mut out = serializer.serialize_map(Some(4))?;
        out.serialize_entry("apiVersion", "v1")?;
        out.serialize_entry("items", &items)?;
        out.serialize_entry("kind", "List")?;
        out.serialize_entry("metadata", &serde_json::json!({"resourceVersion": ""}))?;
        out.end()
    }
}

/// A `kind: List` of `items` as JSON on one line (`kubectl get -o json | jq -c`).
pub fn to_compact_json(items: Vec<Value>) -> String {
    serde_json::to_string(&List(&items)).expect("a Value always serializes")
}

/// A `kind: List` of `items` as kubectl's JSON (4-space indent).
pub fn to_kubectl_json(items: Vec<Value>) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    List(&items)
        .serialize(&mut serializer)
        .expect("a Value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A `kind: List` of `items` as kubectl's YAML (block style, strings quoted only
/// where YAML would read them as something else).
pub fn to_kubectl_yaml(items: &[Value]) -> String {
    let mut out = String::from("apiVersion: v1\nitems:\n");
    let mut plain = Anchors::none();
    for item in items {
        write_item(&mut out, item, &mut plain);
    }
    out.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    out
}

/// `items` as PyYAML's `yaml.dump_all` writes objects that share parts: a
/// document each, and within a document every mapping that appears again
/// written once with an anchor (`&id001`, numbered afresh in each document) and
/// then as an alias (`*id001`). Scripts that build manifests write them so
/// when one object (a pod's labels, say) is used twice.
pub fn to_pyyaml_documents(items: &[Value]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        let mut anchors = Anchors::of(item);
        let Value::Object(map) = item else {
            let _ = writeln!(out, "{}", inline(item));
            continue;
        };
        for (key, value) in envelope_first(map) {
            write_entry(&mut out, "", key, value, 0, &mut anchors);
        }
    }
    out
}

/// Which mappings of a document are written with an anchor and then as aliases.
struct Anchors {
    /// Each repeated mapping's text, and its anchor once it has been written.
    repeated: HashMap<String, Option<usize>>,
    next: usize,
}

impl Anchors {
    /// No anchors: every mapping written in full.
    fn none() -> Anchors {
        Anchors {
            repeated: HashMap::new(),
            next: 1,
        }
    }

    /// The non-empty mappings that appear more than once in `document`.
    fn of(document: &Value) -> Anchors {
        fn count(value: &Value, seen: &mut HashMap<String, usize>) {
            match value {
                Value::Object(map) => {
                    if !map.is_empty() {
                        *seen.entry(value.to_string()).or_default() += 1;
                    }
                    map.values().for_each(|v| count(v, seen));
                }
                Value::Array(items) => items.iter().for_each(|v| count(v, seen)),
                _ => {}
            }
        }
        let mut seen = HashMap::new();
        count(document, &mut seen);
        let repeated = seen
            .into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(text, _)| (text, None))
            .collect();
        Anchors { repeated, next: 1 }
    }

    /// How to write `map` as a key's value: `&idNNN` before it in full, `*idNNN`
    /// instead of it, or nothing before it in full.
    fn mark(&mut self, map: &Value) -> Mark {
        if self.repeated.is_empty() {
            return Mark::Plain;
        }
        match self.repeated.get_mut(&map.to_string()) {
            None => Mark::Plain,
            Some(Some(id)) => Mark::Alias(*id),
            Some(slot) => {
                let id = self.next;
                self.next += 1;
                *slot = Some(id);
                Mark::Anchor(id)
            }
        }
    }
}

enum Mark {
    Plain,
    Anchor(usize),
    Alias(usize),
}

fn write_item(out: &mut String, item: &Value, anchors: &mut Anchors) {
    match item {
        Value::Object(map) if !map.is_empty() => {
            for (i, (key, value)) in envelope_first(map).enumerate() {
                let lead = if i == 0 { "- " } else { "  " };
                write_entry(out, lead, key, value, 2, anchors);
            }
        }
        other => write_seq_item(out, other, 0, anchors),
    }
}

fn write_seq_item(out: &mut String, value: &Value, indent: usize, anchors: &mut Anchors) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (i, (key, v)) in map.iter().enumerate() {
                let lead = if i == 0 {
                    format!("{pad}- ")
                } else {
                    format!("{pad}  ")
                };
                write_entry(out, &lead, key, v, indent + 2, anchors);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let _ = writeln!(out, "{pad}-");
            for item in items {
                write_seq_item(out, item, indent + 2, anchors);
            }
        }
        scalar => {
            let _ = writeln!(out, "{pad}- {}", inline(scalar));
        }
    }
}

fn write_entry(
    out: &mut String,
    lead: &str,
    key: &str,
    value: &Value,
    indent: usize,
    anchors: &mut Anchors,
) {
    let key = scalar_text(key);
    match value {
        Value::Object(map) if !map.is_empty() => {
            match anchors.mark(value) {
                Mark::Alias(id) => {
                    let _ = writeln!(out, "{lead}{key}: *id{id:03}");
                    return;
                }
                Mark::Anchor(id) => {
                    let _ = writeln!(out, "{lead}{key}: &id{id:03}");
                }
                Mark::Plain => {
                    let _ = writeln!(out, "{lead}{key}:");
                }
            }
            let pad = " ".repeat(indent + 2);
            for (k, v) in map {
                write_entry(out, &pad, k, v, indent + 2, anchors);
            }
        }
        // kubectl writes a list's items at the key's own indentation.
        Value::Array(items) if !items.is_empty() => {
            let _ = writeln!(out, "{lead}{key}:");
            for item in items {
                write_seq_item(out, item, indent, anchors);
            }
        }
        scalar => {
            let _ = writeln!(out, "{lead}{key}: {}", inline(scalar));
        }
    }
}

fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_text(s),
        Value::Array(_) => "[]".to_string(),
        Value::Object(_) => "{}".to_string(),
    }
}

/// A string as a plain scalar when YAML reads it back as the same string, else
/// double-quoted (JSON's escapes are YAML's).
fn scalar_text(s: &str) -> String {
    let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_output_is_kubectl_shaped() {
        let item = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"app": "web"}, "name": "web-0"},
            "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}], "tolerations": []}});
        let yaml = to_kubectl_yaml(&[item]);
        let expected = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    labels:\n      app: web\n    name: web-0\n  spec:\n    containers:\n    - name: app\n      ports:\n      - containerPort: 80\n    tolerations: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        assert_eq!(yaml, expected);
    }

    #[test]
    fn compact_json_is_the_kubectl_list_on_one_line() {
        let item = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0"}});
        let compact = to_compact_json(vec![item.clone()]);
        assert_eq!(
            compact,
            r#"{"apiVersion":"v1","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0"}}],"kind":"List","metadata":{"resourceVersion":""}}"#
        );
        let indented: Value = serde_json::from_str(&to_kubectl_json(vec![item])).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&compact).unwrap(), indented);
    }

    #[test]
    fn pyyaml_documents_anchor_what_repeats() {
        let labels = json!({"app": "web"});
        let pod = |name: &str| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": labels, "name": name},
                "spec": {"topologySpreadConstraints": [{"labelSelector": {"matchLabels": labels}, "maxSkew": 1}]}})
        };
        let yaml = to_pyyaml_documents(&[pod("web-0"), pod("web-1")]);
        let one = |name: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &id001\n    app: web\n  name: {name}\n\
                 spec:\n  topologySpreadConstraints:\n  - labelSelector:\n      matchLabels: *id001\n    maxSkew: 1\n"
            )
        };
        assert_eq!(yaml, format!("{}---\n{}", one("web-0"), one("web-1")));
    }

    #[test]
    fn offerings_are_written_as_the_document_reads_them() {
        use crate::document::{InstanceTypeDocument, RESERVATION_ID_LABEL};
        use karpenter_core::cloudprovider::{InstanceType, Offering, Reservation};
        let reservation = |id: &str, capacity| Reservation {
            label: RESERVATION_ID_LABEL.to_owned(),
            id: id.to_owned(),
            capacity,
        };
        let mut capacity = ResourceList::new();
        capacity.set("cpu", 4_000);
        capacity.set("memory", 8 << 30);
        let it = InstanceType::new(
            "c-4x",
            [
                ("kubernetes.io/arch", "amd64"),
                ("kubernetes.io/os", "linux"),
            ],
            vec![
                Offering::new("zone-a", "on-demand", 0.17),
                Offering::new("zone-b", "spot", 0.05).unavailable(),
                Offering::reserved("zone-a", 0.01, reservation("cr-1", 3)),
                Offering::reserved("zone-a", 0.01, reservation("cr-2", 0)).unavailable(),
            ],
            capacity,
            ResourceList::new(),
        );
        let written = instance_type_document(&it);
        let document: InstanceTypeDocument = serde_json::from_value(written).unwrap();
        let read = document.to_instance_type().unwrap();
        assert_eq!(read.offerings, it.offerings);
    }

    #[test]
    fn ambiguous_strings_are_quoted() {
        assert_eq!(scalar_text("true"), "\"true\"");
        assert_eq!(scalar_text("1"), "\"1\"");
        assert_eq!(scalar_text("100m"), "\"100m\"");
        assert_eq!(scalar_text("a: b"), "\"a: b\"");
        assert_eq!(scalar_text("web-0"), "web-0");
    }
}
