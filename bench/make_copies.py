#!/usr/bin/env python3
"""Builds a corpus where nearly every document has near duplicates: each document of a
JSON Lines corpus, then COPIES-1 lightly changed copies of it (the edits of
bench/make_corpus.py: a word or two replaced, an ad line, a view counter, a sentence
dropped, re-cased and re-spaced), all labelled with the original's truth.

    python3 bench/make_copies.py --corpus target/bench/corpus-100000.jsonl --copies 10 \
        --out target/bench/copies-100000x10.jsonl
"""

import argparse
import json
import random
import re

from make_corpus import edit

SEED = 20261125


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = random.Random(SEED)
    n = 0
    with open(args.corpus, encoding="utf-8") as src, open(args.out, "w", encoding="utf-8") as out:
        for line in src:
            doc = json.loads(line)
            chinese = re.search(r"[\u4e00-\u9fff]", doc["text"][:200]) is not None
            for copy in range(args.copies):
                text = doc["text"] if copy == 0 else edit(rng, doc["text"], chinese)
                record = {"id": f"{doc['id']}-{copy}", "text": text, "truth": doc.get("truth", doc["id"])}
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                n += 1
    print(f"{args.out}: {n} documents, {args.copies} per original")


if __name__ == "__main__":
    main()
