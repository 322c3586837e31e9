#!/usr/bin/env bash
# Incremental runs on web pages: a batch of 10,000 pages of the WARC benchmark's corpus
# (bench/make_warc.py over bench/make_corpus.py, 10 files of 10,000 pages) deduplicated
# against indexes of 10,000 and 90,000 earlier pages, each made by one run, and alone. Web
# pages make runs with an index keep and read template samples (templates/ in each
# segment), which plain text (bench/index.sh) does not. Prints wall seconds and peak memory
# of each of REPEATS (default 3) runs, the index sizes (and its templates/ share) and what
# the batch removed against the index. Not part of the test run; needs no shared data.
#
#   bash bench/index_web.sh        NEARDUP=BINARY times that binary instead of this tree's
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${REPEATS:-3}
corpus=target/bench/corpus-100000.jsonl
warc=target/bench/warc-100000
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs 100000 --out "$corpus"
[ -d "$warc" ] && [ -f "$warc.truth.jsonl" ] || python3 bench/make_warc.py --corpus "$corpus" --out "$warc"
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
out=target/bench/index-web
rm -rf "$out"
mkdir -p "$out"
history=()
for i in 0 1 2 3 4 5 6 7 8; do history+=(-i "$warc/crawl-0000$i.warc.gz"); done
"$bin" dedup -q -i "$warc/crawl-00000.warc.gz" -o "$out/h10" --index "$out/idx10" --run-name h
"$bin" dedup -q "${history[@]}" -o "$out/h90" --index "$out/idx90" --run-name h
batch="$warc/crawl-00009.warc.gz"
for ((r = 0; r < repeats; r++)); do
  for h in 10 90; do
    rm -rf "$out/try"
    cp -r "$out/idx$h" "$out/try"
    /usr/bin/time -f "history ${h},000: %e s, peak %M KB" "$bin" dedup -q -i "$batch" \
      -o "$out/b$h" --index "$out/try" --run-name b
  done
  /usr/bin/time -f "no index: %e s, peak %M KB" "$bin" dedup -q -i "$batch" -o "$out/alone"
done
for h in 10 90; do
  total=$(du -sb "$out/idx$h" | cut -f1)
  templates=$(du -scb "$out/idx$h"/gen-*/templates 2> /dev/null | tail -1 | cut -f1)
  removed=$(python3 -c "import json; print(json.load(open('$out/b$h/summary.json'))['index']['removed'])")
  echo "history ${h},000: index $total bytes, templates/ $templates bytes; the batch removed $removed against it"
done
