#!/usr/bin/env python3
"""The arithmetic of bench/index_quality.sh: splits a labelled web set into batches, and
compares three batches run with `--index` against one run over the same pages.

    python3 bench/index_quality.py split PAGES OUT_DIR
    target/peer-venv/bin/python bench/index_quality.py report RUNS.tsv

`split` reads PAGES (a `.jsonl` of web pages, one line each, or a `.warc.gz` of one gzip
member per record) and writes two splits of its pages, as files of the same format:
OUT_DIR/even/b{1,2,3}.EXT, three consecutive batches of equal size in input order, and
OUT_DIR/thin/b{1,2,3}.EXT, the pages shuffled with a fixed seed, then batches of 10%, 30%
and 60% (the first batch has few pages per host). Only the records that hold a page
(`response`, `resource`, `conversion`) are split; other records are left out.

`report` reads a table written by the shell script, a row per set, method and split:
set, role, truth.json, method, split, the one run's output folder, its wall seconds, the
three batch output folders (comma-separated, in run order), their summed wall seconds,
the index folder's size in bytes, and a note on the batches' settings. It reads each
run's `documents/` with pyarrow and prints, per row:

- removals of the one run and of the batches, and how many are wrong: a removal is wrong
  when the truth label of `duplicate_of` differs from the page's;
- batch-only wrong: pages the batches remove wrongly that the one run keeps (they are
  listed in FOLDER/batch-only-wrong.tsv beside the batch outputs, for `neardup explain`);
- the share of the one run's removals that the batches also make (the page removed);
- pair precision, recall and F1 over predicted clusters, as `neardup eval --truth` counts
  them (a page's cluster is its `cluster` column, its own id when rejected or kept
  unverified); the batches' clusters are their `cluster` columns across the three runs,
  which name the kept page of an earlier batch when a page joins its cluster;
- wall seconds of the one run and of the three batches, and the index's size.
"""

import collections
import gzip
import json
import random
import sys
import zlib
from pathlib import Path

SEED = 20261127
PAGE_TYPES = (b"response", b"resource", b"conversion")


def warc_members(data):
    """(WARC-Type, raw bytes) of each gzip member of a WARC file of one member per record."""
    view, members, pos = memoryview(data), [], 0
    while pos < len(data):
        d, head, fed = zlib.decompressobj(31), b"", pos
        while not d.eof:
            if fed >= len(data):
                sys.exit(f"byte {pos}: a gzip member that does not end")
            chunk = view[fed:fed + 65536]
            fed += len(chunk)
            out = d.decompress(chunk)
            if len(head) < 4096:
                head += out[:4096]
        end = fed - len(d.unused_data)
        fields = head.split(b"\r\n\r\n", 1)[0].split(b"\r\n")
        warc_type = next((f.split(b":", 1)[1].strip() for f in fields if f.lower().startswith(b"warc-type:")), b"")
        members.append((warc_type, data[pos:end]))
        pos = end
    return members


