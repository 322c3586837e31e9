#!/usr/bin/env python3
"""Builds a labelled benchmark corpus of real documents with planted near-duplicates.

    python3 bench/make_real_corpus.py --docs 10000 --out target/bench/real-10000.jsonl

The documents are real articles read in place from ../shared/data-samples (research-only
data, never copied into the repository): Reuters-21578 bodies and BBC News articles
(English), THUCNews articles and the openings of Chinese court judgements (Chinese; these
share a template and are hard negatives). First the pool is cleaned of its own natural
duplicates: exact copies, and near copies whose character 5-gram Jaccard similarity is 0.7
or more (found with MinHash LSH, checked exactly; this needs NumPy), so that two documents with
different truth labels really are different.

70% of the output are originals and 30% are copies of an earlier original with an easy edit
of the kind crawls have: a word or two replaced, an ad line or a view counter added, a
sentence dropped, the text re-cased and re-spaced, or the end cut off. While real documents
last, originals are real documents (about 25% Chinese, as drawn); past that (the 100k
corpus) each new original is a variant of two real ones: the opening sentences of one
article followed by the closing sentences of another, each part about half as long as the
shorter article, so that it shares about a third of its shingles with either parent and
with any other splice of one of them, and is no near-duplicate of them. Only articles of 600 characters
or more are spliced (the short ones are mostly templated, so their halves match), and no
two splices have the same two parents. Each line carries `truth`: the id
of the original the document was made from. Without ../shared the script stops: there is no
substitute for real text here (bench/make_corpus.py has a synthetic fallback).
"""

import argparse
import gzip
import html
import json
import os
import random
import re
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

SEED = 20261122
ROOT = Path(__file__).resolve().parent.parent
NGRAM = 5
POOL_JACCARD = 0.7  # pool documents at least this similar are one document
BANDS, ROWS = 16, 4  # MinHash LSH that finds them (a pair at 0.7 is a candidate with p = 0.99)
ANCHORS = 50  # in a bucket larger than this, members are checked against the first ANCHORS
SPLICE_MIN_CHARS = 600  # shorter articles are not spliced
ORIGINAL_SHARE = 0.7
CHINESE_SHARE = 0.25

ADS = [
    "Subscribe now and get 50% off your first year.",
    "Advertisement: the best deals on flights are one click away.",
    "Follow us for more stories like this one.",
    "扫码关注我们的公众号，获取更多精彩内容。",
    "本文来源于网络，如有侵权请联系删除。",
]


def reuters(shared):
    docs = []
    with tarfile.open(shared / "en_reuters21578_sgm.tar.gz") as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.name.endswith(".sgm"):
                text = tar.extractfile(member).read().decode("latin-1")
                for body in re.findall(r"<BODY>(.*?)</BODY>", text, re.S):
                    body = html.unescape(body.replace("&#3;", "")).strip()
                    body = re.sub(r"\s*Reuter\s*$", "", body)
                    body = re.sub(r"[ \t]*\n[ \t]*", "\n", body)
                    if len(body) >= 300:
                        docs.append(body)
    return docs


def bbc(shared):
    docs = []
    with tarfile.open(shared / "en_bbc_news_2225.tar.gz") as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.name.endswith(".txt"):
                text = tar.extractfile(member).read().decode("utf-8", errors="replace")
                docs.append(re.sub(r"\n{2,}", "\n", text.strip()))
    return docs


