#!/usr/bin/env bash
# Resume benchmark: a run killed (SIGKILL) at a share of its clean wall time, then rerun into
# the same output. Prints the clean run's wall time and the bytes its work area took, when
# the kill came, the rerun's wall time and its ratio to the clean run's, what the rerun
# replayed and read (summary.json's work_area), and whether the rerun decided as the clean
# run did (summary counts; with a local output and pyarrow, also a digest of every
# documents/ and pairs/ row but the `source` column).
# Not part of the test run.
#
#   bash bench/resume.sh [DOCS] [FILES] [SHARE] [WORKERS]   e.g. bash bench/resume.sh 1000000 20 0.7 2
#   S3=1 bash bench/resume.sh ...   the outputs (so the work area) in moto's S3-compatible
#                                   server on 127.0.0.1 (MOTO_SERVER names it; pip install
#                                   'moto[server]'); the inputs stay local
#   WEB=1 bash bench/resume.sh 100000 ...   web pages instead: bench/warc.sh's WARC files
#                                   (FILES unused), so the rerun also skips the corpus passes
#   INDEX=1 bash bench/resume.sh ...   each run against its own new index (OUT-index)
# NEARDUP=BINARY times that binary instead of this tree's.
#
# The corpus is bench/make_real_corpus.py's (real sentences from ../shared when present),
# split into FILES JSON Lines files in target/bench/resume-DOCS-FILES/in.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-1000000}
files=${2:-20}
share=${3:-0.7}
workers=${4:-2}
source bench/resume_corpus.sh
rm -rf "$work/clean" "$work/out" "$work/clean-index" "$work/out-index"
out=$work/out
clean=$work/clean
url=
if [ -n "${S3:-}" ]; then
  moto=${MOTO_SERVER:-$(command -v moto_server || echo target/ci-venv/bin/moto_server)}
  [ -x "$moto" ] || { echo "moto_server not found: pip install 'moto[server]'" >&2; exit 2; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$moto" -H 127.0.0.1 -p "$port" > /dev/null 2>&1 &
  server=$!
  trap 'kill $server 2> /dev/null || true' EXIT
  url=http://127.0.0.1:$port
  for _ in $(seq 100); do curl -s -o /dev/null "$url/" && break; sleep 0.1; done
  curl -sf -X PUT "$url/bench" -o /dev/null
  export AWS_ENDPOINT_URL=$url AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=bench \
    AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
  out=s3://bench/out
  clean=s3://bench/clean
fi

run() { # OUT
  "$bin" dedup -i "$work/in" -o "$1" -w "$workers" -q --spill-dir "$work" ${INDEX:+--index "$1-index"}
}
now() { python3 -c 'import time; print(time.monotonic())'; }
summary() { # OUT: its summary.json
  case "$1" in
    # moto refuses anonymous GETs: sign them as neardup does.
    s3://*) curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user bench:bench "$url/${1#s3://}/summary.json" ;;
    *) cat "$1/summary.json" ;;
  esac
}

start=$(now)
run "$clean"
wall=$(python3 -c "print(round($(now) - $start, 2))")
kill_after=$(python3 -c "print(round($wall * $share, 2))")

# Started directly, so that $! is neardup's own process.
"$bin" dedup -i "$work/in" -o "$out" -w "$workers" -q --spill-dir "$work" ${INDEX:+--index "$out-index"} &
pid=$!
sleep "$kill_after"
kill -9 "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true

start=$(now)
run "$out"
rerun=$(python3 -c "print(round($(now) - $start, 2))")

summary "$clean" > "$work/clean-summary.json"
summary "$out" > "$work/rerun-summary.json"
# PYTHON (say, a virtual environment with pyarrow) reads the parts; python3 otherwise.
rows="rows not checked: the output is in object storage"
[ -n "${S3:-}" ] || rows=$("${PYTHON:-python3}" bench/same_rows.py "$work/clean" "$out")
python3 - "$work" "$docs" "$files" "$workers" "$out" "$wall" "$kill_after" "$share" "$rerun" "$rows" <<'PY'
import json, sys
work, docs, files, workers, out, wall, kill_after, share, rerun, rows = sys.argv[1:]
wall, kill_after, rerun = float(wall), float(kill_after), float(rerun)
clean = json.load(open(f"{work}/clean-summary.json"))
again = json.load(open(f"{work}/rerun-summary.json"))
same = "counts " + ("yes" if clean["counts"] == again["counts"] else "NO") + ", " + rows
written = clean["work_area"]["bytes_written"]
w = again["work_area"]
print(f"docs {docs} in {files} files, {workers} workers, output {out}")
print(f"clean run  {wall:8.2f} s   work area {written / 2**20:.0f} MiB ({written / int(docs):.0f} bytes a document)")
print(f"killed at  {kill_after:8.2f} s   ({share} of the clean run)")
print(f"rerun      {rerun:8.2f} s   = {rerun / wall:.2f} of the clean run; units replayed {w['units_reused']}, read {w['units_read']}, corpus passes replayed {w['corpus_statistics_reused']}")
print(f"rerun decided as the clean run: {same}")
PY
