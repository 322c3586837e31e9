#!/usr/bin/env bash
# Redraws docs/report.png, the README's example of report.html: the quick start's run on
# data-samples/, drawn by headless Chromium. Needs chromium and a CJK font (Debian:
# fonts-wqy-microhei), or the Chinese excerpts are drawn as boxes.
#
#   bash docs/report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p neardup-cli
out=target/report-example
target/release/neardup dedup -q --input data-samples/ --output "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=5000 \
  --window-size=1040,2900 --user-data-dir="$profile" --screenshot="$PWD/docs/report.png" \
  "file://$PWD/$out/report.html" 2>/dev/null
echo "docs/report.png from $out/report.html"
