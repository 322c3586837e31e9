#!/usr/bin/env python3
"""Scores a neardup run against `truth` labels: precision, recall and F1 over pairs of
documents that share a cluster (a labelled group or a predicted cluster).

    python bench/eval.py CORPUS.jsonl OUT_DIR
"""

import collections
import itertools
import json
import sys

import duckdb


def pairs(groups):
    out = set()
    for members in groups.values():
        out.update(itertools.combinations(sorted(members), 2))
    return out


def main():
    corpus, run = sys.argv[1], sys.argv[2]
    truth = {}
    opener = __import__("gzip").open if corpus.endswith(".gz") else open
    with opener(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            truth[d["id"]] = d["truth"]
    rows = duckdb.sql(
        f"select id, cluster from read_parquet('{run}/documents/*.parquet') where decision <> 'reject'"
    ).fetchall()
    predicted, gold = collections.defaultdict(list), collections.defaultdict(list)
    for doc_id, cluster in rows:
        predicted[cluster].append(doc_id)
        gold[truth[doc_id]].append(doc_id)
    p, g = pairs(predicted), pairs(gold)
    tp = len(p & g)
    precision = tp / len(p) if p else 1.0
    recall = tp / len(g) if g else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    print(json.dumps({"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
                      "predicted_pairs": len(p), "true_pairs": len(g)}))


if __name__ == "__main__":
    main()
