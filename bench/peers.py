#!/usr/bin/env python3
"""Peer runners and scorer for bench/peers.sh. Not part of the test run.

    python bench/peers.py run TOOL CORPUS.jsonl OUT_DIR
    python bench/peers.py table CORPUS.jsonl RESULTS.tsv TABLE.md

`run` is the process peers.sh times with /usr/bin/time: it reads the JSON Lines corpus, builds
signatures, finds candidates with the tool's own LSH, verifies them (estimated Jaccard >= 0.8
from the signatures, or Hamming distance <= 3) and writes OUT_DIR/pairs.tsv (id, tab, id).
Every tool gets the same work: character 5-grams of " ".join(text.lower().split()), 128
permutations, Jaccard 0.8; SimHash 64-bit over the same features, Hamming distance <= 3; each
with its fastest documented batch API. Where a tool cannot do exactly that, the table says
so (NOTES below). Python's cyclic garbage collector is off in the runners (no cycles are made;
it would only rescan the millions of shingle strings).

`table` scores every run against the corpus's `truth` field. One union-find joins each tool's
pairs (neardup's pairs/ Parquet, or a runner's pairs.tsv) into clusters; precision, recall and
F1 count pairs of documents that share a cluster, against pairs that share a truth label, as
bench/eval.py does. It prints the table and writes it as Markdown.
"""

import collections
import datetime
import gc
import importlib.metadata
import json
import os
import pickle
import sys
from pathlib import Path

NGRAM = 5
NUM_PERM = 128
THRESHOLD = 0.8
MAX_DISTANCE = 3
SEED = 42
BATCH_DOCS = 1_000  # rensa: shingle lists of this many documents are alive at once (~60 MB)
RENSA_BANDS = 16  # 16 x 8: RMinHashLSH takes bands explicitly; neardup chooses 16 x 8 too
DATATROVE_BANDS = 16  # 16 buckets x 8 hashes

# tool: (method, settings shown in the table)
NOTES = {
    "neardup": ("MinHash", "defaults: Han 2-grams, NFKC, width folding, punctuation dropped; 16 × 8; verified"),
    "neardup-peer-features": ("MinHash", "bench/peer-features.toml: 5-grams in every script, no NFKC or script folding, punctuation kept; 16 × 8; verified"),
    "neardup-21x6": ("MinHash", "bench/bands-21x6.toml: gaoya's 21 × 6; defaults otherwise; verified"),
    "datasketch": ("MinHash", "MinHash.bulk with xxh32 token hash + MinHashLSH (9 × 13); verified"),
    "rensa": ("MinHash", "RMinHash.from_token_sets + RMinHashLSH (16 × 8); shingles built in Python; verified"),
    "gaoya": ("MinHash", "MinHashStringIndex, char analyzer, par_bulk_*; its optimiser: 21 × 6 = 126 hashes; verified"),
    "datatrove": ("MinHash", "4-stage pipeline minus the filter stage, 2 tasks, 16 × 8 buckets; char tokenizer; not verified"),
    "text-dedup": ("MinHash", "its tokenizer (word 5-grams over \\W splits), 9 × 13, check_false_positive (exact Jaccard)"),
    "neardup-simhash": ("SimHash", "defaults: 4-grams, Han 2-grams, NFKC, width folding, punctuation dropped; TF weights"),
    "neardup-simhash-peer-features": ("SimHash", "bench/peer-features.toml: 5-grams in every script; TF weights"),
    "gaoya-simhash": ("SimHash", "SimHashStringIndex, 6 blocks, char analyzer, native par_bulk_insert_docs + par_bulk_query"),
}


def read_corpus(path):
    ids, texts = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            ids.append(doc["id"])
            texts.append(doc["text"])
    return ids, texts


def normalize(text):
    return " ".join(text.lower().split())


def shingles(text):
    """Character 5-grams of the normalised text; a shorter text is its own single shingle."""
    return [text[i : i + NGRAM] for i in range(max(1, len(text) - NGRAM + 1))]


