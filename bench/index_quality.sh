#!/usr/bin/env bash
# Scheduled runs against one run, on labelled web pages: do three batches deduplicated with
# `--index` (each against the pages kept before) decide as one run over all their pages
# does? For two independently generated web sets with research articles (the webset of
# bench/make_webset.py, on which the defaults were chosen: DESIGN; the crawlset of
# bench/make_crawlset.py: HELD OUT, never tune on it), each method and two splits of the
# pages ("even": three consecutive batches of equal size in input order; "thin": the pages
# shuffled with a fixed seed, then batches of 10%, 30% and 60%, so the first batch has few
# pages per host), it runs the three batches in order with `--index` (a fresh index per
# split) and one run over the same three files, all at default settings, and prints
# (bench/index_quality.py) the removals of each and how many are wrong (`duplicate_of`
# labelled in another cluster), the wrong removals only the batches make, the share of the
# one run's removals the batches also make, pair precision/recall/F1, wall seconds and the
# index's size. Where neardup refuses SimHash with `--index` at defaults, the batches get a
# job file setting `[simhash] blocks = 8` (said under the table), so the same script
# measures before and after that changes. Pages are fed as web pages: the webset's WARC
# split by records, the crawlset's JSON Lines of id, url, text. Not part of the test run;
# needs ../shared/data-samples (research articles: never ship the sets or the outputs).
#
#   bash bench/index_quality.sh
#
# Everything goes to target/iq/: the sets, the splits (<set>-split/), and per set, method
# and split a folder <set>-<method>-<split>/ with one/, b1/, b2/, b3/, index/ and
# batch-only-wrong.tsv (for `neardup explain`). IQ_NO_BUILD=1 uses target/release/neardup
# as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/peer-venv/bin/python ] || ! target/peer-venv/bin/python -c 'import pyarrow' 2> /dev/null; then
  python3 -m venv target/peer-venv
  target/peer-venv/bin/pip install --quiet --disable-pip-version-check pyarrow==26.0.1
fi
root=target/iq
mkdir -p "$root"
[ -f "$root/webset/truth.json" ] ||
  python3 bench/make_webset.py --articles research --out "$root/webset"
[ -f "$root/crawlset/truth.json" ] ||
  python3 bench/make_crawlset.py --articles research --out "$root/crawlset" > "$root/crawlset.stats.json"
[ "${IQ_NO_BUILD:-}" = 1 ] || cargo build --release -q -p neardup-cli
bin=target/release/neardup
printf '[simhash]\nblocks = 8\n' > "$root/simhash-blocks-8.toml"

# timed SECONDS_FILE COMMAND...: runs the command quietly, its wall seconds to the file and
# its stderr to SECONDS_FILE.err; returns its exit status.
timed() {
  local file=$1
  shift
  /usr/bin/time -f '%e' -o "$file" "$@" -q 2> "$file.err"
}

runs=$root/runs.tsv
: > "$runs"
for set_name in webset crawlset; do
  case $set_name in
    webset) role=DESIGN pages=$root/webset/pages.warc.gz ext=warc.gz ;;
    crawlset) role="HELD OUT" pages=$root/crawlset/pages.jsonl ext=jsonl ;;
  esac
  rm -rf "$root/$set_name-split"
  python3 bench/index_quality.py split "$pages" "$root/$set_name-split"
  for method in minhash simhash; do
    for split in even thin; do
      inputs=$root/$set_name-split/$split
      dir=$root/$set_name-$method-$split
      rm -rf "$dir"
      mkdir -p "$dir"
      timed "$dir/one.time" "$bin" dedup -i "$inputs/b1.$ext" -i "$inputs/b2.$ext" -i "$inputs/b3.$ext" \
        -o "$dir/one" --method "$method" || { cat "$dir/one.time.err" >&2; exit 1; }
      job=()
      note=""
      wall=0
      for b in 1 2 3; do
        if ! timed "$dir/b$b.time" "$bin" dedup -i "$inputs/b$b.$ext" -o "$dir/b$b" --method "$method" \
          --index "$dir/index" --run-name "b$b" "${job[@]}"; then
          # Refused at defaults (exit 2, nothing written): once, with the blocks fixed.
          if [ "$b" = 1 ] && [ "$method" = simhash ] && grep -q 'simhash.blocks' "$dir/b$b.time.err"; then
            job=(--job "$root/simhash-blocks-8.toml")
            note="batches with [simhash] blocks = 8: at defaults neardup says '$(grep -m1 'simhash.blocks' "$dir/b$b.time.err")'"
            timed "$dir/b$b.time" "$bin" dedup -i "$inputs/b$b.$ext" -o "$dir/b$b" --method "$method" \
              --index "$dir/index" --run-name "b$b" "${job[@]}"
          else
            cat "$dir/b$b.time.err" >&2
            exit 1
          fi
        fi
        wall=$(python3 -c "print($wall + $(cat "$dir/b$b.time"))")
      done
      index_bytes=$(find "$dir/index" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
      blocks=$(python3 -c "import json, sys
r = [json.load(open(f'$dir/{d}/summary.json'))['resolved'] for d in ('one', 'b1')]
if '$method' == 'simhash':
    print(f'SimHash blocks: one run {r[0][\"blocks\"]}, batches {r[1][\"blocks\"]}')")
      [ -z "$blocks" ] || note="${note:+$note; }$blocks"
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set_name" "$role" "$root/$set_name/truth.json" \
        "$method" "$split" "$dir/one" "$(cat "$dir/one.time")" "$dir/b1,$dir/b2,$dir/b3" "$wall" "$index_bytes" \
        "$note" >> "$runs"
    done
  done
done
echo
target/peer-venv/bin/python bench/index_quality.py report "$runs"
