#!/usr/bin/env bash
# Two commands timed in turns: A, B, A, B, ... so that a machine whose speed drifts during
# the call slows both alike. Each command runs once first, not counted; then RUNS pairs.
# Prints, for A and B, the median wall seconds, CPU seconds (user + sys) and peak memory
# (largest single process, from /usr/bin/time), and the median of the ratios A / B taken
# pair by pair, with their range. Not part of the test run.
#
#   bash bench/turns.sh RUNS 'COMMAND A' 'COMMAND B'
#   e.g. bash bench/turns.sh 7 'target/release/neardup dedup -q -i C -o /tmp/a -w 2' \
#                              '/tmp/neardup-before dedup -q -i C -o /tmp/b -w 2'
#
# Each command is run by `sh -c`; it should remove its own output first if it writes one
# (neardup refuses nothing here: an output folder of a finished run is replaced).
set -euo pipefail
if [ $# -ne 3 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
runs=$1 a=$2 b=$3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# once COMMAND: "wall cpu peak_kb" of one run.
once() {
  /usr/bin/time -f '%e %U %S %M' -o "$log" sh -c "$1" > /dev/null 2>&1 || {
    echo "failed: $1" >&2
    exit 1
  }
  awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$log"
}

once "$a" > /dev/null
once "$b" > /dev/null
rows=()
for _ in $(seq "$runs"); do
  rows+=("$(once "$a") $(once "$b")")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
med = lambda xs: statistics.median(xs)
for name, at in (("A", 0), ("B", 3)):
    wall = med(r[at] for r in rows); cpu = med(r[at + 1] for r in rows); peak = med(r[at + 2] for r in rows)
    print(f"{name}  wall {wall:.3f} s  cpu {cpu:.3f} s  peak {peak / 1024:.1f} MiB  (median of {len(rows)})")
for what, at in (("wall", 0), ("cpu", 1)):
    ratios = sorted(r[at] / r[at + 3] for r in rows)
    print(f"A/B {what}  {med(ratios):.3f}  (pairs {ratios[0]:.3f} to {ratios[-1]:.3f})")
'
