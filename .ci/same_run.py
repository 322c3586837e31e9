"""Checks that two neardup output folders hold the same results: every row of documents/
and pairs/ (in any part layout) and the summary's counts. CI runs it on the quick start
made with `cargo run` and the one made with the neardup command the wheel installed.

    python .ci/same_run.py OUT_A OUT_B
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq


def rows(folder: Path, kind: str, key: list[str]):
    table = pq.ParquetDataset(folder / kind).read()
    return table.sort_by([(k, "ascending") for k in key]).to_pylist()


a, b = Path(sys.argv[1]), Path(sys.argv[2])
for kind, key in [("documents", ["doc_id"]), ("pairs", ["id_a", "id_b"])]:
    ra, rb = rows(a, kind, key), rows(b, kind, key)
    assert len(ra) == len(rb), f"{kind}: {len(ra)} rows against {len(rb)}"
    for x, y in zip(ra, rb):
        assert x == y, f"{kind} differ:\n{x}\n{y}"
counts = [json.loads((f / "summary.json").read_text())["counts"] for f in (a, b)]
assert counts[0] == counts[1], counts
print(f"ok: {a} and {b} hold the same {len(ra)} pairs; counts {counts[0]['kept']} kept, "
      f"{counts[0]['removed']} removed")
