#!/usr/bin/env bash
# WARC input benchmark: renders the benchmark corpus as gzipped WARC files of HTML pages
# (bench/make_warc.py: request + response records, UTF-8 and GBK pages) and times neardup
# on them. Prints wall time, pages per second, compressed MB per second, CPU seconds (user +
# sys) and peak memory of the fastest of RUNS runs (default 1), and
# the run's pair precision, recall and F1 against the corpus's planted copies (a labelled set
# of web pages built apart from bench/make_webset.py and bench/make_crawlset.py: nothing was
# tuned on it). Not part of the test run.
#
#   bash bench/warc.sh [DOCS] [WORKERS] [METHOD] [RUNS]   e.g. bash bench/warc.sh 100000 2 simhash 3
# NEARDUP=BINARY times that binary (say, a build from before a change) instead of this tree's;
# JOB=FILE runs with that job file (settings to try; the method is still the argument's);
# PARAGRAPHS=1 adds a row of the same runs with --paragraphs, with what paragraph-level dedup
# left out and its CPU time against the default row's.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
workers=${2:-2}
method=${3:-minhash}
runs=${4:-1}
corpus=target/bench/corpus-$docs.jsonl
warc=target/bench/warc-$docs
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
[ -d "$warc" ] && [ -f "$warc.truth.jsonl" ] || python3 bench/make_warc.py --corpus "$corpus" --out "$warc"
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
# measure OUT [FLAGS...]: runs RUNS times into OUT, keeps the fastest run's times in OUT.time
# and its scores in OUT.eval.json.
measure() {
  local out=$1 best= wall user sys rss_kb
  shift
  for _ in $(seq "$runs"); do
    /usr/bin/time -f '%e %U %S %M' -o target/bench/time.txt \
      "$bin" dedup -i "$warc" -o "$out" -w "$workers" --method "$method" ${JOB:+--job "$JOB"} \
      "$@" -q
    read -r wall user sys rss_kb < target/bench/time.txt
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $wall < ${best%% *} else 1)"; then
      best="$wall $user $sys $rss_kb"
    fi
  done
  echo "$best" > "$out.time"
  "$bin" eval --truth "$warc.truth.jsonl" --run "$out" --json > "$out.eval.json"
}
out=target/bench/out-warc-$docs
measure "$out"
outs=("$out")
if [ -n "${PARAGRAPHS:-}" ]; then
  measure "$out-paragraphs" --paragraphs
  outs+=("$out-paragraphs")
fi
python3 - "$workers" "${outs[@]}" <<'PY'
import json, sys
workers, outs = sys.argv[1], sys.argv[2:]
print(f"{'run':>12} {'pages':>8} {'skipped':>8} {'workers':>7} {'wall_s':>7} {'pages_per_s':>11} {'MB_per_s':>8} {'cpu_s':>6} {'peak_MB':>7} {'pairs':>7}")
rows = []
for out in outs:
    s = json.load(open(f"{out}/summary.json"))
    e = json.load(open(f"{out}.eval.json"))
    wall, user, sys_s, rss_kb = open(f"{out}.time").read().split()
    wall, cpu = float(wall), float(user) + float(sys_s)
    pages = s["counts"]["records"]
    mb = s["input_bytes"] / 2**20
    name = "--paragraphs" if "paragraphs" in s else "default"
    print(f"{name:>12} {pages:8} {sum(s['counts']['skipped_records'].values()):8} {workers:>7} {wall:7.2f} "
          f"{pages / wall:11.0f} {mb / wall:8.1f} {cpu:6.2f} {int(rss_kb) / 1024:7.0f} {s['counts']['pairs']:7}")
    rows.append((name, s, e, cpu))
for name, s, e, cpu in rows:
    print(f"{name}: {s['config']['method']} against the planted copies: pair precision "
          f"{e['precision']:.4f}, recall {e['recall']:.4f}, F1 {e['f1']:.4f}")
    if "paragraphs" in s:
        p = s["paragraphs"]
        print(f"{name}: {p['paragraphs_left_out']} paragraphs ({p['chars_left_out']} characters) "
              f"left out of {p['documents']} pages; CPU {cpu / rows[0][3]:.2f} times the default row's")
PY