def run_datasketch(texts):
    import xxhash
    from datasketch import MinHash, MinHashLSH

    # datasketch's docs suggest a faster token hash than its default SHA-1 (about 4x slower here)
    token_lists = (shingles(normalize(t)) for t in texts)
    minhashes = MinHash.bulk(token_lists, num_perm=NUM_PERM, seed=SEED, hashfunc=xxhash.xxh32_intdigest)
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    with lsh.insertion_session() as session:
        for i, m in enumerate(minhashes):
            session.insert(i, m, check_duplication=False)
    return [
        (i, j)
        for i, m in enumerate(minhashes)
        for j in lsh.query(m)
        if j > i and m.jaccard(minhashes[j]) >= THRESHOLD
    ]


def run_rensa(texts):
    from rensa import RMinHash, RMinHashLSH

    minhashes = []
    for start in range(0, len(texts), BATCH_DOCS):
        batch = [shingles(normalize(t)) for t in texts[start : start + BATCH_DOCS]]
        minhashes += RMinHash.from_token_sets(batch, num_perm=NUM_PERM, seed=SEED)
    lsh = RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=RENSA_BANDS)
    lsh.insert_many(minhashes)
    return [
        (i, j)
        for i, candidates in enumerate(lsh.query_all(minhashes))
        for j in candidates
        if j > i and minhashes[i].jaccard(minhashes[j]) >= THRESHOLD
    ]


def run_gaoya(texts):
    from gaoya.minhash import MinHashStringIndex

    docs = [normalize(t) for t in texts]
    index = MinHashStringIndex(
        hash_size=32, jaccard_threshold=THRESHOLD, num_bands=None, band_size=None, num_hashes=NUM_PERM,
        analyzer="char", lowercase=False, ngram_range=(NGRAM, NGRAM),
    )
    index.par_bulk_insert_docs(list(range(len(docs))), docs)
    # query() keeps candidates whose signature estimate is >= the threshold
    return [(i, j) for i, found in enumerate(index.par_bulk_query(docs)) for j in found if j > i]


def run_gaoya_simhash(texts):
    from gaoya.simhash import SimHashStringIndex

    docs = [normalize(t) for t in texts]
    index = SimHashStringIndex(
        hash_size=64, num_blocks=6, hamming_distance=MAX_DISTANCE,
        analyzer="char", lowercase=False, ngram_range=(NGRAM, NGRAM),
    )
    # The Python wrapper has no bulk insert for SimHash; the native index it wraps does.
    index.index.par_bulk_insert_docs(list(range(len(docs))), docs)
    # Without return_similarity: with it, par_bulk_query raises AttributeError in gaoya 0.2.2.
    return [(i, j) for i, found in enumerate(index.par_bulk_query(docs)) for j in found if j > i]


class CharTokenizer:
    """A datatrove word tokenizer whose words are characters, so its word n-grams are character
    n-grams (datatrove's English tokenizer needs spaCy or NLTK data, which cannot be fetched here)."""

    def word_tokenize(self, text):
        return list(text)


