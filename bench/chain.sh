#!/usr/bin/env bash
# Long chains: DOCS documents (default 20,000), windows of 100 words of one word stream,
# each 3 words on from the one before: Jaccard about 0.94 to the next, 0.89 and 0.84 to the
# two after, 0.78 to the fourth, so each is a near duplicate of its three neighbours on
# either side and the whole set is one cluster thousands of hops across. Clustering runs
# one round per hop of the largest cluster's
# diameter, then of its radius (docs/scaling.md): this prints the cluster's size and
# radius, the cluster stage's seconds and the run's wall seconds, best of RUNS by wall time.
# Not part of the test run.
#
#   bash bench/chain.sh [RUNS] [DOCS]     NEARDUP=BINARY times another build
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
docs=${2:-20000}
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
dir=target/bench/chain-$docs
mkdir -p "$dir"
python3 - "$docs" "$dir/chain.jsonl" <<'PY'
import json, random, sys
docs, path = int(sys.argv[1]), sys.argv[2]
rng = random.Random(7)
vocabulary = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randint(3, 9)))
              for _ in range(50000)]
stream = [rng.choice(vocabulary) for _ in range(docs * 3 + 100)]
with open(path, 'w') as out:
    for i in range(docs):
        out.write(json.dumps({'id': f'c{i}', 'text': ' '.join(stream[i * 3:i * 3 + 100])}) + '\n')
PY
printf '%7s %9s %7s %10s %8s\n' docs cluster radius cluster_s wall_s
# The fastest run's summary is kept (best.json), so the cluster seconds printed are that run's.
best=
for _ in $(seq "$runs"); do
  rm -rf "$dir/out"
  start=$(date +%s.%N)
  "$bin" dedup -q --workers 2 --input "$dir/chain.jsonl" --output "$dir/out"
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  if [ -z "$best" ] || (( $(echo "$wall < $best" | bc) )); then
    best=$wall
    cp "$dir/out/summary.json" "$dir/best.json"
  fi
done
python3 - "$dir/best.json" "$docs" "$best" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
seconds, counts = summary['seconds'], summary['counts']
# summary.json gives each stage's end, from the run's start.
cluster_s = seconds['cluster'] - seconds['verify']
radius = max(int(r) for r in counts['clusters_by_radius'])
print(f"{int(sys.argv[2]):7d} {counts['largest_cluster']:9d} {radius:7d} "
      f"{cluster_s:10.2f} {float(sys.argv[3]):8.2f}")
PY
