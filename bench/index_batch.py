"""The batch of the incremental benchmarks (bench/index.sh, bench/compact.sh): from the real
corpus, BATCH documents: 90% of the corpus's last 100,000 whose truth group starts there
(new to any history of the first 900,000), and 10% near copies (the last line dropped, or
the last 20 characters) of documents spread over the first 100,000.

    python3 bench/index_batch.py CORPUS BATCH OUT
"""
import json, sys
corpus, batch, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lines = open(corpus, encoding="utf-8").read().splitlines()
tail = len(lines) - 100_000
first = {}
for i, line in enumerate(lines):
    first.setdefault(json.loads(line)["truth"], i)
fresh = [l for l in lines[tail:] if first[json.loads(l)["truth"]] >= tail][: batch - batch // 10]
copies = []
for i in range(0, 100_000, 100_000 // (batch // 10)):
    d = json.loads(lines[i])
    text = d["text"].rsplit("\n", 1)[0] if "\n" in d["text"] else d["text"][:-20]
    copies.append(json.dumps({"id": d["id"] + "-again", "text": text, "truth": d["truth"]}))
with open(out, "w", encoding="utf-8") as f:
    f.write("\n".join(fresh + copies[: batch // 10]) + "\n")
