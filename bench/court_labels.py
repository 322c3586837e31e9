#!/usr/bin/env python3
"""The bundled court openings under the quality rule's labels.

    target/peer-venv/bin/python bench/court_labels.py [NEARDUP] [-- DEDUP_ARGS...]

`data-samples/zh-court-openings` is labelled from metadata: two openings are one document
only when they are the same bytes. The quality rule (docs/quality.md, "The rule defaults
are chosen by") labels two rulings of one formula that differ in a docket number or in a
party as different documents, and says nothing of openings that differ otherwise (a
comma's width, a word). This script runs `neardup dedup` on the openings with each method
(at the defaults, or with DEDUP_ARGS added to both runs: `--set minhash.threshold=0.86`
changes only MinHash's), and prints for each:

- the predicted pairs (pairs of documents that share a cluster, as `neardup eval` counts
  them) and those the metadata rejects;
- of the rejected pairs, those whose openings differ in a reference: a docket number
  (digits before `号`, with a letter and dash before them when there are: `X-35号`; not a
  day, `5月1号`), a serial number after `编号`, or a party named after its role
  (`原告魏洁`, `第三人张杰`; read generously: a clause after a role is taken as its
  party), each listed;
- pair precision counting only those as wrong (the rule's label; the other rejected pairs
  count as right, so it is an upper bound), and as the metadata counts it;
- documents removed, and those removed for a document whose references differ.

NEARDUP defaults to target/release/neardup; outputs go to target/court-labels/METHOD.
Needs pyarrow (`bash bench/index_quality.sh` installs it in target/peer-venv).
"""

import gzip
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

OPENINGS = Path("data-samples/zh-court-openings/openings.jsonl.gz")
ROLES = (
    "再审申请人|被再审申请人|复议申请人|申请执行人|被申请执行人|赔偿请求人|原审原告|原审被告|"
    "原审第三人|被上诉人|上诉人|被申请人|申请人|被执行人|第三人|起诉人|原告|被告"
)
# What ends a name: punctuation and the words that follow a party in these formulas.
NAME_ENDS = "，,、。；;：:（(）)《\"“因诉与于不及的向对在提申称等一为作所就到已履以"
DOCKET = re.compile(r"([A-Za-z]-?)?(\d+)号")
SERIAL = re.compile(r"编号[:：为]?([\w\-—]+)")
PARTY = re.compile("(" + ROLES + ")([^" + re.escape(NAME_ENDS) + "]{2,24})")


def references(text):
    """The docket numbers, serial numbers and parties an opening names, as a set."""
    found = set()
    for m in DOCKET.finditer(text):
        if not text[: m.start()].endswith("月"):
            found.add(("number", (m.group(1) or "").upper() + m.group(2).lstrip("0")))
    found.update(("serial", m.group(1)) for m in SERIAL.finditer(text))
    found.update((m.group(1), m.group(2)) for m in PARTY.finditer(text))
    return found


def report(method, out, records):
    rows = pq.read_table(out / "documents", columns=["id", "cluster", "duplicate_of"]).to_pylist()
    clusters = {}
    for row in rows:
        clusters.setdefault(row["cluster"] or row["id"], []).append(row["id"])
    predicted, rejected, different = 0, 0, []
    for members in clusters.values():
        for a, b in itertools.combinations(sorted(members), 2):
            predicted += 1
            if records[a]["truth"] == records[b]["truth"]:
                continue
            rejected += 1
            ra, rb = references(records[a]["text"]), references(records[b]["text"])
            if ra != rb:
                different.append((a, b, sorted(ra ^ rb)))
    removed = [r for r in rows if r["duplicate_of"]]
    removed_apart = sum(
        references(records[r["id"]]["text"]) != references(records[r["duplicate_of"]]["text"])
        for r in removed
        if records[r["id"]]["truth"] != records[r["duplicate_of"]]["truth"]
    )
    print(f"{method}: {predicted} pairs predicted, {rejected} that the metadata rejects, "
          f"{len(different)} of them differing in a reference")
    for a, b, refs in different:
        print(f"  {a} {b}: " + ", ".join(f"{kind} {value}" for kind, value in refs))
    rule = 1 - len(different) / predicted if predicted else 1.0
    metadata = 1 - rejected / predicted if predicted else 1.0
    print(f"  precision {rule:.3f} by the rule's labels ({metadata:.3f} by the metadata); "
          f"{len(removed)} removed, {removed_apart} for an opening whose references differ")


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    neardup = args[0] if args else "target/release/neardup"
    with gzip.open(OPENINGS, "rt", encoding="utf-8") as f:
        records = {r["id"]: r for r in map(json.loads, f)}
    for method in ["minhash", "simhash"]:
        out = Path("target/court-labels") / method
        command = [neardup, "dedup", "-q", "-i", str(OPENINGS), "-o", str(out), "--method", method]
        subprocess.run(command + extra, check=True, stdout=subprocess.DEVNULL)
        report(method, out, records)


if __name__ == "__main__":
    main()
