#!/usr/bin/env python3
"""Builds a corpus COPIES times the size of a JSON Lines corpus at exactly its duplicate rate:
COPIES copies of the whole corpus, one after another, each written in its own alphabet so
that no two copies share text.

    python3 bench/make_disjoint.py --corpus target/bench/real-100000.jsonl --copies 10 \
        --out target/bench/disjoint-100000x10.jsonl

Copy 0 is the corpus byte for byte. Copy c > 0 shifts every ASCII letter c places along the
alphabet (keeping its case), every digit c places, and every CJK ideograph from U+4E00 to
U+9FA5 c * 2,090 places within that range; spaces, punctuation and everything else stay
(the ideographs past U+9FA5 and in the extensions, and full-width letters, which the job
folds to ASCII, are the same in every copy). At most ten copies: the digits repeat after
ten. Its ids and truth labels get the suffix `~c`.

Within a copy the shift is one-to-one and commutes with case folding, so a copy's documents
are as many and as long as the corpus's, and its pairs, candidates and buckets nearly so
(ten copies of the 100,000-document real corpus have 0.2% more pairs than ten times its
own: the shift is not quite neutral to the job's normalisation), while 5-grams of two copies
almost never coincide (those ten copies give no pair across copies). The copies are corpora
of one kind side by side, which is what `bench/linear.sh` needs to compare sizes at one
duplicate rate; normalising a shifted copy of 100,000 documents took 1.07 to 1.13 times the
CPU of the corpus's, about 1% of the run.

The corpora of `bench/make_real_corpus.py` do not keep that rate as they grow: past its real
articles, its originals are splices of articles, and pairs of splices with a parent in
common (near misses that LSH makes candidates now and then) grow with the square of the
splices per parent.
"""

import argparse
import json
import os
import sys

CJK_FIRST, CJK_LAST = 0x4E00, 0x9FA5
CJK_STEP = 2090


def table(copy):
    """The character map of copy `copy`."""
    t = {}
    for first, size in ((ord("a"), 26), (ord("A"), 26), (ord("0"), 10)):
        for i in range(size):
            t[first + i] = first + (i + copy) % size
    span = CJK_LAST - CJK_FIRST + 1
    for i in range(span):
        t[CJK_FIRST + i] = CJK_FIRST + (i + copy * CJK_STEP) % span
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if not 1 <= args.copies <= 10:
        # Digits shift through 10 places: an eleventh copy would repeat the first's digits.
        sys.exit("--copies: 1 to 10")
    tmp = args.out + ".tmp"
    n = 0
    with open(tmp, "w", encoding="utf-8", newline="") as out:
        for copy in range(args.copies):
            shift = table(copy)
            with open(args.corpus, encoding="utf-8", newline="") as src:
                for line in src:
                    n += 1
                    if copy == 0 or not line.strip():
                        out.write(line)  # byte for byte, blank lines too
                        continue
                    doc = json.loads(line)
                    doc["id"] = f"{doc['id']}~{copy}"
                    if "truth" in doc:
                        doc["truth"] = f"{doc['truth']}~{copy}"
                    doc["text"] = doc["text"].translate(shift)
                    out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    print(f"{args.out}: {n} documents, {args.copies} disjoint copies of {args.corpus}")


if __name__ == "__main__":
    main()
