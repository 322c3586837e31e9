#!/usr/bin/env bash
# Paragraph-level dedup on the paraset (bench/make_paraset.py): distinct English and
# Chinese articles sharing syndicated passages, notices and promotions, with one-word
# variants and the noise normalisation removes. Builds the DESIGN draw (BBC News,
# THUCNews) and the HELD-OUT one (Reuters-21578, the Sogou sample), runs `neardup dedup
# --paragraphs` on each, and prints `neardup eval --paragraph-truth`: the paragraphs the
# truth labels as repeating an earlier document's, those the run left out, and precision
# and recall by language; then runs the set as two batches with `--index` (the first half
# of its documents, then the second) and scores each batch against the same truth, so the
# second batch is right only if it leaves out what the first batch holds. It reads
# research-only text from ../shared/data-samples; never
# ship or commit the sets. Not part of the test run.
#
#   bash bench/paraset.sh [SEED]        default seed: 1
#
# The sets go to target/paraset-design-SEED and target/paraset-held-out-SEED, the runs to
# out/ in each. PARASET_NO_BUILD=1 uses target/release/neardup as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1}
bin=target/release/neardup
[ -n "${PARASET_NO_BUILD:-}" ] || cargo build --release -q -p neardup-cli
for sources in design held-out; do
  set_dir=target/paraset-$sources-$seed
  python3 bench/make_paraset.py --out "$set_dir" --sources "$sources" --seed "$seed"
  "$bin" dedup -q -i "$set_dir/pages.jsonl" -o "$set_dir/out" --paragraphs
  echo "## $sources (seed $seed)"
  "$bin" eval --truth "$set_dir/truth.json" --paragraph-truth "$set_dir/paragraphs.jsonl" \
    --by lang --run "$set_dir/out" | sed -n '/^paragraphs left out/,/^$/p'
  rm -rf "$set_dir/index"
  for batch in 1 2; do
    "$bin" dedup -q -i "$set_dir/batch-$batch.jsonl" -o "$set_dir/out-batch-$batch" \
      --paragraphs --index "$set_dir/index" --run-name "batch-$batch"
    echo "## $sources (seed $seed), batch $batch of 2 with --index"
    "$bin" eval --truth "$set_dir/truth.json" --paragraph-truth "$set_dir/paragraphs.jsonl" \
      --by lang --run "$set_dir/out-batch-$batch" 2>/dev/null | sed -n '/^paragraphs left out/,/^$/p'
  done
done
