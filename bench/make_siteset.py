#!/usr/bin/env python3
"""Make a labelled crawl of many small sites for neardup (the "siteset").

    python3 bench/make_siteset.py --out DIR [--seed N] [--mix mixed|zh] [--pages N]

A fourth labelled set, built apart from bench/make_webset.py, make_crawlset.py and
make_editset.py (its own hosts, template parts and vocabulary, URL schemes, copies and
negatives), to measure what those sets hardly hold: a long tail of small hosts, text
shared verbatim by the templates of many hosts (notices) or injected into the pages of a
few (promotions), short pages (poems, briefs, court openings), and HTML handed to
neardup as JSON Lines, cut into lines where its server put newlines. On such pages the
template can outweigh the page's own text, and a page reduced to its template joins
another page through it: these joins are wrong whatever the labels say.

It uses the Python standard library only, and writes the same files for the same seed.
Everything it reads is research-only text from ../shared/data-samples (next to the
repository; see its README.md): nothing it writes may be shipped or committed. The one
thing it borrows from another generator is make_crawlset.py's one-to-one table of
simplified and traditional characters.

Draws. Defaults may be CHOSEN on the design draws and are REPORTED on the held-out draws:

  design     seeds 1 and 2 with --mix mixed, seed 1 with --mix zh
  held out   seeds 11, 12 and 13 with --mix mixed, seeds 11 and 12 with --mix zh

A draw's sentences, hosts and templates differ with the seed; its kinds and rates do not.

Sources (the base documents):

  English   Reuters-21578 bodies of 500 characters or more and BBC News articles (news);
            Reuters items of 150 to 450 characters that are prose rather than tables, and
            the first paragraph of news documents left unused (briefs).
  Chinese   THUCNews articles, their glued title cut at a source marker (新浪体育讯,
            本报讯, 中新网, 近日, a date, ...) or else at an early space (a two-part title
            then loses its second part to the body), and Sogou news (news); at most seven
            in ten of them are used as news, and the first one or two sentences of the rest
            and Sogou items of 60 to 250 characters are briefs; openings of administrative
            court judgments of 50 to 320 characters ending a sentence (court); 全唐诗 poems
            of two to eight couplets (poems), with their 御定全唐詩 entry when exactly one
            entry has character-bigram Jaccard >= 0.5 with the poem.

Base documents are deduplicated among themselves before any page is made: a document is
dropped when the character 5-grams of its text (half of them, sampled by hash) have
Jaccard >= 0.5 with those of one kept before, or >= 0.6 of the smaller set lie in the
other. So two truth labels never share a text by accident (a re-issued story, a brief next
to its full story, two rulings of one formula). The court pairs of the hard negatives
below are the only exception, and they are labelled.

Rates (the constants below say the same):

  pages       mixed: half English, half Chinese; zh: Chinese only. Of the originals,
              English 72% news and 28% briefs; Chinese 48% news, 20% briefs, 16% court
              openings and 16% poems (what the news and brief sources lack goes two
              thirds to court openings, a third to poems: the zh mix has more of both).
  copies      38% of the pages that are not hard negatives are in clusters of two or
              more; a copied original has one to four copies (mean two), of kinds drawn by
              genre (KIND_WEIGHTS; Chinese news and briefs take `edit` more often); and of
              the hosts of one original not otherwise copied, 30% hold it at three or four
              URLs (url-variant, recrawl).
  hosts       originals per host: 45% of hosts one to three, 28% four to nine, 19% ten to
              thirty, 8% 31 to 70; poetry hosts 60% one to three, 30% four to nine, 10%
              ten to thirty (copies come on top, so a few hosts pass 80 pages).
  notices     half the pool in a draw, each on every page of 5 to 40% of its language's
              hosts (most on fewer); a host shows at most two.
  promotions  one per 120 pages, each on one to three pages of each of two to four hosts
              of its language (4 to 5% of the pages).
  HTML        of the hosts, 35% write the header (top bar, logo, navigation) on one source
              line, 45% the hot and related boxes, 20% the article body and 50% the footer;
              half of the poetry templates break verses with <br> in one element. A host
              shows its notices after the article body (half the hosts), before the footer
              or last on the page.

Hosts. Each host has a language and a genre (news, briefs, court, poems) and its own
template, drawn from parts: a top bar (sometimes with the day's date), a logo and slogan, a
navigation bar of links (at least 80 characters; with or without separators; a few hosts
list it one item per line), a breadcrumb with the category, a page title (usually with the
site's name), a byline with a date and a view counter, a share bar, an editor line,
previous and next links, a site-wide "hot" box of headlines (the host's own and others)
that rotates with the crawl date, a per-page related box (headlines, and on some hosts
teasers ending in an ellipsis), a comment count, a newsletter line and a footer of one to
three lines (link lists, prose, addresses and registration numbers). Four in ten poetry
hosts use traditional characters, and a few news hosts in traditional characters (a tenth
as many as the simplified ones) hold the `edition` copies of Chinese news. Each host also
has a URL scheme and an HTML style.

Mechanisms (tags in truth.json's `mechanisms`, joined by "+"; `mechanism` is the first that
applies, in this order):

  promo         the page carries an injected promotion: a promotional paragraph (prose, 60
                to 200 characters) inserted verbatim in the article body, whatever the
                page's kind
  notice        the page's host shows a cross-site notice: a disclaimer, copyright or
                reprint notice (Chinese or English, short or long) used verbatim by many
                hosts
  lone-article  the host's pages (three or more) all show one article: an original and its
                copies at several URLs, nothing else
  short         the page's own text is under 200 characters (poems, briefs, court openings)
  small-host    the host has at most three pages
  box-line      the host's HTML has its whole hot or related box on one source line (it
                matters to pages-html.jsonl, where that line can outweigh a short article)
  header-line   the host's HTML has its top bar, logo and navigation on one source line
                (pages-html.jsonl)
  none          none of these

Kinds (truth.json `kind`; copies share their original's truth label):

  original     the first publication, on its home host
  mirror       the same content on another host's template
  url-variant  the same host at another URL: tracking parameters, a share or session
               parameter, index.html, the mobile or AMP host, a print page (the template
               left out); `variant` says which
  recrawl      the same URL crawled again 5 to 60 days later: its counter, comment count,
               hot box (by then rotated) and related box change
  edit         small edits. Chinese news and briefs: one to six single-character
               substitutions, insertions or deletions (each breaks up to five 5-grams);
               English: one to four words replaced, and on longer texts a sentence changed;
               poems: one or two variant characters. Court openings are not edited (a
               changed name or number would make another ruling)
  truncate     the first 50 to 90% of the text (paragraphs, or sentences of a one-paragraph
               text) and a read-more link
  reorder      two paragraphs swapped
  ads          one to three advertisement paragraphs inserted (made for the page)
  noise        whitespace, punctuation and full/half-width changes in three to eight places
  edition      a Chinese poem in its other edition (the 御定全唐詩 entry when there is one,
               or else the poem in simplified characters by the one-to-one table); a
               Chinese news text in traditional characters on a traditional host
  repost       another host, with an attribution line at the top or bottom and sometimes
               a changed title

Hard negatives (negatives.jsonl; their pages are singletons):

  poems-small-host  two different poems on one small poetry host (two or three pages)
  briefs-template   two different briefs on one host's template
  court-docket      two court openings that differ only in their numbers (docket numbers,
                    dates): a real pair of rulings of one formula
  court-parties     two court openings of one formula with other parties (5-gram Jaccard
                    0.5 to 0.9)
  same-event        two reports built from disjoint paragraphs of one source, each with
                    paragraphs of another article
  shared-notice     two pages of different hosts and contents that share a notice (short
                    pages first)
  shared-promo      two pages of different hosts and contents that share a promotion

Labels: two rulings of one formula that differ in a docket number or the parties are
different documents; one poem in two editions (or scripts) is one document.

Outputs in DIR (one truth.json serves all five inputs: their ids are equal):

  pages.warc.gz        warcinfo, then one WARC/1.0 `response` per page (HTTP/1.1 200,
                       text/html; charset=utf-8), one gzip member per record
  pages.wet.gz         warcinfo, then one WET `conversion` per page, the visible text
  pages.jsonl          {"id", "url", "text"}: the visible text, the title then one line per
                       block element, as neardup reads the WARC
  pages-html.jsonl     {"id", "url", "text"}: the page's HTML as its server formatted it
  pages-minified.jsonl {"id", "url", "text"}: the same HTML on one line
  truth.json           JSON Lines: id, truth (cluster label), kind, variant, lang, genre,
                       host, host_pages, source, derived_from, url, mechanism, mechanisms
                       (tags joined by "+"), group_kind (lang:kind)
  negatives.jsonl      {"id_a", "id_b", "duplicate": false, "kind"}
  copy-pairs.jsonl     {"id_a", "id_b", "duplicate": true, "kind", "lang"}: every copy and
                       the page it was made from
  README.txt           how the set was made, with its counts

and a JSON summary on stdout. Ids are `<urn:siteset:NNNNN>` in crawl order, as neardup
reads WARC-Record-IDs.
"""

import argparse
import datetime as dt
import gzip
import hashlib
import html
import json
import re
import sys
import tarfile
import zlib
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_crawlset import S2T, T2S  # noqa: E402  (one-to-one simplified/traditional pairs)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data-samples"
DESIGN = {"mixed": (1, 2), "zh": (1,)}
HELD_OUT = {"mixed": (11, 12, 13), "zh": (11, 12)}

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_RE = re.compile(f"[{HAN}]")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SHORT_CHARS = 200


def to_trad(text):
    return "".join(S2T.get(c, c) for c in text)


def to_simp(text):
    return "".join(T2S.get(c, c) for c in text)


# ---------------------------------------------------------------------------------------
# Base documents


class Base:
    """A base document: one text, with the metadata its pages show."""

    __slots__ = ("key", "lang", "genre", "source", "title", "paras", "date", "author", "extra")

    def __init__(self, key, lang, genre, source, title, paras, date=None, author=None, extra=None):
        self.key, self.lang, self.genre, self.source = key, lang, genre, source
        self.title, self.paras, self.date, self.author = title, paras, date, author
        self.extra = extra or {}

    def text(self):
        return "\n".join(self.paras)

    def chars(self):
        return sum(len(p) for p in self.paras)


def zh_sentences(text):
    return [s for s in re.findall(r"[^。！？；]*[。！？；]+[”」’』]?|[^。！？；]+$", text) if s.strip()]


def en_sentences(text):
    return [s for s in re.findall(r".+?(?:[.!?](?=\s+[A-Z\"'(])|$)\s*", text, re.S) if s.strip()]


def zh_paragraphs(text, rng, lo=70, hi=230):
    """Cuts a text without paragraph marks into paragraphs of whole sentences."""
    paras, cur = [], ""
    want = rng.randint(lo, hi)
    for s in zh_sentences(text):
        cur += s
        if len(cur) >= want:
            paras.append(cur.strip())
            cur, want = "", rng.randint(lo, hi)
    if cur.strip():
        if paras and len(cur) < lo // 2:
            paras[-1] += cur.strip()
        else:
            paras.append(cur.strip())
    return paras


ACRONYMS = {"US", "U.S.", "UK", "U.K.", "EC", "EEC", "OPEC", "GATT", "IMF", "GNP", "GDP", "SEC", "FED", "USSR",
            "NYSE", "CPI", "USDA", "ECU", "PLC", "AG", "NV", "SA", "LTD", "CO", "INC", "CORP", "NZ", "UAW"}


def reuters_title(raw):
    words = re.sub(r"\s+", " ", CONTROL.sub("", html.unescape(raw))).strip().split(" ")
    out = []
    for i, w in enumerate(words):
        bare = w.strip(",.:;")
        if bare in ACRONYMS and bare not in {"CO", "INC", "CORP", "LTD"}:
            out.append(w)
        elif i and w.lower() in {"to", "of", "in", "on", "for", "and", "the", "a", "at", "by", "with", "vs"}:
            out.append(w.lower())
        else:
            out.append(w[:1].upper() + w[1:].lower())
    return " ".join(out)


def reuters_body(raw):
    text = CONTROL.sub("", html.unescape(raw))
    text = re.sub(r"\s*\bReuter\s*$", "", text.strip())
    paras = []
    for chunk in re.split(r"\n(?=\s{2,}\S)|\n\s*\n", text):
        p = re.sub(r"\s+", " ", chunk).strip()
        if p:
            paras.append(p)
    return paras


def tabular(paras):
    """Earnings tables and lists rather than prose."""
    text = " ".join(paras)
    if re.search(r"\b(Shr|Net|Revs|Qtr|Oper|Avg shrs|cts vs|mln vs|vs loss)\b", text):
        return True
    digits = sum(c.isdigit() for c in text)
    return digits > 0.12 * len(text) or sum(1 for p in paras if len(p) < 40) > len(paras) / 3


def load_reuters(data):
    """(news, briefs, spare leads): Reuters stories of 500+ characters, prose items of
    150-450, and the first paragraphs of further stories."""
    news, briefs = [], []
    with tarfile.open(data / "en_reuters21578_sgm.tar.gz") as tf:
        for name in sorted(m.name for m in tf.getmembers() if m.name.endswith(".sgm")):
            raw = tf.extractfile(name).read().decode("latin-1")
            for n, block in enumerate(re.findall(r"<REUTERS\b.*?</REUTERS>", raw, re.S)):
                title, body = re.search(r"<TITLE>(.*?)</TITLE>", block, re.S), re.search(r"<BODY>(.*?)</BODY>", block, re.S)
                if not title or not body:
                    continue
                m = re.search(r"<DATE>\s*(\d+)-([A-Z]{3})-(\d{4})", block)
                mon = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
                date = dt.datetime(1987, 3, 2, 9)
                if m and m.group(2) in mon:
                    date = dt.datetime(int(m.group(3)), mon.index(m.group(2)) + 1, int(m.group(1)), 9)
                paras = reuters_body(body.group(1))
                if not paras or tabular(paras):
                    continue
                b = Base(f"reuters:{name}:{n}", "en", "news", "reuters", reuters_title(title.group(1)), paras, date)
                size = len(body.group(1))
                if size >= 500 and len(paras) >= 2 and sum(map(len, paras)) / len(paras) >= 90:
                    news.append(b)
                elif 150 <= size < 450 and len(paras) <= 3:
                    b.genre = "brief"
                    briefs.append(b)
    return news, briefs


