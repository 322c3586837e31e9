#!/usr/bin/env bash
# End-to-end benchmark: builds the corpus (bench/make_corpus.py), runs neardup with each
# method and worker count, and prints wall time, documents per second, peak memory and
# quality against the planted truth. Not part of the test run.
#
#   bash bench/run.sh [DOCS] [WORKERS...]      e.g. bash bench/run.sh 100000 1 2
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
shift || true
if [ $# -gt 0 ]; then workers=("$@"); else workers=(1 2); fi

corpus=target/bench/corpus-$docs.jsonl
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
cargo build --release -q -p neardup-cli
if [ ! -x target/bench-venv/bin/python ]; then
  python3 -m venv target/bench-venv
  target/bench-venv/bin/pip install --quiet --disable-pip-version-check duckdb==1.4.2
fi

printf '%-8s %-7s %9s %10s %10s %10s %s\n' method workers wall_s docs_per_s peak_MB pairs quality
for method in minhash simhash; do
  for w in "${workers[@]}"; do
    out=target/bench/out-$method-$w
    /usr/bin/time -f '%e %M' -o target/bench/time.txt \
      target/release/neardup dedup -i "$corpus" -o "$out" --method "$method" -w "$w" -q
    read -r wall rss_kb < target/bench/time.txt
    pairs=$(python3 -c "import json;print(json.load(open('$out/summary.json'))['counts']['pairs'])")
    quality=$(target/bench-venv/bin/python bench/eval.py "$corpus" "$out")
    printf '%-8s %-7s %9.2f %10.0f %10.0f %10s %s\n' "$method" "$w" "$wall" \
      "$(python3 -c "print($docs / $wall)")" "$(python3 -c "print($rss_kb / 1024)")" "$pairs" "$quality"
  done
done
