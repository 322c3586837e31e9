#!/usr/bin/env bash
# Scaling benchmark: the same labelled corpus of real documents (bench/make_real_corpus.py)
# run with 1 worker, 2 workers, and 2 processes of 1 worker each on loopback (timely's
# multi-process mode, as in a distributed run), for MinHash and SimHash, and at each size
# given. Prints wall seconds, documents per second, peak memory (the larger process for
# two), pairs, and the ratios the targets are stated in: 2 workers against 1, 2 processes
# against 1 process of 2 workers, and the time per document of each size against the
# first. Each figure is the best of REPEATS (default 3) runs, the three modes taking turns.
# Not part of the test run; needs ../shared/data-samples.
#
#   bash bench/scale.sh [DOCS...]        default: 100000 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(100000 1000000); fi
repeats=${REPEATS:-3}

if [ ! -x target/peer-venv/bin/python ] || ! target/peer-venv/bin/python -c 'import numpy' 2> /dev/null; then
  python3 -m venv target/peer-venv
  target/peer-venv/bin/pip install --quiet --disable-pip-version-check numpy==2.4.6
fi
cargo build --release -q -p neardup-cli
bin=target/release/neardup
out=target/bench/scale
mkdir -p "$out"

# A free loopback port, asked of the kernel.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# once CORPUS METHOD MODE: one run as "wall_s peak_kb", MODE being w1, w2 or p2 (two
# processes of one worker).
once() {
  local corpus=$1 method=$2 mode=$3 wall peak
  case $mode in
    w1 | w2)
      /usr/bin/time -f '%e %M' -o "$out/time" \
        "$bin" dedup -i "$corpus" -o "$out/run-$mode" --method "$method" -w "${mode#w}" -q
      read -r wall peak < "$out/time"
      ;;
    p2)
      printf '127.0.0.1:%s\n127.0.0.1:%s\n' "$(free_port)" "$(free_port)" > "$out/hosts"
      local start
      start=$(date +%s.%N)
      for p in 0 1; do
        /usr/bin/time -f '%M' -o "$out/peak-$p" "$bin" dedup -i "$corpus" -o "$out/run-$mode" \
          --method "$method" -w 1 --processes 2 --process "$p" --hostfile "$out/hosts" -q \
          > "$out/process-$p.log" 2>&1 &
      done
      wait
      wall=$(python3 -c "import time; print(f'{time.time() - $start:.2f}')")
      peak=$(cat "$out/peak-0" "$out/peak-1" | sort -n | tail -1)
      ;;
  esac
  echo "$wall $peak"
}

printf '%-9s %-8s %-12s %8s %10s %8s %8s\n' docs method run wall_s docs_per_s peak_MB pairs
declare -A wall_of
for docs in "${sizes[@]}"; do
  corpus=target/bench/real-$docs.jsonl
  [ -f "$corpus" ] || target/peer-venv/bin/python bench/make_real_corpus.py --docs "$docs" --out "$corpus"
  for method in minhash simhash; do
    # The modes take turns within each repeat, so a slow spell of the machine hits all of
    # them alike; each keeps its best.
    declare -A best_wall=() best_peak=()
    for ((i = 0; i < repeats; i++)); do
      for mode in w1 w2 p2; do
        read -r wall peak <<< "$(once "$corpus" "$method" "$mode")"
        if [ -z "${best_wall[$mode]:-}" ] || python3 -c "import sys; sys.exit(not $wall < ${best_wall[$mode]})"; then
          best_wall[$mode]=$wall
          best_peak[$mode]=$peak
        fi
      done
    done
    for mode in w1 w2 p2; do
      wall=${best_wall[$mode]} peak=${best_peak[$mode]}
      pairs=$(python3 -c "import json; print(json.load(open('$out/run-$mode/summary.json'))['counts']['pairs'])")
      label=$(case $mode in w1) echo "1 worker" ;; w2) echo "2 workers" ;; p2) echo "2 processes" ;; esac)
      printf '%-9s %-8s %-12s %8.2f %10.0f %8.0f %8s\n' "$docs" "$method" "$label" "$wall" \
        "$(python3 -c "print($docs / $wall)")" "$(python3 -c "print($peak / 1024)")" "$pairs"
      wall_of[$docs.$method.$mode]=$wall
    done
  done
done

echo
first=${sizes[0]}
for docs in "${sizes[@]}"; do
  for method in minhash simhash; do
    w1=${wall_of[$docs.$method.w1]} w2=${wall_of[$docs.$method.w2]} p2=${wall_of[$docs.$method.p2]}
    python3 - "$docs" "$method" "$w1" "$w2" "$p2" "$first" "${wall_of[$first.$method.w2]}" <<'PY'
import sys
docs, method, w1, w2, p2, first, first_w2 = sys.argv[1:]
w1, w2, p2, first_w2 = map(float, (w1, w2, p2, first_w2))
line = (f"{docs} {method}: 2 workers {w1 / w2:.2f}x faster than 1; "
        f"2 processes take {p2 / w2:.2f}x the time of 1 process of 2 workers")
if docs != first:
    growth = int(docs) / int(first)
    line += f"; {growth:.0f}x the documents take {w2 / first_w2:.1f}x the time (2 workers)"
print(line)
PY
  done
done
