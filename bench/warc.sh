#!/usr/bin/env bash
# WARC input benchmark: renders the benchmark corpus as gzipped WARC files of HTML pages
# (bench/make_warc.py: request + response records, UTF-8 and GBK pages) and times neardup
# on them. Prints wall time, pages per second, compressed MB per second and peak memory.
# Not part of the test run.
#
#   bash bench/warc.sh [DOCS] [WORKERS]      e.g. bash bench/warc.sh 100000 2
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
workers=${2:-2}
corpus=target/bench/corpus-$docs.jsonl
warc=target/bench/warc-$docs
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
[ -d "$warc" ] || python3 bench/make_warc.py --corpus "$corpus" --out "$warc"
cargo build --release -q -p neardup-cli
out=target/bench/out-warc-$docs
/usr/bin/time -f '%e %M' -o target/bench/time.txt \
  target/release/neardup dedup -i "$warc" -o "$out" -w "$workers" -q
read -r wall rss_kb < target/bench/time.txt
python3 - "$out/summary.json" "$wall" "$rss_kb" "$workers" <<'PY'
import json, sys
path, wall, rss_kb, workers = sys.argv[1:]
s = json.load(open(path))
wall = float(wall)
pages = s["counts"]["records"]
mb = s["input_bytes"] / 2**20
print(f"{'pages':>8} {'skipped':>8} {'workers':>7} {'wall_s':>7} {'pages_per_s':>11} {'MB_per_s':>8} {'peak_MB':>7} {'pairs':>7}")
print(f"{pages:8} {sum(s['counts']['skipped_records'].values()):8} {workers:>7} {wall:7.2f} "
      f"{pages / wall:11.0f} {mb / wall:8.1f} {int(rss_kb) / 1024:7.0f} {s['counts']['pairs']:7}")
PY
