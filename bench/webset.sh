#!/usr/bin/env bash
# Quality on templated web pages: builds the labelled set (bench/make_webset.py), runs
# neardup with each method, with and without the boilerplate it learns, and prints
# precision, recall and F1 overall and per transformation (`neardup eval --by kind`).
# Not part of the test run.
#
#   bash bench/webset.sh [shipped|research]    research needs ../shared/data-samples
#
# JOB=FILE runs with that job file's settings as well (it must not set [boilerplate]);
# NAME=WORD names the runs' folders target/webset/out-...-WORD; WEBSET_NO_BUILD=1 uses
# target/release/neardup as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
articles=${1:-research}
set_dir=target/webset-$articles
python3 bench/make_webset.py --articles "$articles" --out "$set_dir"
[ "${WEBSET_NO_BUILD:-}" = 1 ] || cargo build --release -q -p neardup-cli
mkdir -p target/webset
jobs=target/webset/jobs${NAME:+-$NAME}
mkdir -p "$jobs"
cat ${JOB:+"$JOB"} /dev/null > "$jobs/on.toml"
{ cat "$jobs/on.toml"; printf '\n[boilerplate]\nenabled = false\n'; } > "$jobs/off.toml"
for method in minhash simhash; do
  for boilerplate in on off; do
    out=target/webset/out-$articles-$method-$boilerplate${NAME:+-$NAME}
    /usr/bin/time -f '%e' -o target/webset/time.txt \
      target/release/neardup dedup -i "$set_dir/pages.warc.gz" -o "$out" --method "$method" \
      --job "$jobs/$boilerplate.toml" -q
    echo
    echo "== $method, boilerplate $boilerplate ($(cat target/webset/time.txt) s)"
    target/release/neardup eval --truth "$set_dir/truth.json" --run "$out" --by kind --show 0 \
      | grep -v '^$' | grep -v 'false positives' | grep -v '^  [0-9.]* - \|^recall by\|^  1.0 (same'
  done
done
