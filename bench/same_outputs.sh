#!/usr/bin/env bash
# Behaviour check for refactors: runs one neardup binary over the bundled samples, every
# job file that reads them, the templated web set, an index of two runs and (when it exists or
# DOCS is given) the benchmark corpus, and prints one digest line per output file: the bytes of
# every Parquet part, and summary.json without the fields that measure the machine (seconds,
# peak memory, and bytes spilled: where a sorted run is cut depends on how batches arrive,
# which moves the total by a few bytes from run to run of one binary); index folders are
# named without their random token. Run it with the binary
# before and after a change and diff the two listings.
# Not part of the test run.
#
#   bash bench/same_outputs.sh BINARY LISTING [DOCS]
#   e.g. cp target/release/neardup /tmp/before; ...change, build...
#        bash bench/same_outputs.sh /tmp/before /tmp/before.txt 100000
#        bash bench/same_outputs.sh target/release/neardup /tmp/after.txt 100000
#        diff /tmp/before.txt /tmp/after.txt && echo unchanged
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "$1")
listing=$2
docs=${3:-}
work=target/same-outputs
rm -rf "$work"
mkdir -p "$work"

run() { # NAME ARGS...
  local name=$1
  shift
  "$binary" dedup -o "$work/$name" -q "$@" > /dev/null
}

run samples -i data-samples/
run samples-1w -i data-samples/ -w 1
run samples-simhash -i data-samples/ --method simhash
run samples-budget -i data-samples/ --memory-budget 16M 2> /dev/null
for job in jobs/zh-variants.toml jobs/zh-news-pages.toml jobs/mixed-web.toml; do
  run "job-$(basename "$job" .toml)" -i data-samples/ --job "$job"
done
run web-kept -i data-samples/web-templated -w 3 --write-kept "$work/kept"
run index-1 -i data-samples/zh-tang-poems --index "$work/index" --run-name one
run index-2 -i data-samples/zh-court-openings -i data-samples/zh-tang-poems \
  --index "$work/index" --run-name two
webset=target/same-outputs-webset
[ -f "$webset/pages.warc.gz" ] || python3 bench/make_webset.py --articles shipped --out "$webset" > /dev/null
run webset -i "$webset/pages.warc.gz"
if [ -n "$docs" ]; then
  corpus=target/bench/corpus-$docs.jsonl
  [ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
  run "corpus-$docs" -i "$corpus" --memory-budget 64M
  run "corpus-$docs-simhash" -i "$corpus" --method simhash
fi

python3 - "$work" > "$listing" <<'PY'
import hashlib, json, os, re, sys
work = sys.argv[1]
for root, dirs, files in sorted(os.walk(work)):
    dirs.sort()
    for name in sorted(files):
        path = os.path.join(root, name)
        rel = re.sub(r"gen-(\d+)-[0-9a-f]+", r"gen-\1", os.path.relpath(path, work))
        if name == "summary.json":
            s = json.load(open(path))
            for key in ("seconds", "peak_memory_bytes", "spilled_bytes"):
                s.pop(key, None)
            data = json.dumps(s, sort_keys=True).encode()
        elif name.endswith(".parquet") or name.endswith(".jsonl") or name.endswith(".bin"):
            data = open(path, "rb").read()
        else:
            continue
        print(hashlib.sha256(data).hexdigest()[:16], rel)
PY
echo "$(wc -l < "$listing") outputs listed in $listing"