def tsv_texts(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t", 1)[-1].strip() for line in f]


def normalize(text):
    return " ".join(text.lower().split())


def shingle_hashes(text):
    """Sorted distinct Python string hashes of the character 5-grams (deterministic: the script
    fixes PYTHONHASHSEED)."""
    import numpy as np

    text = normalize(text)
    grams = {text[i : i + NGRAM] for i in range(max(1, len(text) - NGRAM + 1))}
    return np.unique(np.fromiter((hash(g) for g in grams), dtype=np.int64, count=len(grams)).view(np.uint64))


def dedup_pool(docs):
    """Drops exact and near copies (Jaccard >= POOL_JACCARD) of earlier pool documents: MinHash
    (BANDS x ROWS) finds candidates, exact Jaccard of the shingle sets decides."""
    import numpy as np

    seen, kept = set(), []
    for doc in docs:
        key = normalize(doc)
        if key not in seen:
            seen.add(key)
            kept.append(doc)
    sets = [shingle_hashes(d) for d in kept]
    perm = np.random.default_rng(SEED)
    a = perm.integers(1, 2**63, size=BANDS * ROWS, dtype=np.uint64) | np.uint64(1)
    b = perm.integers(0, 2**63, size=BANDS * ROWS, dtype=np.uint64)
    buckets = defaultdict(list)
    with np.errstate(over="ignore"):
        for i, s in enumerate(sets):
            signature = (s[:, None] * a + b).min(axis=0)
            for band in range(BANDS):
                buckets[(band, signature[band * ROWS : (band + 1) * ROWS].tobytes())].append(i)
    dropped = set()
    for members in buckets.values():
        for k, y in enumerate(members[1:], 1):
            for x in members[: min(k, ANCHORS)]:
                if x in dropped or y in dropped:
                    continue
                shared = len(np.intersect1d(sets[x], sets[y], assume_unique=True))
                if shared >= POOL_JACCARD * (len(sets[x]) + len(sets[y]) - shared):
                    dropped.add(y)
    return [d for i, d in enumerate(kept) if i not in dropped], len(docs) - len(kept), len(dropped)


def sentences(text, chinese):
    if chinese:
        return [s for s in re.split(r"(?<=[。！？])", text) if s]
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


def splice(first, second, chinese):
    """The opening of one article and the ending of another, each about half as long as the
    shorter of the two, so that two splices sharing one parent share about a third of their
    text however long that parent is."""
    half = min(len(first), len(second)) // 2
    head, tail = [], []
    for s in sentences(first, chinese):
        if head and sum(map(len, head)) + len(s) > half:
            break
        head.append(s)
    for s in reversed(sentences(second, chinese)):
        if tail and sum(map(len, tail)) + len(s) > half:
            break
        tail.insert(0, s)
    joiner = "" if chinese else " "
    return joiner.join(head) + joiner + joiner.join(tail)


def edit(rng, text, chinese):
    kind = rng.randrange(6)
    if kind == 0:  # a word or two replaced
        if chinese:
            chars = list(text)
            for _ in range(rng.randint(1, 3)):
                chars[rng.randrange(len(chars))] = rng.choice("的一是不了人我在有他这中大来上")
            return "".join(chars)
        words = text.split(" ")
        for _ in range(rng.randint(1, 2)):
            words[rng.randrange(len(words))] = rng.choice(["market", "report", "said", "new", "year"])
        return " ".join(words)
    if kind == 1:  # an ad line
        return text + "\n" + rng.choice(ADS)
    if kind == 2:  # a view counter
        return text + ("\n阅读 %d 次" if chinese else "\nViewed %d times") % rng.randint(10, 99999)
    if kind == 3:  # a sentence dropped
        parts = sentences(text, chinese)
        if len(parts) > 4:
            del parts[rng.randrange(1, len(parts) - 1)]
        return ("" if chinese else " ").join(parts)
    if kind == 4:  # re-cased and re-spaced
        return "  " + text.upper().replace(" ", "   ") + "  "
    return text[: int(len(text) * rng.uniform(0.88, 0.95))]  # the end cut off


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shared", default=str(ROOT.parent / "shared/data-samples"))
    args = ap.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":  # string hashes decide which pool copy is kept
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    shared = Path(args.shared)
    if not (shared / "en_reuters21578_sgm.tar.gz").exists():
        sys.exit(f"{shared}: the shared corpora are not here; this benchmark needs real documents")
    rng = random.Random(SEED)
    english_pool, en_exact, en_near = dedup_pool(reuters(shared) + bbc(shared))
    thuc = tsv_texts(shared / "zh_thucnews_subset.tsv.gz")
    court = tsv_texts(shared / "zh_admin_court_judgments.tsv.gz")
    chinese_pool, zh_exact, zh_near = dedup_pool(thuc + court)
    rng.shuffle(english_pool)
    rng.shuffle(chinese_pool)
    # Which positions are originals, and in which language, is drawn first, so the number
    # of originals of each language is known before they are made.
    plan = [i == 0 or rng.random() < ORIGINAL_SHARE for i in range(args.docs)]
    languages = [rng.random() < CHINESE_SHARE for _ in range(sum(plan))]
    made = {}
    spliced = {}
    text_of = {}
    for chinese, pool in ((False, english_pool), (True, chinese_pool)):
        needed = sum(1 for c in languages if c == chinese)
        made[chinese], spliced[chinese], text_of[chinese] = originals(rng, pool, needed, chinese)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    originals_so_far, chars = [], 0
    next_original = {False: iter(made[False]), True: iter(made[True])}
    languages = iter(languages)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for i, is_original in enumerate(plan):
            doc_id = "d%07d" % i
            if is_original:
                chinese = next(languages)
                recipe = next(next_original[chinese])
                text, truth = text_of[chinese](recipe), doc_id
                # The recipe, not the text, so that ten million documents fit in memory.
                originals_so_far.append((doc_id, recipe, chinese))
            else:
                base_id, base_recipe, chinese = rng.choice(originals_so_far)
                text, truth = edit(rng, text_of[chinese](base_recipe), chinese), base_id
            chars += len(text)
            f.write(json.dumps({"id": doc_id, "text": text, "truth": truth}, ensure_ascii=False) + "\n")
    tmp.replace(out)
    print(
        f"{out}: {args.docs} documents, {chars / 1e6:.1f} M characters, {len(originals_so_far)} originals "
        f"({len(made[False]) - spliced[False]} English and {len(made[True]) - spliced[True]} Chinese real "
        f"articles, {spliced[False]} and {spliced[True]} spliced from two or three); pool: {len(english_pool)} "
        f"English after dropping {en_exact} exact and {en_near} near copies, {len(chinese_pool)} Chinese "
        f"after {zh_exact} and {zh_near}"
    )


def originals(rng, pool, needed, chinese):
    """`needed` originals: the pool's documents, then splices of two of them. Only articles
    of at least SPLICE_MIN_CHARS are spliced (short ones, such as the templated court
    openings and earnings tables, share most of their halves), and no ordered pair twice.
    Once half the ordered pairs are used (the Chinese ones past about 1.8 M documents), the
    rest are splices of three (`splice3`), no ordered triple twice.

    Returns the recipes (a pool index, or the parents of a splice), how many are splices,
    and the function that makes a recipe's text."""
    parents = [d for d in pool if len(d) >= SPLICE_MIN_CHARS]

    def text_of(recipe):
        if isinstance(recipe, int):
            return pool[recipe]
        if len(recipe) == 2:
            return splice(parents[recipe[0]], parents[recipe[1]], chinese)
        return splice3(*(parents[i] for i in recipe), chinese)

    if needed <= len(pool):
        return list(range(needed)), 0, text_of
    pairs = len(parents) * (len(parents) - 1)
    used, spliced = set(), []
    while len(pool) + len(spliced) < needed:
        if len(used) < pairs // 2:
            recipe = tuple(rng.sample(range(len(parents)), 2))
        else:
            recipe = tuple(rng.sample(range(len(parents)), 3))
        if recipe not in used:
            used.add(recipe)
            spliced.append(recipe)
    return list(range(len(pool))) + spliced, len(spliced), text_of


def splice3(first, second, third, chinese):
    """The opening of one article, the middle of a second and the ending of a third, each
    about a third as long as the shortest, so that two of these sharing a parent in the
    same place share about a third of their text."""
    part = min(len(first), len(second), len(third)) // 3
    joiner = "" if chinese else " "

    def take(sents):
        out = []
        for s in sents:
            if out and sum(map(len, out)) + len(s) > part:
                break
            out.append(s)
        return out

    head = take(sentences(first, chinese))
    middle_sents = sentences(second, chinese)
    start, chars = 0, 0
    while start < len(middle_sents) - 1 and chars < len(second) // 3:
        chars += len(middle_sents[start])
        start += 1
    middle = take(middle_sents[start:])
    tail = list(reversed(take(list(reversed(sentences(third, chinese))))))
    return joiner.join(head) + joiner + joiner.join(middle) + joiner + joiner.join(tail)


if __name__ == "__main__":
    main()
