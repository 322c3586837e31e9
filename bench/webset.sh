#!/usr/bin/env bash
# Quality on templated web pages: builds the labelled set (bench/make_webset.py), runs
# neardup with each method, with and without the boilerplate it learns, and prints
# precision, recall and F1 overall and per transformation (`neardup eval --by kind`).
# Not part of the test run.
#
#   bash bench/webset.sh [shipped|research]    research needs ../shared/data-samples
set -euo pipefail
cd "$(dirname "$0")/.."
articles=${1:-research}
set_dir=target/webset-$articles
python3 bench/make_webset.py --articles "$articles" --out "$set_dir"
cargo build --release -q -p neardup-cli
mkdir -p target/webset
printf '[boilerplate]\nenabled = false\n' > target/webset/off.toml
printf '' > target/webset/on.toml
for method in minhash simhash; do
  for boilerplate in on off; do
    out=target/webset/out-$articles-$method-$boilerplate
    /usr/bin/time -f '%e' -o target/webset/time.txt \
      target/release/neardup dedup -i "$set_dir/pages.warc.gz" -o "$out" --method "$method" \
      --job "target/webset/$boilerplate.toml" -q
    echo
    echo "== $method, boilerplate $boilerplate ($(cat target/webset/time.txt) s)"
    target/release/neardup eval --truth "$set_dir/truth.json" --run "$out" --by kind --show 0 \
      | grep -v '^$' | grep -v 'false positives' | grep -v '^  [0-9.]* - \|^recall by\|^  1.0 (same'
  done
done
