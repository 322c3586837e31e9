#!/usr/bin/env python3
"""Make a labelled set for paragraph-level dedup (the "paraset"): distinct English and
Chinese articles that share syndicated passages, notices and promotions, with the noise
normalisation removes, and the paragraphs each document repeats from an earlier one.

    python3 bench/make_paraset.py --out DIR [--seed N] [--sources design|held-out] [--data DIR]

Research use only: every article comes from ../shared/data-samples (see its README.md),
read by bench/make_siteset.py's loaders, and nothing this script writes may be shipped or
committed. Standard library only; the same arguments write the same files.

Sources: `design` takes BBC News (English) and THUCNews (Chinese); `held-out` takes
Reuters-21578 (English) and the Sogou news sample (Chinese), which nothing is chosen on.

A document is an article: its title, then its paragraphs, blocks between blank lines. Each
article keeps at least two paragraphs of its own (of 120 characters or more), and no more
passages go into it than it has of its own, so no two documents are near duplicates as a
whole. Into some of them go, between their paragraphs:

  syndicated  a paragraph of another article of the same language (the syndication pool,
              whose articles are not documents themselves), put into 2 to 5 documents;
  notice      one of a few reprint and copyright notices, at a document's end;
  promo       one of a few promotions, after a document's first paragraph;
  near        a syndicated paragraph with one word or character changed: a different
              paragraph, labelled as such (repeated only where that very variant is);

and a passage placed again carries noise in half of its copies: spaces inside Chinese
text, full-width Latin letters and digits, runs of spaces, a line break inside the
paragraph, or a changed case, all of which normalisation removes.

Files: `pages.jsonl` (`id`, `text`, `lang`), `batch-1.jsonl` and `batch-2.jsonl` (its
first and second half, for a run against an index), `truth.json` (every document its own
cluster, for `neardup eval --truth`) and `paragraphs.jsonl` (for `--paragraph-truth`), one line per
document: `id`, `lang`, `paragraphs` (the numbers of its blocks of 100 characters or more,
blocks counted from 0 with the title, the way `neardup_text::Paragraphs` numbers them) and
`repeated` (those whose passage an earlier document in file order holds: each passage's
first occurrence stays).
"""

import argparse
import json
import random
import sys
import unicodedata
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_siteset as ms  # noqa: E402

MIN_CHARS = 100
# Passages are taken with a margin over MIN_CHARS, so that no labelled paragraph lies at the
# minimum, where counting spaces between words or not would decide.
TAKEN_CHARS = 120
DOCS_PER_LANG = 400
POOL_ARTICLES = 60
SYNDICATED_SHARE = 0.45
NOTICE_SHARE = 0.2
PROMO_SHARE = 0.15
NEAR_SHARE = 0.1
NOISE_SHARE = 0.5

NOTICES = {
    "en": [
        "This article is republished from a partner site under its syndication licence. The "
        "views expressed are the author's own and do not necessarily reflect those of this site.",
        "All rights reserved. This material may not be published, broadcast, rewritten or "
        "redistributed in whole or in part without the prior written permission of the publisher.",
        "If you believe any content on this page infringes your copyright, please contact our "
        "editors with the address of the page and we will remove it within two working days.",
    ],
    "zh": [
        "本文转载自合作媒体，仅代表作者本人观点，不代表本网立场。本网转载此文出于传递更多信息之目的，"
        "并不意味着赞同其观点或证实其描述，文章内容仅供参考。如对文章内容有任何疑问或者发现侵权行为，"
        "请及时与本网编辑部联系，我们将在核实后第一时间删除或更正相关内容。",
        "凡本网注明来源为本网的所有作品，版权均属于本网，未经本网授权不得转载、摘编或利用其它方式使用上述作品。"
        "已经本网授权使用作品的，应在授权范围内使用，并注明来源，违者本网将依法追究责任。"
        "本网未注明来源的作品，均转载自其它媒体，目的在于传递更多信息，并不代表本网赞同其观点。",
        "免责声明：本文所载内容来源于互联网公开资料，本网对文中陈述、观点判断保持中立，不对所包含内容的准确性、"
        "可靠性或完整性提供任何明示或暗示的保证，请读者仅作参考，并请自行承担全部责任。本文不构成任何投资建议，"
        "读者据此操作，风险自担。",
    ],
}

