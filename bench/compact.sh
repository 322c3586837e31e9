#!/usr/bin/env bash
# Compaction benchmark: a history indexed by G runs (one generation and segment each) is
# merged by `neardup index compact`; a batch is deduplicated against the index before and
# after. The history is the first H documents of the real corpus of
# bench/make_real_corpus.py, split into G equal runs; the batch is the one of
# bench/index.sh (90% new documents, 10% near copies of the first 100,000). Printed: the
# batch's wall seconds (best of REPEATS, default 3, each against a fresh copy of the index),
# what its lookup read, its matches; then the compaction's own time and sizes. Decisions
# must not change, and the script checks that they do not. Not part of the test run; needs
# ../shared/data-samples (for the corpus).
#
#   bash bench/compact.sh [HISTORY] [GENERATIONS] [BATCH]    default: 900000 9 10000
set -euo pipefail
cd "$(dirname "$0")/.."
history=${1:-900000}
generations=${2:-9}
batch=${3:-10000}
repeats=${REPEATS:-3}
corpus=target/bench/real-1000000.jsonl
[ -f "$corpus" ] || target/peer-venv/bin/python bench/make_real_corpus.py --docs 1000000 --out "$corpus"
cargo build --release -q -p neardup-cli
bin=target/release/neardup
out=target/bench/compact
rm -rf "$out"
mkdir -p "$out"
python3 bench/index_batch.py "$corpus" "$batch" "$out/batch.jsonl"

per=$((history / generations))
for ((g = 0; g < generations; g++)); do
  sed -n "$((g * per + 1)),$(((g + 1) * per))p;$(((g + 1) * per))q" "$corpus" > "$out/run-$g.jsonl"
  "$bin" dedup -i "$out/run-$g.jsonl" -o "$out/run-$g" --index "$out/index" --run-name "run-$g" -q
  rm "$out/run-$g.jsonl"
done

run_batch() { # $1: label, $2: index folder
  local best="" wall
  for ((i = 0; i < repeats; i++)); do
    rm -rf "$out/try"
    cp -r "$2" "$out/try"
    /usr/bin/time -f '%e' -o "$out/time" "$bin" dedup -i "$out/batch.jsonl" -o "$out/batch-$1" \
      --index "$out/try" --run-name batch -q
    wall=$(cat "$out/time")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(not $wall < $best)"; then best=$wall; fi
  done
  python3 - "$out/batch-$1/summary.json" "$1" "$best" <<'PY'
import json, sys
path, label, wall = sys.argv[1:]
i = json.load(open(path))["index"]
print(f"{label:<10} {i['generations_read']:11} {i['segments_read']:8} {float(wall):8.2f} "
      f"{i['parts_opened']:6} {i['bloom_filters_read']:8} {i['row_groups_read']:10} "
      f"{i['rows_read']:11} {i['matches']:8} {i['removed']:8}")
PY
}

printf '%-10s %11s %8s %8s %6s %8s %10s %11s %8s %8s\n' index generations segments wall_s parts blooms row_groups rows_read matches removed
run_batch runs "$out/index"
du -sb "$out/index" | awk '{printf "index before: %.1f MiB\n", $1 / 1048576}' >&2
/usr/bin/time -f '%e s, %M KiB peak' -o "$out/compact-time" "$bin" index compact --index "$out/index" >&2
echo "compaction: $(cat "$out/compact-time")" >&2
run_batch compacted "$out/index"

# The same decisions against either index (pyarrow from the peers' venv of bench/peers.sh).
py=python3
for v in target/peer-venv-312 target/peer-venv-datatrove target/peer-venv; do
  if [ -x "$v/bin/python" ] && "$v/bin/python" -c "import pyarrow" 2> /dev/null; then
    py=$v/bin/python
    break
  fi
done
"$py" - "$out/batch-runs/documents" "$out/batch-compacted/documents" <<'PY'
import sys
try:
    import pyarrow.parquet as pq
except ImportError:
    print("(no pyarrow: decisions not compared)", file=sys.stderr)
    sys.exit(0)
def rows(path):
    t = pq.read_table(path, columns=["id", "decision", "duplicate_of", "duplicate_of_run"])
    return sorted(zip(*[t[c].to_pylist() for c in t.column_names]), key=str)
a, b = rows(sys.argv[1]), rows(sys.argv[2])
print(f"decisions equal: {a == b} ({len(a)} documents)", file=sys.stderr)
sys.exit(0 if a == b else 1)
PY
