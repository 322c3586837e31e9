#!/usr/bin/env bash
# Web-archive reading cost: the same documents (bench/make_corpus.py) as JSON Lines without
# a URL, as JSON Lines with a URL field, and as a Common-Crawl-style WET file (one gzip member
# per record; bench/make_wet.py), each run with MinHash and 2 workers at the defaults. With
# URLs a run learns host templates (a second read of its inputs) and uses containment, as web
# pages do by default. The WET file runs once more as plain text (bench/web-as-text.toml: no
# templates, no containment), which is the cost of reading WET alone. Prints, best of RUNS,
# wall and CPU seconds (user + sys) and peak memory per input, and each one's CPU time over
# the JSON Lines without URLs. Then the CPU seconds of reading alone (the readers, no
# analysis: crates/io/examples/read_input.rs), best of RUNS, for the JSON Lines and the
# WET file.
# Not part of the test run.
#
#   bash bench/wet.sh [DOCS] [RUNS]      e.g. bash bench/wet.sh 100000 3
# NEARDUP=BINARY times that binary (say, a build from before a change) instead of this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
runs=${2:-3}
corpus=target/bench/corpus-$docs.jsonl
wet=target/bench/wet-$docs
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus" > /dev/null
[ -f "$wet/pages.wet.gz" ] || python3 bench/make_wet.py --corpus "$corpus" --out "$wet" > /dev/null
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
cargo build --release -q -p neardup-io --example read_input
printf '%-22s %9s %8s %8s %8s %9s\n' input MB wall_s cpu_s peak_MB cpu/jsonl
base=
for kind in jsonl jsonl-url wet wet-as-text; do
  extra=()
  case $kind in
    jsonl) input=$corpus ;;
    jsonl-url) input=$wet/pages-url.jsonl ;;
    wet) input=$wet/pages.wet.gz ;;
    wet-as-text) input=$wet/pages.wet.gz extra=(--job bench/web-as-text.toml) ;;
  esac
  best=
  for _ in $(seq "$runs"); do
    rm -rf target/bench/out-wet
    /usr/bin/time -f '%e %U %S %M' -o target/bench/time.txt \
      "$bin" dedup -i "$input" -o target/bench/out-wet -w 2 -q "${extra[@]}"
    read -r wall user sys rss_kb < target/bench/time.txt
    cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $cpu < ${best%% *} else 1)"; then
      best="$cpu $wall $rss_kb"
    fi
  done
  read -r cpu wall rss_kb <<< "$best"
  [ -n "$base" ] || base=$cpu
  python3 - "$kind" "$input" "$wall" "$cpu" "$rss_kb" "$base" <<'PY'
import os, sys
kind, path, wall, cpu, rss_kb, base = sys.argv[1:]
print(f"{kind:<22} {os.path.getsize(path) / 2**20:9.1f} {float(wall):8.2f} {float(cpu):8.2f} "
      f"{int(rss_kb) / 1024:8.0f} {float(cpu) / float(base):9.2f}")
PY
done
printf '\n%-22s %8s\n' 'reading alone' cpu_s
for input in "$corpus" "$wet/pages.wet.gz"; do
  best=
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%U %S' -o target/bench/time.txt target/release/examples/read_input "$input" > /dev/null
    cpu=$(python3 -c "u, s = open('target/bench/time.txt').read().split(); print(f'{float(u) + float(s):.2f}')")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $cpu < $best else 1)"; then best=$cpu; fi
  done
  printf '%-22s %8s\n' "$(basename "$input")" "$best"
done