def run_datatrove(corpus, out):
    """Writes the corpus as two shards (datatrove parallelises over files), then runs its
    signature, bucket and cluster stages with 2 workers; its filter stage, which rewrites the
    corpus, is left out as no other tool here writes one. Pairs are read from its .dups files."""
    import struct

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.utils.text import TextNormConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    WordTokenizer.register(CharTokenizer)
    with open(corpus, encoding="utf-8") as f:
        lines = f.readlines()
    half = (len(lines) + 1) // 2
    shards = []  # per shard, the ids in order: datatrove names a document (shard, position)
    (out / "input").mkdir(parents=True, exist_ok=True)
    for shard, part in enumerate((lines[:half], lines[half:])):
        (out / "input" / f"{shard:05d}.jsonl").write_text("".join(part), encoding="utf-8")
        shards.append([json.loads(line)["id"] for line in part])
    del lines

    norm = TextNormConfig(lowercase=True, norm_whitespace=True, remove_punctuation=False,
                          norm_unicode_diacritics=False, norm_numbers=False)
    config = MinhashConfig(n_grams=NGRAM, num_buckets=DATATROVE_BANDS,
                           hashes_per_bucket=NUM_PERM // DATATROVE_BANDS, seed=SEED, norm_config=norm)
    stages = [
        ([JsonlReader(str(out / "input")),
          MinhashDedupSignature(str(out / "signatures"), config=config, language=CharTokenizer())], 2),
        ([MinhashDedupBuckets(str(out / "signatures"), str(out / "buckets"), config=config)], config.num_buckets),
        ([MinhashDedupCluster(str(out / "buckets"), str(out / "remove_ids"), config=config)], 1),
    ]
    for stage, (pipeline, tasks) in enumerate(stages):
        LocalPipelineExecutor(pipeline=pipeline, tasks=tasks, workers=2,
                              logging_dir=str(out / "logs" / str(stage))).run()

    pairs = set()  # a pair sharing several buckets is in several .dups files
    for dups in (out / "buckets").glob("*.dups"):
        for f1, d1, f2, d2 in struct.iter_unpack("<4I", dups.read_bytes()):
            pairs.add((shards[f1][d1], shards[f2][d2]))
    return sorted(pairs)


def run_text_dedup(corpus, out):
    """text-dedup is configured only by TOML; its tokenizer splits on \\W into words, so its
    5-grams are word 5-grams. It outputs clusters, expanded here to all pairs inside each."""
    os.environ["HF_DATASETS_CACHE"] = str(out / "hf-cache")  # a fresh cache: no reuse between runs
    os.environ["HF_HUB_OFFLINE"] = "1"
    from text_dedup.config.base import load_config_from_toml
    from text_dedup.minhash import main

    result = out / "text-dedup"
    config = out / "config.toml"
    config.write_text(f"""
[input]
input_type = "local_files"
file_type = "json"
[input.read_arguments]
path = "json"
data_files = "{Path(corpus).resolve()}"
split = "train"

[algorithm]
algorithm_name = "minhash"
text_column = "text"
seed = {SEED}
num_perm = {NUM_PERM}
threshold = {THRESHOLD}
ngram_size = {NGRAM}
hash_bits = 64
check_false_positive = true

[output]
output_dir = "{result}"
save_clusters = true
keep_index_column = true

[debug]
enable_profiling = false
""")
    main(load_config_from_toml(config))
    with open(result / "clusters.pickle", "rb") as f:
        cluster_of = pickle.load(f)  # row index -> cluster, for documents in a cluster
    ids, _ = read_corpus(corpus)
    members = collections.defaultdict(list)
    for row, cluster in cluster_of.items():
        members[cluster].append(ids[row])
    return [(a, b) for group in members.values() for k, a in enumerate(group) for b in group[k + 1 :]]


IN_MEMORY = {"datasketch": run_datasketch, "rensa": run_rensa, "gaoya": run_gaoya, "gaoya-simhash": run_gaoya_simhash}
ON_FILES = {"datatrove": run_datatrove, "text-dedup": run_text_dedup}


def run(tool, corpus, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    package = tool.removesuffix("-simhash")
    (out / "version").write_text(f"{package} {importlib.metadata.version(package)}")
    gc.disable()
    if tool in IN_MEMORY:
        ids, texts = read_corpus(corpus)
        pairs = [(ids[i], ids[j]) for i, j in IN_MEMORY[tool](texts)]
    else:
        pairs = ON_FILES[tool](corpus, out)
    with open(out / "pairs.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{a}\t{b}\n" for a, b in pairs)


def read_run(out):
    """The tool's name and version, and the pairs it found: a runner's version and pairs.tsv,
    or a neardup output folder's summary.json and pairs/ Parquet."""
    out = Path(out)
    if (out / "pairs.tsv").exists():
        with open(out / "pairs.tsv", encoding="utf-8") as f:
            return (out / "version").read_text(), [tuple(line.rstrip("\n").split("\t")) for line in f]
    import duckdb

    version = json.loads((out / "summary.json").read_text())["neardup_version"]
    return f"neardup {version}", duckdb.sql(f"select id_a, id_b from read_parquet('{out}/pairs/*.parquet')").fetchall()


def score(truth, index, pairs):
    """Pair precision, recall and F1 of the clusters the pairs make (connected components),
    against the truth groups, counting the pairs of documents that share a cluster."""
    parent = list(range(len(truth)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(index[a]), find(index[b])
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = [find(i) for i in range(len(truth))]

    def pair_count(labels):
        return sum(n * (n - 1) // 2 for n in collections.Counter(labels).values())

    predicted, gold, both = pair_count(roots), pair_count(truth), pair_count(zip(roots, truth))
    precision = both / predicted if predicted else 1.0
    recall = both / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    return f"{datetime.date.today()}, {cpu}, {os.cpu_count()} cores"


def table(corpus, results, markdown):
    """RESULTS.tsv rows: tool, wall seconds, peak RSS KB, output folder; or tool, "skipped", reason."""
    truth, index = [], {}
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            index[doc["id"]] = len(truth)
            truth.append(doc["truth"])
    docs = len(truth)
    rows, skipped = [], []
    for line in open(results, encoding="utf-8"):
        fields = line.rstrip("\n").split("\t")
        if fields[1] == "skipped":
            skipped.append((fields[0], fields[2]))
        else:
            rows.append((fields[0], float(fields[1]), int(fields[2]), fields[3]))
    reference = {NOTES[tool][0]: wall for tool, wall, _, _ in rows if tool in ("neardup", "neardup-simhash")}

    header = ["tool", "method", "wall s", "docs/s", "peak MB", "pairs found", "P", "R", "F1", "time / neardup", "settings"]
    body = []
    for tool, wall, rss_kb, out in rows:
        method, settings = NOTES[tool]
        name, pairs = read_run(out)
        precision, recall, f1 = score(truth, index, pairs)
        ratio = wall / reference[method] if method in reference else float("nan")
        body.append([name, method, f"{wall:.1f}", f"{docs / wall:,.0f}", f"{rss_kb / 1024:,.0f}", f"{len(pairs):,}",
                     f"{precision:.3f}", f"{recall:.3f}", f"{f1:.3f}", f"{ratio:.2f}", settings])

    title = f"{docs:,} documents ({Path(corpus).name}); {machine()}"
    notes = [
        "Each tool runs as one process, back to back, timed by /usr/bin/time: wall seconds and peak RSS "
        "(for datatrove and text-dedup, which start worker processes, the largest single process). "
        "neardup runs with `-w 2`. Scores: pair precision / recall / F1 of the clusters (connected "
        "components of the pairs found) against the planted truth groups. time / neardup divides by "
        "neardup's default run of the same method.",
    ] + [f"Skipped: {tool}: {reason}" for tool, reason in skipped]

    widths = [max(len(str(r[k])) for r in [header] + body) for k in range(len(header))]
    print(title)
    for r in [header] + body:
        print("  ".join(str(c).ljust(w) if k in (0, 1, 10) else str(c).rjust(w) for k, (c, w) in enumerate(zip(r, widths))))
    for note in notes:
        print(note)

    with open(markdown, "w", encoding="utf-8") as f:
        f.write(title + "\n\n")
        f.write("| " + " | ".join(header) + " |\n")
        f.write("|" + "|".join(" --- " if k in (0, 1, 10) else " ---: " for k in range(len(header))) + "|\n")
        for r in body:
            f.write("| " + " | ".join(r) + " |\n")
        f.write("\n" + "\n\n".join(notes) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run" and sys.argv[2] in {**IN_MEMORY, **ON_FILES}:
        run(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "table":
        table(*sys.argv[2:])
    else:
        sys.exit(__doc__)
