#!/usr/bin/env bash
# Reader fuzzing for longer than the test command runs it: mutated real samples (JSONL plain,
# gzip and zstd; WARC and WET plain and gzip; Parquet; HTML) read by every reader, and jobs
# over folders of them with a 256 MiB budget (tests/tests/fuzz.rs). Prints the cases, the
# records and rejects, and the largest peak resident memory of one job (measured afresh for
# each, in the test process) against 1.25 x the budget.
# Failing inputs are saved under target/fuzz-failures/. Not part of the test run.
#
#   bash bench/fuzz.sh [SECONDS]        e.g. bash bench/fuzz.sh 3600
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
cargo test --release -q -p neardup-e2e --test fuzz --no-run 2>/dev/null
binary=$(ls -t target/release/deps/fuzz-* | grep -v '\.d$' | head -1)
mkdir -p target/bench
NEARDUP_FUZZ_SECONDS=$seconds "$binary" --nocapture --test-threads 1 2>&1 \
  | grep -oE 'fuzz: .*|[0-9]+ failing.*|seed .*|test result.*' | tee target/bench/fuzz.txt
peak=$(grep -oE 'largest peak of a job [0-9]+' target/bench/fuzz.txt | grep -oE '[0-9]+$')
echo "largest job peak: $peak MB (1.25 x the 256 MiB budget: 320 MB)"
[ "$peak" -le 320 ] || { echo "above the budget"; exit 1; }
grep -q 'test result: ok' target/bench/fuzz.txt
