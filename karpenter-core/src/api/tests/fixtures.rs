//! Realistic manifests in the shape of upstream's docs and e2e fixtures.

use serde_json::{Value, json};

/// A dynamic NodePool using every field, with a status as a cluster reports it.
pub(super) fn full_nodepool() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {
            "name": "default",
            "annotations": {"kubernetes.io/description": "General purpose NodePool for generic workloads"},
            "creationTimestamp": "2024-08-01T10:00:00Z",
            "generation": 3,
            "resourceVersion": "123456",
            "uid": "8f3a1c52-3d3e-4f6b-9c1a-2b7e5d4c9a10"
        },
        "spec": {
            "template": {
                "metadata": {
                    "labels": {"billing-team": "my-team"},
                    "annotations": {"example.com/owner": "my-team"}
                },
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "taints": [{"key": "example.com/special-taint", "effect": "NoSchedule"}],
                    "startupTaints": [
                        {"key": "example.com/another-taint", "value": "true", "effect": "NoSchedule"}
                    ],
                    "expireAfter": "720h",
                    "terminationGracePeriod": "48h",
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-category", "operator": "In",
                         "values": ["c", "m", "r"], "minValues": 2},
                        {"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                         "values": ["m5", "m5d", "c5", "c5d", "c4", "r4"], "minValues": 5},
                        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]},
                        {"key": "karpenter.k8s.aws/instance-memory", "operator": "Lte", "values": ["65536"]},
                        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]},
                        {"key": "karpenter.k8s.aws/instance-size", "operator": "Lt", "values": ["64"]},
                        {"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": ["us-west-2d"]},
                        {"key": "kubernetes.io/arch", "operator": "Exists"},
                        {"key": "example.com/no-gpu", "operator": "DoesNotExist"},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}
                    ]
                }
            },
            "disruption": {
                "consolidationPolicy": "Balanced",
                "consolidateAfter": "1m",
                "budgets": [
                    {"nodes": "10%"},
                    {"nodes": "5"},
                    {"nodes": "0", "schedule": "@daily", "duration": "10m"},
                    {"nodes": "20%", "reasons": ["Empty", "Drifted"]},
                    {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h",
                     "reasons": ["Underutilized"]}
                ]
            },
            "limits": {"cpu": 1000, "memory": "1000Gi", "nvidia.com/gpu": "8", "nodes": "50"},
            "weight": 10
        },
        "status": {
            "resources": {
                "cpu": "24", "memory": "96Gi", "ephemeral-storage": "300Gi", "pods": "330", "nodes": "3"
            },
            "nodes": 3,
            "nodeClassObservedGeneration": 1,
            "conditions": [
                condition("ValidationSucceeded", "2024-08-01T10:00:05Z"),
                condition("NodeClassReady", "2024-08-01T10:00:05Z"),
                condition("NodeRegistrationHealthy", "2024-08-01T10:03:41Z"),
                condition("Ready", "2024-08-01T10:00:05Z")
            ]
        }
    })
}

/// A healthy condition as operatorpkg writes it.
fn condition(type_: &str, time: &str) -> Value {
    json!({
        "type": type_,
        "status": "True",
        "observedGeneration": 3,
        "lastTransitionTime": time,
        "reason": type_,
        "message": ""
    })
}

/// A static NodePool (`replicas`, only `limits.nodes`).
pub(super) fn static_nodepool() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "static-capacity"},
        "spec": {
            "replicas": 4,
            "limits": {"nodes": 8},
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.2xlarge"]}
                    ],
                    "expireAfter": "Never"
                }
            },
            "disruption": {"budgets": [{"nodes": "1", "reasons": ["Drifted"]}]}
        }
    })
}

/// Upstream's e2e default NodePool (`test/pkg/environment/common`), with its
/// unquoted `cpu: 10000`.
pub(super) fn e2e_default_nodepool() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "Never",
                "budgets": [{"nodes": "100%"}]
            },
            "limits": {"cpu": 10000, "memory": "8000Gi"},
            "template": {
                "spec": {
                    "expireAfter": "Never",
                    "requirements": [
                        {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}
                    ],
                    "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}
                }
            }
        }
    })
}

