#!/usr/bin/env bash
# Replays the workday example, writes its HTML report and takes the picture
# the README shows (docs/replay-report.png) with headless Chromium, as a
# person would see the page. Installs Debian's chromium when it is missing.
#
#   bash scripts/replay-screenshot.sh [OUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/replay-report.png}"
if ! command -v chromium >/dev/null 2>&1; then
  apt-get install -y chromium
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cargo run --release --quiet -- replay \
  -f examples/replay/cluster.yaml --trace examples/replay/workday.yaml \
  --feature-gates NodeRepair=true --compare "--packing cost" \
  --html "$work/report.html" > /dev/null
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run \
  --user-data-dir="$work/profile" --hide-scrollbars --window-size=1100,1700 \
  --screenshot="$out" "file://$work/report.html" 2>/dev/null
echo "wrote $out"
