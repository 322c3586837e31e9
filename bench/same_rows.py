"""Whether two runs' outputs hold the same rows: every row of documents/ and pairs/ but the
`source` column, in any order. Prints "rows yes", "rows NO", or why they were not checked
(no pyarrow). Used by bench/resume.sh and bench/sign_tasks.sh.

    python3 bench/same_rows.py OUT_A OUT_B
"""
import glob
import hashlib
import os
import sys


def digest(folder):
    import pyarrow.parquet as pq

    h = hashlib.sha256()
    for sub in ("documents", "pairs"):
        rows = []
        for part in sorted(glob.glob(os.path.join(folder, sub, "*.parquet"))):
            t = pq.read_table(part)
            cols = [c for c in t.column_names if c != "source"]
            rows += [tuple(str(r[c]) for c in cols) for r in t.select(cols).to_pylist()]
        for r in sorted(rows):
            h.update(repr(r).encode())
    return h.hexdigest()


if __name__ == "__main__":
    a, b = sys.argv[1:3]
    try:
        print("rows " + ("yes" if digest(a) == digest(b) else "NO"))
    except ImportError:
        print("rows not checked: no pyarrow")