def load_bbc(data):
    news = []
    with tarfile.open(data / "en_bbc_news_2225.tar.gz") as tf:
        for name in sorted(m.name for m in tf.getmembers() if m.name.endswith(".txt")):
            raw = tf.extractfile(name).read().decode("utf-8", errors="replace")
            lines = [x.strip() for x in raw.split("\n")]
            if not lines or not lines[0] or "\ufffd" in raw:
                continue
            paras = [x for x in lines[1:] if x]
            if len(paras) < 3 or sum(map(len, paras)) > 4000:
                continue
            day = dt.datetime(2004, 1, 1) + dt.timedelta(days=len(news) % 700, hours=len(news) % 13)
            news.append(Base(f"bbc:{name}", "en", "news", "bbc", lines[0], paras, day,
                             extra={"section": name.split("/")[1]}))
    return news


THUC_MARK = re.compile(r"新浪[\u4e00-\u9fff]{0,4}讯|本报讯|本报记者|晚报记者|证券时报记者|中新网|全景网|中关村在线|"
                       r"\(记者|（记者|【[^】]{2,12}】|导语|核心提示|据[\u4e00-\u9fff]{2,8}报道|北京时间|"
                       r"记者|近日|日前|昨日|昨天|今天|今年|据悉|[0-9]{1,2}月[0-9]{1,2}日")