PROMOS = {
    "en": [
        "Get the best of the week's news delivered to your inbox every Friday morning: sign up "
        "for our free newsletter today and never miss a story from our reporters again.",
        "Download our award-winning app for breaking news alerts, live coverage of the biggest "
        "events and exclusive analysis from our correspondents around the world, free of charge.",
    ],
    "zh": [
        "关注本网官方微信公众号，第一时间获取最新资讯、深度解读和独家报道。每天早上八点准时推送当天最重要的新闻，"
        "还有机会参加读者互动活动，赢取精美礼品，欢迎扫描下方二维码关注。关注后回复关键词即可查看往期精彩内容，"
        "我们期待与您一起见证每一个重要时刻。",
        "下载本网新闻客户端，随时随地掌握天下大事。客户端提供实时新闻推送、视频直播和个性化推荐，"
        "让您不错过任何一条重要资讯，现在下载注册还可领取会员专属福利。客户端还支持离线阅读、夜间模式和字号调节，"
        "在地铁上、在飞机上也能畅快阅读，快来体验吧。",
    ],
}


def is_han(c):
    return "\u4e00" <= c <= "\u9fff"


def compared_len(text):
    """Characters of a passage in about the form paragraphs are compared in: its letters
    and digits (punctuation and spacing are not compared)."""
    return sum(1 for c in unicodedata.normalize("NFKC", text) if c.isalnum())


def merged(paras, lang):
    """`paras` with each short one joined to the ones after it until the block has
    TAKEN_CHARS (a news site's paragraphs of one or two sentences); a short rest is left
    out."""
    out, cur = [], ""
    for p in paras:
        cur = (cur + (" " if lang == "en" else "") + p) if cur else p
        if compared_len(cur) >= TAKEN_CHARS:
            out.append(cur)
            cur = ""
    return out


def shingles(text, lang):
    if lang == "zh":
        text = "".join(text.split())
        return {zlib.crc32(text[i:i + 5].encode()) for i in range(max(1, len(text) - 4))}
    words = text.split()
    return {zlib.crc32(" ".join(words[i:i + 4]).encode()) for i in range(max(1, len(words) - 3))}


def articles(sources, data, rng):
    """The English and Chinese articles of `sources` (title, paragraphs of 100 characters
    or more), with no paragraph twice."""
    if sources == "design":
        en = ms.load_bbc(data)
        zh = ms.load_thucnews(data, rng)
    else:
        en = ms.load_reuters(data)[0]
        zh = ms.load_sogou(data, rng)[0]
    seen = set()
    shingle_owner = {}
    out = {"en": [], "zh": []}
    for lang, bases in (("en", en), ("zh", zh)):
        for b in bases:
            paras = merged([" ".join(p.split()) for p in b.paras], lang)
            keys = [p.lower().replace(" ", "") for p in paras]
            if len(paras) < 2 or any(k in seen for k in keys) or len(set(keys)) < len(keys):
                continue
            # Garbled text (private-use characters from a wrong decoding) is left out.
            if any("\ue000" <= c <= "\uf8ff" or c == "\ufffd" for p in paras for c in p):
                continue
            # An article with half of its shingles (Han 5-grams, 4 words of other text) in
            # articles taken before is a copy (a story filed twice), which a run would
            # remove as a near duplicate.
            grams = shingles(" ".join(paras).lower(), lang)
            if sum(1 for g in grams if g in shingle_owner) * 2 >= len(grams):
                continue
            for g in grams:
                shingle_owner.setdefault(g, len(seen))
            seen.update(keys)
            out[lang].append((" ".join(b.title.split()), paras))
    return out


