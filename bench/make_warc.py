#!/usr/bin/env python3
"""Renders a benchmark corpus (bench/make_corpus.py) as web archives, for timing WARC input.

    python3 bench/make_warc.py --corpus target/bench/corpus-100000.jsonl --out target/bench/warc-100000

Every document becomes a WARC `response` record holding an HTML page (a site template
around its paragraphs), preceded by its `request` record, in gzipped WARC files of 10,000
pages each with one gzip member per record, as crawlers write them. Pages with Chinese text
are encoded in GBK half of the time (declared in the HTTP header or only in a <meta> tag),
the rest in UTF-8. The corpus's labels, keyed by each page's WARC-Record-ID, go to
OUT.truth.jsonl beside the folder (not inside it, where a run would read them as input), so
that `neardup eval --truth` scores a run on the pages.
"""

import argparse
import gzip
import html
import json
import random
import re
import uuid
from pathlib import Path

PAGES_PER_FILE = 10_000
CJK = re.compile(r"[\u4e00-\u9fff]")


def record(headers, body):
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return gzip.compress(head.encode() + body + b"\r\n\r\n", compresslevel=6)


def page(doc, rng):
    paragraphs = "".join(f"<p>{html.escape(p)}</p>\n" for p in doc["text"].split("\n") if p.strip())
    chinese = bool(CJK.search(doc["text"]))
    charset = "gbk" if chinese and rng.random() < 0.5 else "utf-8"
    declared = charset if rng.random() < 0.5 else None
    meta = f'<meta charset="{charset}">' if declared is None else ""
    body = (
        f"<!DOCTYPE html><html><head>{meta}<title>{html.escape(doc['id'])}</title>"
        "<style>body{font-family:sans-serif}</style><script>var views=1;</script></head><body>"
        '<nav><a href="/">Home</a> | <a href="/news">News</a> | <a href="/about">About</a></nav>'
        f"<article>\n{paragraphs}</article>"
        "<footer>&copy; Example News. All rights reserved.</footer></body></html>"
    )
    payload = body.encode(charset, errors="replace")
    content_type = "text/html" + (f"; charset={declared}" if declared else "")
    http = f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(payload)}\r\n\r\n"
    return http.encode() + payload


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261122)
    writer, pages, files = None, 0, 0
    truth = open(f"{out}.truth.jsonl", "w", encoding="utf-8")
    with open(args.corpus, encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            if pages % PAGES_PER_FILE == 0:
                if writer:
                    writer.close()
                writer = open(out / f"crawl-{files:05}.warc.gz", "wb")
                files += 1
            url = f"https://news{pages % 97}.example.com/{doc['id']}"
            date = f"2026-11-{1 + pages % 28:02}T12:00:00Z"
            request = f"GET /{doc['id']} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode()
            writer.write(record([("WARC-Type", "request"), ("WARC-Record-ID", f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>"),
                                 ("WARC-Target-URI", url), ("WARC-Date", date),
                                 ("Content-Type", "application/http; msgtype=request")], request))
            response_id = f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>"
            writer.write(record([("WARC-Type", "response"), ("WARC-Record-ID", response_id),
                                 ("WARC-Target-URI", url), ("WARC-Date", date),
                                 ("Content-Type", "application/http; msgtype=response")], page(doc, rng)))
            truth.write(json.dumps({"id": response_id, "truth": doc["truth"]}) + "\n")
            pages += 1
    if writer:
        writer.close()
    truth.close()
    print(f"{out}: {pages} pages in {files} files")


if __name__ == "__main__":
    main()
