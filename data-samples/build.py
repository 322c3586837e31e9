#!/usr/bin/env python3
"""Rebuilds the bundled samples from ../shared/data-samples (stdlib only).

The outputs are committed; this script documents exactly how they were made and lets them
be rebuilt. It never changes any text: records are selected, flattened and labelled.

    python3 data-samples/build.py [--shared ../shared/data-samples]

Labels come from metadata, never from text similarity (see README.md in this folder).
"""

import argparse
import collections
import gzip
import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261122

# Punctuation and spacing are ignored only to find exact repeats *within* one edition,
# which the labels would otherwise count as false positives.
PUNCT = re.compile(r"[\s，。、；：？！「」『』（）《》〈〉—…·,.;:?!()\[\]\"'□]+")


def bare(text):
    return PUNCT.sub("", text)


def write_jsonl_gz(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as raw:
        for row in rows:
            raw.write((json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))


def poems(shared, n_pairs, n_single):
    """Tang poems from two digitised editions, aligned one-to-one by author and title."""
    q, y = [], []
    with gzip.open(shared / "zh_chinese_poetry_tang_subset.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["collection"] == "quantangshi":
                q.append(d)
            elif d["collection"] == "yuding_quantangshi":
                y.append(d)

    def without_internal_repeats(docs):
        # A poem printed twice in one edition (often under two authors) is a real duplicate
        # the author/title labels cannot see: drop every copy of such texts.
        counts = collections.Counter(bare("".join(d["paragraphs"])) for d in docs)
        return [d for d in docs if counts[bare("".join(d["paragraphs"]))] == 1 and d["paragraphs"]]

    q, y = without_internal_repeats(q), without_internal_repeats(y)
    key = lambda d: (d["author"].strip(), d["title"].strip())
    qk = collections.Counter(key(d) for d in q)
    yk = collections.Counter(key(d) for d in y)
    matched = sorted(k for k in qk if qk[k] == 1 and yk.get(k) == 1)
    rng = random.Random(SEED)
    chosen = set(rng.sample(matched, n_pairs))
    singles_q = [d for d in q if key(d) not in yk]
    singles_y = [d for d in y if key(d) not in qk]
    chosen_singles = {id(d) for d in rng.sample(singles_q, n_single // 2) + rng.sample(singles_y, n_single // 2)}

    rows = []
    for edition, docs in (("quantangshi", q), ("yuding_quantangshi", y)):
        for d in docs:
            k = key(d)
            if k in chosen:
                truth = "pair:%s|%s" % k
            elif id(d) in chosen_singles:
                truth = None
            else:
                continue
            doc_id = "%s/%s#%d" % (edition, d["file"].split("/", 1)[1], d["idx"])
            rows.append({
                "id": doc_id,
                "text": "\n".join(d["paragraphs"]),
                "author": d["author"],
                "title": d["title"],
                "edition": edition,
                "truth": truth or doc_id,
            })
    return rows


def court(shared, n):
    """Openings of administrative judgements: one template, different parties and courts."""
    with gzip.open(shared / "zh_admin_court_judgments.tsv.gz", "rt", encoding="utf-8") as f:
        lines = [l.rstrip("\n").split("\t", 1) for l in f]
    rng = random.Random(SEED)
    picked = sorted(rng.sample(range(len(lines)), n))
    rows, first_of = [], {}
    for i in picked:
        label, text = lines[i]
        doc_id = "court-%05d" % (i + 1)
        # Identical openings (re-published judgements) are one document; every other
        # opening is distinct, however similar its template.
        truth = first_of.setdefault(text, doc_id)
        rows.append({"id": doc_id, "text": text, "cause": label, "truth": truth})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared" / "data-samples"))
    args = ap.parse_args()
    shared = Path(args.shared)
    write_jsonl_gz(HERE / "zh-tang-poems" / "poems.jsonl.gz", poems(shared, n_pairs=2000, n_single=1000))
    write_jsonl_gz(HERE / "zh-court-openings" / "openings.jsonl.gz", court(shared, 1500))


if __name__ == "__main__":
    main()
