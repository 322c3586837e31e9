#!/usr/bin/env python3
"""Drift of SimHash fingerprints in an index: how far a batch's fingerprints, signed with
the document frequencies (and templates) known when it ran, lie from the fingerprints one
run over every batch gives the same pages.

    python3 bench/index_drift.py   # after bash bench/index_quality.sh

For each set and split of bench/index_quality.sh's SimHash runs, it indexes one run over
the three batches (a fresh index under target/iq/<set>-simhash-<split>/one-index) and
compares, page by page, the fingerprint each batch's generation holds with the one run's:
the share of pages whose fingerprint differs, and the mean and largest Hamming distance,
per batch. The last batch weighs by the same frequencies as the one run; what still
differs there comes from templates learned from a sample. Not part of the test run.
"""

import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
IQ = ROOT / "target" / "iq"
BIN = ROOT / "target" / "release" / "neardup"


def signatures(index: Path, generation: int) -> dict:
    """id -> fingerprint of every page the generation indexed."""
    import json

    manifest = json.loads((index / "index.json").read_text())
    folder = next(g["folder"] for g in manifest["generations"] if g["number"] == generation)
    out = {}
    for part in sorted((index / folder / "docs").glob("part-*.parquet")):
        t = pq.read_table(part, columns=["generation", "id", "signature"]).to_pylist()
        for row in t:
            if row["generation"] == generation:
                out[row["id"]] = int.from_bytes(row["signature"], "little")
    return out


def main() -> None:
    print(f"{'set':<9} {'split':<5} {'batch':<5} {'pages':>6} {'changed':>8} {'mean':>6} {'max':>4}")
    for set_name in ("webset", "crawlset"):
        for split in ("even", "thin"):
            d = IQ / f"{set_name}-simhash-{split}"
            if not (d / "index").exists():
                sys.exit(f"{d}/index is missing: run bash bench/index_quality.sh first")
            one_index = d / "one-index"
            if not one_index.exists():
                split_dir = IQ / f"{set_name}-split" / split
                inputs = sorted(split_dir.glob("b[123].*"))
                cmd = [str(BIN), "dedup", "-q", "--method", "simhash", "-o", str(d / "one-indexed"),
                       "--index", str(one_index), "--run-name", "one"]
                for i in inputs:
                    cmd += ["-i", str(i)]
                subprocess.run(cmd, check=True)
            whole = signatures(one_index, 1)
            for batch in (1, 2, 3):
                mine = signatures(d / "index", batch)
                shared = [i for i in mine if i in whole]
                dist = [bin(mine[i] ^ whole[i]).count("1") for i in shared]
                changed = sum(1 for x in dist if x)
                mean = sum(dist) / len(dist) if dist else 0.0
                print(f"{set_name:<9} {split:<5} b{batch:<4} {len(shared):>6} {changed / max(len(shared), 1):>8.1%} "
                      f"{mean:>6.2f} {max(dist, default=0):>4}")


if __name__ == "__main__":
    main()
