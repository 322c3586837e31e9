#!/usr/bin/env python3
"""Builds a benchmark corpus with planted duplicates and their truth labels.

    python3 bench/make_corpus.py --docs 100000 --out target/bench/corpus.jsonl

Documents are made of real sentences: English from Reuters-21578 and the BBC news set,
Chinese from THUCNews, read in place from ../shared/data-samples (research-only data is
never copied into the repository). Without those files the sentences are synthetic.

About 80% of documents are English and 20% Chinese. 70% are unique; 30% are copies of an
earlier document with easy edits, as real crawls have: a word or two replaced, an ad line
added, a view counter changed, a sentence dropped, or the same text re-cased and re-spaced.
Each line carries `truth`: the id of the original the document was made from. Originals
draw from one sentence pool, so a few are near duplicates of each other by their text
(192 pairs of the 69,873 originals of --docs 100000: character 5-gram Jaccard 0.8 or more,
or 0.9 of one's 5-grams in the other); such an original carries the earlier one's id, and
so do its copies. The texts are as drawn either way.
"""

import argparse
import gzip
import io
import json
import random
import re
import tarfile
import zlib
from collections import Counter, defaultdict
from pathlib import Path

SEED = 20261122
ROOT = Path(__file__).resolve().parent.parent


def english_sentences(shared):
    sentences = []
    reuters = shared / "en_reuters21578_sgm.tar.gz"
    if reuters.exists():
        with tarfile.open(reuters) as tar:
            for member in tar.getmembers():
                if member.name.endswith(".sgm"):
                    text = tar.extractfile(member).read().decode("latin-1")
                    for body in re.findall(r"<BODY>(.*?)</BODY>", text, re.S):
                        body = re.sub(r"\s+", " ", body.replace("&lt;", "<").replace("&#3;", "")).strip()
                        sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+", body) if len(s) > 40]
    bbc = shared / "en_bbc_news_2225.tar.gz"
    if bbc.exists():
        with tarfile.open(bbc) as tar:
            for member in tar.getmembers():
                if member.name.endswith(".txt"):
                    text = tar.extractfile(member).read().decode("latin-1")
                    text = re.sub(r"\s+", " ", text)
                    sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 40]
    return sentences


def chinese_sentences(shared):
    sentences = []
    thuc = shared / "zh_thucnews_subset.tsv.gz"
    if thuc.exists():
        with gzip.open(thuc, "rt", encoding="utf-8") as f:
            for line in f:
                text = line.rstrip("\n").split("\t", 1)[-1]
                sentences += [s + "。" for s in text.split("。") if len(s) > 12]
    return sentences


def synthetic(rng, n, chinese):
    if chinese:
        chars = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
        return ["".join(rng.choice(chars) for _ in range(rng.randint(15, 40))) + "。" for _ in range(n)]
    syl = ["ka", "lo", "mi", "ten", "ra", "su", "ven", "do", "pre", "ti", "an", "qu", "el", "or", "bis", "nu"]
    word = lambda: "".join(rng.choice(syl) for _ in range(rng.randint(1, 3)))
    return [" ".join(word() for _ in range(rng.randint(8, 20))).capitalize() + "." for _ in range(n)]


ADS = [
    "Subscribe now and get 50% off your first year.",
    "Advertisement: the best deals on flights are one click away.",
    "扫码关注我们的公众号，获取更多精彩内容。",
    "本文来源于网络，如有侵权请联系删除。",
]


def make_doc(rng, pool, target_chars, joiner):
    parts, size = [], 0
    while size < target_chars:
        s = rng.choice(pool)
        parts.append(s)
        size += len(s)
    return joiner.join(parts)


def edit(rng, text, chinese):
    kind = rng.randrange(5)
    if kind == 0:  # a word or two replaced
        if chinese:
            chars = list(text)
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(chars))
                chars[i] = chr(0x4E00 + rng.randrange(3000))
            return "".join(chars)
        words = text.split(" ")
        for _ in range(rng.randint(1, 2)):
            words[rng.randrange(len(words))] = rng.choice(["market", "report", "said", "new", "year"])
        return " ".join(words)
    if kind == 1:  # an ad line
        return text + "\n" + rng.choice(ADS)
    if kind == 2:  # a counter
        return text + ("\n阅读 %d 次" if chinese else "\nViewed %d times") % rng.randint(10, 99999)
    if kind == 3:  # a sentence dropped
        sep = "。" if chinese else ". "
        parts = text.split(sep)
        if len(parts) > 4:
            del parts[rng.randrange(1, len(parts) - 1)]
        return sep.join(parts)
    return "  " + text.upper().replace(" ", "   ") + "  "  # re-cased, re-spaced