def noisy(text, lang, rng):
    """`text` with noise normalisation removes."""
    kind = rng.choice(["spaces", "width", "break", "case"] + (["han_spaces"] * 2 if lang == "zh" else []))
    if kind == "han_spaces":
        # Only beside a Han character: a space inside a Latin word would split it.
        han = [i for i in range(1, len(text)) if is_han(text[i - 1]) or is_han(text[i])]
        chars = list(text)
        for i in sorted(rng.sample(han, min(6, len(han))), reverse=True):
            chars.insert(i, " ")
        return "".join(chars)
    if kind == "width":
        return "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() and rng.random() < 0.5 else c
                       for c in text)
    if kind == "break":
        cut = text.find(" ", len(text) // 2) if lang == "en" else len(text) // 2
        return text[:cut] + "\n" + text[cut:].lstrip() if cut > 0 else text
    if kind == "case" and lang == "en":
        return text.upper() if rng.random() < 0.5 else text.lower()
    return text.replace(" ", "  ", 3) if " " in text else text.replace("，", "，  ", 2)


def near(text, lang, rng):
    """`text` with one word (English) or character (Chinese) changed."""
    if lang == "en":
        words = text.split(" ")
        at = rng.choice([i for i, w in enumerate(words) if w.isalpha() and len(w) > 3] or [0])
        words[at] = words[at][::-1] if words[at][::-1] != words[at] else words[at] + "s"
        return " ".join(words)
    at = rng.choice([i for i, c in enumerate(text) if is_han(c)] or [0])
    swap = chr(0x4E00 + (ord(text[at]) - 0x4E00 + 17) % 0x5000)
    return text[:at] + swap + text[at + 1:]


def documents(arts, rng):
    """The documents of one language: (id, lang, blocks, passage id of each block)."""
    lang_docs = {}
    for lang, items in arts.items():
        rng.shuffle(items)
        # A quarter of a small source (the Sogou sample's 88 clean articles) is its pool.
        pooled_articles = min(POOL_ARTICLES, len(items) // 4)
        pool, own = items[:pooled_articles], items[pooled_articles:pooled_articles + DOCS_PER_LANG]
        pooled = [p for _, paras in pool for p in paras]
        rng.shuffle(pooled)
        uses = {}
        docs = []
        for n, (title, paras) in enumerate(own):
            blocks = [(title, ("title", lang, n))] + [(p, ("own", lang, n, i)) for i, p in enumerate(paras)]
            room = len(paras)
            if rng.random() < SYNDICATED_SHARE:
                for _ in range(min(rng.randint(1, 2), room)):
                    room -= 1
                    # A passage already placed (up to five times), or the pool's next.
                    again = [p for p, k in uses.items() if k < 5]
                    p = rng.choice(again) if again and rng.random() < 0.6 else pooled[len(uses) % len(pooled)]
                    uses[p] = uses.get(p, 0) + 1
                    passage = ("pool", p)
                    if rng.random() < NEAR_SHARE:
                        p = near(p, lang, rng)
                        passage = ("near", p)
                    blocks.insert(rng.randint(1, len(blocks)), (p, passage))
            if room > 0 and rng.random() < PROMO_SHARE:
                room -= 1
                i = rng.randrange(len(PROMOS[lang]))
                blocks.insert(2, (PROMOS[lang][i], ("promo", lang, i)))
            if room > 0 and rng.random() < NOTICE_SHARE:
                i = rng.randrange(len(NOTICES[lang]))
                blocks.append((NOTICES[lang][i], ("notice", lang, i)))
            docs.append((f"{lang}-{n:04d}", lang, blocks))
        lang_docs[lang] = docs
    return lang_docs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sources", choices=["design", "held-out"], default="design")
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data-samples")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    per_lang = documents(articles(args.sources, args.data, rng), rng)
    docs = per_lang["en"] + per_lang["zh"]
    rng.shuffle(docs)
    seen, rows, truth = set(), [], []
    for doc_id, lang, blocks in docs:
        texts, numbers, repeated = [], [], []
        for number, (text, passage) in enumerate(blocks):
            placed_before = passage in seen
            if placed_before and passage[0] != "title" and rng.random() < NOISE_SHARE:
                text = noisy(text, lang, rng)
            texts.append(text)
            if passage[0] != "title" and compared_len(text.replace("\n", " ")) >= MIN_CHARS:
                numbers.append(number)
                if placed_before:
                    repeated.append(number)
            seen.add(passage)
        rows.append({"id": doc_id, "lang": lang, "text": "\n\n".join(texts)})
        truth.append({"id": doc_id, "lang": lang, "paragraphs": numbers, "repeated": repeated})
    args.out.mkdir(parents=True, exist_ok=True)

    def write(name, items):
        with open(args.out / name, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in items)

    write("pages.jsonl", rows)
    write("batch-1.jsonl", rows[: len(rows) // 2])
    write("batch-2.jsonl", rows[len(rows) // 2:])
    write("paragraphs.jsonl", truth)
    # Every document is its own: no two are near duplicates (for `eval --truth`).
    write("truth.json", [{"id": t["id"], "truth": t["id"], "lang": t["lang"]} for t in truth])
    for lang in ("en", "zh"):
        mine = [t for t in truth if t["lang"] == lang]
        print(f"{lang}: {len(mine)} documents, {sum(len(t['paragraphs']) for t in mine)} paragraphs, "
              f"{sum(len(t['repeated']) for t in mine)} repeated")


if __name__ == "__main__":
    main()
