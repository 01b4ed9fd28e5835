#!/usr/bin/env bash
# Runs karpenter-sim over every scenario and fixture with each output mode and
# option set, and the example replays, at a base revision and at the working
# tree, and diffs the two:
# the check behind "every output unchanged, byte for byte".
#
#   scripts/compare-outputs.sh [BASE_REV]     (default: origin/main, else HEAD~1)
#
# Prints nothing but a summary when every run gives the same bytes (stdout,
# stderr and exit status); else the diff. Builds both binaries in release mode
# (the base in a temporary worktree, removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(git rev-parse --verify -q origin/main || git rev-parse HEAD~1)}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

git worktree add -q --detach "$work/base" "$base"
echo "building $base and the working tree" >&2
(cd "$work/base" && cargo build -q --release --bin karpenter-sim)
cargo build -q --release --bin karpenter-sim

run_all() { # BIN OUT
  local bin=$1 out=$2 now=2026-06-01T00:00:00Z
  mkdir -p "$out"
  find tests/scenarios tests/disruption-scenarios examples/scenarios tests/fixtures -maxdepth 3 \
    \( -name '*.yaml' -o -name '*.json' \) -not -path '*/bad/*' | sort | while read -r file; do
    local name extra=()
    name=$(echo "$file" | tr '/' '_')
    case "$file" in *cluster-dump*) extra=(--provider azure) ;; esac
    local modes=(
      "provision -o json" "provision -o table" "provision -o json --packing cost --bound"
      "disrupt -o json --now $now" "disrupt -o table --now $now"
      "disrupt -o json --now $now --m-to-n --spot-to-spot --packing cost" "summary -o json"
    )
    for mode in "${modes[@]}"; do
      # shellcheck disable=SC2086
      { "$bin" $mode -f "$file" "${extra[@]}"; echo "exit $?"; } >"$out/$name.${mode// /_}" 2>&1 || true
    done
  done
  # The replays: the workday through the driver, both packings side by side,
  # and on the Azure provider.
  local day=(--trace examples/replay/workday.yaml --feature-gates NodeRepair=true)
  local replays=(
    "replay-json|-f examples/replay/cluster.yaml -o json"
    "replay-compare|-f examples/replay/cluster.yaml -o table --compare --packing=cost"
    "replay-azure|-f examples/replay/azure.yaml --provider azure --region eastus -o json"
  )
  for replay in "${replays[@]}"; do
    # shellcheck disable=SC2086
    { "$bin" replay ${replay#*|} "${day[@]}"; echo "exit $?"; } >"$out/${replay%%|*}" 2>&1 || true
  done
}

run_all "$work/base/target/release/karpenter-sim" "$work/before"
run_all "$PWD/target/release/karpenter-sim" "$work/after"
runs=$(find "$work/before" -type f | wc -l)
if diff -r "$work/before" "$work/after"; then
  echo "$runs runs: every output the same as at $base"
else
  echo "outputs differ from $base (above)" >&2
  exit 1
fi