NGRAM = 5  # character n-grams compared between originals
SAME_JACCARD = 0.8  # originals at least this similar are one document
SAME_CONTAINMENT = 0.9  # ... and so is an original this much inside another
SKETCH = 16  # rare n-grams per original that find candidate pairs
RARE = 64  # an n-gram in more originals than this never finds candidates


def grams(text):
    """The crc32 values of a text's character 5-grams, lower-cased and whitespace-collapsed."""
    text = " ".join(text.lower().split())
    return {zlib.crc32(text[i : i + NGRAM].encode()) for i in range(max(1, len(text) - NGRAM + 1))}


def same_originals(originals):
    """Pairs (earlier, later) of originals that are near duplicates of each other by their
    own text: the sentence pool is shared and holds near-identical sentences, so two
    originals can be one document. Candidates share half the SKETCH smallest rare n-grams of
    one of them (a pair at SAME_JACCARD or SAME_CONTAINMENT shares about 13 of 16); the exact
    n-gram sets decide."""
    sets = [grams(text) for _, text, _ in originals]
    df = Counter(g for s in sets for g in s)
    sketch_of, index = [], defaultdict(list)
    for i, s in enumerate(sets):
        sketch = sorted(g for g in s if df[g] <= RARE)[:SKETCH]
        sketch_of.append(len(sketch))
        for g in sketch:
            index[g].append(i)
    pairs = set()
    for j, s in enumerate(sets):
        hits = Counter(i for g in s if g in index for i in index[g] if i != j)
        for i, n in hits.items():
            if 2 * n >= sketch_of[i] > 0:
                pairs.add((min(i, j), max(i, j)))
    same = []
    for i, j in sorted(pairs):
        a, b = sets[i], sets[j]
        shared = len(a & b)
        if shared >= SAME_JACCARD * (len(a) + len(b) - shared) or shared >= SAME_CONTAINMENT * min(len(a), len(b)):
            same.append((i, j))
    return same


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--out", default=str(ROOT / "target/bench/corpus.jsonl"))
    ap.add_argument("--shared", default=str(ROOT.parent / "shared/data-samples"))
    args = ap.parse_args()
    rng = random.Random(SEED)
    shared = Path(args.shared)
    en, zh = english_sentences(shared), chinese_sentences(shared)
    source = "shared corpora" if en and zh else "synthetic sentences"
    en = en or synthetic(rng, 20000, False)
    zh = zh or synthetic(rng, 20000, True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    originals, docs = [], []
    for i in range(args.docs):
        doc_id = "d%07d" % i
        if originals and rng.random() < 0.3:
            base_id, base_text, chinese = rng.choice(originals)
            docs.append((doc_id, edit(rng, base_text, chinese), base_id))
        else:
            chinese = rng.random() < 0.2
            text = make_doc(rng, zh, 500, "") if chinese else make_doc(rng, en, 1100, " ")
            docs.append((doc_id, text, doc_id))
            originals.append((doc_id, text, chinese))
    # An original that near-duplicates an earlier one is that one's document: it and its
    # copies take the earlier original's truth (the texts stay as drawn).
    # Each group of such originals is labelled by its earliest (least) id.
    parent = {doc_id: doc_id for doc_id, _, _ in originals}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    same = same_originals(originals)
    for i, j in same:
        a, b = find(originals[i][0]), find(originals[j][0])
        parent[max(a, b)] = min(a, b)
    truth = {doc_id: find(doc_id) for doc_id in parent}
    chars = 0
    with open(out, "w", encoding="utf-8") as f:
        for doc_id, text, base_id in docs:
            chars += len(text)
            f.write(json.dumps({"id": doc_id, "text": text, "truth": truth[base_id]}, ensure_ascii=False) + "\n")
    print(
        f"{out}: {args.docs} documents, {chars / 1e6:.1f} M characters, {len(originals)} originals "
        f"({len(same)} pairs of them near duplicates, labelled as one document; {source})"
    )


if __name__ == "__main__":
    main()
