#!/usr/bin/env bash
# Object-storage benchmark: the WARC benchmark's files (bench/warc.sh) uploaded to moto's
# S3-compatible server on 127.0.0.1, read by neardup from s3:// (writing its outputs to a
# local folder, then to s3:// as well) beside the same run on the local files, and beside
# the server's raw GET rate (curl fetching every object, one after another, to /dev/null).
# Every run has the same memory budget (BUDGET, default 1G). Prints seconds, pages per
# second, MB per second and peak memory of each, and checks that the runs decided the
# same. Needs moto_server (pip install 'moto[server]'; MOTO_SERVER names it) and curl. Not
# part of the test run.
#
#   bash bench/remote.sh [DOCS] [WORKERS] [METHOD]      e.g. bash bench/remote.sh 100000 2
# NEARDUP=BINARY times that binary (say, a build from before a change) instead of this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-100000}
workers=${2:-2}
method=${3:-minhash}
budget=${BUDGET:-1G}
moto=${MOTO_SERVER:-$(command -v moto_server || echo target/ci-venv/bin/moto_server)}
[ -x "$moto" ] || { echo "moto_server not found: pip install 'moto[server]'" >&2; exit 2; }
corpus=target/bench/corpus-$docs.jsonl
warc=target/bench/warc-$docs
[ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
[ -d "$warc" ] && [ -f "$warc.truth.jsonl" ] || python3 bench/make_warc.py --corpus "$corpus" --out "$warc"
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto" -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
url=http://127.0.0.1:$port
curl -sf -X PUT "$url/bench" -o /dev/null
for f in "$warc"/*; do
  curl -sf -H 'Expect:' -H 'Content-Type: application/octet-stream' -X PUT \
    --data-binary @"$f" "$url/bench/warc/$(basename "$f")" -o /dev/null
done

export AWS_ENDPOINT_URL=$url AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
time_run() {  # NAME INPUT OUTPUT: seconds of one run; its summary.json into target/bench/out-remote-NAME.json
  local start end
  start=$(date +%s.%N)
  "$bin" dedup -i "$2" -o "$3" -w "$workers" --method "$method" \
    --memory-budget "$budget" -q
  end=$(date +%s.%N)
  case "$3" in
    s3://*) curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user bench:bench \
              "$url/${3#s3://}/summary.json" -o "target/bench/out-remote-$1.json" ;;
    *) cp "$3/summary.json" "target/bench/out-remote-$1.json" ;;
  esac
  python3 -c "print(f'{$end - $start:.2f}')"
}
get_start=$(date +%s.%N)
# moto refuses anonymous GETs: sign them as neardup does.
for f in "$warc"/*; do
  curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user bench:bench \
    "$url/bench/warc/$(basename "$f")" -o /dev/null
done
get_end=$(date +%s.%N)
local_s=$(time_run local "$warc" target/bench/out-remote-local)
remote_s=$(time_run s3 s3://bench/warc target/bench/out-remote-s3)
both_s=$(time_run s3-to-s3 s3://bench/warc s3://bench/out)
python3 - "$warc" "$local_s" "$remote_s" "$both_s" "$get_start" "$get_end" <<'PY'
import json, os, sys
warc, local_s, remote_s, both_s, g0, g1 = sys.argv[1:]
mb = sum(os.path.getsize(os.path.join(warc, f)) for f in os.listdir(warc)) / 2**20
get_s = float(g1) - float(g0)
runs = {name: json.load(open(f"target/bench/out-remote-{name}.json"))
        for name in ["local", "s3", "s3-to-s3"]}
for name, summary in runs.items():
    assert summary["counts"] == runs["local"]["counts"], f"{name} decided differently"
pages = runs["local"]["counts"]["records"]
budget = runs["local"]["memory_budget_bytes"] / 2**20
print(f"{'run':<32} {'seconds':>8} {'pages_per_s':>11} {'MB_per_s':>8} {'peak_MiB':>8}")
print(f"{'raw GET (curl, in turn)':<32} {get_s:8.2f} {pages / get_s:11.0f} {mb / get_s:8.1f}")
for name, key, s in [("neardup, local files", "local", local_s),
                     ("neardup, from s3:// on loopback", "s3", remote_s),
                     ("neardup, s3:// to s3://", "s3-to-s3", both_s)]:
    s, peak = float(s), runs[key]["peak_memory_bytes"] / 2**20
    print(f"{name:<32} {s:8.2f} {pages / s:11.0f} {mb / s:8.1f} {peak:8.0f}")
print(f"from s3:// / local: {float(remote_s) / float(local_s):.2f}x; "
      f"s3:// to s3:// / local: {float(both_s) / float(local_s):.2f}x; same counts; "
      f"budget {budget:.0f} MiB; remote_retries "
      f"{runs['s3']['remote_retries']} and {runs['s3-to-s3']['remote_retries']}")
PY