def split(pages, out_dir):
    """Writes the even and thin splits of PAGES under OUT_DIR."""
    pages, out_dir = Path(pages), Path(out_dir)
    if pages.name.endswith(".warc.gz"):
        ext = "warc.gz"
        records = [raw for kind, raw in warc_members(pages.read_bytes()) if kind in PAGE_TYPES]
    elif pages.name.endswith(".jsonl"):
        ext = "jsonl"
        records = [line.encode() for line in pages.read_text(encoding="utf-8").splitlines(keepends=True)
                   if line.strip()]
    else:
        sys.exit(f"{pages}: neither .jsonl nor .warc.gz")
    n = len(records)
    shuffled = list(records)
    random.Random(SEED).shuffle(shuffled)
    cut_even = [0, n // 3, 2 * n // 3, n]
    cut_thin = [0, n // 10, n // 10 + 3 * n // 10, n]
    for name, recs, cuts in (("even", records, cut_even), ("thin", shuffled, cut_thin)):
        folder = out_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        for b in range(3):
            (folder / f"b{b + 1}.{ext}").write_bytes(b"".join(recs[cuts[b]:cuts[b + 1]]))
        print(f"{folder}: {' + '.join(str(cuts[b + 1] - cuts[b]) for b in range(3))} pages")


def documents(folder):
    """The rows of a run's documents/ as dicts of the columns used here."""
    import pyarrow.dataset as ds

    cols = ["id", "decision", "cluster", "duplicate_of", "reason"]
    return ds.dataset(f"{folder}/documents", format="parquet").to_table(columns=cols).to_pylist()


def host(info, page_id):
    """The host of a labelled page's URL, or empty."""
    url = info.get(page_id, {}).get("url") or ""
    return url.split("/")[2] if "//" in url else ""


def choose2(n):
    """Pairs of n things."""
    return n * (n - 1) // 2


def pair_scores(rows, labels):
    """Pair precision, recall and F1 of the predicted clusters, as `neardup eval` counts."""
    cells, by_pred, by_true = collections.Counter(), collections.Counter(), collections.Counter()
    for r in rows:
        if r["id"] not in labels:
            continue
        alone = r["decision"] == "reject" or r["reason"] == "unverified_in_cluster" or r["cluster"] is None
        cluster = "\0" + r["id"] if alone else r["cluster"]
        label = labels[r["id"]]
        cells[cluster, label] += 1
        by_pred[cluster] += 1
        by_true[label] += 1
    tp = sum(map(choose2, cells.values()))
    pred = sum(map(choose2, by_pred.values()))
    true = sum(map(choose2, by_true.values()))
    precision = tp / pred if pred else float("nan")
    recall = tp / true if true else float("nan")
    f1 = 2 * tp / (true + pred) if true else float("nan")
    return precision, recall, f1


def removals(rows, labels):
    """{page id: (duplicate_of, wrong)} of the removed pages."""
    out = {}
    for r in rows:
        if r["decision"] == "remove":
            wrong = labels.get(r["duplicate_of"]) != labels.get(r["id"])
            out[r["id"]] = (r["duplicate_of"], wrong)
    return out


def report(table):
    """Prints the comparison tables of the runs listed in TABLE."""
    rows = [line.rstrip("\n").split("\t") for line in open(table, encoding="utf-8") if line.strip()]
    truth_cache = {}
    quality, cost, notes = [], [], []
    for set_name, role, truth_path, method, split_name, one_dir, one_wall, batch_dirs, batch_wall, index_bytes, note in rows:
        if truth_path not in truth_cache:
            truth = [json.loads(line) for line in open(truth_path, encoding="utf-8") if line.strip()]
            truth_cache[truth_path] = ({t["id"]: t["truth"] for t in truth}, {t["id"]: t for t in truth})
        labels, info = truth_cache[truth_path]
        one_rows = documents(one_dir)
        batch_dirs = batch_dirs.split(",")
        batch_rows, batch_of = [], {}
        for i, d in enumerate(batch_dirs):
            for r in documents(d):
                batch_rows.append(r)
                batch_of[r["id"]] = i + 1
        one = removals(one_rows, labels)
        batches = removals(batch_rows, labels)
        one_kept = {r["id"] for r in one_rows if r["decision"] == "keep"}
        only_wrong = sorted(i for i, (_, wrong) in batches.items() if wrong and i in one_kept)
        shared = len(one.keys() & batches.keys())
        folder = Path(batch_dirs[0]).parent
        with open(folder / "batch-only-wrong.tsv", "w", encoding="utf-8") as f:
            f.write("id\tbatch\tkind\thost\tduplicate_of\tduplicate_of_batch\tduplicate_of_kind\tduplicate_of_host\n")
            for i in only_wrong:
                dup = batches[i][0]
                f.write(f"{i}\tb{batch_of[i]}\t{info[i]['kind']}\t{host(info, i)}\t{dup}\tb{batch_of.get(dup, '?')}\t"
                        f"{info.get(dup, {}).get('kind')}\t{host(info, dup)}\n")
        p1, r1, f1 = pair_scores(one_rows, labels)
        pb, rb, fb = pair_scores(batch_rows, labels)
        label = f"{set_name} ({role})"
        quality.append((label, method, split_name,
                        f"{len(one)} ({sum(w for _, w in one.values())})",
                        f"{len(batches)} ({sum(w for _, w in batches.values())})",
                        str(len(only_wrong)),
                        f"{100 * shared / len(one):.1f}%" if one else "-",
                        f"{p1:.3f}/{r1:.3f}/{f1:.3f}", f"{pb:.3f}/{rb:.3f}/{fb:.3f}"))
        cost.append((label, method, split_name, f"{float(one_wall):.2f}", f"{float(batch_wall):.2f}", index_bytes))
        if note:
            notes.append(f"{label} {method} {split_name}: {note}")

    def table_out(header, body):
        widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
        for row in [header] + body:
            print("  ".join(str(x).ljust(w) if i < 3 else str(x).rjust(w) for i, (x, w) in enumerate(zip(row, widths))))

    print("removals: pages removed (wrong: duplicate_of labelled in another cluster); batch-only wrong: pages")
    print("the batches remove wrongly and the one run keeps; shared: share of the one run's removals the")
    print("batches also make; P/R/F1: pair precision, recall, F1 over predicted clusters (neardup eval)")
    print()
    table_out(("set", "method", "split", "one run removes (wrong)", "batches remove (wrong)", "batch-only wrong",
               "shared", "one run P/R/F1", "batches P/R/F1"), quality)
    print()
    table_out(("set", "method", "split", "one run wall s", "batches wall s (sum)", "index bytes after b3"), cost)
    if notes:
        print()
        print("\n".join(notes))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    else:
        sys.exit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main()
