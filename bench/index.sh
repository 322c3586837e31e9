#!/usr/bin/env bash
# Incremental benchmark: a batch of new documents deduplicated against indexes of earlier
# runs of growing size (`dedup --index`). The history is the first H documents of the real
# corpus of bench/make_real_corpus.py (1M documents), indexed by one run. The batch holds
# the same matches for every history: 90% documents of the corpus's last 100,000 whose
# truth group starts there (new to every history), 10% near copies (a line dropped) of
# documents among the first 100,000 (in every history). For each history size, the batch
# runs against a fresh copy of that index, best of REPEATS (default 3); printed: wall
# seconds, what the lookup read (parts, bloom filters, row groups, rows), candidates,
# matches and documents removed against the index. Reading should grow with the batch
# and its matches, not with the history. Not part of the test run; needs
# ../shared/data-samples (for the corpus).
#
#   bash bench/index.sh [BATCH] [HISTORY...]      default: 10000 100000 900000
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-10000}
shift || true
if [ $# -gt 0 ]; then histories=("$@"); else histories=(100000 900000); fi
repeats=${REPEATS:-3}
corpus=target/bench/real-1000000.jsonl
[ -f "$corpus" ] || target/peer-venv/bin/python bench/make_real_corpus.py --docs 1000000 --out "$corpus"
cargo build --release -q -p neardup-cli
bin=target/release/neardup
out=target/bench/index
rm -rf "$out"
mkdir -p "$out"
total=$(wc -l < "$corpus")
python3 bench/index_batch.py "$corpus" "$batch" "$out/batch.jsonl"

printf '%-9s %-7s %8s %6s %8s %10s %11s %11s %8s %8s\n' history batch wall_s parts blooms row_groups rows_read candidates matches removed
for h in "${histories[@]}"; do
  if [ "$h" -gt $((total - 100000)) ]; then
    echo "history $h reaches into the corpus's last 100,000 documents, where the batch is from" >&2
    exit 2
  fi
  head -n "$h" "$corpus" > "$out/history-$h.jsonl"
  "$bin" dedup -i "$out/history-$h.jsonl" -o "$out/history-$h" --index "$out/index-$h" \
    --run-name history -q
  best=""
  for ((i = 0; i < repeats; i++)); do
    rm -rf "$out/try"
    cp -r "$out/index-$h" "$out/try"
    /usr/bin/time -f '%e' -o "$out/time" "$bin" dedup -i "$out/batch.jsonl" -o "$out/batch-$h" \
      --index "$out/try" --run-name batch -q
    wall=$(cat "$out/time")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(not $wall < $best)"; then best=$wall; fi
  done
  python3 - "$out/batch-$h/summary.json" "$h" "$batch" "$best" <<'PY'
import json, sys
path, h, batch, wall = sys.argv[1:]
i = json.load(open(path))["index"]
print(f"{h:<9} {batch:<7} {float(wall):8.2f} {i['parts_opened']:6} {i['bloom_filters_read']:8} "
      f"{i['row_groups_read']:10} {i['rows_read']:11} {i['candidates']:11} {i['matches']:8} {i['removed']:8}")
PY
done
# The batch alone, without an index, for the cost of the lookup.
/usr/bin/time -f '%e' -o "$out/time" "$bin" dedup -i "$out/batch.jsonl" -o "$out/batch-alone" -q
echo "the batch without an index: $(cat "$out/time") s"
