"""Reads a neardup output folder with DuckDB and pyarrow, as analysts do, and checks it;
with an index folder, also reads the index as docs/incremental.md's query does.

    python .ci/check_outputs.py OUT_DIR [INDEX_DIR]
"""

import json
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

out = Path(sys.argv[1])
assert (out / "_SUCCESS").exists(), "no _SUCCESS marker"
summary = json.loads((out / "summary.json").read_text())
assert summary["status"] == "success", summary

con = duckdb.connect()
docs = f"read_parquet('{out}/documents/*.parquet')"
pairs = f"read_parquet('{out}/pairs/*.parquet')"
records, distinct = con.sql(f"select count(*), count(distinct doc_id) from {docs}").fetchone()
assert records == distinct == summary["counts"]["records"], (records, distinct, summary["counts"])
by_decision = dict(con.sql(f"select decision, count(*) from {docs} group by 1").fetchall())
assert by_decision.get("keep", 0) == summary["counts"]["kept"], by_decision
assert by_decision.get("remove", 0) == summary["counts"]["removed"], by_decision
assert by_decision.get("reject", 0) == summary["counts"]["rejected"], by_decision
bad = con.sql(f"select count(*) from {pairs} where id_a >= id_b").fetchone()[0]
assert bad == 0, f"{bad} pairs not ordered"
orphans = con.sql(
    f"select count(*) from {docs} d where decision = 'remove' and duplicate_of not in "
    f"(select id from {docs} where decision = 'keep')"
).fetchone()[0]
assert orphans == 0, f"{orphans} removed documents point at no kept document"

table = pq.ParquetDataset(out / "pairs").read()
assert table.num_rows == summary["counts"]["pairs"], (table.num_rows, summary["counts"])
meta = pq.read_metadata(next((out / "documents").glob("part-*.parquet"))).metadata
assert b"neardup.config" in meta and b"neardup.signature_version" in meta, meta.keys()
for t in pq.read_schema(next((out / "documents").glob("part-*.parquet"))).types:
    assert "uint" not in str(t), f"unsigned column type {t}: Spark cannot read it"
print(f"ok: {records} documents, {table.num_rows} pairs, decisions {by_decision}")

if len(sys.argv) > 2:
    index = Path(sys.argv[2])
    manifest = json.loads((index / "index.json").read_text())
    # docs/incremental.md's query: committed folders only.
    committed = dict(con.sql(f"""
        SELECT generation, count(*) AS documents
        FROM read_parquet('{index}/gen-*/docs/*.parquet', filename = true)
        WHERE regexp_extract(filename, '(gen-[^/]+)/docs/', 1)
              IN (SELECT unnest(generations).folder FROM '{index}/index.json')
        GROUP BY 1""").fetchall())
    expected = {g["number"]: g["documents"] for g in manifest["generations"]}
    assert committed == expected, (committed, expected)
    every = con.sql(f"select count(*) from '{index}/gen-*/docs/*.parquet'").fetchone()[0]
    assert every > sum(expected.values()), "the check needs a folder of a failed run"
    print(f"ok: index generations {expected}; {every} rows in every folder")