/// A launched, initialized NodeClaim as a cluster reports it.
pub(super) fn full_nodeclaim() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": "default-x7k2p",
            "generateName": "default-",
            "labels": {
                "karpenter.sh/nodepool": "default",
                "karpenter.sh/capacity-type": "spot",
                "node.kubernetes.io/instance-type": "m5.xlarge",
                "topology.kubernetes.io/zone": "us-west-2a",
                "billing-team": "my-team"
            },
            "annotations": {
                "karpenter.sh/nodepool-hash": "6821555240594823858",
                "karpenter.sh/nodepool-hash-version": "v3"
            },
            "finalizers": ["karpenter.sh/termination"],
            "ownerReferences": [{
                "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default",
                "uid": "8f3a1c52-3d3e-4f6b-9c1a-2b7e5d4c9a10", "blockOwnerDeletion": true
            }],
            "creationTimestamp": "2024-08-02T08:15:00Z",
            "generation": 1
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "taints": [{"key": "example.com/special-taint", "effect": "NoSchedule"}],
            "startupTaints": [{"key": "example.com/another-taint", "value": "true", "effect": "NoSchedule"}],
            "expireAfter": "720h",
            "terminationGracePeriod": "1h30m",
            "requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                {"key": "node.kubernetes.io/instance-type", "operator": "In",
                 "values": ["m5.xlarge", "m5a.xlarge", "c5.xlarge"], "minValues": 2},
                {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]},
                {"key": "karpenter.k8s.aws/instance-memory", "operator": "Lte", "values": ["16384"]}
            ],
            "resources": {"requests": {"cpu": "3500m", "memory": "6Gi", "pods": 5}}
        },
        "status": {
            "providerID": "aws:///us-west-2a/i-0123456789abcdef0",
            "nodeName": "ip-192-168-10-20.us-west-2.compute.internal",
            "imageID": "ami-0a1b2c3d4e5f67890",
            "capacity": {"cpu": "4", "memory": "15155Mi", "ephemeral-storage": "20Gi", "pods": "58"},
            "allocatable": {"cpu": "3920m", "memory": "14162Mi", "ephemeral-storage": "17Gi", "pods": 58},
            "lastPodEventTime": "2024-08-02T08:20:11Z",
            "conditions": [
                {"type": "Launched", "status": "True", "lastTransitionTime": "2024-08-02T08:15:03Z",
                 "reason": "Launched", "message": "", "observedGeneration": 1},
                {"type": "Registered", "status": "True", "lastTransitionTime": "2024-08-02T08:15:40Z",
                 "reason": "Registered", "message": "", "observedGeneration": 1},
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2024-08-02T08:15:52Z",
                 "reason": "Initialized", "message": "", "observedGeneration": 1},
                {"type": "Consolidatable", "status": "True", "lastTransitionTime": "2024-08-02T08:21:11Z",
                 "reason": "Consolidatable", "message": "", "observedGeneration": 1},
                {"type": "Drifted", "status": "False", "lastTransitionTime": "2024-08-02T08:15:03Z",
                 "reason": "NotDrifted", "message": "", "observedGeneration": 1},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2024-08-02T08:15:52Z",
                 "reason": "Ready", "message": "", "observedGeneration": 1}
            ]
        }
    })
}

/// A NodeOverlay with every field, a status, and fields this version does
/// not know.
pub(super) fn full_nodeoverlay() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "gpu-discount", "generation": 2, "labels": {"team": "ml"}},
        "spec": {
            "requirements": [
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g-4", "g-8"]},
                {"key": "karpenter.sh/capacity-type", "operator": "NotIn", "values": ["spot"]},
                {"key": "example.com/generation", "operator": "Gte", "values": ["3"]},
                {"key": "example.com/legacy", "operator": "DoesNotExist"},
            ],
            "priceAdjustment": "-12.5%",
            "capacity": {"smarter-devices/fuse": 2, "example.com/nic": "4"},
            "weight": 40,
            "futureField": {"nested": [1, 2]},
        },
        "status": {
            "conditions": [{
                "type": "ValidationSucceeded",
                "status": "True",
                "reason": "ValidationSucceeded",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "observedGeneration": 2,
            }],
        },
        "extraTopLevel": true,
    })
}
