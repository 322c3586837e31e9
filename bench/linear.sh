#!/usr/bin/env bash
# Linear-cost benchmark: runs MinHash with 2 workers on the real corpora of growing size
# (bench/make_real_corpus.py, which needs ../shared/data-samples; the same share of copies
# at every size, though not the same near misses: see CORPUS below) under each budget,
# best of RUNS by CPU seconds (user + sys), and prints per run: wall and CPU seconds, peak
# resident memory against the budget, bytes spilled, pairs, the seconds of each stage
# (from one stage's end to the next, as summary.json gives them), and a digest of the
# documents/ and pairs/ parts (the record size limit is fixed at its default, 16 MiB, so
# that parts made under different budgets have the same bytes). Then, per budget, the CPU
# ratio of each size to the one before (also per input byte, beside the ratios of the
# bytes, of the distinct candidate pairs and of each stage's wall time), and whether the
# budgets gave the same parts.
# Not part of the test run.
#
#   bash bench/linear.sh [RUNS] [DOCS...]     e.g. bash bench/linear.sh 3 100000 1000000
#   BUDGETS="default 2G" bash bench/linear.sh 1 10000000
#   CORPUS=disjoint bash bench/linear.sh 5 100000 1000000
# BUDGETS (default "512M") lists --memory-budget values, "default" for none;
# NEARDUP=BINARY times another build. CORPUS=disjoint keeps the duplicate rate exactly: every
# size after the first is that many disjoint copies of the first size's corpus
# (bench/make_disjoint.py: each copy in its own alphabet), where the real corpora's near
# misses grow faster than their documents (see bench/make_disjoint.py).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(100000 1000000); fi
read -r -a budgets <<< "${BUDGETS:-512M}"
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
mkdir -p target/bench
results=target/bench/linear.tsv
: > "$results"
# The one setting the budget resolves, and the parts record.
job=target/bench/linear-job.toml
printf '[input]\nmax_record_bytes = 16777216\n' > "$job"

printf '%-9s %-8s %7s %7s %8s %8s %9s %8s  %s\n' \
  docs budget wall_s cpu_s peak_MB peak/bud spilled_MB pairs \
  'stage seconds: read_and_sign ids_and_exact buckets verify cluster writing | parts digest'
first=${sizes[0]}
for docs in "${sizes[@]}"; do
  corpus=target/bench/real-$docs.jsonl
  if [ "${CORPUS:-real}" = disjoint ] && [ "$docs" != "$first" ]; then
    if (( docs % first != 0 || docs <= first || docs / first > 10 )); then
      echo "CORPUS=disjoint: $docs is not 2 to 10 times $first" >&2
      exit 2
    fi
    base=target/bench/real-$first.jsonl
    corpus=target/bench/disjoint-${first}x$((docs / first)).jsonl
    [ -f "$base" ] || python3 bench/make_real_corpus.py --docs "$first" --out "$base" > /dev/null
    [ -f "$corpus" ] || python3 bench/make_disjoint.py --corpus "$base" --copies $((docs / first)) \
      --out "$corpus" > /dev/null
  fi
  [ -f "$corpus" ] || python3 bench/make_real_corpus.py --docs "$docs" --out "$corpus" > /dev/null
  for budget in "${budgets[@]}"; do
    out=target/bench/out-linear-$docs-$budget
    flags=()
    [ "$budget" = default ] || flags=(--memory-budget "$budget")
    best=
    for _ in $(seq "$runs"); do
      /usr/bin/time -f '%e %U %S %M' -o target/bench/time.txt \
        "$bin" dedup -i "$corpus" -o "$out" -w 2 -q --job "$job" "${flags[@]}"
      read -r wall user sys rss_kb < target/bench/time.txt
      cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
      if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $cpu < $best else 1)"; then
        best=$cpu
        cp "$out/summary.json" target/bench/linear-summary.json
        echo "$wall $cpu $rss_kb" > target/bench/linear-best.txt
      fi
    done
    read -r wall cpu rss_kb < target/bench/linear-best.txt
    python3 - target/bench/linear-summary.json "$out" "$docs" "$budget" "$wall" "$cpu" "$rss_kb" "$results" <<'PY'
import hashlib, json, os, sys
summary, out, docs, budget_name, wall, cpu, rss_kb, results = sys.argv[1:]
s = json.load(open(summary))
budget = s["memory_budget_bytes"]
peak = int(rss_kb) * 1024
t = s["seconds"]
ends = ["read_and_sign", "ids_and_exact", "buckets", "verify", "cluster", "total"]
prev, stages = t.get("corpus_statistics", 0.0), []
for name in ends:
    stages.append(t[name] - prev)
    prev = t[name]
digest = hashlib.sha256()
for kind in ("documents", "pairs"):
    for name in sorted(os.listdir(os.path.join(out, kind))):
        digest.update(name.encode())
        digest.update(open(os.path.join(out, kind, name), "rb").read())
digest = digest.hexdigest()[:12]
print(f"{docs:<9} {budget_name:<8} {float(wall):7.1f} {float(cpu):7.1f} {peak / 2**20:8.0f} "
      f"{peak / budget:8.2f} {s['spilled_bytes'] / 2**20:9.0f} {s['counts']['pairs']:8}  "
      + " ".join(f"{x:.1f}" for x in stages) + f" | {digest}")
with open(results, "a") as f:
    f.write(f"{docs}\t{budget_name}\t{cpu}\t{digest}\t{s['input_bytes']}\t"
            f"{s['lsh']['unique_candidates']}\t" + ",".join(f"{x:.3f}" for x in stages) + "\n")
PY
  done
done
python3 - "$results" <<'PY'
import sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
by_budget, digests = {}, {}
for docs, budget, cpu, digest, size, candidates, stages in rows:
    stages = [float(x) for x in stages.split(",")]
    by_budget.setdefault(budget, []).append((int(docs), float(cpu), int(size), int(candidates), stages))
    digests.setdefault(docs, set()).add(digest)
names = ["read_and_sign", "ids_and_exact", "buckets", "verify", "cluster", "writing"]
for budget, runs in by_budget.items():
    for (d0, c0, b0, k0, s0), (d1, c1, b1, k1, s1) in zip(runs, runs[1:]):
        print(f"{budget}: {d1 / d0:.0f}x the documents ({b1 / b0:.2f}x the bytes, {k1 / k0:.1f}x the "
              f"distinct candidate pairs) take {c1 / c0:.2f}x the CPU time, {c1 / c0 / (b1 / b0):.2f}x "
              "per byte; stage wall times " + ", ".join(
                  f"{n} {b / a:.1f}x" if a > 0 else f"{n} -" for n, a, b in zip(names, s0, s1)))
for docs, ds in digests.items():
    if len(by_budget) > 1:
        print(f"{docs}: " + ("the same parts under every budget" if len(ds) == 1 else "parts DIFFER between budgets"))
PY