def load_thucnews(data, rng):
    docs = []
    with gzip.open(data / "zh_thucnews_subset.tsv.gz", "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            label, _, text = line.rstrip("\n").partition("\t")
            text = text.strip()
            if not 200 <= len(text) <= 3000:
                continue
            m = next((m for m in THUC_MARK.finditer(text[:60]) if 8 <= m.start() <= 45), None)
            if m is None:  # else at the first space, when there is one early (a two-part title is cut)
                m = re.search(r"\s+", text[6:36])
                if m is None:
                    continue
                cut = 6 + m.start()
                title, body = text[:cut].strip(), text[cut:].strip()
            else:
                title, body = text[:m.start()].strip(), text[m.start():].strip()
            if "\ufffd" in text or len(body) < 150:
                continue
            day = dt.datetime(2008, 1, 1) + dt.timedelta(days=rng.randrange(3 * 365), minutes=rng.randrange(24 * 60))
            docs.append(Base(f"thucnews:{n}", "zh", "news", "thucnews", title, zh_paragraphs(body, rng), day,
                             extra={"section": label}))
    return docs


def decode_sogou(raw):
    """Sogou's smarty files: UTF-8, or GBK where the paragraph mark became '?' and a stray
    byte (such marks become U+E40C again; an unpaired lead byte is dropped)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out, i = [], 0
    while i < len(raw):
        c = raw[i]
        if c == 0x3F and i + 1 < len(raw) and raw[i + 1] >= 0x81:
            out.append("\ue40c")
            i += 2
        elif c < 0x80:
            out.append(chr(c))
            i += 1
        else:
            try:
                out.append(raw[i:i + 2].decode("gb18030"))
                i += 2
            except UnicodeDecodeError:
                i += 1
    return "".join(out)


def load_sogou(data, rng):
    news, briefs = [], []
    with tarfile.open(data / "zh_sogou_news_smarty_gbk.tar.gz") as tf:
        for name in sorted(m.name for m in tf.getmembers() if m.name.endswith(".dat")):
            text = decode_sogou(tf.extractfile(name).read())
            for n, doc in enumerate(re.findall(r"<doc>(.*?)</doc>", text, re.S)):
                def field(tag):
                    m = re.search(rf"<{tag}>(.*?)</{tag}>", doc, re.S)
                    return m.group(1).strip() if m else ""
                title = re.sub(r"\s+", " ", field("contenttitle").replace("\ue40c", "")).strip()
                paras = [re.sub(r"\s+", "", p).strip("\u3000") for p in field("content").split("\ue40c")]
                paras = [p for p in paras if p]
                if not title or "?" in title or "\ufffd" in title + "".join(paras) or not paras:
                    continue
                day = dt.datetime(2012, 3, 1) + dt.timedelta(days=rng.randrange(300), minutes=rng.randrange(24 * 60))
                b = Base(f"sogou:{name}:{n}", "zh", "news", "sogou", title, paras, day)
                total = b.chars()
                if total >= 300 and len(paras) >= 2:
                    news.append(b)
                elif 60 <= total <= 250:
                    b.genre = "brief"
                    b.paras = ["".join(paras)]
                    briefs.append(b)
    return news, briefs


def court_title(text, cause, rng):
    m = re.search(r"(?:原告|上诉人|申请人|申请执行人|再审申请人)([^，,（(、：:]{2,20}?)(?:诉|不服|因|与|于|申请|要求|，)", text)
    kind = "行政裁定书" if re.search(r"撤回|撤诉|裁定|审查终结", text) else "行政判决书"
    who = m.group(1) if m else rng.choice(["某公司", "某某", "申请执行人"])
    return f"{who}与{cause.split('（')[0]}纠纷案{kind}"


def load_court(data, rng):
    docs, seen = [], set()
    with gzip.open(data / "zh_admin_court_judgments.tsv.gz", "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            label, _, text = line.rstrip("\n").partition("\t")
            text = text.strip()
            if text in seen or not 50 <= len(text) <= 320 or not text.endswith(("。", "；")):
                continue
            seen.add(text)
            day = dt.datetime(rng.choice([2015, 2016, 2017]), rng.randint(1, 12), rng.randint(1, 28), rng.randint(8, 17))
            docs.append(Base(f"court:{n}", "zh", "court", "court", court_title(text, label, rng), [text], day,
                             extra={"cause": label}))
    return docs


def han_bigrams(text):
    s = "".join(HAN_RE.findall(text))
    return {s[i:i + 2] for i in range(len(s) - 1)}


def load_poems(data, rng):
    """全唐诗 poems of 2-8 couplets (20-160 characters), each with its one 御定全唐詩 entry
    (`extra["edition"]`) when exactly one entry has bigram Jaccard >= 0.5 with it."""
    qts, yd = [], []
    with gzip.open(data / "zh_chinese_poetry_tang_subset.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            lines = [x.strip() for x in o.get("paragraphs", []) if x.strip()]
            if not lines:
                continue
            item = (o.get("author") or "佚名", (o.get("title") or "無題").strip(), lines, f"{o['file']}#{o['idx']}")
            if o["collection"] == "quantangshi":
                verses = all(x.endswith(("。", "，", "？", "！")) for x in lines)
                if 2 <= len(lines) <= 8 and 20 <= sum(map(len, lines)) <= 160 and verses:
                    qts.append(item)
            elif o["collection"] == "yuding_quantangshi":
                yd.append(item)
    ygrams = [han_bigrams("".join(y[2])) for y in yd]
    df = Counter(g for y in ygrams for g in y)
    index = defaultdict(list)
    for j, y in enumerate(ygrams):
        for g in y:
            if df[g] <= 200:
                index[g].append(j)
    found, used = {}, Counter()
    for i, (_, _, lines, _) in enumerate(qts):
        q = han_bigrams("".join(lines))
        cand = Counter(j for g in q if df[g] <= 200 for j in index[g])
        good = [j for j, _ in cand.most_common(8) if len(q & ygrams[j]) / max(1, len(q | ygrams[j])) >= 0.5]
        if len(good) == 1:
            found[i] = good[0]
            used[good[0]] += 1
    docs = []
    for i, (author, title, lines, ref) in enumerate(qts):
        extra = {"ref": ref}
        j = found.get(i)
        if j is not None and used[j] == 1:
            extra["edition"] = {"author": yd[j][0], "title": yd[j][1], "lines": yd[j][2], "ref": yd[j][3]}
        day = dt.datetime(rng.randint(2018, 2023), rng.randint(1, 12), rng.randint(1, 28), rng.randint(7, 22))
        docs.append(Base(f"poem:{ref}", "zh", "poem", "quantangshi", title, lines, day, author, extra))
    return docs


def grams(text):
    """Half of a text's character 5-grams (the same half for every text), as hashes."""
    t = re.sub(r"[\W_]+", "", text.lower())
    out = set()
    for i in range(max(1, len(t) - 4)):
        h = zlib.crc32(t[i:i + 5].encode("utf-8"))
        if h % 2 == 0:
            out.add(h)
    return out or {zlib.crc32(t.encode("utf-8"))}


class Deduper:
    """Keeps a text unless its 5-grams have Jaccard >= 0.5 with a kept text's, or >= 0.6
    of the smaller set lie in the other."""

    def __init__(self):
        self.sets, self.index = [], defaultdict(list)

    def near(self, g):
        counts = Counter()
        for h in g:
            post = self.index.get(h)
            if post and len(post) <= 400:
                counts.update(post)
        for other, shared in counts.items():
            o = self.sets[other]
            if shared < 0.2 * min(len(g), len(o)):
                continue
            inter = len(g & o)
            if inter >= 0.5 * len(g | o) or inter >= 0.6 * min(len(g), len(o)):
                return True
        return False

    def add(self, text, force=False):
        g = grams(text)
        if not g or (not force and self.near(g)):
            return False
        n = len(self.sets)
        self.sets.append(g)
        for h in g:
            self.index[h].append(n)
        return True



# ---------------------------------------------------------------------------------------
# Hosts and their templates. Every name, address, menu and notice below is invented.

ZH_PLACES = [("澜沧", "lancang"), ("沂蒙", "yimeng"), ("洞庭", "dongting"), ("太行", "taihang"), ("渤海", "bohai"),
             ("秦岭", "qinling"), ("闽江", "minjiang"), ("赣南", "gannan"), ("漓江", "lijiang"), ("洱海", "erhai"),
             ("天山", "tianshan"), ("雁门", "yanmen"), ("琅琊", "langya"), ("姑苏", "gusu"), ("临安", "linan"),
             ("汴梁", "bianliang"), ("潇湘", "xiaoxiang"), ("鄱阳", "poyang"), ("滇池", "dianchi"), ("昆仑", "kunlun"),
             ("崂山", "laoshan"), ("黄山", "huangshan"), ("峨眉", "emei"), ("嘉陵", "jialing"), ("松花", "songhua"),
             ("乌江", "wujiang"), ("武夷", "wuyi"), ("桐柏", "tongbai"), ("沅水", "yuanshui"), ("淮扬", "huaiyang"),
             ("徽州", "huizhou"), ("敦煌", "dunhuang"), ("楼兰", "loulan"), ("大理", "dali"), ("丽水", "lishui"),
             ("乐清", "yueqing"), ("青城", "qingcheng"), ("香溪", "xiangxi"), ("云梦", "yunmeng"), ("渭南", "weinan"),
             ("雪峰", "xuefeng"), ("白帝", "baidi"), ("钱塘", "qiantang"), ("会稽", "kuaiji"), ("浔阳", "xunyang")]
ZH_SUFFIX = {
    "news": [("播报", "bobao"), ("速递", "sudi"), ("晨报网", "chenbao"), ("都市网", "dushi"), ("要闻网", "yaowen"),
             ("融媒", "rongmei"), ("信息港", "info"), ("时讯", "shixun"), ("热点网", "redian"), ("快报", "kuaibao")],
    "brief": [("快讯", "kx"), ("早知道", "zzd"), ("一线", "yixian"), ("简讯网", "jianxun"), ("掌上资讯", "zsz")],
    "court": [("审判之窗", "shenpan"), ("法苑", "fayuan"), ("法务通", "fawu"), ("判例库", "panli"),
              ("诉讼服务网", "susong"), ("公正网", "gongzheng")],
    "poem": [("诗韵阁", "shiyun"), ("吟风楼", "yinfeng"), ("词林", "cilin"), ("唐音馆", "tangyin"), ("古韵网", "guyun"),
             ("诗钞", "shichao"), ("诗话", "shihua"), ("雅集", "yaji")],
}
ZH_TLD = [".com", ".cn", ".com.cn", ".net", ".org.cn", ".gov.cn", ".cc", ".top", ".net.cn"]
ZH_MENU = {
    "news": ["要闻", "时评", "民生", "政务", "法治", "教育", "文旅", "健康", "房产", "汽车", "科创", "三农", "体育",
             "娱乐", "图集", "视频", "专题", "直播", "热榜", "公益", "区县", "招聘", "问政", "曝光台", "财富", "消费",
             "乡村振兴", "文明实践", "媒体矩阵", "数字报", "客户端", "网上展馆", "评论员文章", "天气", "便民服务"],
    "brief": ["最新", "快讯", "财经", "科技", "体育", "社会", "国际", "地方", "数据", "早报", "晚报", "7x24", "辟谣",
              "图说", "热搜", "榜单", "订阅", "下载APP", "合作", "我要爆料"],
    "court": ["法院概况", "审务公开", "诉讼服务", "裁判文书", "执行公开", "庭审直播", "法官风采", "调研园地", "法治宣传",
              "院长信箱", "司法改革", "党建工作", "典型案例", "公告送达", "网上立案", "诉讼费计算", "联系我们"],
    "poem": ["诗文", "名句", "作者", "古籍", "唐诗三百首", "宋词精选", "元曲", "乐府诗集", "诗经", "楚辞", "飞花令",
             "诗词大全", "对联", "成语", "字词典", "书法欣赏", "古文观止", "诗人故事", "每日一诗", "投稿", "韵书"],
}
ZH_CATEGORY = {"news": ["要闻", "民生", "财富", "体育", "科创", "文旅", "教育", "房产", "娱乐"],
               "brief": ["快讯", "财经", "社会", "体育", "科技"],
               "court": ["裁判文书", "审务公开", "典型案例", "公告送达"],
               "poem": ["唐诗", "诗文", "名篇赏读", "诗人专题"]}
ZH_NAMES = ["林晓", "郑一凡", "韩雪", "曹文博", "冯悦", "邓超群", "袁梦", "许志远", "沈佳", "彭亮", "吕婷", "蒋川",
            "谢雨桐", "魏国栋", "唐宁", "姚远", "钟琪", "范思", "方舟", "石磊"]
ZH_CITIES = ["临江", "青州", "云城", "白沙", "金川", "平湖", "安远", "南溪", "东阳", "西宁府"]
ZH_PROV = "京津沪渝冀晋辽吉黑苏浙皖闽赣鲁豫鄂湘粤桂琼川贵云陕甘青"

EN_FIRST = ["Ashford", "Brindle", "Calder", "Dunmore", "Elmhurst", "Fenwick", "Glenrock", "Hawthorne", "Kingsbridge",
            "Larkspur", "Millbrook", "Newbury", "Quarry Hill", "Rosedale", "Stonebridge", "Thornbury", "Upton",
            "Wexford", "Yarrow", "Alder Creek", "Bramley", "Carrick", "Dovercourt", "Easton", "Fairhaven",
            "Gresham", "Holloway", "Ivybridge", "Kilmore", "Lowell Park", "Marlow", "Northcote", "Penrose"]
EN_SECOND = {"news": ["Clarion", "Packet", "Telegraph", "Argus", "Mercury", "Eagle", "Press", "Advertiser", "Leader",
                      "Echo", "Pioneer", "Spectator", "Star", "Register", "Enquirer", "Messenger", "Crier", "Signal"],
             "brief": ["Briefs", "Newsline", "Wire Desk", "Ticker", "Minute", "Rundown", "Roundup", "Flash"]}
EN_TLD = [".com", ".com", ".net", ".org", ".news", ".co.uk", ".us", ".press", ".info"]
EN_MENU = {"news": ["Front Page", "Town Hall", "Courts & Crime", "Schools", "Obituaries", "Letters", "Columnists",
                    "Farm & Ranch", "Statehouse", "Things To Do", "Classifieds", "E-Edition", "Puzzles",
                    "Photo Galleries", "Weather Radar", "Traffic", "High School Sports", "Business Briefs",
                    "Real Estate", "Jobs", "Submit a Tip", "Public Notices", "Energy", "Markets", "World"],
           "brief": ["Latest", "Markets", "Companies", "Energy", "Commodities", "Deals", "Earnings", "Rates",
                     "Politics", "Tech", "Alerts", "Newsletters", "Podcast", "Data", "Calendar", "About"]}
EN_CATEGORY = {"news": ["Business", "Markets", "World", "Energy", "Local", "Sports", "Politics", "Technology"],
               "brief": ["Companies", "Markets", "Energy", "Deals", "Earnings"]}
EN_NAMES = ["Harriet Vance", "Owen Fairley", "Miriam Osei", "Caleb Drummond", "Ines Ferreira", "Wesley Tran",
            "Bridget Molloy", "Anand Rao", "Sofia Lindqvist", "Declan Hart", "Yusuf Karim", "Rebecca Stoll"]
EN_TOWNS = ["Ashford", "Millbrook", "Wexford", "Stonebridge", "Fairhaven", "Marlow", "Penrose", "Upton"]

# Notices: used verbatim by a share of the hosts of their language (see assign_notices).
NOTICES = {
    "zh": [
        "【免责声明】本网转载此文出于传递更多信息之目的，并不意味着赞同其观点或证实其描述，文章内容仅供参考，不构成投资建议。投资者据此操作，风险自担。",
        "本网转载的文章、图片仅代表作者本人观点，不代表本网观点和立场。如涉及作品内容、版权等问题，请作者在两周内与本网联系，我们将在第一时间处理。",
        "声明：本文来源于网络，仅供学习交流。",
        "本文不代表本站观点。",
        "特别提示：本页内容由网友上传或转载自互联网，本站不对其真实性、准确性和完整性负责，如有侵权请联系删除。",
        "郑重声明：本网部分文章和信息来源于国际互联网，本网转载出于传递更多信息和学习之目的。如转载稿涉及版权等问题，请立即联系网站所有人，我们会予以更改或删除相关文章，保证您的权利。对使用本网站信息和服务所引起的后果，本网站不作任何承诺。",
        "版权说明：凡注明来源为本网的作品，版权均属本网所有，未经授权不得转载、摘编或以其他方式使用；已经授权使用的，应在授权范围内使用，并注明出处。",
        "本站诗文资料多来自网络公开资料，仅供学习欣赏之用，版权归原作者所有。",
    ],
    "en": [
        "Disclaimer: The views and opinions expressed in this article are those of the author and do not necessarily reflect the official policy or position of this website.",
        "This article is republished from a third-party source for informational purposes only. We do not endorse its content and accept no liability for any errors or omissions.",
        "All rights reserved. Republication prohibited.",
        "Copyright notice: reproduction of this material in any form without prior written consent is prohibited. Contact our syndication desk for reprint permissions.",
        "Views expressed are the author's own.",
        "Note to readers: this story was distributed by a wire service and has not been edited by our staff. The publisher makes no warranty as to its accuracy and accepts no responsibility for any loss arising from reliance on it.",
    ],
}


def pick(rng, items, k):
    return rng.sample(items, min(k, len(items)))


class Host:
    """A site: its name, address, template parts, HTML style and URL scheme."""

    def __init__(self, hid, lang, genre, rng, taken, trad=False):
        self.hid, self.lang, self.genre, self.trad = hid, lang, genre, trad
        self.rng = r = Random(rng.getrandbits(64))
        self.capacity, self.pages, self.notices, self.neg_only = 0, [], [], False
        self.ids = set()
        while True:
            if lang == "zh":
                place, suffix = r.choice(ZH_PLACES), r.choice(ZH_SUFFIX[genre])
                self.name = place[0] + suffix[0]
                self.bare = r.choice([place[1] + suffix[1], place[1], suffix[1] + place[1]]) + r.choice(ZH_TLD)
            else:
                a, b = r.choice(EN_FIRST), r.choice(EN_SECOND[genre])
                self.name = r.choice([f"The {a} {b}", f"{a} {b}", f"{a} Daily {b}"])
                self.bare = re.sub(r"[^a-z]", "", (a + b).lower()) + r.choice(EN_TLD)
            if self.bare not in taken and self.name not in taken:
                taken.update((self.bare, self.name))
                break
        self.domain = r.choice(["www.", "www.", "", "news."] if genre != "poem" else ["www.", ""]) + self.bare
        self.scheme = r.randrange(6)
        self.date_style = r.randrange(4)
        self.make_parts()
        self.style = {
            "header_one_line": r.random() < 0.35,
            "box_one_line": r.random() < 0.45,
            "body_one_line": r.random() < 0.2,
            "footer_one_line": r.random() < 0.5,
            "indent": r.random() < 0.6,
            "nav_list": r.random() < 0.15,
            "verse_br": r.random() < 0.5,
        }
        self.notice_at = r.choice(["body", "body", "foot", "end"])  # after the body, before the footer, last
        self.poet_fmt = r.choice(["唐·{a}", "作者：{a}", "【唐】{a}", "{a}（唐代）"])
        self.promo_cls = r.choice(["tg", "promo", "sponsor", "recommend", "ad-text"])
        if trad:
            self.make_trad()

    # -- template parts --------------------------------------------------------------

    def make_parts(self):
        r, zh, g = self.rng, self.lang == "zh", self.genre
        menu = list(ZH_MENU[g] if zh else EN_MENU[g])
        r.shuffle(menu)
        sep = r.choice([" | ", "｜", " · ", "/", "  ", ""] if zh else [" | ", " · ", " / ", "  ", " • ", ""])
        target = r.randint(80, 170)
        nav = ["首页" if zh else "Home"]
        for item in menu:
            if len(sep.join(nav)) >= target:
                break
            nav.append(item)
        extra = ["更多", "English", "无障碍", "登录", "注册", "繁體", "RSS"] if zh else ["More", "Sign In", "Subscribe", "Español", "Archives", "Contact"]
        while len(sep.join(nav)) < 80:
            nav.append(extra.pop(0) if extra else f"{'栏目' if zh else 'Section'} {len(nav)}")
        self.nav, self.nav_sep = nav, sep
        self.categories = ZH_CATEGORY[g] if zh else EN_CATEGORY.get(g, EN_CATEGORY["news"])
        p = {k: r.random() < v for k, v in (("topbar", 0.35), ("slogan", 0.5), ("crumb", 0.7), ("byline", 0.92),
                                              ("views", 0.7), ("share", 0.6), ("share_top", 0.3), ("editor", 0.45),
                                              ("prevnext", 0.45), ("hot", 0.75), ("related", 0.45), ("comments", 0.3),
                                              ("newsletter", 0.4))}
        if not p["hot"] and not p["related"]:
            p["hot"] = True
        self.parts = p
        self.hot_n = r.randint(2, 8)
        self.related_n = r.randint(3, 6)
        self.teasers = r.choice([0.0, 0.0, 0.2, 0.4, 0.6])
        self.title_fmt = r.choice(["{t}_{s}", "{t} - {s}", "{s} | {t}", "{t}｜{s}" if zh else "{t} :: {s}", "{t}", "{t}_{c}_{s}"])
        city, name = r.choice(ZH_CITIES), self.name
        year = r.randint(1999, 2016)
        if zh:
            self.topbar = r.choice([f"欢迎光临{name}！ 设为首页 | 加入收藏 | 登录 | 注册", "今天是{date} 星期{wd}　天气：多云转晴",
                                    "手机版 | 微信 | 微博 | 客户端下载 | 无障碍浏览"])
            self.slogan = r.choice(["传播好声音 服务千万家", "有温度的城市门户", "读懂一座城", "诗意栖居 以文会友",
                                    "公开 公正 便民", "快一步 知天下"])
            self.crumb = r.choice(["当前位置：首页 > {c} > 正文", "您现在的位置：{s} >> {c}", "首页 / {c} / 详情", "位置：{c}"])
            self.byline = r.choice(["来源：{src}　作者：{a}　发布时间：{d}", "{d}　{src}", "时间：{d} 来源：{src}",
                                    "发布日期：{d}｜编辑：{a}", "{a} {d}"])
            self.views_fmt = r.choice(["　浏览：{n}次", "　阅读量：{n}", " 点击数：{n}", "｜已阅{n}"])
            self.views_apart = r.random() < 0.3
            self.share = r.choice(["分享到：微信 | 微博 | QQ空间 | 豆瓣", "扫一扫，分享到朋友圈", "转发：微信好友 朋友圈 新浪微博 复制链接",
                                   "分享 收藏 打印 关闭窗口"])
            self.editor = r.choice(["【责任编辑：{a}】", "（编辑：{a}）", "责编：{a}　审核：{b}"])
            self.prev_next = r.choice([("上一篇：{t}", "下一篇：{t}"), ("上一条：{t}", "下一条：{t}")])
            self.comments = r.choice(["网友评论（{n}）", "已有{n}人参与评论", "评论 {n}"])
            self.hot_head = r.choice(["热点排行", "24小时热文", "本周热读", "点击排行", "大家都在看", "精彩推荐", "最新文章"])
            self.related_head = r.choice(["相关链接", "同类文章", "您可能感兴趣", "推荐阅读"])
            self.newsletter = r.choice(["扫码关注官方微信，获取更多资讯", "下载客户端，新闻随时看", "订阅每日早报，重要消息一手掌握",
                                        "欢迎投稿，投稿邮箱：tougao@" + self.bare])
            icp = f"{r.choice(ZH_PROV)}ICP备{r.randint(10000000, 99999999)}号-{r.randint(1, 5)}"
            org = r.choice([f"{city}日报社", f"{city}市融媒体中心", f"{city}市中级人民法院", f"{city}文化传媒有限公司", f"{name}编辑部"])
            foot = [
                r.choice(["关于本站 | 联系方式 | 广告合作 | 版权声明 | 网站地图 | 意见反馈", "网站简介 - 隐私保护 - 免责条款 - 招聘英才 - 友情链接"]),
                f"主办单位：{org}　地址：{city}市{r.choice(['人民', '解放', '建设', '中山', '文化'])}路{r.randint(1, 400)}号　"
                f"邮编：{r.randint(100000, 860000)}　电话：0{r.randint(10, 999)}-{r.randint(1000000, 89999999)}",
                f"本站部分信息来源于网络，如有侵权，请联系我们删除。未经授权禁止复制或建立镜像，违者依法追究责任。"
                f"Copyright © {year}-2024 {name} All Rights Reserved. {icp}",
                f"{r.choice(ZH_PROV)}公网安备 {r.randint(10000000000000, 99999999999999)}号　违法和不良信息举报电话：0{r.randint(10, 999)}-{r.randint(1000000, 89999999)}，举报邮箱：jubao@{self.bare}",
            ]
        else:
            self.topbar = r.choice(["Subscribe | Log In | e-Edition | Today's Paper", "{date} | Weather: 54°F, light rain",
                                    "Support local journalism: become a member today"])
            self.slogan = r.choice(["Serving the valley since 1894", "Local news, first", "Independent and reader-funded",
                                    "Markets in a minute", "The news that moves"])
            self.crumb = r.choice(["Home › {c}", "You are here: Home / {c} / Article", "{c}", "Sections > {c}"])
            self.byline = r.choice(["By {a} | {d}", "{d} · {a}", "Posted {d} by {a}", "{a}, {src} | {d}", "Published: {d}"])
            self.views_fmt = r.choice([" | {n} reads", " · Viewed {n} times", " ({n} views)", " | Views: {n}"])
            self.views_apart = r.random() < 0.3
            self.share = r.choice(["Share: Email · Facebook · Reddit · Print", "Tweet | Share | Pin | Email",
                                   "Share this story via email or social media", "Print this page | Email a friend | Save"])
            self.editor = r.choice(["Editing by {a}", "Reporting by {a}; editing by {b}", "Contact the newsroom: {a}"])
            self.prev_next = r.choice([("Previous: {t}", "Next: {t}"), ("« {t}", "{t} »"), ("Older: {t}", "Newer: {t}")])
            self.comments = r.choice(["{n} Comments", "Join the discussion ({n})", "Comments: {n}"])
            self.hot_head = r.choice(["Most Popular", "Trending Now", "Top Stories This Week", "Most Read", "Editors' Picks",
                                      "Latest Headlines"])
            self.related_head = r.choice(["Related Articles", "See Also", "More on This Topic", "Read Next"])
            self.newsletter = r.choice(["Get the morning briefing delivered to your inbox. Subscribe free.",
                                        "Download our app for breaking news alerts",
                                        f"Join {r.randint(5, 90)},000 readers who get our weekly digest"])
            town = r.choice(EN_TOWNS)
            company = r.choice([f"{town} Media Holdings", f"{town} Publishing Co.", f"Community Newspapers of {town}"])
            foot = [
                r.choice(["About Us | Contact | Advertise | Terms of Service | Privacy | Accessibility | Corrections",
                          "Help Center · Careers · Ethics Policy · Cookie Settings · Site Map"]),
                f"© {year}-2024 {name}, {r.randint(10, 999)} {r.choice(['Main', 'Water', 'Mill', 'Union'])} Street, {town}. "
                f"All rights reserved. Material on this site may not be reproduced, distributed, transmitted, cached "
                f"or otherwise used, except with prior written permission.",
                f"{name} is published by {company}. Our newsroom operates independently of our advertisers; "
                f"read our ethics policy to learn how we report the news.",
            ]
        k = r.choice([1, 2, 2, 3])
        self.footer = foot[:1] + pick(r, foot[1:], k - 1) if r.random() < 0.7 else pick(r, foot[1:], k)

    def make_trad(self):
        for attr in ("name", "topbar", "slogan", "crumb", "byline", "views_fmt", "share", "editor", "comments",
                     "hot_head", "related_head", "newsletter"):
            setattr(self, attr, to_trad(getattr(self, attr)))
        self.nav = [to_trad(x) for x in self.nav]
        self.footer = [to_trad(x) for x in self.footer]
        self.prev_next = tuple(to_trad(x) for x in self.prev_next)
        self.categories = [to_trad(x) for x in self.categories]

    # -- addresses --------------------------------------------------------------------

    def new_id(self):
        while True:
            i = self.rng.randint(10000, 999999)
            if i not in self.ids:
                self.ids.add(i)
                return i

    def path(self, aid, date, slug, cat):
        cat = {"要闻": "yw", "民生": "ms", "财富": "cf", "体育": "ty", "科创": "kc", "文旅": "wl", "教育": "jy",
               "房产": "fc", "娱乐": "yl", "快讯": "kx", "财经": "cj", "社会": "sh", "科技": "kj"}.get(cat, re.sub(r"[^a-z]", "", cat.lower()) or "c")
        d = date
        if self.lang == "zh":
            return [f"/{cat}/{d:%Y%m%d}/{aid}.html", f"/content/{d:%Y-%m}/{d:%d}/content_{aid}.htm",
                    f"/html/{d:%Y}/{cat}_{d:%m%d}/{aid}.html", f"/a/{aid}.shtml", f"/show-{aid}.html",
                    f"/article.php?aid={aid}"][self.scheme]
        return [f"/{d:%Y/%m/%d}/{slug}/", f"/news/{cat}/{slug}-{aid}", f"/story/{aid}/{slug}",
                f"/articles/{aid}.html", f"/{cat}/{d:%Y}/{d:%b}/{d:%d}/{slug}.html".lower(),
                f"/index.php?option=com_content&view=article&id={aid}"][self.scheme]

    def url(self, aid, date, slug, cat, domain=None):
        return f"https://{domain or self.domain}{self.path(aid, date, slug, cat)}"

    def fmt_date(self, d):
        if self.lang == "zh":
            return [f"{d:%Y-%m-%d %H:%M}", f"{d.year}年{d.month:02d}月{d.day:02d}日 {d:%H:%M}", f"{d.year}/{d.month}/{d.day}",
                    f"{d:%Y-%m-%d}"][self.date_style]
        return [f"{d:%B} {d.day}, {d.year}", f"{d.day} {d:%b} {d.year}, {d:%H:%M}", f"{d:%Y-%m-%d}",
                f"{d:%a} {d.day} {d:%B} {d.year}"][self.date_style]


# ---------------------------------------------------------------------------------------
# Page content and the changes copies make


class Content:
    """What a page shows as its own: a title, an author and body blocks ("p" paragraphs,
    "verse" lines, "ad" advertisements, "src" an attribution line, "more" a read-more link)."""

    __slots__ = ("title", "blocks", "date", "author", "lang", "genre", "script")

    def __init__(self, title, blocks, date, author, lang, genre, script="s"):
        self.title, self.blocks, self.date, self.author = title, blocks, date, author
        self.lang, self.genre, self.script = lang, genre, script

    @classmethod
    def of(cls, b):
        kind = "verse" if b.genre == "poem" else "p"
        return cls(b.title, [(kind, p) for p in b.paras], b.date, b.author, b.lang, b.genre,
                   "t" if b.genre == "poem" else "s")

    def copy(self):
        return Content(self.title, list(self.blocks), self.date, self.author, self.lang, self.genre, self.script)

    def text_idx(self):
        return [i for i, (k, _) in enumerate(self.blocks) if k in ("p", "verse")]

    def chars(self):
        return sum(len(t) for k, t in self.blocks if k in ("p", "verse"))


COMMON_HAN = ("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面"
              "而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好"
              "应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道"
              "命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长"
              "求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色")
INSERTS = "的了也将已在都就还又再更并而"
POEM_VARIANTS = {"為": "爲", "爲": "為", "閑": "閒", "閒": "閑", "峰": "峯", "峯": "峰", "群": "羣", "羣": "群",
                 "迴": "回", "回": "迴", "遊": "游", "游": "遊", "煙": "烟", "烟": "煙", "床": "牀", "牀": "床",
                 "嘆": "歎", "歎": "嘆", "裏": "裡", "裡": "裏", "眾": "衆", "衆": "眾", "淚": "泪", "溪": "谿", "谿": "溪",
                 "踪": "蹤", "蹤": "踪", "鷄": "雞", "雞": "鷄", "岩": "巖", "巖": "岩", "杯": "盃", "盃": "杯"}
EN_SWAPS = {"said": "says", "company": "group", "rose": "increased", "fell": "declined", "expects": "forecasts",
            "about": "roughly", "announced": "disclosed", "shares": "stock", "plans": "intends", "agreed": "accepted",
            "total": "combined", "sales": "turnover", "also": "further", "bought": "acquired", "told": "informed",
            "major": "big", "new": "fresh", "government": "administration", "increase": "rise", "people": "residents",
            "year": "twelve months", "first": "initial", "last": "previous", "would": "could", "will": "is set to"}
EN_ADDED = ["The move had been widely expected by analysts.", "No further details were immediately available.",
            "A spokeswoman declined to comment beyond the statement.", "The figures are preliminary and may be revised.",
            "Officials said an update would follow later in the week."]


def zh_char_edits(text, rng, n):
    """`n` single-character substitutions, insertions or deletions at Han characters."""
    ops = []
    for _ in range(n):
        spots = [i for i, ch in enumerate(text) if HAN_RE.match(ch)]
        if not spots:
            break
        i = rng.choice(spots)
        op = rng.choice(["sub", "sub", "ins", "del"])
        if op == "sub":
            new = rng.choice([c for c in COMMON_HAN if c != text[i]])
            text = text[:i] + new + text[i + 1:]
        elif op == "ins":
            text = text[:i] + rng.choice(INSERTS) + text[i:]
        else:
            text = text[:i] + text[i + 1:]
        ops.append(op)
    return text, ops


def t_edit(c, rng):
    c = c.copy()
    idx = c.text_idx()
    if c.genre == "poem":
        spots = [(i, j) for i in idx for j, ch in enumerate(c.blocks[i][1]) if ch in POEM_VARIANTS]
        n = 0
        for i, j in rng.sample(spots, min(len(spots), rng.randint(1, 2))):
            k, t = c.blocks[i]
            c.blocks[i] = (k, t[:j] + POEM_VARIANTS[t[j]] + t[j + 1:])
            n += 1
        if n == 0:  # no variant character: one verse character changed
            i = rng.choice(idx)
            k, t = c.blocks[i]
            t, _ = zh_char_edits(t, rng, 1)
            c.blocks[i] = (k, t)
            return c, "char:1"
        return c, f"variant:{n}"
    if c.lang == "zh":
        n = rng.randint(1, 6)
        ops = Counter()
        for _ in range(n):
            i = rng.choice(idx)
            k, t = c.blocks[i]
            t, done = zh_char_edits(t, rng, 1)
            c.blocks[i] = (k, t)
            ops.update(done)
        return c, ",".join(f"{k}:{v}" for k, v in sorted(ops.items()))
    n, done = rng.randint(1, 4), 0
    for _ in range(n):
        i = rng.choice(idx)
        k, t = c.blocks[i]
        words = [m for m in re.finditer(r"\b[a-z]+\b", t) if m.group(0) in EN_SWAPS]
        if words:
            m = rng.choice(words)
            c.blocks[i] = (k, t[:m.start()] + EN_SWAPS[m.group(0)] + t[m.end():])
            done += 1
    variant = f"words:{done}"
    if c.chars() >= 400 or done == 0:
        i = rng.choice(idx)
        k, t = c.blocks[i]
        sents = en_sentences(t)
        if len(sents) >= 2 and rng.random() < 0.5:
            j = rng.randrange(len(sents))
            sents[j] = rng.choice(EN_ADDED) + " "
            c.blocks[i] = (k, "".join(sents).strip())
            variant += "+sentence"
        else:
            c.blocks[i] = (k, t.rstrip() + " " + rng.choice(EN_ADDED))
            variant += "+added"
    return c, variant


def t_truncate(c, rng):
    c = c.copy()
    idx = c.text_idx()
    total = c.chars()
    share = rng.uniform(0.5, 0.9)
    if len(idx) >= 3:
        kept, n = 0, 0
        for i in idx:
            if n and kept + len(c.blocks[i][1]) > share * total:
                break
            kept += len(c.blocks[i][1])
            n += 1
        n = min(n, len(idx) - 1)
        c.blocks = c.blocks[:idx[n]] + [("more", "")]
        return c, f"{n}/{len(idx)}"
    i = idx[-1]
    k, t = c.blocks[i]
    sents = zh_sentences(t) if c.lang == "zh" else en_sentences(t)
    out, cut = [], max(0, total - len(t))
    for s in sents:
        if out and cut + len("".join(out)) + len(s) > share * total:
            break
        out.append(s)
    out = out[:max(1, len(sents) - 1)]
    c.blocks = c.blocks[:i] + [(k, "".join(out).strip()), ("more", "")]
    return c, f"{len(out)}/{len(sents)} sentences"


def t_reorder(c, rng):
    c = c.copy()
    idx = c.text_idx()
    a, b = rng.sample(idx, 2)
    c.blocks[a], c.blocks[b] = c.blocks[b], c.blocks[a]
    return c, f"{idx.index(a)}<->{idx.index(b)}"


ZH_BRANDS = ["悦享", "优品汇", "云帆", "百城", "智选", "安康", "鑫旺", "乐途", "森邻", "佳禾", "巧厨", "星耀", "瑞丰", "青橙"]
ZH_PRODUCTS = ["空气净化器", "英语口语课", "理财账户", "体检套餐", "扫地机器人", "老花镜", "助听器", "亲子游线路", "网络课程",
               "茶叶礼盒", "家用呼吸机", "智能门锁", "新能源汽车", "学区公寓", "足浴盆", "保健枕"]
EN_BRANDS = ["Northwind", "Brightpath", "Cobalt", "Evergreen", "Halcyon", "Keystone", "Luma", "Meridian", "Quill",
             "Riverstone", "Solace", "Tandem", "Verity"]
EN_PRODUCTS = ["home security kit", "savings account", "hearing aid", "meal delivery plan", "language course",
               "standing desk", "mattress", "electric bike", "retirement planner", "air fryer", "travel insurance",
               "solar panel package", "password manager"]


def ad_paragraph(lang, rng):
    """One advertisement, made for the page that shows it."""
    if lang == "zh":
        return rng.choice([
            "【广告】{b}{p}{o}，详询{t}",
            "推广：{b}{p}，{o}，点击了解",
            "{b}{p}火热促销中，{o}！",
        ]).format(b=rng.choice(ZH_BRANDS), p=rng.choice(ZH_PRODUCTS), t=f"400-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                  o=rng.choice([f"限时{rng.randint(5, 9)}折", "首单立减50元", f"前{rng.randint(50, 500)}名送好礼", "免费试用七天"]))
    return rng.choice([
        "Advertisement — {b} {p}: {o}.",
        "Sponsored | {b} {p}. {o}. Learn more",
        "AD: Try the {b} {p} today — {o}.",
    ]).format(b=rng.choice(EN_BRANDS), p=rng.choice(EN_PRODUCTS),
              o=rng.choice([f"save {rng.randint(10, 60)}% this week", "free shipping on every order", "first month free",
                            f"from ${rng.randint(5, 99)} a month"]))


def t_ads(c, rng):
    c = c.copy()
    n = rng.randint(1, 3)
    for _ in range(n):
        idx = c.text_idx()
        at = rng.choice(idx[1:] + [idx[-1] + 1]) if len(idx) > 1 else idx[-1] + 1
        c.blocks.insert(at, ("ad", ad_paragraph(c.lang, rng)))
    return c, str(n)


WIDTH = {**{chr(0x30 + i): chr(0xFF10 + i) for i in range(10)},
         **{chr(0x41 + i): chr(0xFF21 + i) for i in range(26)}, **{chr(0x61 + i): chr(0xFF41 + i) for i in range(26)}}
NARROW = {v: k for k, v in WIDTH.items()}
ZH_PUNCT = {"，": ",", "。": ".", "：": ":", "；": ";", "“": "\"", "”": "\"", "（": "(", "）": ")", "！": "!", "？": "?"}
EN_PUNCT = {"'": "’", '"': "”", "-": "–", ",": " ,", ".": ". "}


def t_noise(c, rng):
    c = c.copy()
    idx = c.text_idx()
    ops = Counter()
    for _ in range(rng.randint(3, 8)):
        i = rng.choice(idx)
        k, t = c.blocks[i]
        op = rng.choice(["space", "punct", "width"])
        if op == "width":
            spots = [j for j, ch in enumerate(t) if ch in WIDTH or ch in NARROW]
            if spots:
                j = rng.choice(spots)
                t = t[:j] + (WIDTH.get(t[j]) or NARROW[t[j]]) + t[j + 1:]
            else:
                op = "space"
        if op == "punct":
            table = ZH_PUNCT if c.lang == "zh" else EN_PUNCT
            spots = [j for j, ch in enumerate(t) if ch in table]
            if spots:
                j = rng.choice(spots)
                t = t[:j] + table[t[j]] + t[j + 1:]
            else:
                op = "space"
        if op == "space":
            j = rng.randrange(1, max(2, len(t)))
            if c.lang == "en" and t[j - 1:j] == " ":
                t = t[:j] + " " + t[j:]
            else:
                t = t[:j] + rng.choice([" ", "\u3000" if c.lang == "zh" else "  ", "\u00a0"]) + t[j:]
        c.blocks[i] = (k, t)
        ops[op] += 1
    return c, ",".join(f"{k}:{v}" for k, v in sorted(ops.items()))


def t_edition(c, rng, base):
    """A poem in its other edition (御定全唐詩, or simplified characters); news in
    traditional characters."""
    c = c.copy()
    ed = base.extra.get("edition")
    if c.genre == "poem" and ed and rng.random() < 0.8:
        c.title, c.author = ed["title"], ed["author"]
        c.blocks = [("verse", x) for x in ed["lines"]]
        return c, "yuding"
    conv = to_simp if c.script == "t" else to_trad
    c.blocks = [(k, conv(t)) if k in ("p", "verse") else (k, t) for k, t in c.blocks]
    c.title = conv(c.title)
    c.author = conv(c.author) if c.author else c.author
    c.script = "s" if c.script == "t" else "t"
    return c, "t2s" if c.script == "s" else "s2t"


# ---------------------------------------------------------------------------------------
# Rendering: a page's HTML as its server writes it, line by line


def esc(s):
    return html.escape(s, quote=False)


def attr(s):
    return html.escape(s, quote=True)


def nav_html(host, items):
    links = [f'<a href="/{attr(host.bare.split(".")[0])}/{i}/">{esc(x)}</a>' for i, x in enumerate(items)]
    sep = host.nav_sep
    if not sep.strip():
        return (" " if sep else "").join(links)
    if " " in sep:
        return f" {esc(sep.strip())} ".join(links)
    return f'<span class="sep">{esc(sep.strip())}</span>'.join(links)


def box_lines(cls, head_tag, head, items, one_line):
    """A box of linked headlines: one source line, or a line per element."""
    li = [f'<li><a href="{attr(href)}">{esc(t)}</a></li>' for t, href in items]
    parts = [f'<div class="{cls}">', f"<{head_tag}>{esc(head)}</{head_tag}>", "<ol>" if cls == "hot" else "<ul>",
             *li, "</ol>" if cls == "hot" else "</ul>", "</div>"]
    return ["".join(parts)] if one_line else parts


def render(page):
    """The page's HTML source as a list of lines."""
    h, c, mode = page["host"], page["content"], page["mode"]
    zh, style, parts = h.lang == "zh", h.style, dict(h.parts)
    ind = "  " if style["indent"] else ""
    if mode == "print":
        for k in ("topbar", "crumb", "share", "prevnext", "hot", "related", "comments", "newsletter"):
            parts[k] = False
    elif mode in ("amp", "mobile"):
        for k in ("topbar", "related", "newsletter") + (("share",) if mode == "amp" else ("comments",)):
            parts[k] = False
    title = h.title_fmt.format(t=c.title, s=h.name, c=page["cat"])
    out = ["<!DOCTYPE html>", f'<html lang="{("zh-Hant" if h.trad else "zh-CN") if zh else "en"}">']
    head = ["<head>", '<meta charset="utf-8">', f"<title>{esc(title)}</title>",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f'<link rel="stylesheet" href="/static/{h.hid % 7}/site.css">']
    if mode == "amp":
        head.append(f'<link rel="canonical" href="{attr(page["canonical"])}">')
    if h.hid % 2:
        head.append(f"<script>var _hmt=_hmt||[];(function(){{var s=document.createElement('script');s.src='//stat.{h.bare}/c.js?{h.hid}';}})();</script>")
    head.append("</head>")
    out += ["".join(head)] if style["header_one_line"] else head
    out.append(f'<body class="{("article" if h.genre != "poem" else "shiwen")}-page">')
    top = []
    if parts["topbar"]:
        d = page["crawl"]
        bar = h.topbar.format(date=f"{d.year}年{d.month}月{d.day}日" if zh else f"{d:%A, %B} {d.day}, {d.year}",
                              wd="一二三四五六日"[d.weekday()])
        top.append(f'<div class="topbar">{esc(bar)}</div>')
    logo = f'<header><a class="logo" href="/">{esc(h.name)}</a>'
    if parts["slogan"]:
        logo += f'<span class="slogan">{esc(h.slogan)}</span>'
    top.append(logo + "</header>")
    nav = h.nav[:5] if mode in ("amp", "mobile") else h.nav
    if mode != "print":
        if style["nav_list"]:
            top += ['<ul class="nav">'] + [f'{ind}<li><a href="/c{i}/">{esc(x)}</a></li>' for i, x in enumerate(nav)] + ["</ul>"]
        else:
            top.append(f'<nav class="menu">{nav_html(h, nav)}</nav>')
    out += ["".join(x.strip() for x in top)] if style["header_one_line"] else top
    if parts["crumb"]:
        out.append(f'<div class="crumb">{esc(h.crumb.format(c=page["cat"], s=h.name))}</div>')
    out.append('<div class="wrap"><div class="main">' if style["header_one_line"] else '<div class="wrap">')
    if not style["header_one_line"]:
        out.append(f'{ind}<div class="main">')
    out.append(f"{ind}<h1>{esc(c.title)}</h1>")
    if c.genre == "poem" and c.author:
        out.append(f'{ind}<p class="author">{esc(h.poet_fmt.format(a=c.author))}</p>')
    if parts["byline"]:
        who = c.author if c.genre != "poem" and c.author else (h.name if zh else "Staff")
        line = h.byline.format(a=who, d=h.fmt_date(c.date), src=page["source_name"])
        views = h.views_fmt.format(n=f"{page['views']:,}" if not zh and h.hid % 3 == 0 else page["views"])
        if parts["views"] and not h.views_apart:
            line += views
        out.append(f'{ind}<div class="info">{esc(line)}</div>')
        if parts["views"] and h.views_apart:
            out.append(f'{ind}<div class="count">{esc(views.strip(" |·｜　"))}</div>')
    share = f'{ind}<div class="share">{esc(h.share)}</div>'
    if parts["share"] and parts["share_top"]:
        out.append(share)
    body = []
    if page.get("attribution") and page["attribution_pos"] == "top":
        body.append(f'<p class="from">{esc(page["attribution"])}</p>')
    blocks = list(c.blocks)
    if page.get("promo"):
        at = min(page["promo_at"], len(blocks))
        blocks.insert(at, ("promo", page["promo"]))
    verses = [t for k, t in blocks if k == "verse"]
    if verses and style["verse_br"]:
        # One element of lines broken by <br>, on one source line or a line per verse.
        joiner = "<br>" if style["body_one_line"] else "<br>\n" + ind * 2
        body.append('<div class="poem">' + joiner.join(esc(t) for t in verses) + "</div>")
        blocks = [b for b in blocks if b[0] != "verse"]
    for k, t in blocks:
        if k in ("p", "verse"):
            body.append(f"<p>{esc(t)}</p>")
        elif k == "ad":
            body.append(f'<div class="ad"><p>{esc(t)}</p></div>')
        elif k == "promo":
            body.append(f'<p class="{h.promo_cls}">{esc(t)}</p>')
        elif k == "more":
            label = ("阅读全文" if zh else "Continue reading") if h.hid % 2 else ("点击查看全文>>" if zh else "Read the full story »")
            body.append(f'<p class="more"><a href="{attr(page["more_href"])}">{esc(label)}</a></p>')
    if page.get("attribution") and page["attribution_pos"] == "bottom":
        body.append(f'<p class="from">{esc(page["attribution"])}</p>')
    if mode == "print":
        body.append(f'<p class="print-url">{esc(("本文链接：" if zh else "Printed from ") + page["canonical"])}</p>')
    if style["body_one_line"]:
        out.append(f'{ind}<div class="content">' + "".join(body) + "</div>")
    else:
        out += [f'{ind}<div class="content">'] + [ind * 2 + b for b in body] + [f"{ind}</div>"]
    notices = [f'{ind}<div class="statement">{esc(n)}</div>' for n in h.notices]
    if h.notice_at == "body":
        out += notices
    if parts["editor"]:
        names = ZH_NAMES if zh else EN_NAMES
        out.append(f'{ind}<div class="editor">{esc(h.editor.format(a=names[h.hid % len(names)], b=names[(h.hid + 3) % len(names)]))}</div>')
    if parts["comments"]:
        out.append(f'{ind}<div class="cmt">{esc(h.comments.format(n=page["comments"]))}</div>')
    if parts["share"] and not parts["share_top"]:
        out.append(share)
    if parts["prevnext"] and page.get("prevnext"):
        a, b = page["prevnext"]
        pn = [f'<div class="prev"><a href="#">{esc(h.prev_next[0].format(t=a))}</a></div>',
              f'<div class="next"><a href="#">{esc(h.prev_next[1].format(t=b))}</a></div>']
        out += [ind + "".join(pn)] if style["box_one_line"] else [ind + x for x in pn]
    out.append(f"{ind}</div>")
    if parts["related"] and page.get("related"):
        out += box_lines("related", "h4", h.related_head, page["related"], style["box_one_line"])
    if parts["hot"] and page.get("hot"):
        out += box_lines("hot", "h3", h.hot_head, page["hot"], style["box_one_line"])
    out.append("</div>")
    if h.notice_at == "foot":
        out += [n.strip() for n in notices]
    if parts["newsletter"]:
        out.append(f'<div class="subscribe"><p>{esc(h.newsletter)}</p></div>')
    if mode != "print":
        foot = ["<footer>"] + [f"<p>{esc(x)}</p>" for x in h.footer] + ["</footer>"]
        out += ["".join(foot)] if style["footer_one_line"] else foot
    if h.notice_at == "end":
        out += [n.strip() for n in notices]
    out.append("</body>")
    out.append("</html>")
    return out


BLOCK_TAGS = {"address", "article", "aside", "blockquote", "br", "dd", "details", "dialog", "div", "dl", "dt",
              "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
              "hr", "li", "main", "nav", "ol", "option", "p", "pre", "section", "summary", "table", "td", "th",
              "title", "tr", "ul", "body", "html", "caption", "center", "menu"}
SKIP_TAGS = {"script", "style", "noscript", "template", "iframe", "object"}


class Visible(HTMLParser):
    """A page's visible text: its title, then one line per block element (the block
    elements neardup's WARC reader breaks lines at); whitespace collapsed in a line."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title, self.lines, self.cur, self.skip, self.where = [], [], [], 0, None

    def flush(self):
        line = re.sub(r"[ \t\r\n\f]+", " ", "".join(self.cur)).strip(" \t\r\n\f")
        if line:
            self.lines.append(line)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP_TAGS:
            self.skip += 1
        elif tag in ("title", "head"):
            self.where = tag
        elif tag in BLOCK_TAGS:
            self.flush()

    def handle_endtag(self, tag):
        if tag in SKIP_TAGS:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.where = "head"
        elif tag == "head":
            self.where = None
        elif tag in BLOCK_TAGS:
            self.flush()

    def handle_data(self, data):
        if self.skip:
            return
        if self.where == "title":
            self.title.append(data)
        elif self.where is None:
            self.cur.append(data)

    def text(self):
        self.flush()
        title = re.sub(r"[ \t\r\n\f]+", " ", "".join(self.title)).strip()
        return "\n".join(([title] if title else []) + self.lines)


def visible_text(source):
    p = Visible()
    p.feed(source)
    p.close()
    return p.text()


# ---------------------------------------------------------------------------------------
# The set

GENRE_SHARES = {"zh": {"news": 0.48, "brief": 0.20, "court": 0.16, "poem": 0.16}, "en": {"news": 0.72, "brief": 0.28}}
KIND_WEIGHTS = {
    "news": {"mirror": 12, "url-variant": 12, "recrawl": 12, "edit": 14, "truncate": 8, "reorder": 6, "ads": 8,
             "noise": 8, "repost": 10, "edition": 3},
    "brief": {"mirror": 14, "url-variant": 12, "recrawl": 12, "edit": 14, "ads": 6, "noise": 8, "repost": 12},
    "court": {"mirror": 14, "url-variant": 12, "recrawl": 14, "noise": 8, "repost": 10, "ads": 4},
    "poem": {"mirror": 12, "url-variant": 10, "recrawl": 10, "edition": 18, "noise": 6, "truncate": 3, "repost": 8,
             "edit": 6},
}
# Chinese news and briefs are copied with small character edits more often (reposts made to
# look original): their `edit` weight instead of the genre's.
ZH_EDIT_WEIGHT = 24
COPIES = [1, 1, 1, 1, 2, 2, 2, 3, 3, 4]
LONE_ARTICLE = 0.3  # of the hosts of one original not otherwise copied, those crawled at 3-4 URLs
CLUSTERED_SHARE = 0.38  # of the pages that are not hard negatives, those in clusters of two or more
CRAWL_START = dt.datetime(2024, 3, 1)
CRAWL_DAYS = 100


def host_size(rng, genre):
    """Originals a host holds: a long tail."""
    u = rng.random()
    if genre == "poem":  # poetry sites are small
        return rng.choice([1, 1, 2, 2, 2, 3, 3]) if u < 0.6 else rng.randint(4, 9) if u < 0.9 else rng.randint(10, 30)
    if u < 0.45:
        return rng.choice([1, 1, 2, 2, 2, 3, 3])
    if u < 0.73:
        return rng.randint(4, 9)
    if u < 0.92:
        return rng.randint(10, 30)
    return rng.randint(31, 70)


def promo_text(lang, rng):
    """A promotional paragraph of 60 to 200 characters."""
    while True:
        if lang == "zh":
            b, p = rng.choice(ZH_BRANDS), rng.choice(ZH_PRODUCTS)
            t = rng.choice([
                "{b}{p}限时特惠：即日起至{m}月{d}日，{o}，{x}。登录官方商城或拨打热线{tel}即可预约，名额有限，先到先得。",
                "【推广】{b}推出全新{p}，{f}，{o}。现在关注“{b}服务号”，还可免费领取价值{n}元的{g}一份。",
                "想要{goal}？{b}{p}{f}，已帮助超过{n}万名用户{res}。点击下方链接免费试用七天，不满意随时退款。",
                "本地读者专享：凭本页截图到{b}各门店购买{p}，{o}，另有{g}相送，活动解释权归商家所有。",
            ]).format(b=b, p=p, m=rng.randint(1, 12), d=rng.randint(1, 28), n=rng.randint(2, 99),
                      tel=f"400-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}",
                      o=rng.choice([f"全场{rng.randint(5, 9)}折", f"满{rng.randint(2, 9)}00减{rng.randint(2, 9)}0", "买一送一", "免费上门安装"]),
                      x=rng.choice(["前100名下单再送精美礼品", "支持分期付款", "全国包邮"]),
                      f=rng.choice(["采用第五代过滤技术", "名师一对一辅导", "三年质保", "德国原装进口机芯", "零基础也能学会"]),
                      g=rng.choice(["保温杯", "体验课", "清洁套装", "抵用券"]),
                      goal=rng.choice(["告别失眠", "轻松学会口语", "让家里空气更清新", "提高孩子成绩"]),
                      res=rng.choice(["解决了烦恼", "达成了目标", "改善了生活"]))
        else:
            b, p = rng.choice(EN_BRANDS), rng.choice(EN_PRODUCTS)
            t = rng.choice([
                "Sponsored: the {b} {p} {f}. {o} when you sign up before {mon} {d} - visit our partner page to claim your discount.",
                "Looking to {goal}? {b}'s {p} has helped more than {n},000 customers {res}. Try it free for 14 days, no credit card required.",
                "Partner content: {b} is offering our readers {o} on its {p}. {F}, and every order ships free within two business days.",
                "Readers of this site can now get {o} on the {b} {p}, which {f}. The offer ends soon, so act today.",
            ]).format(b=b, p=p, d=rng.randint(1, 28), n=rng.randint(2, 99),
                      mon=rng.choice(["May", "June", "July", "August"]),
                      o=rng.choice([f"{rng.randint(10, 50)}% off", "a free first month", "a $50 gift card", "free installation"]),
                      f=rng.choice(["comes with a five-year warranty", "was rated best in class", "takes minutes to set up"]),
                      F=rng.choice(["It comes with a five-year warranty", "It was rated best in class", "It takes minutes to set up"]),
                      goal=rng.choice(["cut your energy bill", "learn a language fast", "sleep better", "retire early"]),
                      res=rng.choice(["do exactly that", "save hundreds", "reach their goals"]))
        if 60 <= len(t) <= 200:
            return t


class Builder:
    def __init__(self, args):
        self.args = args
        self.rng = Random(f"siteset:{args.mix}:{args.seed}")
        self.pages, self.negatives, self.hosts, self.taken = [], [], [], set()
        self.truth_n = 0
        self.langs = ["en", "zh"] if args.mix == "mixed" else ["zh"]

    # -- plan and base documents -----------------------------------------------------

    def plan(self):
        n = self.args.pages
        share = {"en": 0.5, "zh": 0.5} if self.args.mix == "mixed" else {"zh": 1.0}
        mean = sum(COPIES) / len(COPIES)
        self.neg_plan, self.targets, self.clusters = {}, {}, {}
        for lang in self.langs:
            p = n * share[lang]
            neg = {"briefs-template": max(2, round(p / 150)), "same-event": max(1, round(p / 400))}
            if lang == "zh":
                neg.update({"poems-small-host": max(2, round(p / 120)), "court-docket": max(2, round(p / 220)),
                            "court-parties": max(2, round(p / 220))})
            self.neg_plan[lang] = neg
            neg_pages = 2 * sum(neg.values()) + (neg.get("poems-small-host", 0) // 2)
            rest = p - neg_pages
            clusters = round(CLUSTERED_SHARE * rest / (1 + mean))
            originals = rest - clusters * mean
            self.clusters[lang] = clusters
            self.targets[lang] = {g: round(originals * s) for g, s in GENRE_SHARES[lang].items()}

    def load(self):
        rng, data = self.rng, Path(self.args.data)
        self.pools, self.shortfall, self.events = {}, {}, {}
        self.unused = defaultdict(list)  # (lang, genre) -> base documents left over (headlines of other pages)
        for lang in self.langs:
            d = Deduper()
            t, neg = dict(self.targets[lang]), self.neg_plan[lang]
            pools = {g: [] for g in t}
            if lang == "en":
                r_news, r_briefs = load_reuters(data)
                news = r_news + load_bbc(data)
                briefs, court, poems = r_briefs, [], []
            else:
                s_news, s_briefs = load_sogou(data, rng)
                news, briefs = load_thucnews(data, rng) + s_news, s_briefs
                court, poems = load_court(data, rng), load_poems(data, rng)
                # Court openings that differ only in numbers, or in parties, reserved as pairs first.
                rng.shuffle(court)
                self.court_negs = self.court_pairs(court, neg["court-docket"], neg["court-parties"], d)
                court = [b for b in court if "paired" not in b.extra]
            for docs in (news, briefs, poems):
                rng.shuffle(docs)
            # Same-event material: a source of six or more paragraphs and two fillers.
            self.events[lang] = []
            for _ in range(neg["same-event"]):
                src = next((b for b in news if len(b.paras) >= 6 and "used" not in b.extra), None)
                if src is None:
                    break
                src.extra["used"] = True
                fill = [b for b in news if "used" not in b.extra and len(b.paras) >= 2][:2]
                for b in fill:
                    b.extra["used"] = True
                if len(fill) == 2 and all(d.add(b.text()) for b in [src] + fill):
                    self.events[lang].append((src, fill))
            news = [b for b in news if "used" not in b.extra]
            # Three in ten news documents at most are left for briefs (their leads).
            want = {"news": min(t["news"], round(0.7 * len(news))), "brief": t["brief"] + 2 * neg["briefs-template"]}
            if lang == "zh":
                want["court"] = t["court"]
                want["poem"] = t["poem"] + 3 * neg["poems-small-host"]
            taken = 0
            for b in news:
                if taken < want["news"] and d.add(b.title + "\n" + b.text()):
                    pools["news"].append(b)
                    taken += 1
                elif taken >= want["news"]:
                    self.unused[(lang, "news")].append(b)
            # Briefs: short items, then the leads of news documents left over.
            leads = []
            for b in self.unused[(lang, "news")]:
                if lang == "zh":
                    s = zh_sentences(b.paras[0])
                    lead = "".join(s[:2]) if len("".join(s[:2])) <= 160 else s[0]
                else:
                    lead = b.paras[0]
                if 40 <= len(lead) <= (160 if lang == "zh" else 320):
                    leads.append(Base(b.key + ":lead", lang, "brief", b.source, b.title, [lead], b.date,
                                      extra={"lead_of": b.key}))
            rng.shuffle(leads)
            for b in briefs + leads:
                if len(pools["brief"]) < want["brief"] and d.add(b.title + "\n" + b.text()):
                    pools["brief"].append(b)
            short = {g: max(0, t[g] + (want[g] - t[g] if g == "brief" else 0) - len(pools[g])) for g in ("news", "brief")}
            if lang == "zh":
                # What news and briefs lack, court openings and poems make up.
                want["court"] += sum(short.values()) - sum(short.values()) // 3
                want["poem"] += sum(short.values()) // 3
                for b in court:
                    if len(pools["court"]) >= want["court"]:
                        self.unused[(lang, "court")].append(b)
                    elif d.add(b.text()):
                        pools["court"].append(b)
                for b in poems:
                    if len(pools["poem"]) >= want["poem"]:
                        self.unused[(lang, "poem")].append(b)
                        if len(self.unused[(lang, "poem")]) > 400:
                            break
                    elif d.add(b.title + "\n" + b.text()):
                        pools["poem"].append(b)
            for docs in pools.values():
                for b in docs:
                    if b.author is None:
                        b.author = rng.choice(ZH_NAMES if lang == "zh" else EN_NAMES)
                    if b.date is None:
                        b.date = dt.datetime(2004, 1, 1) + dt.timedelta(days=rng.randrange(700), minutes=rng.randrange(1440))
            self.pools[lang] = pools
            self.shortfall[lang] = short

    def court_pairs(self, court, n_docket, n_parties, d):
        """Pairs of court openings: equal but for their numbers (docket numbers, dates), and
        of one formula with other parties (5-gram Jaccard 0.5 to 0.9). Both sides are kept
        by the deduplication, which then drops every other opening close to them."""
        by_mask = defaultdict(list)
        for b in court:
            if len(b.paras[0]) <= 320:
                by_mask[re.sub(r"[0-9０-９]+", "#", b.paras[0])].append(b)
        out = []
        groups = [g for g in by_mask.values() if len(g) >= 2 and re.search(r"[0-9０-９]", g[0].paras[0])]
        for g in groups:
            if sum(1 for x in out if x[2] == "court-docket") >= n_docket:
                break
            a, b = g[0], g[1]
            if d.add(a.text()):
                d.add(b.text(), force=True)
                a.extra["paired"] = b.extra["paired"] = True
                out.append((a, b, "court-docket"))
        short = [b for b in court if len(b.paras[0]) <= 200 and "paired" not in b.extra]
        tries = 0
        while sum(1 for x in out if x[2] == "court-parties") < n_parties and tries < 400:
            tries += 1
            a = short[tries % len(short)]
            if "paired" in a.extra:
                continue
            ga = grams(a.text())
            best = None
            for b in short[tries % len(short) + 1:tries % len(short) + 400]:
                if "paired" in b.extra or re.sub(r"\d+", "#", b.paras[0]) == re.sub(r"\d+", "#", a.paras[0]):
                    continue
                gb = grams(b.text())
                j = len(ga & gb) / max(1, len(ga | gb))
                if 0.5 <= j < 0.9:
                    best = b
                    break
            if best is not None and d.add(a.text()):
                d.add(best.text(), force=True)
                a.extra["paired"] = best.extra["paired"] = True
                out.append((a, best, "court-parties"))
        return out

    # -- hosts -----------------------------------------------------------------------

    def new_host(self, lang, genre, trad=False):
        h = Host(len(self.hosts) + 1, lang, genre, self.rng, self.taken, trad=trad)
        self.hosts.append(h)
        return h

    def make_hosts(self):
        rng = self.rng
        self.by_genre = defaultdict(list)
        for lang in self.langs:
            for genre, docs in self.pools[lang].items():
                need = len(docs) - (2 * self.neg_plan[lang]["briefs-template"] if genre == "brief" else 0)
                need -= 3 * self.neg_plan[lang].get("poems-small-host", 0) if genre == "poem" else 0
                while need > 0:
                    trad = genre == "poem" and rng.random() < 0.4
                    h = self.new_host(lang, genre, trad)
                    h.capacity = min(need, host_size(rng, genre))
                    need -= h.capacity
                    self.by_genre[(lang, genre)].append(h)
            if lang == "zh":
                n = max(2, len(self.by_genre[("zh", "news")]) // 10)
                self.trad_news = [self.new_host("zh", "news", trad=True) for _ in range(n)]
        self.assign_notices()

    def assign_notices(self):
        rng = self.rng
        self.notice_share = {}
        for lang in self.langs:
            hosts = [h for h in self.hosts if h.lang == lang]
            # Half the pool in a draw, each on 5 to 40% of the hosts (most on fewer).
            for text in rng.sample(NOTICES[lang], len(NOTICES[lang]) // 2):
                share = 0.05 + 0.35 * rng.random() ** 2
                self.notice_share[text] = share
                for h in hosts:
                    if len(h.notices) < 2 and rng.random() < share:
                        h.notices.append(to_trad(text) if h.trad else text)

    def pick_host(self, lang, genre, exclude=(), trad=None):
        hosts = [h for h in self.by_genre[(lang, genre)] if h.hid not in exclude and not h.neg_only
                 and (trad is None or h.trad == trad)]
        if not hosts:
            hosts = [h for h in self.by_genre[(lang, genre)] if h.hid not in exclude and not h.neg_only]
        if not hosts:  # a new site of the genre
            h = self.new_host(lang, genre, trad=bool(trad))
            self.by_genre[(lang, genre)].append(h)
            return h
        return self.rng.choices(hosts, [max(1, h.capacity) ** 0.6 for h in hosts])[0]

    # -- pages -----------------------------------------------------------------------

    def new_truth(self):
        self.truth_n += 1
        return f"s{self.truth_n:05d}"

    def crawl_time(self):
        return CRAWL_START + dt.timedelta(seconds=self.rng.randrange(CRAWL_DAYS * 86400))

    def slug(self, c):
        if c.lang == "en":
            return "-".join(re.findall(r"[a-z0-9]+", c.title.lower())[:7]) or "story"
        return ""

    def add_page(self, host, content, kind, truth, base, url=None, aid=None, **extra):
        r = self.rng
        cat = extra.pop("cat", None) or (base.extra.get("section") if host.genre == "news" else None)
        if cat not in host.categories:
            cat = r.choice(host.categories)
        if url is None:
            aid = host.new_id()
            url = host.url(aid, content.date, self.slug(content), cat)
        page = {"host": host, "content": content, "kind": kind, "truth": truth, "base": base, "url": url, "aid": aid,
                "lang": content.lang, "genre": content.genre, "source": base.source, "crawl": self.crawl_time(),
                "views": int(r.lognormvariate(6, 1.4)) + 1, "comments": int(r.lognormvariate(1.5, 1.2)),
                "mode": "normal", "variant": None, "derived_from": None, "canonical": url, "cat": cat,
                "source_name": host.name, "promo": None, "index": len(self.pages)}
        page.update(extra)
        self.pages.append(page)
        host.pages.append(page)
        return page

    def original(self, base, host, kind="original"):
        return self.add_page(host, Content.of(base), kind, self.new_truth(), base)

    def place_originals(self):
        self.originals, self.neg_docs = {lang: [] for lang in self.langs}, {}
        for lang in self.langs:
            for genre, docs in self.pools[lang].items():
                reserve = 2 * self.neg_plan[lang]["briefs-template"] if genre == "brief" else 0
                reserve += 3 * self.neg_plan[lang].get("poems-small-host", 0) if genre == "poem" else 0
                self.neg_docs[(lang, genre)] = docs[:reserve]
                docs = docs[reserve:]
                at = 0
                for h in self.by_genre[(lang, genre)]:
                    for b in docs[at:at + h.capacity]:
                        self.originals[lang].append(self.original(b, h))
                    at += h.capacity

    def kinds_for(self, p, n):
        c, base = p["content"], p["base"]
        ok = dict(KIND_WEIGHTS[c.genre])
        if c.lang == "en":
            ok.pop("edition", None)
        elif c.genre in ("news", "brief"):
            ok["edit"] = ZH_EDIT_WEIGHT
        idx = c.text_idx()
        if len(idx) < 3:
            ok.pop("reorder", None)
        text = " ".join(t for _, t in c.blocks)
        sents = len(zh_sentences(text) if c.lang == "zh" else en_sentences(text))
        if (c.genre == "poem" and len(idx) < 4) or (len(idx) < 2 and sents < 2):
            ok.pop("truncate", None)
        kinds = []
        for _ in range(n):
            names = [k for k in ok if k not in kinds]
            if not names:
                break
            kinds.append(self.rng.choices(names, [ok[k] for k in names])[0])
        return kinds

    def copy(self, o, kind):
        r = self.rng
        oh, oc, base = o["host"], o["content"], o["base"]
        common = dict(truth=o["truth"], base=base, derived_from=o["index"])
        if kind == "recrawl":
            p = self.add_page(oh, oc.copy(), kind, url=o["url"], aid=o["aid"], cat=o["cat"], **common)
            p["crawl"] = o["crawl"] + dt.timedelta(days=r.randint(5, 60), seconds=r.randrange(86400))
            p["views"] = int(o["views"] * r.uniform(1.1, 4.0)) + r.randint(1, 90)
            p["comments"] = o["comments"] + r.randint(0, 12)
            p["recrawl_of"] = o["index"]
            return p
        if kind == "url-variant":
            variant = r.choice(["utm", "utm", "share", "session", "index", "mobile", "amp", "print"])
            u, mode = o["url"], "normal"
            path = "/" + u.split("/", 3)[3]
            q = "&" if "?" in u else "?"
            if variant == "utm":
                u += q + r.choice(["utm_source=wechat&utm_medium=social", "utm_source=newsletter&utm_campaign=daily",
                                   f"utm_source=feed&utm_medium=rss&utm_id={r.randint(100, 999)}"])
            elif variant == "share":
                u += q + r.choice(["from=timeline&isappinstalled=0", f"spm=a2c{r.randint(1, 9)}.{r.randint(10000, 99999)}.0.0",
                                   f"share_token={r.getrandbits(64):x}", "ref=home"])
            elif variant == "session":
                u += q + f"sid={r.getrandbits(80):x}"
            elif variant == "index":
                u = u + "index.html" if u.endswith("/") else u + q + "page=1"
            elif variant == "mobile":
                u, mode = f"https://m.{oh.bare}{path}", "mobile"
            elif variant == "amp":
                u, mode = f"https://{oh.domain}/amp{path}", "amp"
            else:
                u, mode = f"https://{oh.domain}/print/{o['aid']}.html", "print"
            return self.add_page(oh, oc.copy(), kind, url=u, aid=o["aid"], mode=mode, variant=variant,
                                 canonical=o["url"], cat=o["cat"], **common)
        if kind == "mirror":
            h = self.pick_host(o["lang"], oc.genre, exclude=(oh.hid,))
            c = oc.copy()
            c.date = oc.date + dt.timedelta(hours=r.randint(0, 72))
            return self.add_page(h, c, kind, source_name=oh.name if r.random() < 0.5 else h.name, **common)
        if kind == "repost":
            h = self.pick_host(o["lang"], oc.genre, exclude=(oh.hid,))
            c = oc.copy()
            zh = o["lang"] == "zh"
            variant = "same-title"
            if r.random() < 0.4:
                c.title = r.choice([f"【转载】{c.title}", f"{c.title}（转）", f"转：{c.title}"] if zh else
                                   [f"{c.title} (via {oh.name})", f"Repost: {c.title}"])
                variant = "new-title"
            line = r.choice([f"本文转自{oh.name}，原文链接：{o['url']}", f"来源：{oh.name}　转载请注明出处", f"原载于{oh.name}"] if zh else
                            [f"This article first appeared on {oh.name}.", f"Originally published at {o['url']}",
                             f"Republished with permission of {oh.name}."])
            return self.add_page(h, c, kind, attribution=to_trad(line) if h.trad else line,
                                 attribution_pos=r.choice(["top", "bottom"]), variant=variant, source_name=oh.name, **common)
        if kind == "edition":
            c, variant = t_edition(oc, r, base)
            if c.genre == "news":
                h = r.choice(self.trad_news)
            else:
                h = self.pick_host("zh", "poem", exclude=(oh.hid,), trad=(c.script == "t"))
            return self.add_page(h, c, kind, variant=variant, **common)
        fn = {"edit": t_edit, "truncate": t_truncate, "reorder": t_reorder, "ads": t_ads, "noise": t_noise}[kind]
        c, variant = fn(oc, r)
        h = oh if r.random() < 0.35 else self.pick_host(o["lang"], oc.genre, exclude=(oh.hid,))
        p = self.add_page(h, c, kind, variant=variant, cat=o["cat"] if h is oh else None, **common)
        if kind == "truncate":
            p["more_href"] = o["url"]
        return p

    def make_copies(self):
        rng = self.rng
        self.copy_pairs = []
        for lang in self.langs:
            origs = list(self.originals[lang])
            chosen = rng.sample(origs, min(self.clusters[lang], len(origs)))
            picked = {o["index"] for o in chosen}
            for o in chosen:
                for kind in self.kinds_for(o, rng.choice(COPIES)):
                    p = self.copy(o, kind)
                    self.copy_pairs.append((p["index"], o["index"], kind, lang))
            # A site of one article is often crawled at several of its addresses: the host
            # then holds that article only (the lone-article mechanism).
            for o in origs:
                if o["host"].capacity == 1 and o["index"] not in picked and rng.random() < LONE_ARTICLE:
                    for kind in rng.sample(["url-variant", "url-variant", "recrawl"], rng.randint(2, 3)):
                        p = self.copy(o, kind)
                        self.copy_pairs.append((p["index"], o["index"], kind, lang))

    # -- hard negatives --------------------------------------------------------------

    def negative(self, a, b, kind):
        self.negatives.append((a["index"], b["index"], kind))

    def make_negatives(self):
        rng = self.rng
        for lang in self.langs:
            plan = self.neg_plan[lang]
            briefs = list(self.neg_docs[(lang, "brief")])
            hosts = self.by_genre[(lang, "brief")] + self.by_genre[(lang, "news")]
            for _ in range(plan["briefs-template"]):
                if len(briefs) < 2:
                    break
                h = rng.choices(hosts, [max(1, x.capacity) ** 0.5 for x in hosts])[0]
                a, b = self.original(briefs.pop(), h, "briefs-template"), self.original(briefs.pop(), h, "briefs-template")
                self.negative(a, b, "briefs-template")
            if lang == "zh":
                poems = list(self.neg_docs[("zh", "poem")])
                for _ in range(plan["poems-small-host"]):
                    h = self.new_host("zh", "poem", trad=rng.random() < 0.4)
                    h.neg_only = True
                    self.by_genre[("zh", "poem")].append(h)
                    for text, share in self.notice_share.items():
                        if HAN_RE.search(text) and len(h.notices) < 2 and rng.random() < share:
                            h.notices.append(to_trad(text) if h.trad else text)
                    made = [self.original(poems.pop(), h, "poems-small-host") for _ in range(rng.choice([2, 2, 3])) if poems]
                    for i in range(len(made)):
                        for j in range(i + 1, len(made)):
                            self.negative(made[i], made[j], "poems-small-host")
                for a, b, kind in self.court_negs:
                    h = self.pick_host("zh", "court")
                    pa = self.original(a, h, kind)
                    pb = self.original(b, h if rng.random() < 0.75 else self.pick_host("zh", "court", exclude=(h.hid,)), kind)
                    self.negative(pa, pb, kind)
            for src, fill in self.events.get(lang, []):
                self.same_event(src, fill)

    def same_event(self, s, fill):
        rng = self.rng
        idx = list(range(len(s.paras)))
        halves = [idx[0::2], idx[1::2]]
        made = []
        for k, (half, f) in enumerate(zip(halves, fill)):
            paras = [s.paras[i] for i in half]
            extra = f.paras[:rng.randint(1, min(3, len(f.paras)))]
            paras = paras[:1] + extra + paras[1:] if rng.random() < 0.5 else paras + extra
            if s.lang == "zh":
                title = s.title if k == 0 else rng.choice([f"追踪：{s.title}", f"{s.title}（综合）", f"关注｜{s.title}"])
            else:
                title = s.title if k == 0 else rng.choice([f"Update: {s.title}", f"{s.title}: what we know", f"Analysis - {s.title}"])
            b = Base(f"{s.key}:event{k}", s.lang, "news", s.source, title, paras,
                     s.date + dt.timedelta(hours=rng.randint(1, 30)), rng.choice(ZH_NAMES if s.lang == "zh" else EN_NAMES))
            made.append(self.original(b, self.pick_host(s.lang, "news"), "same-event"))
        self.negative(made[0], made[1], "same-event")

    # -- promotions ------------------------------------------------------------------

    def assign_promos(self):
        rng = self.rng
        n = max(3, round(self.args.pages / 120))
        self.promos = []
        lang_pages = Counter(p["lang"] for p in self.pages)
        seen = set()
        for k in range(n):
            lang = rng.choices(self.langs, [lang_pages[x] for x in self.langs])[0]
            text = promo_text(lang, rng)
            while text in seen:
                text = promo_text(lang, rng)
            seen.add(text)
            hosts = [h for h in self.hosts if h.lang == lang and h.pages]
            chosen = []
            for _ in range(rng.randint(2, 4)):
                h = rng.choices(hosts, [len(h.pages) ** 0.5 for h in hosts])[0]
                if h not in chosen:
                    chosen.append(h)
            placed = 0
            for h in chosen:
                free = [p for p in h.pages if p["promo"] is None]
                for p in rng.sample(free, min(len(free), rng.randint(1, 3))):
                    shown = to_trad(text) if h.trad else text
                    p["promo"] = shown
                    # Inside the body: after a paragraph but the first (poems: after the verses).
                    idx = p["content"].text_idx()
                    if p["genre"] == "poem" or len(idx) < 2:
                        p["promo_at"] = idx[-1] + 1
                    else:
                        p["promo_at"] = rng.choice(idx[1:] + [idx[-1] + 1])
                    placed += 1
            self.promos.append((text, [h.hid for h in chosen], placed))

    # -- boxes: hot lists, related links, previous and next ---------------------------

    def box_item(self, h, b):
        """A headline as host `h` links it, the same on every page of the host."""
        cache = h.__dict__.setdefault("items", {})
        if b.key not in cache:
            r = self.rng
            if b.genre == "poem":
                text = r.choice([f"《{b.title}》{b.author or ''}", f"{b.title}（{b.author or '佚名'}）"])
            elif r.random() < h.teasers:
                first = b.paras[0]
                if b.lang == "zh":
                    text = first[:r.randint(22, 40)].rstrip("，。、；：") + r.choice(["…", "……", "..."])
                else:
                    text = first[:r.randint(60, 110)].rsplit(" ", 1)[0].rstrip(",;:") + r.choice(["...", "…"])
            else:
                text = b.title
            if h.trad:
                text = to_trad(text)
            slug = "-".join(re.findall(r"[a-z0-9]+", b.title.lower())[:6]) or "a"
            href = h.path(r.randint(10000, 999999), b.date or CRAWL_START, slug, r.choice(h.categories))
            cache[b.key] = (text, href)
        return cache[b.key]

    def fill_boxes(self):
        rng = self.rng
        pool, seen = defaultdict(list), set()
        for p in self.pages:
            if p["truth"] not in seen:
                seen.add(p["truth"])
                pool[(p["lang"], p["genre"])].append(p["base"])
        for key, docs in sorted(self.unused.items()):
            pool[key].extend(docs[:300])
        for h in self.hosts:
            if not h.pages:
                continue
            own = list({p["base"].key: p["base"] for p in h.pages}.values())
            src_pool = pool[(h.lang, h.genre)] or pool[(h.lang, "news")]
            h.hot_days = rng.randint(6, 20)
            cur, h.hot_lists = [], []
            for _ in range((CRAWL_DAYS + 70) // h.hot_days + 1):
                keep = [b for b in cur if rng.random() < 0.5]
                for _ in range(50):
                    if len(keep) >= h.hot_n:
                        break
                    b = rng.choice(own if own and rng.random() < 0.5 else src_pool)
                    if all(b is not x for x in keep):
                        keep.append(b)
                cur = keep
                h.hot_lists.append(list(cur))
        for p in self.pages:
            h, b = p["host"], p["base"]
            w = min(len(h.hot_lists) - 1, (p["crawl"] - CRAWL_START).days // h.hot_days)
            p["hot"] = [self.box_item(h, x) for x in h.hot_lists[w] if x is not b]
            src_pool = pool[(h.lang, h.genre)] or pool[(h.lang, "news")]
            rel = []
            if "recrawl_of" in p:
                before = self.pages[p["recrawl_of"]].get("related_bases", [])
                rel = [x for x in before if rng.random() < 0.5]
            for _ in range(60):
                if len(rel) >= h.related_n:
                    break
                x = rng.choice(src_pool)
                if x is not b and all(x is not y for y in rel):
                    rel.append(x)
            p["related_bases"] = rel
            p["related"] = [self.box_item(h, x) for x in rel]
            others = [q["base"] for q in h.pages if q["base"] is not b] or src_pool
            p["prevnext"] = tuple(self.box_item(h, rng.choice(others))[0] for _ in range(2))

    # -- mechanisms and the negatives they make ------------------------------------------

    def tag_mechanisms(self):
        for p in self.pages:
            h = p["host"]
            tags = []
            if p["promo"]:
                tags.append("promo")
            if h.notices:
                tags.append("notice")
            if len(h.pages) >= 3 and len({q["truth"] for q in h.pages}) == 1:
                tags.append("lone-article")
            if p["content"].chars() < SHORT_CHARS:
                tags.append("short")
            if len(h.pages) <= 3:
                tags.append("small-host")
            boxed = h.parts["hot"] and p["hot"] or h.parts["related"] and p["related"]
            if h.style["box_one_line"] and p["mode"] == "normal" and boxed:
                tags.append("box-line")
            if h.style["header_one_line"] and p["mode"] != "print":
                tags.append("header-line")
            p["mechanisms"] = tags

    def shared_negatives(self):
        """Pairs of singleton pages of different hosts that share only a notice or a promotion
        (short pages first)."""
        rng = self.rng
        size = Counter(p["truth"] for p in self.pages)
        want = max(2, round(self.args.pages / 150))
        for kind, key in (("shared-notice", lambda p: p["host"].notices),
                          ("shared-promo", lambda p: [p["promo"]] if p["promo"] else [])):
            groups = defaultdict(list)
            for p in self.pages:
                if size[p["truth"]] == 1 and p["kind"] == "original":
                    for text in key(p):
                        groups[to_simp(text)].append(p)
            pairs = []
            for text in sorted(groups):
                ps = sorted(groups[text], key=lambda p: (p["content"].chars() >= SHORT_CHARS, rng.random()))
                for i, a in enumerate(ps[:12]):
                    for b in ps[i + 1:12]:
                        if a["host"] is not b["host"]:
                            pairs.append((a["content"].chars() + b["content"].chars() >= 2 * SHORT_CHARS, rng.random(), a, b))
            pairs.sort(key=lambda x: (x[0], x[1]))
            used = set()
            n = 0
            for _, _, a, b in pairs:
                if n >= want:
                    break
                if a["index"] in used or b["index"] in used:
                    continue
                used.update((a["index"], b["index"]))
                self.negative(a, b, kind)
                n += 1

    def build(self):
        self.plan()
        self.load()
        self.make_hosts()
        self.place_originals()
        self.make_copies()
        self.make_negatives()
        self.assign_promos()
        self.fill_boxes()
        self.tag_mechanisms()
        self.shared_negatives()

    # -- output ----------------------------------------------------------------------

    def write(self, out):
        out.mkdir(parents=True, exist_ok=True)
        order = sorted(range(len(self.pages)), key=lambda i: (self.pages[i]["crawl"], i))
        ids = {i: f"<urn:siteset:{n:05d}>" for n, i in enumerate(order, 1)}
        info = (f"software: bench/make_siteset.py\r\nformat: WARC File Format 1.0\r\n"
                f"description: labelled siteset, mix={self.args.mix} seed={self.args.seed}\r\n").encode()
        start = f"{CRAWL_START:%Y-%m-%dT%H:%M:%SZ}"
        warc = [warc_record([("WARC-Type", "warcinfo"), ("WARC-Date", start), ("WARC-Filename", "pages.warc.gz"),
                             ("WARC-Record-ID", "<urn:siteset:warcinfo>"), ("Content-Type", "application/warc-fields")], info)]
        wet = [warc_record([("WARC-Type", "warcinfo"), ("WARC-Date", start), ("WARC-Filename", "pages.wet.gz"),
                            ("WARC-Record-ID", "<urn:siteset:warcinfo-wet>"), ("Content-Type", "application/warc-fields")], info)]
        text_lines, html_lines, mini_lines, truth = [], [], [], []
        host_pages = {h.hid: len(h.pages) for h in self.hosts}
        for i in order:
            p = self.pages[i]
            rid = ids[i]
            source = "\n".join(render(p)) + "\n"
            minified = "".join(x.strip() for x in source.split("\n"))
            text = visible_text(source)
            body = source.encode("utf-8")
            when = p["crawl"]
            http = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
                    f"Date: {when:%a, %d %b %Y %H:%M:%S} GMT\r\nServer: {('nginx', 'Apache', 'openresty')[p['host'].hid % 3]}\r\n"
                    f"Connection: close\r\n\r\n").encode() + body
            wd = f"{when:%Y-%m-%dT%H:%M:%SZ}"
            warc.append(warc_record([("WARC-Type", "response"), ("WARC-Target-URI", p["url"]), ("WARC-Date", wd),
                                     ("WARC-Record-ID", rid), ("WARC-Payload-Digest", sha1_b32(body)),
                                     ("Content-Type", "application/http; msgtype=response")], http))
            tb = text.encode("utf-8")
            wet.append(warc_record([("WARC-Type", "conversion"), ("WARC-Target-URI", p["url"]), ("WARC-Date", wd),
                                    ("WARC-Record-ID", rid), ("WARC-Refers-To", rid), ("WARC-Block-Digest", sha1_b32(tb)),
                                    ("Content-Type", "text/plain")], tb))
            for lines, value in ((text_lines, text), (html_lines, source), (mini_lines, minified)):
                lines.append(json.dumps({"id": rid, "url": p["url"], "text": value}, ensure_ascii=False))
            tags = p["mechanisms"]
            truth.append(json.dumps({
                "id": rid, "truth": p["truth"], "kind": p["kind"], "variant": p["variant"], "lang": p["lang"],
                "genre": p["genre"], "host": p["host"].bare, "host_pages": host_pages[p["host"].hid],
                "source": p["source"], "derived_from": ids[p["derived_from"]] if p["derived_from"] is not None else None,
                "url": p["url"], "mechanism": tags[0] if tags else "none", "mechanisms": "+".join(tags) or "none",
                "group_kind": f"{p['lang']}:{p['kind']}",
            }, ensure_ascii=False))
        (out / "pages.warc.gz").write_bytes(b"".join(warc))
        (out / "pages.wet.gz").write_bytes(b"".join(wet))
        for name, lines in (("pages.jsonl", text_lines), ("pages-html.jsonl", html_lines),
                            ("pages-minified.jsonl", mini_lines), ("truth.json", truth)):
            (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        negs = [json.dumps({"id_a": ids[a], "id_b": ids[b], "duplicate": False, "kind": k}) for a, b, k in self.negatives]
        (out / "negatives.jsonl").write_text("".join(x + "\n" for x in negs), encoding="utf-8")
        cps = [json.dumps({"id_a": ids[c], "id_b": ids[o], "duplicate": True, "kind": k, "lang": lang})
               for c, o, k, lang in self.copy_pairs]
        (out / "copy-pairs.jsonl").write_text("".join(x + "\n" for x in cps), encoding="utf-8")
        stats = self.stats()
        (out / "README.txt").write_text(readme(self.args, stats), encoding="utf-8")
        return stats

    def stats(self):
        hosts = [h for h in self.hosts if h.pages]
        sizes = Counter(p["truth"] for p in self.pages)
        tags = defaultdict(Counter)
        for p in self.pages:
            for t in p["mechanisms"] or ["none"]:
                tags[p["lang"]][t] += 1

        def bucket(n):
            return "1-3" if n <= 3 else "4-9" if n <= 9 else "10-30" if n <= 30 else "31-80" if n <= 80 else "81+"
        return {
            "mix": self.args.mix, "seed": self.args.seed, "role": role(self.args.mix, self.args.seed),
            "pages": len(self.pages), "langs": dict(Counter(p["lang"] for p in self.pages)),
            "genres": dict(Counter(f"{p['lang']}:{p['genre']}" for p in self.pages)),
            "kinds": dict(sorted(Counter(p["kind"] for p in self.pages).items())),
            "in_clusters": sum(n for n in sizes.values() if n >= 2),
            "cluster_sizes": dict(sorted(Counter(sizes.values()).items())),
            "hosts": len(hosts), "host_pages": dict(Counter(bucket(len(h.pages)) for h in hosts)),
            "hosts_with_notice": sum(1 for h in hosts if h.notices),
            "promos": len(self.promos), "promo_pages": sum(1 for p in self.pages if p["promo"]),
            "mechanisms": {lang: dict(sorted(c.items())) for lang, c in sorted(tags.items())},
            "negatives": dict(Counter(k for _, _, k in self.negatives)),
            "copy_pairs": len(self.copy_pairs),
            "shortfall": self.shortfall,
        }


def role(mix, seed):
    if seed in DESIGN.get(mix, ()):
        return "design"
    if seed in HELD_OUT.get(mix, ()):
        return "held out"
    return "another draw"


def sha1_b32(b):
    import base64
    return "sha1:" + base64.b32encode(hashlib.sha1(b).digest()).decode("ascii")


def warc_record(headers, block):
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + f"Content-Length: {len(block)}\r\n\r\n"
    return gzip.compress(head.encode("utf-8") + block + b"\r\n\r\n", compresslevel=6, mtime=0)


def readme(args, st):
    return f"""siteset (mix {args.mix}, seed {args.seed}: a {st['role']} draw): a labelled crawl of many small sites
made by bench/make_siteset.py --mix {args.mix} --seed {args.seed} --pages {args.pages}

Design draws: seeds 1 and 2 (mixed), 1 (zh). Held-out draws: seeds 11, 12, 13 (mixed), 11, 12 (zh).
Defaults may be chosen on design draws only; held-out draws report them.

Text: Reuters-21578 and BBC News (English); THUCNews, Sogou news, administrative court-judgment
openings and 全唐诗 / 御定全唐詩 poems (Chinese), read from ../shared/data-samples. Reuters, BBC,
THUCNews and Sogou are for research use only: do not ship or commit this set. Sites, templates,
notices, promotions, advertisements, URLs and edits are made up by the script. Base documents
were deduplicated among themselves first (5-gram Jaccard >= 0.5 or containment >= 0.6), so two
truth labels never share a text by accident; the labelled court pairs are the one exception.

{st['pages']} pages on {st['hosts']} hosts (pages per host: {json.dumps(st['host_pages'])});
{st['in_clusters']} pages in clusters of two or more; {st['hosts_with_notice']} hosts show a notice;
{st['promos']} promotions on {st['promo_pages']} pages.
languages: {json.dumps(st['langs'])}
genres: {json.dumps(st['genres'])}
kinds: {json.dumps(st['kinds'], ensure_ascii=False)}
cluster sizes (size: clusters): {json.dumps(st['cluster_sizes'])}
mechanisms (pages with the tag): {json.dumps(st['mechanisms'])}
hard-negative pairs: {json.dumps(st['negatives'])}

Files
  pages.warc.gz         warcinfo + one WARC/1.0 `response` per page (text/html; charset=utf-8),
                        one gzip member per record
  pages.wet.gz          warcinfo + one WET `conversion` per page (its visible text)
  pages.jsonl           id, url, text: the visible text, the title then one line per block element
  pages-html.jsonl      id, url, text: the HTML as the site's server formatted it
  pages-minified.jsonl  id, url, text: the same HTML on one line
  truth.json            id, truth (cluster label), kind, variant, lang, genre, host, host_pages,
                        source, derived_from, url, mechanism (the first tag), mechanisms (all,
                        joined by +), group_kind (lang:kind)
  negatives.jsonl       hard-negative pairs: id_a, id_b, duplicate=false, kind
  copy-pairs.jsonl      each copy and the page it was made from: id_a, id_b, duplicate=true, kind, lang

Ids are WARC-Record-IDs as neardup reads them, so for a run on any of the five inputs
  neardup eval --truth truth.json --run RUN --by kind        (or --by lang, mechanism, group_kind)
  neardup eval --truth-pairs negatives.jsonl --run RUN
The kinds, mechanisms and negatives are described in bench/make_siteset.py's docstring.
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mix", choices=["mixed", "zh"], default="mixed")
    ap.add_argument("--pages", type=int, default=None, help="about this many pages (mixed 4000, zh 3000)")
    ap.add_argument("--data", default=str(DATA), help="the shared data-samples folder")
    args = ap.parse_args()
    if args.pages is None:
        args.pages = 4000 if args.mix == "mixed" else 3000
    b = Builder(args)
    b.build()
    st = b.write(args.out)
    st["bytes"] = {f.name: f.stat().st_size for f in sorted(args.out.iterdir()) if f.is_file()}
    print(json.dumps(st, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
