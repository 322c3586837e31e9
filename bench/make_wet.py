#!/usr/bin/env python3
"""Writes a JSON Lines corpus (bench/make_corpus.py) as Common Crawl writes its WET files: a
warcinfo record, then one `conversion` record of plain text per document, each record its
own gzip member; and the same documents as JSON Lines with a `url` field. Documents are
spread over 2,000 hosts by id.

    python3 bench/make_wet.py --corpus target/bench/corpus-100000.jsonl --out target/bench/wet-100000
    # writes OUT/pages.wet.gz and OUT/pages-url.jsonl
"""

import argparse
import hashlib
import json
from pathlib import Path

from make_warc import record  # a WARC record as its own gzip member


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(args.corpus, encoding="utf-8") as src, open(out / "pages.wet.gz", "wb") as wet, open(
        out / "pages-url.jsonl", "w", encoding="utf-8"
    ) as jsonl:
        info = b"software: bench/make_wet.py\r\nformat: WARC File Format 1.0\r\n"
        wet.write(record([("WARC-Type", "warcinfo"), ("WARC-Date", "2026-11-25T00:00:00Z"),
                          ("WARC-Record-ID", "<urn:uuid:bench-wet-info>"),
                          ("Content-Type", "application/warc-fields")], info))
        for line in src:
            doc = json.loads(line)
            host = int(hashlib.sha1(doc["id"].encode()).hexdigest()[:8], 16) % 2000
            url = f"https://site-{host}.example.com/articles/{doc['id']}.html"
            text = doc["text"].encode("utf-8")
            wet.write(record([("WARC-Type", "conversion"), ("WARC-Target-URI", url),
                              ("WARC-Date", "2026-11-25T00:00:00Z"),
                              ("WARC-Record-ID", f"<urn:uuid:{doc['id']}>"),
                              ("Content-Type", "text/plain")], text))
            jsonl.write(json.dumps({"id": f"<urn:uuid:{doc['id']}>", "url": url, "text": doc["text"]},
                                   ensure_ascii=False) + "\n")
            n += 1
    print(f"{out}: {n} documents as pages.wet.gz and pages-url.jsonl")


if __name__ == "__main__":
    main()
