#!/usr/bin/env bash
# Clustering memory benchmark: corpora where nearly every document has near duplicates
# (bench/make_copies.py: each document of bench/make_corpus.py's corpus and nine lightly
# changed copies), run with MinHash, 2 workers and --memory-budget. Prints peak resident
# memory against the budget, wall and CPU seconds, bytes spilled, the documents in some
# pair, and, between the two sizes, the peak memory each further paired document (and each
# further verified pair) adds: near zero when every stage, clustering too, keeps to the
# budget.
# Not part of the test run.
#
#   bash bench/cluster_memory.sh [BUDGET] [ORIGINALS...]   e.g. bash bench/cluster_memory.sh 512M 50000 100000
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${1:-512M}
shift || true
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(50000 100000); fi
copies=10

# NEARDUP=BINARY times that binary (say, a build from before a change) instead of this tree's.
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
mkdir -p target/bench
results=target/bench/cluster-memory.tsv
: > "$results"
printf '%-9s %9s %-7s %8s %8s %8s %8s %10s %11s %8s\n' \
  docs input_MB budget wall_s cpu_s peak_MB peak/bud paired spilled_MB pairs
for originals in "${sizes[@]}"; do
  corpus=target/bench/corpus-$originals.jsonl
  copied=target/bench/copies-${originals}x$copies.jsonl
  [ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$originals" --out "$corpus" > /dev/null
  [ -f "$copied" ] || python3 bench/make_copies.py --corpus "$corpus" --copies "$copies" --out "$copied" > /dev/null
  out=target/bench/out-cluster-memory-$originals
  /usr/bin/time -f '%e %U %S %M' -o target/bench/time.txt \
    "$bin" dedup -i "$copied" -o "$out" -w 2 -q --memory-budget "$budget"
  read -r wall user sys rss_kb < target/bench/time.txt
  python3 - "$out/summary.json" "$copied" "$wall" "$user" "$sys" "$rss_kb" "$results" <<'PY'
import json, os, sys
path, corpus, wall, user, sys_s, rss_kb, results = sys.argv[1:]
s = json.load(open(path))
c = s["counts"]
# Every removed document is in a cluster with its kept one: the paired documents.
paired = c["removed"] + c["clusters"]
budget = s["memory_budget_bytes"]
peak = int(rss_kb) * 1024
print(f"{c['records']:<9} {os.path.getsize(corpus) / 2**20:9.0f} {budget / 2**20:6.0f}M "
      f"{float(wall):8.1f} {float(user) + float(sys_s):8.1f} {peak / 2**20:8.0f} {peak / budget:8.2f} "
      f"{paired:10} {s['spilled_bytes'] / 2**20:11.0f} {c['pairs']:8}")
with open(results, "a") as f:
    f.write(f"{paired}\t{c['pairs']}\t{peak}\n")
PY
done
python3 - "$results" <<'PY'
import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
if len(rows) >= 2:
    (d0, e0, m0), (d1, e1, m1) = rows[0], rows[-1]
    # Near zero (either sign, run-to-run noise) when clustering keeps to the budget.
    print(f"peak memory change per further paired document: {(m1 - m0) / (d1 - d0):+.0f} bytes "
          f"({d0} -> {d1} paired documents), per further pair: {(m1 - m0) / (e1 - e0):+.0f} bytes "
          f"({e0} -> {e1} pairs)")
PY
