#!/usr/bin/env bash
# Signing in tasks: the 1,000,000-document corpus in FILES JSON Lines files, run as one
# `neardup dedup`, then as TASKS `neardup sign` tasks (one after another here; deployed,
# they run on other machines at once) and a `dedup` over what they signed. Prints each
# wall time, the tasks' total against the clean run, the dedup-after-tasks against the
# clean run (the share of the work left to the dedup's machines), what it replayed and
# read (summary.json's work_area), and whether it decided as the clean run did (summary
# counts; with pyarrow, every documents/ and pairs/ row but `source`). Not part of the test
# run.
#
#   bash bench/sign_tasks.sh [DOCS] [FILES] [TASKS] [WORKERS]   e.g. bash bench/sign_tasks.sh 1000000 20 4 2
# NEARDUP=BINARY times that binary instead of this tree's; PYTHON names one with pyarrow.
#
# The corpus is bench/make_real_corpus.py's (real sentences from ../shared when present),
# split as bench/resume.sh splits it (target/bench/resume-DOCS-FILES/in).
set -euo pipefail
cd "$(dirname "$0")/.."
docs=${1:-1000000}
files=${2:-20}
tasks=${3:-4}
workers=${4:-2}
source bench/resume_corpus.sh
rm -rf "$work/clean" "$work/tasks"
now() { python3 -c 'import time; print(time.monotonic())'; }
since() { python3 -c "print(round($(now) - $1, 2))"; }

start=$(now)
"$bin" dedup -i "$work/in" -o "$work/clean" -w "$workers" -q --spill-dir "$work"
clean=$(since "$start")
task_walls=()
for t in $(seq 0 $((tasks - 1))); do
  start=$(now)
  "$bin" sign -i "$work/in" -o "$work/tasks" -w "$workers" -q --task "$t" --tasks "$tasks"
  task_walls+=("$(since "$start")")
done
start=$(now)
"$bin" dedup -i "$work/in" -o "$work/tasks" -w "$workers" -q --spill-dir "$work"
after=$(since "$start")

rows=$("${PYTHON:-python3}" bench/same_rows.py "$work/clean" "$work/tasks")
python3 - "$work" "$docs" "$files" "$tasks" "$workers" "$clean" "$after" "$rows" "${task_walls[@]}" <<'PY'
import json, sys
work, docs, files, tasks, workers, clean, after, rows, *walls = sys.argv[1:]
clean, after, walls = float(clean), float(after), [float(w) for w in walls]
a = json.load(open(f"{work}/clean/summary.json"))
b = json.load(open(f"{work}/tasks/summary.json"))
same = "counts " + ("yes" if a["counts"] == b["counts"] else "NO") + ", " + rows
w = b["work_area"]
print(f"docs {docs} in {files} files, {workers} workers a process, {tasks} tasks")
print(f"clean run        {clean:8.2f} s")
print(f"sign tasks       {' '.join(f'{x:.2f}' for x in walls)} s, together {sum(walls):.2f} s = {sum(walls) / clean:.2f} of the clean run")
print(f"dedup after them {after:8.2f} s   = {after / clean:.2f} of the clean run; units replayed {w['units_reused']}, read {w['units_read']}, tasks {w['signed_tasks']}")
print(f"decided as the clean run: {same}")
PY
