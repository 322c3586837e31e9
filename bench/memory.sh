#!/usr/bin/env bash
# Bounded-memory benchmark: runs neardup (MinHash, 2 workers) on corpora of growing size,
# once with --memory-budget and once with the default budget, and prints wall time,
# documents per second, peak resident memory and bytes spilled. A corpus several times
# the budget should complete with peak memory near the budget, in time about linear in
# its size. The corpora are those of bench/peers.sh (bench/make_real_corpus.py, which needs
# ../shared/data-samples). Not part of the test run.
#
#   bash bench/memory.sh [BUDGET] [DOCS...]    e.g. bash bench/memory.sh 256M 100000 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-256M}
shift || true
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(100000 300000 1000000); fi

# NEARDUP=BINARY times that binary (say, a build from before a change) instead of this tree's.
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
printf '%-9s %9s %-9s %9s %10s %9s %11s %7s %8s\n' \
  docs input_MB budget wall_s docs_per_s peak_MB spilled_MB rounds pairs
for docs in "${sizes[@]}"; do
  corpus=target/bench/real-$docs.jsonl
  [ -f "$corpus" ] || target/peer-venv/bin/python bench/make_real_corpus.py --docs "$docs" --out "$corpus"
  input_mb=$(( $(stat -c %s "$corpus") / 1048576 ))
  for b in "$budget" default; do
    out=target/bench/out-memory-$docs-$b
    flags=()
    [ "$b" = default ] || flags=(--memory-budget "$b")
    /usr/bin/time -f '%e %M' -o target/bench/time.txt \
      "$bin" dedup -i "$corpus" -o "$out" -w 2 -q "${flags[@]}"
    read -r wall rss_kb < target/bench/time.txt
    python3 - "$out/summary.json" "$docs" "$input_mb" "$b" "$wall" "$rss_kb" <<'PY'
import json, sys
path, docs, input_mb, budget, wall, rss_kb = sys.argv[1:]
s = json.load(open(path))
if budget == "default":
    budget = f"{s['memory_budget_bytes'] / 2**30:.1f}G"
print(f"{docs:<9} {input_mb:>9} {budget:<9} {float(wall):9.2f} {int(docs) / float(wall):10.0f} "
      f"{int(rss_kb) / 1024:9.0f} {s['spilled_bytes'] / 2**20:11.0f} {s['input_rounds']:7} "
      f"{s['counts']['pairs']:8}")
PY
  done
done
