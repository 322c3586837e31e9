#!/usr/bin/env python3
"""Make the third labelled web-page set for neardup (the "editset"): held out, built apart
from bench/make_webset.py and bench/make_crawlset.py, with heavier and more varied edits.

    python3 bench/make_editset.py --out DIR [--seed N] [--data DIR]

Research use only: every text comes from ../shared/data-samples (see its README.md), and
nothing this script writes may be shipped or committed. It uses the Python standard
library only (and the WARC record writer of bench/make_warc.py), and writes the same files
for the same seed. Never tune neardup on this set: it measures defaults chosen elsewhere.

Sources (none of Reuters, BBC, Sogou or the court openings, which the other sets use):

  ccnet      English. The 20 Common Crawl pages of en_ccnet_head_dolma_sample (real web
             text). Pages longer than 1,800 characters are cut into sections of whole
             lines, 500 to 1,500 characters each (a blog's month archive, a comment thread,
             a page of posts), each section a base document; the title is the section's
             first line when it is a short heading, or else its first words (a whole page
             takes the words of its URL). About 130 sections, a third of them from one
             comment thread: the English side is small because this sample is.
  clough     English. The Clough & Stevenson plagiarised short answers: the five Wikipedia
             sources and the 95 answers, as real human rewrites with the corpus's labels.
  thucnews   Chinese. THUCNews (Sina news) of eight categories: 财经, 房产, 家居, 教育, 游戏,
             科技, 时尚, 时政 (体育 and 娱乐 are left out), articles of 160 to 3,000
             characters, 620 of them after deduplication (in a shuffled order). The title
             glued to the body is cut at the first source marker (新浪科技讯, 中新网...电,
             【...】, ...), the title's first name repeated, a (图) mark or an opening word
             (记者, 近日, a date); failing those, the title is the text up to its first
             space, or its first clause, and the body keeps it. The body is cut into
             paragraphs of 70 to 220 characters at sentence ends.
  poems      Chinese. 全唐诗 (quantangshi) poems; 御定全唐詩 (yuding_quantangshi), a second
             digitisation of the same collection, as real second editions; 水墨唐诗
             (shuimotangshi), in simplified characters, as real script changes of 全唐诗
             poems (traditional).

Base documents are deduplicated among themselves before any page is made, so two truth
labels never share a text by accident. A base is a group of texts (a poem with its other
editions); each text becomes a set of shingles (5 Han characters, or 4 words of other
scripts) and a group is dropped when one of its texts shares a third of the smaller
shingle set with a text of a group already kept (the overlap coefficient, so quotes and
briefs go too). The Clough & Stevenson answers are kept as the corpus labels them.

Real pairs:
  edition    a 御定全唐詩 entry paired with a 全唐诗 poem by character-bigram Jaccard >= 0.5
             (only poems with exactly one such partner), on another poetry site; also
             anthology pages (three to five poems of one author) with every poem replaced
             by its 御定全唐詩 entry. Variant characters, punctuation, line grouping, split
             parts and author names differ as the two digitisations differ.
  script     a 水墨唐诗 poem (simplified) whose 全唐诗 counterpart (traditional) has the same
             number of Han characters and at least half of them equal place by place.
             Python's standard library has no simplified <-> traditional table, so no
             script change is made up: these real pairs are the only ones.
  rewrite    Clough & Stevenson answers labelled `cut` (near copy) or `light` (light
             revision), in one cluster with their task's source text (`variant` names
             the corpus file). Two `cut` answers share no 4-word shingle with their task's
             source (their writers copied from other parts of the Wikipedia article): they
             are singletons of kind `rewrite-offsource`.
  rewrite-heavy  answers labelled `heavy`: singletons in truth.json (a heavy revision is
             not a near duplicate at the usual thresholds), and their pairs with the source
             in heavy-pairs.jsonl (duplicate: true) so recall on them is reported apart.

Made copies (each page a `kind`; a quarter of the copies are made from another copy, not
the original: `derived_from` is the page it was made from and `ops` the whole chain):
  original      first publication on its home host
  mirror        the same article under another host's template
  syndication   another host, a new headline and an attribution line (top or bottom)
  recrawl       the same URL captured later: counters, date header, related and recent
                boxes, comment counts changed
  boilerplate   the same host after a redesign: other navigation, footer, sidebars, meta
                line and URL scheme; the article unchanged
  heavy-edit    10-25% of the body's characters in sentences deleted, inserted, replaced or
                rewritten (`variant` gives the share)
  light-edit    one to three small changes: a word, a typo, a clause, a punctuation mark
  truncation    a teaser: the first 40-80% of the body's characters, cut at a sentence
                end, and a read-more line
  shuffle       the paragraphs (or an anthology's poems) in another order
  ads           one to four inserted paragraphs: advertisements, promotions, related
                links, photo credits, editor's notes
  numbers       one to eight dates and figures in the body, and the date line, changed
  width-punct   full-width <-> half-width digits and letters, Chinese <-> ASCII punctuation,
                straight <-> curly quotes, dashes and ellipses, doubled spaces

Hard negatives: pages made for them have no copies and a truth label of their own; their
pairs are in negatives.jsonl, labelled with the page kind:
  same-topic    two THUCNews articles of one category on one host (shorter ones first)
  same-author   two different poems of one author on one poetry host's template
  sibling       two sections of one ccnet page on one host
  plag-non      a Clough & Stevenson answer labelled `non` and its task's source text,
                and two `non` answers of one task

Hosts: about 100 invented sites (English news and blogs, an encyclopedia and student-essay
sites, Chinese news portals and poetry sites), each with its own template (header,
navigation, breadcrumbs, a date and counter line, a per-page related box, recent posts and
a monthly hot list that change with the crawl date, previous/next links, share bars, comment
blocks, footers) and URL scheme. Host sizes follow a long tail, and twelve small sites
hold one to three originals each (with their recrawls and redesigns).

Outputs in DIR:
  pages.jsonl       {"id", "url", "text"}: the page's visible text, one line per block
  pages.wet.gz      a warcinfo record and one WET `conversion` record per page
                    (WARC-Record-ID = the id, WARC-Target-URI = the url), one gzip member
                    per record
  truth.json        JSON Lines: id, truth (cluster label), kind, lang, host, source,
                    derived_from, url, variant, ops, group (lang:kind)
  negatives.jsonl   {"id_a", "id_b", "duplicate": false, "kind"}
  copy-pairs.jsonl  {"id_a", "id_b", "duplicate": true, "kind", "lang"}: every copy and the
                    page it was made from (`neardup eval --truth-pairs` gives recall on the
                    direct pairs of one kind, apart from the rest of their clusters)
  heavy-pairs.jsonl {"id_a", "id_b", "duplicate": true, "kind": "rewrite-heavy"}
  README.txt        how the set was made, with its counts
and a JSON summary on stdout. Ids are `<urn:editset:NNNNN>`, as neardup reads
WARC-Record-IDs, so one truth.json serves both inputs.
"""

import argparse
import csv
import datetime as dt
import gzip
import io
import json
import re
import sys
import tarfile
import zlib
from collections import Counter, defaultdict
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_warc import record  # noqa: E402  (a WARC record as its own gzip member)

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data-samples"

HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_RE = re.compile(f"[{HAN}]")
TOKEN_RE = re.compile(f"[{HAN}]|[^\\W_]+", re.UNICODE)


# ---------------------------------------------------------------------------------------
# Deduplicating base documents: overlap coefficient of shingle sets, through an inverted
# index of shingle hashes.


def shingles(text):
    """Hashes of 5 Han characters in a row, or 4 words in a row for other scripts."""
    toks = TOKEN_RE.findall(text.lower())
    han = sum(1 for t in toks if HAN_RE.fullmatch(t))
    k = 5 if han * 2 >= len(toks) else 4
    if len(toks) < k:
        return {zlib.crc32(" ".join(toks).encode())} if toks else set()
    return {zlib.crc32("\x1f".join(toks[i:i + k]).encode()) for i in range(len(toks) - k + 1)}


def overlap(a, b):
    """|A & B| / min(|A|, |B|), 0 for an empty set."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


class Deduper:
    """Keeps groups of texts none of which shares `limit` of its shingles with a kept text."""

    def __init__(self, limit=1 / 3):
        self.limit = limit
        self.sets = []  # shingle sets of kept texts
        self.index = defaultdict(list)  # shingle -> kept text numbers
        self.dropped = Counter()

    def offer(self, texts, source):
        sets = [shingles(t) for t in texts]
        for s in sets:
            hits = Counter(j for h in s for j in self.index.get(h, ()))
            for j, shared in hits.most_common():
                if shared / min(len(s), len(self.sets[j])) < self.limit:
                    break
                self.dropped[source] += 1
                return False
        for s in sets:
            for h in s:
                self.index[h].append(len(self.sets))
            self.sets.append(s)
        return True


# ---------------------------------------------------------------------------------------
# Sources


def slug_title(url):
    """A title from a URL's last meaningful path part (`first-teleconference-calls`)."""
    parts = [p for p in re.split(r"[/?=&]", url.split("://", 1)[-1])[1:] if p]
    for p in reversed(parts):
        words = [w for w in re.split(r"[-_+.]", p) if w.isalpha() and w not in ("html", "php", "htm")]
        if len(words) >= 3:
            return " ".join(words).capitalize()
    return None


def first_words(text, n=9):
    """The first n words of the first sentence, without a closing punctuation mark."""
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    words = sentence.split()
    title = " ".join(words[:n]).rstrip(".,;:!?\"'”")
    return title + ("..." if len(words) > n else "")


def load_ccnet(rng, data):
    """English bases: whole short pages and sections of long ones (see the docstring)."""
    bases = []
    with gzip.open(data / "en_ccnet_head_dolma_sample.jsonl.gz", "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            doc = json.loads(line)
            lines = [re.sub(r"\s+", " ", x).strip() for x in doc["text"].split("\n")]
            lines = [x for x in lines if x]
            total = sum(len(x) for x in lines)
            if total <= 1800:
                sections = [lines]
            else:
                sections, cur, size, target = [], [], 0, rng.randint(500, 1500)
                for x in lines:
                    cur.append(x)
                    size += len(x)
                    if size >= target:
                        sections.append(cur)
                        cur, size, target = [], 0, rng.randint(500, 1500)
                if cur:
                    if size < 300 and sections:
                        sections[-1].extend(cur)
                    else:
                        sections.append(cur)
            date = dt.datetime(2013, 1, 1) + dt.timedelta(days=rng.randrange(7 * 365), minutes=rng.randrange(1440))
            for s, sec in enumerate(sections):
                paras = list(sec)
                if len(sections) == 1 and slug_title(doc["id"]):
                    title = slug_title(doc["id"])
                elif len(paras) > 1 and len(paras[0]) <= 90 and len(paras[0].split()) >= 3:
                    title = paras.pop(0).rstrip(".")
                else:
                    title = first_words(paras[0])
                if sum(len(p) for p in paras) < 200:
                    continue
                bases.append({
                    "key": f"ccnet-{n:02}-{s:02}", "lang": "en", "source": "ccnet", "form": "prose",
                    "title": title, "paras": paras, "author": None, "section": None,
                    "date": date + dt.timedelta(days=3 * s), "parent": f"ccnet-{n:02}",
                    "texts": ["\n".join(paras)],
                })
    return bases


def read_clough(data):
    """{task: {"orig": paragraphs, "answers": [(name, category, paragraphs)]}}"""
    tasks = defaultdict(lambda: {"orig": None, "answers": []})
    with tarfile.open(data / "en_clough_stevenson_plagiarism_short_answers.tar.gz") as tar:
        files = {}
        for m in tar.getmembers():
            if m.isfile():
                files[m.name.rsplit("/", 1)[-1]] = tar.extractfile(m).read()
    labels = list(csv.DictReader(io.StringIO(files["file_information.csv"].decode("utf-8"))))

    def paragraphs(raw):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("cp1252")
        text = text.replace("\r\n", "\n").replace("\ufeff", "")
        blocks = [re.sub(r"\s+", " ", b).strip() for b in re.split(r"\n\s*\n", text)]
        return [b for b in blocks if b]

    for row in labels:
        task = row["Task"]
        if row["Category"] == "orig":
            tasks[task]["orig"] = paragraphs(files[row["File"]])
        else:
            tasks[task]["answers"].append((row["File"], row["Category"], paragraphs(files[row["File"]])))
    for task in tasks:
        if tasks[task]["orig"] is None:
            tasks[task]["orig"] = paragraphs(files[f"orig_task{task}.txt"])
    return dict(sorted(tasks.items()))


THUC_BASES = 620  # THUCNews articles used, of those left after deduplication
THUC_CATEGORIES = ("财经", "房产", "家居", "教育", "游戏", "科技", "时尚", "时政")
THUC_MARKERS = re.compile(
    r"新浪\w{0,4}讯|中新网|中新社|新华网|人民网|全景网|每经记者|本报讯|本报记者|新快报讯|【|⊙|\(记者|（记者|"
    r"编辑观点|导语：|导读：|作者：|文前提要|北京时间|\d{1,2}月\d{1,2}日(?:讯|电|消息)|据[^，。]{2,12}(?:报道|消息)")
THUC_WEAK = re.compile(
    r"主持人：|(?:本报|东方早报|证券时报|理财周报|晨报)?记者|近日|日前|随着|今年以来|今年|目前|昨日|昨天|最近|□|"
    r"温馨提示|[（(]中关村|\d{4}年\d{1,2}月|\d{1,2}月\d{1,2}日|\d{1,2}月[上中下]旬")


def thuc_title_end(text):
    """Where the title glued to a THUCNews body ends, or None: a source marker, the title's
    first name repeated (《游戏》..., 姓名：...), a (图) mark, or a weaker opening word."""
    m = THUC_MARKERS.search(text, 8, 48)
    if m:
        return m.start()
    lead = re.match(r"《[^》]{1,12}》|[^：:，。 ]{2,6}[：:]|.{4}", text).group()
    p = text.find(lead, 8, 48)
    if p > 0:
        return p
    m = re.compile(r"[(（]组?图[)）]").search(text, 6, 48)
    if m:
        return m.end()
    m = THUC_WEAK.search(text, 8, 48)
    return m.start() if m else None


def split_zh_sentences(text):
    """Sentences ending in 。！？ (with a closing quote), and the rest."""
    return [s for s in re.findall(r"[^。！？!?]*[。！？!?]+[”」』\"]?|[^。！？!?]+$", text) if s.strip()]


def load_thucnews(rng, data):
    """Chinese news bases of the categories above."""
    bases = []
    with gzip.open(data / "zh_thucnews_subset.tsv.gz", "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            label, _, text = line.rstrip("\n").partition("\t")
            text = text.replace("\xa0", " ").strip()
            if label not in THUC_CATEGORIES or not 160 <= len(text) <= 3000:
                continue
            end = thuc_title_end(text)
            if end is not None:
                title, body = text[:end].strip(), text[end:].strip()
            else:
                space = text.find(" ", 5, 25)
                first = text[:space] if space > 0 else re.split(r"[，。！？：]", text, maxsplit=1)[0][:20]
                title, body = first, text
            sentences = split_zh_sentences(body)
            paras, cur, target = [], "", rng.randint(70, 220)
            for s in sentences:
                cur += s
                if len(cur) >= target:
                    paras.append(cur.strip())
                    cur, target = "", rng.randint(70, 220)
            if cur.strip():
                if len(cur) < 30 and paras:
                    paras[-1] += cur.strip()
                else:
                    paras.append(cur.strip())
            date = dt.datetime(2008, 1, 1) + dt.timedelta(days=rng.randrange(4 * 365), minutes=rng.randrange(1440))
            bases.append({
                "key": f"thucnews-{n:04}", "lang": "zh", "source": "thucnews", "form": "prose",
                "title": title, "paras": paras, "author": None, "section": label, "date": date,
                "texts": [body],
            })
    return bases


def han_only(text):
    return "".join(HAN_RE.findall(text))


def bigrams(text):
    s = han_only(text)
    return {s[i:i + 2] for i in range(len(s) - 1)}


def load_poems(data):
    """(全唐诗 poems, 御定全唐詩 entries, 水墨唐诗 poems), each {author, title, lines}."""
    by = defaultdict(list)
    with gzip.open(data / "zh_chinese_poetry_tang_subset.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            if p["collection"] in ("quantangshi", "yuding_quantangshi", "shuimotangshi"):
                lines = [x.strip() for x in p["paragraphs"] if x.strip()]
                if lines:
                    by[p["collection"]].append({"author": p["author"], "title": p["title"], "lines": lines,
                                                "ref": f"{p['file']}#{p['idx']}"})
    return by["quantangshi"], by["yuding_quantangshi"], by["shuimotangshi"]


def pair_editions(qts, yd):
    """{i: j}: 全唐诗 poem i and its one 御定全唐詩 entry j of bigram Jaccard >= 0.5."""
    ygrams = [bigrams("".join(p["lines"])) for p in yd]
    df = Counter(g for y in ygrams for g in y)
    index = defaultdict(list)
    for j, y in enumerate(ygrams):
        for g in sorted(y):
            if df[g] <= 300:
                index[g].append(j)
    pairs, used = {}, Counter()
    for i, p in enumerate(qts):
        q = bigrams("".join(p["lines"]))
        if len(q) < 8:
            continue
        cand = Counter(j for g in q if df[g] <= 300 for j in index[g])
        good = [j for j, _ in cand.most_common(12) if len(q & ygrams[j]) / len(q | ygrams[j]) >= 0.5]
        if len(good) == 1:
            pairs[i] = good[0]
            used[good[0]] += 1
    return {i: j for i, j in pairs.items() if used[j] == 1}


def pair_scripts(qts, sm):
    """{k: i}: 水墨唐诗 poem k and its one 全唐诗 poem i (same Han length, half equal in place)."""
    by_len = defaultdict(list)
    for i, p in enumerate(qts):
        by_len[len(han_only("".join(p["lines"])))].append(i)
    pairs = {}
    for k, p in enumerate(sm):
        a = han_only("".join(p["lines"]))
        if len(a) < 16:
            continue
        good = [i for i in by_len[len(a)]
                if sum(x == y for x, y in zip(a, han_only("".join(qts[i]["lines"])))) * 2 >= len(a)]
        if len(good) == 1:
            pairs[k] = good[0]
    return pairs


# ---------------------------------------------------------------------------------------
# Hosts and their templates. All names, addresses and boilerplate below are invented.

EN_NAME_A = ["Harbor", "Northgate", "Cedar", "Lantern", "Copper", "Maple", "Granite", "Willow", "Beacon",
             "Summit", "Riverside", "Juniper", "Foxglove", "Meadow", "Ironwood", "Bluebird", "Lakeshore",
             "Prairie", "Saltmarsh", "Highland", "Orchard", "Pinecrest", "Redbrick", "Silverline",
             "Tidewater", "Oakridge", "Starling", "Kestrel", "Driftwood", "Hollow", "Thistle", "Gable"]
EN_NAME_B = ["Ledger", "Dispatch", "Notebook", "Journal", "Review", "Post", "Digest", "Corner", "Chronicle",
             "Report", "Gazette", "Almanac", "Wire", "Weekly", "Herald", "Bulletin", "Courier", "Sentinel",
             "Observer", "Pages", "Notes", "Field Guide", "Lounge", "Workshop", "Hub", "Table"]
EN_TLD = [".com", ".com", ".com", ".net", ".org", ".co", ".info", ".blog", ".news", ".io", ".us", ".co.uk"]
EN_TAGLINES = ["Stories worth your morning coffee", "Independent voices since 2009", "News, notes and everything in between",
               "Small town, big questions", "Read. Think. Share.", "Your daily dose of the unexpected",
               "Ideas for curious people", "Honest reviews and practical guides", "From our porch to yours",
               "Where the locals read first", "Practical advice, no nonsense", "Keeping you posted"]
EN_SECTIONS = ["News", "World", "Business", "Tech", "Science", "Health", "Travel", "Food", "Lifestyle", "Opinion",
               "Sports", "Culture", "Books", "Music", "Film", "Education", "Home & Garden", "Money", "Careers",
               "Events", "Video", "Podcasts", "About", "Contact", "Archives", "Shop", "Forum", "Reviews", "Guides",
               "Deals", "Photography", "History", "Community"]
EN_GENRE_SECTIONS = {
    "wiki": ["Main page", "Contents", "Random article", "About", "Help", "Recent changes", "Donate", "Community portal",
             "Upload file", "Special pages", "Cite this page", "Print version"],
    "essay": ["Home", "Forums", "Computer Science", "Maths", "Upload", "Members", "Search", "FAQ", "Rules", "Exam tips",
              "Past papers", "Tutors"]}
EN_GENRE_TAGLINES = {"wiki": ["The free reference", "Knowledge for everyone", "A reference anyone can edit"],
                     "essay": ["Share your coursework", "Students helping students", "Revision notes and model answers"]}
EN_CMS = ["WordPress", "Ghost", "Drupal", "Blogger", "Squarespace", "Hugo", "Joomla!"]
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]
EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

ZH_NAME_A = [("华夏", "huaxia"), ("金陵", "jinling"), ("东方", "dongfang"), ("江南", "jiangnan"), ("北岸", "beian"),
             ("云帆", "yunfan"), ("青石", "qingshi"), ("远望", "yuanwang"), ("星河", "xinghe"), ("南山", "nanshan"),
             ("明川", "mingchuan"), ("长风", "changfeng"), ("白鹭", "bailu"), ("翠微", "cuiwei"), ("清溪", "qingxi"),
             ("海峡", "haixia"), ("齐鲁", "qilu"), ("巴蜀", "bashu"), ("湘江", "xiangjiang"), ("燕赵", "yanzhao"),
             ("楚天", "chutian"), ("岭南", "lingnan"), ("西湖", "xihu"), ("蓝海", "lanhai"), ("锦城", "jincheng"),
             ("九州", "jiuzhou"), ("天府", "tianfu"), ("滨江", "binjiang"), ("阳光", "yangguang"), ("紫荆", "zijing"),
             ("墨香", "moxiang"), ("松风", "songfeng"), ("竹影", "zhuying"), ("听雨", "tingyu"), ("寒山", "hanshan"),
             ("兰亭", "lanting"), ("梧桐", "wutong"), ("秋水", "qiushui"), ("青莲", "qinglian"), ("望岳", "wangyue")]
ZH_NEWS_B = [("网", "wang"), ("在线", "online"), ("资讯", "news"), ("日报", "daily"), ("新闻网", "xinwen"),
             ("财经", "caijing"), ("生活网", "life"), ("论坛", "bbs"), ("热线", "rexian"), ("晚报", "wanbao"),
             ("门户", "portal"), ("视界", "view")]
ZH_POEM_B = [("诗词网", "shici"), ("古诗文", "gushiwen"), ("诗社", "shishe"), ("书斋", "shuzhai"), ("国学网", "guoxue"),
             ("诗文库", "poems"), ("吟诵网", "yinsong")]
ZH_TLD = [".com", ".com", ".cn", ".com.cn", ".net", ".net.cn", ".org.cn", ".cc", ".top"]
ZH_TAGLINES = ["权威 及时 贴近百姓", "让阅读更有价值", "传递真实的声音", "您身边的生活资讯平台", "关注民生 服务社会",
               "看懂财经 读懂生活", "有态度的新闻门户", "每日精选 不容错过", "城市生活第一站"]
ZH_POEM_TAGLINES = ["诗词之美 千古流传", "一日一诗 与古人对话", "读诗 品诗 赏诗", "收录唐宋诗词十万首", "传承经典 弘扬国学"]
ZH_SECTIONS = ["首页", "新闻", "国内", "财经", "股票", "基金", "房产", "家居", "教育", "科技", "数码", "游戏", "时尚",
               "女性", "汽车", "旅游", "健康", "文化", "读书", "历史", "论坛", "博客", "视频", "图片", "专题", "评论",
               "本地", "社区", "下载", "理财", "留学", "考试"]
ZH_POEM_SECTIONS = ["首页", "诗文", "名句", "作者", "古籍", "唐诗", "宋词", "元曲", "诗经", "楚辞", "乐府", "赏析",
                    "翻译", "注释", "字典", "成语", "书法", "我的收藏", "诗人年谱", "飞花令"]
ZH_PROVINCES = ["京", "沪", "粤", "浙", "苏", "鲁", "川", "湘", "鄂", "闽", "豫", "陕"]
ZH_WEEK = "一二三四五六日"
SECTION_PATH = {"财经": "finance", "房产": "house", "家居": "home", "教育": "edu", "游戏": "games", "科技": "tech",
                "时尚": "fashion", "时政": "politics"}


def en_date(d, style):
    m, day, y = EN_MONTHS[d.month - 1], d.day, d.year
    hour = f"{(d.hour - 1) % 12 + 1}:{d.minute:02} {'am' if d.hour < 12 else 'pm'}"
    return [f"{m} {day}, {y}", f"{day} {m[:3]} {y}", f"{y}-{d.month:02}-{day:02}", f"{d.month:02}/{day:02}/{y}",
            f"{EN_DAYS[d.weekday()]}, {m} {day}, {y} at {hour}", f"{m} {day}, {y} {hour}"][style]


def zh_date(d, style):
    return [f"{d.year}年{d.month}月{d.day}日 {d.hour:02}:{d.minute:02}", f"{d.year}-{d.month:02}-{d.day:02} {d.hour:02}:{d.minute:02}:{d.second:02}",
            f"{d.year}/{d.month:02}/{d.day:02}", f"{d.year}.{d.month:02}.{d.day:02} {d.hour:02}:{d.minute:02}",
            f"{d.year}年{d.month:02}月{d.day:02}日", f"{d.year}-{d.month:02}-{d.day:02}"][style]


def slugify(title):
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "-".join(words[:8]) or "post"


class Host:
    """An invented site: its name, address, URL scheme and template (two versions: before
    and after a redesign)."""

    def __init__(self, lang, genre, rng, taken):
        self.lang, self.genre = lang, genre
        self.rng = rng
        while True:
            if lang == "en":
                a, b = rng.choice(EN_NAME_A), rng.choice(EN_NAME_B)
                if genre == "wiki":
                    b = rng.choice(["Encyclopedia", "Wiki", "Knowledge Base", "Reference"])
                elif genre == "essay":
                    b = rng.choice(["Study Hub", "Essay Bank", "Homework Forum", "Student Notes", "Coursework Share"])
                self.name = f"{'The ' if rng.random() < 0.25 and genre in ('news', 'blog') else ''}{a} {b}"
                base = (a + b).lower().replace(" ", "")
                if rng.random() < 0.3:
                    base = f"{a.lower()}-{b.lower().replace(' ', '')}"
                self.domain = ("www." if rng.random() < 0.5 else "") + base + rng.choice(EN_TLD)
                if genre == "blog" and rng.random() < 0.3:
                    self.domain = f"{a.lower()}{rng.randint(1, 99)}.{rng.choice(['blogspot.com', 'wordpress.com', 'substack.com'])}"
            else:
                (a, pa) = rng.choice(ZH_NAME_A)
                (b, pb) = rng.choice(ZH_POEM_B if genre == "poetry" else ZH_NEWS_B)
                self.name = a + b
                self.domain = rng.choice(["www.", "", "news.", "www."] if genre != "poetry" else ["www.", "", "shi."]) + pa + pb + rng.choice(ZH_TLD)
            if self.name not in taken and self.domain.split(".", 1)[-1] not in taken:
                taken.add(self.name)
                taken.add(self.domain.split(".", 1)[-1])
                break
        self.next_id = rng.randrange(1000, 900000)
        self.templates = [self.make_template(0), self.make_template(1)]
        self.pages = []  # every page on the host, filled while planning

    # -- template ------------------------------------------------------------------
    def make_template(self, version):
        rng = Random(f"{self.domain}:template:{version}")
        zh, poetry = self.lang == "zh", self.genre == "poetry"
        t = {"version": version}
        sections = ZH_POEM_SECTIONS if poetry else ZH_SECTIONS if zh else EN_GENRE_SECTIONS.get(self.genre, EN_SECTIONS)
        t["nav"] = rng.sample(sections, min(len(sections) - 2, rng.randint(5, 13)))
        if zh:
            t["nav"] = ["首页"] + [x for x in t["nav"] if x != "首页"]
        t["nav_style"] = rng.choice(["lines", "inline", "inline"])
        t["nav_sep"] = rng.choice([" | ", " · ", "  ", " / ", "｜"] if zh else [" | ", " · ", "  ", " / ", " • "])
        t["title_fmt"] = rng.choice(["{title}_{section}_{site}", "{title} - {site}", "{title}-{site}", "{title}_{site}"] if zh
                                    else ["{title} - {site}", "{title} | {site}", "{site}: {title}", "{title} – {site}", "{title}"])
        header = [self.name]
        if rng.random() < 0.6:
            header.append(rng.choice(ZH_POEM_TAGLINES if poetry else ZH_TAGLINES if zh else EN_GENRE_TAGLINES.get(self.genre, EN_TAGLINES)))
        if rng.random() < 0.5:
            header.append(rng.choice(["登录 | 注册", "设为首页 | 加入收藏", "手机版 | 客户端 | 订阅", "登录 注册 投稿"] if zh
                                     else ["Log in | Register", "Subscribe", "Sign in  Newsletter  Donate", "Skip to content"]))
        t["header"] = header
        t["search"] = rng.random() < 0.5
        t["today"] = rng.random() < 0.35
        t["weather"] = zh and not poetry and rng.random() < 0.3
        t["breadcrumb"] = rng.random() < 0.6
        t["date_style"] = rng.randrange(6)
        t["meta_fields"] = rng.sample(["author", "date", "views", "comments"] if not poetry else ["dynasty", "author", "views", "likes"],
                                      rng.randint(2, 4))
        if "date" not in t["meta_fields"] and not poetry:
            t["meta_fields"].insert(0, "date")
        t["meta_sep"] = rng.choice(["  ", " | ", " · ", "　"] if zh else ["  ", " | ", " · ", " — "])
        t["meta_one_line"] = rng.random() < 0.7
        t["views_fmt"] = rng.choice(["阅读({n})", "浏览次数：{n}", "点击：{n}次", "已有{n}人阅读", "{n}人看过"] if zh
                                    else ["{n} views", "Viewed {n} times", "{n} reads", "Views: {n}"])
        t["comments_fmt"] = rng.choice(["评论({n})", "评论：{n}", "{n}条评论", "{n}人参与"] if zh
                                       else ["{n} comments", "Comments ({n})", "{n} Responses", "{n} replies"])
        t["author_fmt"] = rng.choice(["作者：{a}", "来源：{a}", "编辑：{a}", "{a}"] if zh else ["By {a}", "Posted by {a}", "{a}", "Written by {a}"])
        t["related_head"] = rng.choice(["相关阅读", "猜你喜欢", "热门推荐", "相关文章", "延伸阅读", "推荐阅读", "看了本文的人还看了"] if zh
                                       else ["Related posts", "You might also like", f"More from {self.name}", "Read next", "Related stories", "Don't miss"])
        t["related_n"] = (rng.randint(2, 4), rng.randint(5, 8))
        t["related_pos"] = rng.choice(["after", "after", "before"])
        t["prevnext"] = rng.random() < 0.5
        t["tags"] = rng.random() < 0.4
        t["share"] = rng.choice([None, "分享到：微信 微博 QQ空间", "收藏本文 | 打印 | 关闭窗口", "【字体：大 中 小】【打印】【关闭】"] if zh
                                else [None, "Share: Facebook · X · Email · Print", "Share this: Twitter, Facebook, Pinterest", "Tweet  Share  Pin  Email"])
        t["comment_block"] = rng.random() < 0.5
        blocks = ["recent", "hot", "categories", "archives", "about"]
        t["sidebar"] = rng.sample(blocks, rng.randint(0, 3))
        t["sidebar_pos"] = rng.choice(["before", "after"])
        t["recent_head"] = rng.choice(["最新文章", "最近更新", "最新发布", "今日更新"] if zh else ["Recent Posts", "Latest", "New on the site", "Fresh"])
        t["hot_head"] = rng.choice(["热门排行", "点击排行", "本周热点", "24小时排行"] if zh else ["Most read", "Popular this week", "Trending", "Top stories"])
        year = 2019 + rng.randrange(5)
        if zh:
            footer = [rng.choice(["关于我们 | 联系我们 | 广告服务 | 网站地图 | 免责声明", "网站简介 - 联系方式 - 投稿须知 - 友情链接",
                                  "意见反馈 | 帮助中心 | 隐私政策 | 用户协议"]),
                      f"Copyright © {rng.randint(2001, 2012)}-{year} {self.name} 版权所有",
                      f"{rng.choice(ZH_PROVINCES)}ICP备{rng.randint(10000000, 19999999)}号-{rng.randint(1, 9)}"]
            if rng.random() < 0.5:
                footer.append(f"{rng.choice(ZH_PROVINCES)}公网安备 {rng.randint(11000000000000, 53000000000000)}号")
            if rng.random() < 0.5:
                footer.append(rng.choice(["本站部分内容转载自网络，版权归原作者所有，如有侵权请联系删除。",
                                          f"违法和不良信息举报电话：0{rng.randint(10, 99)}-{rng.randint(60000000, 89999999)}",
                                          "未经书面授权，禁止转载、摘编或利用其他方式使用本网站内容。"]))
        else:
            footer = [f"© {year} {self.name}. All rights reserved." if rng.random() < 0.7 else f"Copyright {rng.randint(2005, 2015)}–{year} {self.name}",
                      rng.choice(["Privacy Policy | Terms of Service | Contact", "About · Advertise · Careers · Privacy",
                                  "Terms | Privacy | Cookie settings | Accessibility", "Home - About - Contact - Sitemap"])]
            if rng.random() < 0.5:
                footer.append(f"Powered by {rng.choice(EN_CMS)}" + (f" · Theme by {rng.choice(EN_NAME_A)} Themes" if rng.random() < 0.5 else ""))
            if rng.random() < 0.4:
                footer.append(f"{rng.randint(10, 999)} {rng.choice(EN_NAME_A)} Street, {rng.choice(['Springfield', 'Riverton', 'Fairview', 'Ashford', 'Milltown'])}")
        t["footer"] = footer
        rng2 = Random(f"{self.domain}:url:{version}")
        if self.genre == "poetry":
            t["url"] = rng2.choice(["/shiwen/{hex}.aspx", "/poem/{id}.html", "/shici/{id}", "/gushi/{y}/{id}.htm", "/view.php?id={id}"])
        elif zh:
            t["url"] = rng2.choice(["/{sec}/{y}{m}{d}/{id}.shtml", "/news/{y}-{m}/{d}/content_{id}.htm", "/article-{id}-1.html",
                                    "/a/{y}{m}{d}/{id}.html", "/html/{y}/{m}{d}/{id}.html", "/show.php?contentid={id}", "/p/{id}"])
        else:
            t["url"] = rng2.choice(["/{y}/{m}/{d}/{slug}/", "/blog/{slug}-{id}", "/?p={id}", "/articles/{id}/{slug}",
                                    "/{sec}/{slug}.html", "/posts/{y}{m}{d}-{slug}", "/story/{hex}", "/entry/{slug}_{id}.php"])
        return t

    def url(self, article, date, version=0):
        self.next_id += self.rng.randint(1, 40)
        sec = article.get("section")
        sec = SECTION_PATH.get(sec, "news") if self.lang == "zh" else (sec or self.rng.choice(["news", "life", "blog", "culture"])).lower()
        path = self.templates[version]["url"].format(
            y=date.year, m=f"{date.month:02}", d=f"{date.day:02}", id=self.next_id, hex=f"{self.next_id * 2654435761 % 2**32:08x}",
            slug=slugify(article["title"]) if self.lang == "en" else self.next_id, sec=sec.replace(" ", "-").replace("&", "and"))
        return f"https://{self.domain}{path}"

    # -- rendering ---------------------------------------------------------------
    def render(self, page, rng):
        """The page's visible lines: the title, then one line per block."""
        t = self.templates[page["version"]]
        a = page["article"]
        zh = self.lang == "zh"
        crawl = page["crawl"]
        others, seen = [], {a["title"]}
        for p in self.pages:  # one page per title, for the boxes that list other pages
            if p["article"]["title"] not in seen:
                seen.add(p["article"]["title"])
                others.append(p)
        section = a.get("section") or (t["nav"][1] if len(t["nav"]) > 1 else t["nav"][0])
        lines = [t["title_fmt"].format(title=a["title"], section=section, site=self.name)]
        lines += t["header"]
        if t["today"]:
            lines.append(f"今天是{crawl.year}年{crawl.month}月{crawl.day}日 星期{ZH_WEEK[crawl.weekday()]}" if zh
                         else f"{EN_DAYS[crawl.weekday()]}, {EN_MONTHS[crawl.month - 1]} {crawl.day}, {crawl.year}")
        if t["weather"]:
            lo = rng.randint(-5, 25)
            lines.append(f"{rng.choice(['北京', '上海', '广州', '杭州', '成都'])} {rng.choice(['晴', '多云', '阴', '小雨'])} {lo}℃~{lo + rng.randint(3, 10)}℃")
        if t["search"]:
            lines.append("搜索" if zh else "Search …")
        if t["nav_style"] == "lines":
            lines += t["nav"]
        else:
            lines.append(t["nav_sep"].join(t["nav"]))
        side = self.sidebar(t, page, others, rng)
        if t["sidebar_pos"] == "before":
            lines += side
        if t["breadcrumb"]:
            lines.append(f"当前位置：首页 > {section} > 正文" if zh else f"Home » {section} » {a['title'][:40]}")
        related = self.related(t, others, rng)
        if t["related_pos"] == "before":
            lines += related
        lines.append(a["title"])
        meta = self.meta(t, page, rng)
        if t["meta_one_line"]:
            lines.append(t["meta_sep"].join(meta))
        else:
            lines += meta
        lines += a.get("top", [])
        lines += a["paras"]
        lines += a.get("end", [])
        if t["tags"]:
            words = sorted({w for w in re.findall(r"[A-Za-z]{6,}", " ".join(a["paras"]))}, key=lambda w: zlib.crc32(w.encode()))[:4] if not zh \
                else [section, rng.choice(["热点", "关注", "推荐", "原创"])]
            lines.append(("标签：" if zh else "Tags: ") + ", ".join(words))
        if t["share"]:
            lines.append(t["share"])
        if t["prevnext"]:
            before = [p for p in others if p["crawl"] < page["crawl"]]
            after = [p for p in others if p["crawl"] > page["crawl"]]
            if before:
                prev = max(before, key=lambda p: p["crawl"])
                lines.append(("上一篇：" if zh else "« Previous: ") + prev["article"]["title"])
            if after:
                nxt = min(after, key=lambda p: p["crawl"])
                lines.append(("下一篇：" if zh else "Next: ") + nxt["article"]["title"] + ("" if zh else " »"))
        if t["related_pos"] == "after":
            lines += related
        if t["comment_block"]:
            n = page["comments"]
            if zh:
                lines += ["网友评论", f"已有{n}条评论，点击查看" if n else "暂无评论，快来抢沙发吧！", "发表评论"]
            else:
                lines += [f"{n} thoughts on “{a['title']}”" if n else "No comments yet", "Leave a Reply",
                          "Your email address will not be published. Required fields are marked *"]
        if t["sidebar_pos"] == "after":
            lines += side
        lines += t["footer"]
        return lines

    def meta(self, t, page, rng):
        a, zh = page["article"], self.lang == "zh"
        out = []
        for f in t["meta_fields"]:
            if f == "date":
                out.append(zh_date(a["date"], t["date_style"]) if zh else en_date(a["date"], t["date_style"]))
            elif f == "author":
                who = a.get("author") or (self.name if zh else rng.choice(["Staff", "Admin", "Editor", self.name + " staff"]))
                out.append(t["author_fmt"].format(a=who))
            elif f == "views":
                out.append(t["views_fmt"].format(n=page["views"]))
            elif f == "comments":
                out.append(t["comments_fmt"].format(n=page["comments"]))
            elif f == "dynasty":
                out.append(rng.choice(["朝代：唐", "【唐代】", "唐"]) if page["version"] else "朝代：唐")
            elif f == "likes":
                out.append(f"{page['views'] // 7}人收藏")
        return out

    def related(self, t, others, rng):
        if not others:
            return []
        n = min(len(others), rng.randint(*t["related_n"]))
        return [t["related_head"]] + [p["article"]["title"] for p in rng.sample(others, n)]

    def sidebar(self, t, page, others, rng):
        zh, out = self.lang == "zh", []
        for block in t["sidebar"]:
            if block == "recent":
                recent = sorted((p for p in others if p["crawl"] <= page["crawl"]), key=lambda p: p["crawl"], reverse=True)[:5]
                if recent:
                    out += [t["recent_head"]] + [p["article"]["title"] for p in recent]
            elif block == "hot" and others:
                # a ranking of the month: the same on every page crawled in it
                month = Random(f"{self.domain}:hot:{page['crawl'].year}-{page['crawl'].month}")
                hot = month.sample(sorted(others, key=lambda p: p["url"]), min(len(others), 5))
                out += [t["hot_head"]] + [f"{i + 1}. {p['article']['title']}" if i % 2 == 0 or zh else p["article"]["title"]
                                          for i, p in enumerate(hot)]
            elif block == "categories":
                out += ["栏目分类" if zh else "Categories"] + t["nav"][1:6]
            elif block == "archives":
                c = page["crawl"]
                months = [(c.year - (c.month - 1 - k < 0), (c.month - 1 - k) % 12 + 1) for k in range(1, 5)]
                out += ["文章归档" if zh else "Archives"] + [f"{y}年{m}月" if zh else f"{EN_MONTHS[m - 1]} {y}" for y, m in months]
            elif block == "about":
                out += ["关于本站" if zh else "About", (f"{self.name}创办于{2000 + len(self.name) * 3 % 20}年，欢迎投稿。" if zh
                                                     else f"{self.name} is written by a small team of volunteers. Tips welcome.")]
        return out


# ---------------------------------------------------------------------------------------
# Edit operations. Each takes an article (title, paras, ...) and returns a changed copy
# and a short description, or None when it does not apply.

EN_SYNONYMS = [("said", "stated"), ("big", "large"), ("help", "assist"), ("use", "employ"), ("buy", "purchase"),
               ("show", "demonstrate"), ("start", "begin"), ("many", "numerous"), ("often", "frequently"),
               ("important", "significant"), ("people", "individuals"), ("get", "obtain"), ("need", "require"),
               ("try", "attempt"), ("also", "additionally"), ("very", "extremely"), ("enough", "sufficient"),
               ("main", "principal"), ("maybe", "perhaps"), ("fast", "quick"), ("hard", "difficult"),
               ("small", "little"), ("whole", "entire"), ("begin", "commence"), ("find", "discover"),
               ("keep", "retain"), ("build", "construct"), ("ask", "inquire"), ("think", "believe"),
               ("because", "since"), ("but", "yet"), ("idea", "notion"), ("problem", "issue"),
               ("chance", "opportunity"), ("place", "location")]
ZH_SYNONYMS = [("表示", "称"), ("目前", "当前"), ("已经", "已"), ("进行", "开展"), ("认为", "觉得"), ("但是", "不过"),
               ("非常", "十分"), ("因为", "由于"), ("所以", "因此"), ("增长", "上升"), ("下降", "下滑"), ("公司", "企业"),
               ("主要", "首要"), ("开始", "着手"), ("希望", "期望"), ("需要", "须要"), ("重要", "关键"), ("问题", "难题"),
               ("情况", "状况"), ("发现", "察觉"), ("同时", "与此同时"), ("如果", "倘若"), ("可以", "能够"), ("一些", "部分"),
               ("很多", "不少"), ("比较", "相对"), ("最近", "近来"), ("今年", "本年度"), ("日前", "近日"), ("消费者", "顾客"),
               ("价格", "售价"), ("市场", "行业"), ("发展", "推进"), ("提高", "提升"), ("特别", "尤其"), ("通过", "借助")]
EN_NAMES = ["Maria Okafor", "Tom Lindqvist", "Priya Raman", "Daniel Brooks", "Grace Mulligan", "Hiro Tanaka",
            "Sofia Alvarez", "Ben Carter", "Aisha Bello", "Lukas Novak", "Emma Doyle", "Kwame Asante"]
EN_ORGS = ["the city council", "the state agency", "a local charity", "the trade association", "the university",
           "the regional board", "an industry group", "the company"]
EN_NOUNS = ["project", "proposal", "programme", "budget", "plan", "dispute", "schedule", "report", "policy", "shortage"]
EN_GROUPS = ["residents", "parents", "small businesses", "teachers", "visitors", "volunteers", "readers", "members"]
EN_ADJ = ["overdue", "expensive", "unusual", "popular", "controversial", "modest", "ambitious", "unclear"]
EN_SENTENCES = [
    "{name} told reporters the {noun} had changed a great deal since {year}.",
    "In a statement on {day}, {org} said it would review the {noun} before {month}.",
    "Some {group} disagree, arguing that the {noun} is {adj} and {adj2}.",
    "Figures published in {month} {year} suggest about {pct} percent of {group} are affected.",
    "{name} said there was no quick fix for the {noun}.",
    "Local {group} have asked for a less {adj} {noun} for at least {n} years.",
    "A spokesperson for {org} declined to comment on the {noun}.",
    "It is not the first time the {noun} has drawn attention from {group}.",
    "{name}, who has followed the {noun} since {year}, called it {adj}.",
    "More than {n} {group} signed a letter about the {noun} last {month}.",
    "Nobody expects the {noun} to be settled before {month} {year}.",
]
ZH_NAMES = ["王建国", "李晓燕", "张伟", "刘芳", "陈志强", "杨丽", "赵磊", "黄海涛", "周敏", "吴晓东", "徐静", "孙浩"]
ZH_ORGS = ["有关部门", "行业协会", "市统计局", "当地政府", "业内机构", "主管部门", "研究中心", "该公司"]
ZH_THINGS = ["这一现象", "相关政策", "市场走势", "价格变化", "此次调整", "该项目", "行业格局", "消费需求"]
ZH_GROUPS = ["业内人士", "消费者", "投资者", "分析人士", "家长", "市民", "专家", "从业者"]
ZH_SENTENCES = [
    "{name}在接受采访时表示，{thing}自{year}年以来变化明显。",
    "据{org}{month}月公布的数据，约{pct}%的{group}受到影响。",
    "{org}相关负责人称，将在{month}月底前对{thing}进行评估。",
    "也有{group}认为，{thing}仍存在不确定性，还需要进一步观察。",
    "记者注意到，这已经不是{group}第一次关注{thing}。",
    "{name}坦言，{thing}没有捷径可走。",
    "对此，{org}方面暂未作出回应。",
    "有{group}向记者透露，{thing}在过去{n}个月里持续受到关注。",
    "{name}建议，{group}应理性看待{thing}，不宜盲目跟风。",
    "业内普遍预计，{thing}在{year}年下半年将逐步明朗。",
]


def made_sentence(zh, rng):
    fill = {"year": rng.randint(2003, 2012), "month": rng.randint(1, 12) if zh else rng.choice(EN_MONTHS),
            "pct": rng.randint(5, 80), "n": rng.randint(2, 30)}
    if zh:
        fill.update(name=rng.choice(ZH_NAMES), org=rng.choice(ZH_ORGS), thing=rng.choice(ZH_THINGS), group=rng.choice(ZH_GROUPS))
        return rng.choice(ZH_SENTENCES).format(**fill)
    adj, adj2 = rng.sample(EN_ADJ, 2)
    fill.update(name=rng.choice(EN_NAMES), org=rng.choice(EN_ORGS), noun=rng.choice(EN_NOUNS), group=rng.choice(EN_GROUPS),
                adj=adj, adj2=adj2, day=rng.choice(EN_DAYS))
    s = rng.choice(EN_SENTENCES).format(**fill)
    return s[0].upper() + s[1:]


def sentences(para, zh):
    if zh:
        return split_zh_sentences(para)
    return [s for s in re.split(r"(?:(?<=[.!?])|(?<=[.!?][\"”’)]))\s+(?=[\"“‘(A-Z0-9])", para) if s]


def join_sentences(ss, zh):
    return ("" if zh else " ").join(s.strip() for s in ss)


def swap_synonyms(text, zh, rng, limit):
    """Replace up to `limit` words from the synonym table (either direction)."""
    table = ZH_SYNONYMS if zh else EN_SYNONYMS
    pairs = [(a, b) for a, b in table] + [(b, a) for a, b in table]
    rng.shuffle(pairs)
    done = 0
    for a, b in pairs:
        if done >= limit:
            break
        pattern = re.escape(a) if zh else rf"\b{re.escape(a)}\b"
        hits = list(re.finditer(pattern, text))
        if hits:
            m = rng.choice(hits)
            text = text[:m.start()] + b + text[m.end():]
            done += 1
    return text, done


def rewrite_sentence(s, zh, rng):
    """Synonyms, and a clause dropped or two clauses swapped: a sentence an editor reworded."""
    out, n = swap_synonyms(s, zh, rng, 3)
    sep = "，" if zh else ", "
    parts = out.split(sep)
    if len(parts) >= 3 and rng.random() < 0.5:
        del parts[rng.randrange(1, len(parts) - 1)]
        out, n = sep.join(parts), n + 1
    elif len(parts) == 2 and rng.random() < 0.5 and not zh:
        tail = parts[1].rstrip(".!?")
        end = parts[1][len(tail):] or "."
        out, n = tail[:1].upper() + tail[1:] + ", " + parts[0][:1].lower() + parts[0][1:] + end, n + 1
    return out if n else None


def heavy_edit(a, rng):
    zh = a["lang"] == "zh"
    paras = [[[s, False] for s in sentences(p, zh)] for p in a["paras"]]  # [sentence, changed]
    total = sum(len(s) for ss in paras for s, _ in ss)
    if sum(len(ss) for ss in paras) < 5:
        return None
    target = rng.uniform(0.10, 0.25) * total
    touched, tries, done = 0, 0, Counter()
    while touched < target and tries < 300:
        tries += 1
        op = rng.choice(["delete", "insert", "replace", "rewrite", "rewrite"])
        ss = paras[rng.randrange(len(paras))]
        si = rng.randrange(len(ss) + (op == "insert"))
        if op != "insert" and ss[si][1]:
            continue
        if op == "delete":
            if len(ss) == 1:
                continue
            touched += len(ss.pop(si)[0])
        elif op == "insert":
            s = made_sentence(zh, rng)
            ss.insert(si, [s, True])
            touched += len(s)
        elif op == "replace":
            s = made_sentence(zh, rng)
            touched += max(len(ss[si][0]), len(s))
            ss[si] = [s, True]
        else:
            new = rewrite_sentence(ss[si][0], zh, rng)
            if new is None:
                continue
            touched += len(ss[si][0])
            ss[si] = [new, True]
        done[op] += 1
    if touched < 0.08 * total:
        return None
    b = dict(a, paras=[join_sentences([s for s, _ in ss], zh) for ss in paras if ss])
    return b, f"{touched / total:.2f} of the body ({', '.join(f'{k} {v}' for k, v in sorted(done.items()))})"


def typo(text, rng):
    words = [m for m in re.finditer(r"[A-Za-z]{5,}", text)]
    if not words:
        return None
    m = rng.choice(words)
    w = m.group()
    i = rng.randrange(1, len(w) - 2)
    w2 = w[:i] + w[i + 1] + w[i] + w[i + 2:] if rng.random() < 0.6 else w[:i] + w[i + 1:]
    return text[:m.start()] + w2 + text[m.end():]


def light_edit(a, rng):
    zh = a["lang"] == "zh"
    paras = list(a["paras"])
    did = []
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(paras))
        p = paras[i]
        op = rng.choice(["word", "word", "typo", "clause", "punct"])
        if a["form"] in ("poem", "anthology"):
            # one character of a line replaced by another of the same poem (a misprint)
            chars = [k for k, c in enumerate(p) if HAN_RE.match(c)]
            pool = han_only("".join(paras))
            if not chars:
                continue
            k = rng.choice(chars)
            paras[i] = p[:k] + rng.choice(pool) + p[k + 1:]
            did.append("char")
            continue
        if op == "word":
            new, n = swap_synonyms(p, zh, rng, 1)
            new = new if n else None
        elif op == "typo" and not zh:
            new = typo(p, rng)
        elif op == "typo":
            k = rng.randrange(len(p))
            new = p[:k] + p[k + 1:] if HAN_RE.match(p[k]) else None
        elif op == "clause":
            sep = "，" if zh else ", "
            parts = p.split(sep)
            new = None
            if len(parts) >= 3:
                j = rng.randrange(1, len(parts) - 1)
                if len(parts[j]) < 40:
                    new = sep.join(parts[:j] + parts[j + 1:])
        else:
            new = p.replace("，", "；", 1) if zh and "，" in p else p.replace(", ", "; ", 1) if ", " in p else None
        if new and new != p:
            paras[i] = new
            did.append(op)
    if not did:
        return None
    return dict(a, paras=paras), "+".join(did)


def truncation(a, rng):
    zh = a["lang"] == "zh"
    total = sum(len(p) for p in a["paras"])
    share = rng.uniform(0.40, 0.80)
    keep, size = [], 0
    for p in a["paras"]:
        if size + len(p) <= share * total:
            keep.append(p)
            size += len(p)
            continue
        part = ""
        for s in sentences(p, zh):
            if size + len(part) + len(s) > share * total:
                break
            part += s if zh else (" " if part else "") + s
        if part:
            keep.append(part.strip() + ("……" if zh else " …"))
            size += len(part)
        break
    if not keep or size < 0.3 * total or size >= 0.9 * total:
        return None
    more = rng.choice(["点击阅读全文>>", "（未完，详见原文）", "查看全文", "阅读原文"] if zh
                      else ["Continue reading →", "[Read the full story]", "Read more", "Click here to read the rest of this post."])
    return dict(a, paras=keep, end=a.get("end", []) + [more]), f"{size / total:.2f} of the body"


def shuffle(a, rng):
    n = len(a["paras"])
    if n < 3:
        return None
    order = list(range(n))
    while sum(i != j for i, j in enumerate(order)) < max(2, n // 2):
        rng.shuffle(order)
    return dict(a, paras=[a["paras"][i] for i in order]), f"{sum(i != j for i, j in enumerate(order))} of {n} paragraphs moved"


def shuffle_poems(a, rng):
    items = a["items"]
    if len(items) < 3:
        return None
    order = list(range(len(items)))
    while order == sorted(order):
        rng.shuffle(order)
    b = dict(a, items=[items[i] for i in order])
    b["paras"] = anthology_paras(b["items"])
    return b, f"poems in order {''.join(str(i + 1) for i in order)}"


def inserted(a, rng, host_titles):
    zh = a["lang"] == "zh"
    paras = list(a["paras"])
    n = rng.randint(1, 4)
    added = []
    for _ in range(n):
        kind = rng.choice(["ad", "ad", "related", "photo", "note", "newsletter"])
        if zh:
            text = {"ad": f"【广告】{rng.choice(['品牌家电', '驾校报名', '少儿英语', '精装公寓', '理财课程', '体检套餐'])}限时特惠，新用户立减{rng.randint(2, 50) * 10}元，详询{rng.randint(400, 499)}-{rng.randint(1000000, 9999999)}",
                    "related": "相关阅读：" + (rng.choice(host_titles) if host_titles else "更多精彩内容请关注本站"),
                    "photo": f"（图片来源：{rng.choice(['视觉中国', '东方IC', '网络', '本站记者摄', '资料图'])}）",
                    "note": f"【编者按】本文发表于{rng.randint(2008, 2011)}年，文中数据仅供参考。",
                    "newsletter": f"扫描二维码关注官方微信公众号，回复“{rng.choice(['资讯', '福利', '订阅'])}”获取更多内容"}[kind]
        else:
            text = {"ad": f"ADVERTISEMENT: {rng.choice(['Smart thermostats', 'Hiking boots', 'Online courses', 'Meal kits', 'Standing desks', 'Travel insurance'])} now {rng.randint(10, 70)}% off. Use code SAVE{rng.randint(10, 99)} at checkout.",
                    "related": "Related: " + (rng.choice(host_titles) if host_titles else "More stories like this"),
                    "photo": f"Photo: {rng.choice(EN_NAMES)} / {rng.choice(['Reuters', 'file photo', 'courtesy image', 'staff'])}",
                    "note": f"Editor's note: this post was updated on {rng.choice(EN_MONTHS)} {rng.randint(1, 28)} to add a link.",
                    "newsletter": f"Get stories like this in your inbox. Sign up for our free {rng.choice(['weekly', 'daily', 'Sunday'])} newsletter."}[kind]
        paras.insert(rng.randint(1, len(paras)), text)
        added.append(kind)
    return dict(a, paras=paras), "+".join(added)


def change_numbers(a, rng):
    """One to eight of the body's figures changed (years by one or two), and the date line."""
    spots = [(i, m.start(), m.end()) for i, p in enumerate(a["paras"]) for m in re.finditer(r"[0-9０-９]+", p)]
    if not spots:
        return None
    paras = list(a["paras"])
    chosen = sorted(rng.sample(spots, rng.randint(1, min(8, len(spots)))), key=lambda x: (x[0], -x[1]))
    changed = 0
    for i, start, end in chosen:  # right to left within a paragraph, so offsets hold
        s = paras[i][start:end]
        digits = s.translate(FULL_TO_HALF)
        v = int(digits)
        if 1900 <= v <= 2030 and len(digits) == 4:
            v += rng.choice([-2, -1, 1, 2])
        elif v < 10:
            v = (v + rng.randint(1, 8)) % 10
        else:
            v = max(0, v + rng.choice([-1, 1]) * rng.randint(1, max(1, v // 5)))
        out = str(v) if digits == s else str(v).translate(HALF_TO_FULL)
        paras[i] = paras[i][:start] + out + paras[i][end:]
        changed += out != s
    if not changed:
        return None
    date = a["date"] + dt.timedelta(days=rng.choice([-1, 1]) * rng.randint(1, 40))
    return dict(a, paras=paras, date=date), f"{changed} figures and the date line"


FULL_TO_HALF = {0xFF10 + i: 0x30 + i for i in range(10)}
HALF_TO_FULL = {v: k for k, v in FULL_TO_HALF.items()}
ZH_PUNCT = {"，": ",", "。": ".", "：": ":", "；": ";", "（": "(", "）": ")", "？": "?", "！": "!", "“": '"', "”": '"'}


def width_punct(a, rng):
    zh = a["lang"] == "zh"
    did = []
    if zh:
        text = "\n".join(a["paras"])
        if re.search(r"[0-9A-Za-z]", text) and rng.random() < 0.8:
            text = re.sub(r"[0-9A-Za-z]", lambda m: chr(ord(m.group()) + 0xFEE0), text)
            did.append("full-width letters and digits")
        elif re.search(r"[０-９Ａ-Ｚａ-ｚ]", text):
            text = re.sub(r"[０-９Ａ-Ｚａ-ｚ]", lambda m: chr(ord(m.group()) - 0xFEE0), text)
            did.append("half-width letters and digits")
        marks = [k for k in ZH_PUNCT if k in text]
        if marks:
            for k in rng.sample(marks, rng.randint(1, len(marks))):
                text = text.replace(k, ZH_PUNCT[k])
            did.append("ASCII punctuation")
        paras = text.split("\n")
    else:
        text = "\n".join(a["paras"])
        if "'" in text or '"' in text:
            text = re.sub(r"(^|[\s(\[])\"", "\\1“", text)
            text = text.replace('"', "”")
            text = re.sub(r"(\w)'(\w)", "\\1’\\2", text).replace("'", "‘")
            did.append("curly quotes")
        elif "“" in text or "’" in text:
            text = text.replace("“", '"').replace("”", '"').replace("’", "'").replace("‘", "'")
            did.append("straight quotes")
        if " - " in text or "--" in text:
            text = text.replace(" - ", " — ").replace("--", "—")
            did.append("dashes")
        if "..." in text:
            text = text.replace("...", "…")
            did.append("ellipses")
        if rng.random() < 0.6:
            text = re.sub(r"\. ([A-Z])", lambda m: ".  " + m.group(1) if rng.random() < 0.5 else m.group(), text)
            did.append("double spaces")
        if rng.random() < 0.5:
            text = re.sub(r"[0-9]", lambda m: chr(ord(m.group()) + 0xFEE0), text)
            did.append("full-width digits")
        paras = text.split("\n")
    if paras == a["paras"]:
        return None
    return dict(a, paras=paras), ", ".join(did)


def new_headline(a, rng):
    t = a["title"]
    if a["lang"] == "zh":
        return rng.choice([f"转载：{t}", f"{t}（图）", f"独家|{t}", f"关注：{t}", f"【热点】{t}", t[: max(6, len(t) * 2 // 3)] + "……"])
    t2, _ = swap_synonyms(t, False, rng, 2)
    return rng.choice([f"{t2}: what you need to know", f"Why {t2[:1].lower() + t2[1:]} matters", f"{t} (reprint)",
                       f"Opinion | {t2}", f"Worth reading: {t}", t2 if t2 != t else f"{t}, explained"])


def anthology_paras(items):
    out = []
    for title, author, lines in items:
        out.append(f"{title}　{author}")
        out += lines
    return out


# ---------------------------------------------------------------------------------------
# Planning: which base goes where, and its copies.

PROSE_KINDS = {"mirror": 5, "syndication": 4, "recrawl": 4, "boilerplate": 3, "heavy-edit": 5, "light-edit": 4,
               "truncation": 4, "shuffle": 3, "ads": 4, "numbers": 3, "width-punct": 3}
POEM_KINDS = {"mirror": 5, "syndication": 2, "recrawl": 3, "boilerplate": 2, "light-edit": 3, "ads": 3, "width-punct": 3}
ANTHOLOGY_KINDS = dict(POEM_KINDS, shuffle=4)
ESSAY_KINDS = {"mirror": 1, "recrawl": 1}
CLOUGH_TOPICS = {"a": "inheritance in object-oriented programming", "b": "PageRank", "c": "the vector space model",
                 "d": "Bayes' theorem", "e": "dynamic programming"}


def weighted(rng, table):
    keys = list(table)
    return rng.choices(keys, weights=[table[k] for k in keys])[0]


class Planner:
    """Pages planned so far (with their hosts, truth labels and parents) and the labelled pairs."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = Random(f"editset:{seed}")
        self.pages = []
        self.negatives = []  # (page a, page b, kind)
        self.heavy_pairs = []
        self.labels = 0
        self.hosts = {}

    def label(self):
        self.labels += 1
        return f"t{self.labels:05}"

    def make_hosts(self, spec):
        """Host pools {key: (lang, genres, count)}, each host weighted 1/rank^0.9 (a long tail)."""
        taken = set()
        for key, (lang, genre_mix, n) in spec.items():
            hosts = []
            for i in range(n):
                genre = genre_mix[i % len(genre_mix)]
                hosts.append(Host(lang, genre, Random(f"{self.seed}:host:{key}:{i}"), taken))
            ranks = list(range(n))
            self.rng.shuffle(ranks)
            self.hosts[key] = (hosts, [1 / (r + 1) ** 0.9 for r in ranks])

    def small_hosts(self, key, lang, genre, n):
        """n hosts outside the weighted pools, each the home of one to three originals (and
        only of their recrawls and redesigns): the long tail of sites with a few pages."""
        taken = {h.name for hosts, _ in self.hosts.values() for h in hosts}
        taken |= {h.domain.split(".", 1)[-1] for hosts, _ in self.hosts.values() for h in hosts}
        hosts = [Host(lang, genre, Random(f"{self.seed}:host:{key}:{i}"), taken) for i in range(n)]
        return [h for h in hosts for _ in range(self.rng.randint(1, 3))]

    def pick_host(self, pool, avoid=()):
        hosts, weights = self.hosts[pool]
        choices = [(h, w) for h, w in zip(hosts, weights) if h not in avoid]
        return self.rng.choices([h for h, _ in choices], weights=[w for _, w in choices])[0]

    def add_page(self, host, article, crawl, kind, truth, parent=None, url=None, version=0, variant=None, source=None):
        """A page of `article` on `host`, crawled at `crawl`, made from `parent` (or None)."""
        rng = self.rng
        page = {"host": host, "article": article, "crawl": crawl, "kind": kind, "truth": truth,
                "parent": parent, "version": version, "variant": variant,
                "url": url or host.url(article, article["date"], version),
                "views": rng.randint(20, 400) if parent is None else rng.randint(20, 20000),
                "comments": rng.choice([0, 0, rng.randint(1, 12), rng.randint(1, 150)]),
                "source": source or article["source"],
                "ops": (parent["ops"] + [kind]) if parent is not None and kind not in ("original",) else []}
        host.pages.append(page)
        self.pages.append(page)
        return page

    def original(self, base, pool, host=None, kind="original", truth=None):
        a = {k: base[k] for k in ("title", "paras", "author", "section", "date", "lang", "form", "source")}
        if "items" in base:
            a["items"] = base["items"]
        host = host or self.pick_host(pool)
        crawl = a["date"] + dt.timedelta(days=self.rng.randint(0, 20), minutes=self.rng.randrange(1440))
        return self.add_page(host, a, crawl, kind, truth or self.label())

    def copies(self, first, pool, n, kinds):
        """n made copies of the cluster of page `first`."""
        rng = self.rng
        cluster = [first]
        for _ in range(n):
            for _attempt in range(8):
                kind = weighted(rng, kinds)
                parent = rng.choice(cluster[1:]) if len(cluster) > 1 and rng.random() < 0.25 else first
                made = self.copy(parent, pool, kind)
                if made is not None:
                    cluster.append(made)
                    break
        return cluster

    def copy(self, parent, pool, kind):
        """One copy of `parent` of the given kind, or None when the kind does not apply."""
        rng = self.rng
        a = parent["article"]
        later = parent["crawl"] + dt.timedelta(days=rng.randint(1, 300), minutes=rng.randrange(1440))
        other = lambda: self.pick_host(pool, avoid={parent["host"]})  # noqa: E731
        variant = None
        if kind == "recrawl":
            page = self.add_page(parent["host"], a, parent["crawl"] + dt.timedelta(days=rng.randint(20, 500)), kind,
                                 parent["truth"], parent, url=parent["url"], version=parent["version"])
            page["views"] = parent["views"] + rng.randint(5, 5000)
            page["comments"] = parent["comments"] + rng.randint(0, 30)
            return page
        if kind == "boilerplate":
            if parent["version"] == 1 or any(p["version"] == 1 and p["truth"] == parent["truth"] for p in parent["host"].pages):
                return None
            return self.add_page(parent["host"], a, later, kind, parent["truth"], parent, version=1)
        if kind == "mirror":
            b = dict(a, date=a["date"] + dt.timedelta(days=rng.randint(0, 5), hours=rng.randint(0, 12)))
            return self.add_page(other(), b, later, kind, parent["truth"], parent)
        if kind == "syndication":
            host = other()
            zh = a["lang"] == "zh"
            src, url = parent["host"].name, parent["url"]
            line = rng.choice([f"本文来源：{src}", f"原文链接：{url}", f"转载自{src}，版权归原作者所有。", f"原标题：{a['title']}　来源：{src}"] if zh
                              else [f"This article originally appeared on {src} and is republished with permission.",
                                    f"Source: {url}", f"Republished from {src}. Read the original at {url}",
                                    f"Originally published by {src}."])
            b = dict(a, title=new_headline(a, rng))
            if rng.random() < 0.5:
                b["top"] = a.get("top", []) + [line]
            else:
                b["end"] = a.get("end", []) + [line]
            return self.add_page(host, b, later, kind, parent["truth"], parent, variant="attribution " + ("top" if "top" in b and b["top"] != a.get("top", []) else "end"))
        if kind == "shuffle" and a["form"] == "anthology":
            made = shuffle_poems(a, rng)
        elif kind == "ads":
            host = other() if rng.random() < 0.7 else parent["host"]
            titles = [p["article"]["title"] for p in host.pages[:40]]
            made = inserted(a, rng, titles)
            if made:
                return self.add_page(host, made[0], later, kind, parent["truth"], parent, variant=made[1])
            return None
        else:
            fn = {"heavy-edit": heavy_edit, "light-edit": light_edit, "truncation": truncation, "shuffle": shuffle,
                  "numbers": change_numbers, "width-punct": width_punct}[kind]
            made = fn(a, rng)
        if made is None:
            return None
        b, variant = made
        host = other() if rng.random() < 0.8 else parent["host"]
        return self.add_page(host, b, later, kind, parent["truth"], parent, variant=variant)


def pick_pairs(items, key, n, rng):
    """Up to n pairs of items with an equal key, each item in one pair at most."""
    by = defaultdict(list)
    for it in items:
        by[key(it)].append(it)
    pairs = []
    for k in sorted(by, key=str):
        group = by[k]
        for i in range(0, len(group) - 1, 2):
            pairs.append((group[i], group[i + 1]))
    rng.shuffle(pairs)
    return pairs[:n]


def poem_article(p, date):
    return {"key": p["ref"], "lang": "zh", "source": "poems", "form": "poem", "title": p["title"],
            "paras": [f"【唐】{p['author']}"] + p["lines"], "author": p["author"], "section": "唐诗", "date": date}


def build(seed, data):
    plan = Planner(seed)
    rng = plan.rng
    dedupe = Deduper()
    stats = {"seed": seed}

    # --- sources and deduplication ---------------------------------------------
    clough = read_clough(data)
    for task, t in clough.items():
        dedupe.offer(["\n".join(t["orig"])], "clough")
    ccnet = [b for b in load_ccnet(Random(f"{seed}:ccnet"), data) if dedupe.offer(b["texts"], "ccnet")]
    thuc = load_thucnews(Random(f"{seed}:thucnews"), data)
    Random(f"{seed}:thuc-order").shuffle(thuc)
    thuc = [b for b in thuc if dedupe.offer(b["texts"], "thucnews")][:THUC_BASES]
    qts, yd, sm = load_poems(data)
    editions = pair_editions(qts, yd)
    scripts = pair_scripts(qts, sm)
    prng = Random(f"{seed}:poems")
    used = set()

    def poem_text(p):
        return "".join(p["lines"])

    def poem_date():
        return dt.datetime(2015, 1, 1) + dt.timedelta(days=prng.randrange(6 * 365), minutes=prng.randrange(1440))

    script_bases = []
    for k in sorted(scripts):
        i = scripts[k]
        group = [poem_text(qts[i]), poem_text(sm[k])] + ([poem_text(yd[editions[i]])] if i in editions else [])
        if i not in used and dedupe.offer(group, "poems"):
            used.add(i)
            script_bases.append((i, k))
    ed_ids = sorted(editions)
    prng.shuffle(ed_ids)
    edition_bases, anth_pool = [], defaultdict(list)
    for i in ed_ids:
        n = len(han_only(poem_text(qts[i])))
        if i in used or n < 20 or n > 400:
            continue
        if len(edition_bases) < 220 and (n >= 40 or prng.random() < 0.25):
            if dedupe.offer([poem_text(qts[i]), poem_text(yd[editions[i]])], "poems"):
                used.add(i)
                edition_bases.append(i)
        elif n <= 120:
            anth_pool[qts[i]["author"]].append(i)
    anthologies = []
    for author in sorted(anth_pool, key=lambda a: -len(anth_pool[a])):
        pool = anth_pool[author]
        while len(pool) >= 3 and len(anthologies) < 40:
            take, pool = pool[:prng.randint(3, 5)], pool[5:]
            texts = [poem_text(qts[i]) for i in take] + [poem_text(yd[editions[i]]) for i in take]
            if dedupe.offer(texts, "poems"):
                used.update(take)
                anthologies.append(take)
        if len(anthologies) >= 40:
            break
    by_author = defaultdict(list)
    for i, p in enumerate(qts):
        if i not in used and 40 <= len(han_only(poem_text(p))) <= 300 and p["author"] not in ("不詳", "無名氏"):
            by_author[p["author"]].append(i)
    plain = []
    for author in sorted(by_author, key=lambda a: -len(by_author[a]))[:70]:
        for i in by_author[author][:4]:
            group = [poem_text(qts[i])] + ([poem_text(yd[editions[i]])] if i in editions else [])
            if dedupe.offer(group, "poems"):
                used.add(i)
                plain.append(i)
    stats["dropped_as_near_copies"] = dict(sorted(dedupe.dropped.items()))

    # --- hosts -------------------------------------------------------------------
    plan.make_hosts({
        "en": ("en", ["blog", "news", "blog"], 30),
        "en-wiki": ("en", ["wiki"], 2),
        "en-essay": ("en", ["essay"], 4),
        "zh": ("zh", ["news"], 38),
        "zh-poetry": ("zh", ["poetry"], 14),
    })

    # --- hard negatives first (their bases get no copies) ------------------------
    short_first = sorted(thuc, key=lambda b: (sum(len(p) for p in b["paras"]), b["key"]))
    topic_pairs = pick_pairs(short_first[: len(short_first) // 3], lambda b: b["section"], 60, rng)
    taken = set()
    for a, b in topic_pairs:
        host = plan.pick_host("zh")
        pa, pb = plan.original(a, "zh", host, "same-topic"), plan.original(b, "zh", host, "same-topic")
        plan.negatives.append((pa, pb, "same-topic"))
        taken.update([a["key"], b["key"]])
    thuc = [b for b in thuc if b["key"] not in taken]
    sib_pairs = pick_pairs(ccnet, lambda b: b["parent"], 20, rng)
    for a, b in sib_pairs:
        host = plan.pick_host("en")
        pa, pb = plan.original(a, "en", host, "sibling"), plan.original(b, "en", host, "sibling")
        plan.negatives.append((pa, pb, "sibling"))
        taken.update([a["key"], b["key"]])
    ccnet = [b for b in ccnet if b["key"] not in taken]
    author_pairs = pick_pairs(plain, lambda i: qts[i]["author"], 45, rng)
    for i, j in author_pairs:
        host = plan.pick_host("zh-poetry")
        pa = plan.original(poem_article(qts[i], poem_date()), "zh-poetry", host, "same-author")
        pb = plan.original(poem_article(qts[j], poem_date()), "zh-poetry", host, "same-author")
        plan.negatives.append((pa, pb, "same-author"))
        taken.update([i, j])
    plain = [i for i in plain if i not in taken]

    # --- English: ccnet -------------------------------------------------------------
    small = plan.small_hosts("en-small", "en", "blog", 5)
    for n, b in enumerate(ccnet):
        first = plan.original(b, "en", small[n] if n < len(small) else None)
        plan.copies(first, "en", weighted(rng, {1: 4, 2: 8, 3: 12, 4: 14, 5: 14, 6: 13, 7: 12, 8: 10, 9: 7, 10: 6}), PROSE_KINDS)

    # --- English: Clough & Stevenson ----------------------------------------------
    essay_date = dt.datetime(2010, 3, 1)
    for task, t in clough.items():
        topic = CLOUGH_TOPICS.get(task, f"task {task}")
        base = {"title": topic[:1].upper() + topic[1:], "paras": t["orig"], "author": None, "section": "Reference",
                "date": essay_date + dt.timedelta(days=rng.randrange(60)), "lang": "en", "form": "essay", "source": "clough"}
        orig = plan.original(base, "en-wiki")
        plan.copies(orig, "en-wiki", 1, ESSAY_KINDS)
        non = []
        for name, category, paras in t["answers"]:
            title = rng.choice([f"My answer: {topic}", f"Homework help: {topic}", f"Can someone check my answer on {topic}?",
                                f"Coursework – {topic} ({name.split('_')[0]})", f"Short answer on {topic}"])
            a = {"title": title, "paras": paras, "author": rng.choice(["student", "anon", name[:4]]), "section": "Coursework",
                 "date": essay_date + dt.timedelta(days=rng.randrange(90, 400)), "lang": "en", "form": "essay", "source": "clough"}
            host = plan.pick_host("en-essay")
            crawl = a["date"] + dt.timedelta(days=rng.randint(0, 30))
            off_source = overlap(shingles("\n".join(paras)), shingles("\n".join(t["orig"]))) < 0.05
            if category in ("cut", "light") and off_source:
                plan.add_page(host, a, crawl, "rewrite-offsource", plan.label(), variant=f"{category} ({name})", source="clough")
            elif category in ("cut", "light"):
                plan.add_page(host, a, crawl, "rewrite", orig["truth"], orig, variant=f"{category} ({name})", source="clough")
            elif category == "heavy":
                p = plan.add_page(host, a, crawl, "rewrite-heavy", plan.label(), variant=f"{category} ({name})", source="clough")
                plan.heavy_pairs.append((p, orig))
            else:
                p = plan.add_page(host, a, crawl, "plag-non", plan.label(), variant=f"{category} ({name})", source="clough")
                plan.negatives.append((p, orig, "plag-non"))
                non.append(p)
        for x, y in zip(non[::2], non[1::2]):
            plan.negatives.append((x, y, "plag-non"))

    # --- Chinese: THUCNews ------------------------------------------------------------
    small = plan.small_hosts("zh-small", "zh", "news", 4)
    for n, b in enumerate(thuc):
        first = plan.original(b, "zh", small[n] if n < len(small) else None)
        plan.copies(first, "zh", weighted(rng, {0: 40, 1: 22, 2: 16, 3: 11, 4: 7, 5: 4}), PROSE_KINDS)

    # --- Chinese: poems ---------------------------------------------------------------
    small = plan.small_hosts("poetry-small", "zh", "poetry", 3)
    for n, i in enumerate(edition_bases):
        first = plan.original(poem_article(qts[i], poem_date()), "zh-poetry", small[n] if n < len(small) else None)
        j = editions[i]
        ed = dict(poem_article(yd[j], first["article"]["date"] + dt.timedelta(days=prng.randint(1, 200))), source="poems")
        plan.add_page(plan.pick_host("zh-poetry", avoid={first["host"]}), ed, first["crawl"] + dt.timedelta(days=rng.randint(1, 300)),
                      "edition", first["truth"], first, variant=f"Jaccard {len(bigrams(poem_text(qts[i])) & bigrams(poem_text(yd[j]))) / len(bigrams(poem_text(qts[i])) | bigrams(poem_text(yd[j]))):.2f}")
        plan.copies(first, "zh-poetry", weighted(rng, {0: 60, 1: 25, 2: 15}), POEM_KINDS)
    for i, k in script_bases:
        first = plan.original(poem_article(qts[i], poem_date()), "zh-poetry")
        sc = poem_article(sm[k], first["article"]["date"] + dt.timedelta(days=prng.randint(1, 200)))
        plan.add_page(plan.pick_host("zh-poetry", avoid={first["host"]}), sc, first["crawl"] + dt.timedelta(days=rng.randint(1, 300)),
                      "script", first["truth"], first, variant="simplified (水墨唐诗)")
        if i in editions and rng.random() < 0.5:
            ed = poem_article(yd[editions[i]], first["article"]["date"] + dt.timedelta(days=prng.randint(1, 200)))
            plan.add_page(plan.pick_host("zh-poetry", avoid={first["host"]}), ed, first["crawl"] + dt.timedelta(days=rng.randint(1, 300)),
                          "edition", first["truth"], first, variant="御定全唐詩")
        plan.copies(first, "zh-poetry", weighted(rng, {0: 70, 1: 20, 2: 10}), POEM_KINDS)
    for n, take in enumerate(anthologies):
        author = qts[take[0]]["author"]
        items = [(qts[i]["title"], qts[i]["author"], qts[i]["lines"]) for i in take]
        title = f"{author}诗选（{'一二三四五六七八九十'[n % 10]}）"
        base = {"title": title, "items": items, "paras": anthology_paras(items), "author": author, "section": "唐诗",
                "date": poem_date(), "lang": "zh", "form": "anthology", "source": "poems"}
        first = plan.original(base, "zh-poetry")
        eitems = [(yd[editions[i]]["title"], yd[editions[i]]["author"], yd[editions[i]]["lines"]) for i in take]
        ed = dict(base, items=eitems, paras=anthology_paras(eitems), date=base["date"] + dt.timedelta(days=prng.randint(1, 200)))
        plan.add_page(plan.pick_host("zh-poetry", avoid={first["host"]}), ed, first["crawl"] + dt.timedelta(days=rng.randint(1, 300)),
                      "edition", first["truth"], first, variant=f"anthology of {len(take)}")
        plan.copies(first, "zh-poetry", weighted(rng, {0: 50, 1: 30, 2: 20}), ANTHOLOGY_KINDS)
    for i in plain[:120]:
        first = plan.original(poem_article(qts[i], poem_date()), "zh-poetry")
        plan.copies(first, "zh-poetry", weighted(rng, {0: 40, 1: 35, 2: 25}), POEM_KINDS)
    return plan, stats


# ---------------------------------------------------------------------------------------
# Output


def wet_record(headers, body):
    """make_warc.record with the gzip header's time zeroed, so the file is the same for a seed."""
    member = bytearray(record(headers, body))
    member[4:8] = bytes(4)
    return bytes(member)


def body_text(page):
    return "\n".join(page["article"]["paras"])


def checks(plan):
    """How much of each copy's body its cluster's original shares (overlap coefficient of
    shingles), by kind, and how much each hard-negative pair shares."""
    firsts = {}
    for p in plan.pages:
        if p["parent"] is None and p["truth"] not in firsts:
            firsts[p["truth"]] = p
    sets = {}

    def sh(p):
        if id(p) not in sets:
            sets[id(p)] = shingles(body_text(p))
        return sets[id(p)]

    by = defaultdict(list)
    for p in plan.pages:
        if p["parent"] is not None and p["kind"] != "rewrite-heavy":
            by[p["kind"]].append(overlap(sh(p), sh(firsts[p["truth"]])))
    out = {"copy_vs_original": {k: {"min": round(min(v), 2), "median": round(sorted(v)[len(v) // 2], 2)} for k, v in sorted(by.items())}}
    neg = defaultdict(list)
    for a, b, kind in plan.negatives:
        neg[kind].append(overlap(sh(a), sh(b)))
    out["negative_pairs"] = {k: {"max": round(max(v), 2), "median": round(sorted(v)[len(v) // 2], 2)} for k, v in sorted(neg.items())}
    heavy = [overlap(sh(a), sh(b)) for a, b in plan.heavy_pairs]
    if heavy:
        out["heavy_pairs"] = {"min": round(min(heavy), 2), "median": round(sorted(heavy)[len(heavy) // 2], 2), "max": round(max(heavy), 2)}
    return out


def write(plan, stats, out, seed):
    rng = Random(f"{seed}:order")
    pages = list(plan.pages)
    rng.shuffle(pages)
    for n, p in enumerate(pages, 1):
        p["id"] = f"<urn:editset:{n:05}>"
    # A host's pages are rendered in crawl order, so "recent" boxes see only earlier pages.
    for p in pages:
        lines = p["host"].render(p, Random(f"{seed}:render:{p['id']}"))
        p["text"] = "\n".join(re.sub(r"[ \t]*\n[ \t]*", " ", x).rstrip() for x in lines if x.strip())
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "pages.jsonl", "w", encoding="utf-8") as f:
        for p in pages:
            f.write(json.dumps({"id": p["id"], "url": p["url"], "text": p["text"]}, ensure_ascii=False) + "\n")
    with open(out / "pages.wet.gz", "wb") as f:
        info = f"software: bench/make_editset.py\r\nformat: WARC File Format 1.0\r\ndescription: labelled editset, seed={seed}\r\n".encode()
        f.write(wet_record([("WARC-Type", "warcinfo"), ("WARC-Date", "2022-06-01T00:00:00Z"), ("WARC-Filename", "pages.wet.gz"),
                        ("WARC-Record-ID", "<urn:editset:warcinfo>"), ("Content-Type", "application/warc-fields")], info))
        for p in pages:
            body = p["text"].encode("utf-8")
            f.write(wet_record([("WARC-Type", "conversion"), ("WARC-Target-URI", p["url"]),
                            ("WARC-Date", p["crawl"].strftime("%Y-%m-%dT%H:%M:%SZ")), ("WARC-Record-ID", p["id"]),
                            ("WARC-Identified-Content-Language", "zho" if p["article"]["lang"] == "zh" else "eng"),
                            ("Content-Type", "text/plain")], body))
    with open(out / "truth.json", "w", encoding="utf-8") as f:
        for p in pages:
            lang = p["article"]["lang"]
            f.write(json.dumps({"id": p["id"], "truth": p["truth"], "kind": p["kind"], "lang": lang,
                                "host": p["host"].domain, "source": p["source"],
                                "derived_from": p["parent"]["id"] if p["parent"] is not None else None,
                                "url": p["url"], "variant": p["variant"], "ops": p["ops"], "group": f"{lang}:{p['kind']}"},
                               ensure_ascii=False) + "\n")
    with open(out / "negatives.jsonl", "w", encoding="utf-8") as f:
        for a, b, kind in plan.negatives:
            f.write(json.dumps({"id_a": a["id"], "id_b": b["id"], "duplicate": False, "kind": kind}) + "\n")
    with open(out / "copy-pairs.jsonl", "w", encoding="utf-8") as f:
        for p in pages:
            if p["parent"] is not None and p["kind"] != "rewrite-heavy":
                f.write(json.dumps({"id_a": p["id"], "id_b": p["parent"]["id"], "duplicate": True, "kind": p["kind"],
                                    "lang": p["article"]["lang"]}) + "\n")
    with open(out / "heavy-pairs.jsonl", "w", encoding="utf-8") as f:
        for a, b in plan.heavy_pairs:
            f.write(json.dumps({"id_a": a["id"], "id_b": b["id"], "duplicate": True, "kind": "rewrite-heavy"}) + "\n")

    hosts = Counter(p["host"].domain for p in pages)
    sizes = Counter(Counter(p["truth"] for p in pages).values())
    by_kind = defaultdict(Counter)
    for p in pages:
        by_kind[p["kind"]][p["article"]["lang"]] += 1
    host_sizes = sorted(hosts.values())
    stats.update({
        "pages": len(pages),
        "hosts": len(hosts),
        "host_pages": {"min": host_sizes[0], "median": host_sizes[len(host_sizes) // 2], "max": host_sizes[-1],
                       "with_2_to_5": sum(1 for v in host_sizes if 2 <= v <= 5), "with_1": sum(1 for v in host_sizes if v == 1)},
        "lang": dict(sorted(Counter(p["article"]["lang"] for p in pages).items())),
        "source": dict(sorted(Counter(p["source"] for p in pages).items())),
        "kinds": {k: dict(sorted(v.items())) for k, v in sorted(by_kind.items())},
        "in_clusters": sum(n * c for n, c in sizes.items() if n > 1),
        "cluster_sizes": dict(sorted(sizes.items())),
        "negatives": dict(sorted(Counter(k for _, _, k in plan.negatives).items())),
        "heavy_pairs": len(plan.heavy_pairs),
        "checks": checks(plan),
    })
    (out / "README.txt").write_text(readme(stats, seed), encoding="utf-8")
    return stats


def readme(stats, seed):
    kinds = "\n".join(f"  {k:<14} {sum(v.values()):>5}  " + ", ".join(f"{lang} {n}" for lang, n in v.items())
                      for k, v in stats["kinds"].items())
    return f"""editset (seed {seed}): the third labelled web-page set for neardup. HELD OUT: never tune on it.
made by bench/make_editset.py --seed {seed}; its docstring says how, in full.

Research use only. The text comes from ../shared/data-samples: Common Crawl pages (CCNet
sample, dolma tests), the Clough & Stevenson plagiarised short answers, THUCNews (Sina
news; categories {', '.join(THUC_CATEGORIES)}), and the chinese-poetry Tang subset
(全唐诗, 御定全唐詩, 水墨唐诗). Do not ship or commit this set. Site names, templates,
URLs, ads and inserted sentences are made up.

{stats['pages']} pages on {stats['hosts']} hosts (pages per host: {stats['host_pages']});
{stats['in_clusters']} pages are in clusters of two or more. Languages: {stats['lang']}.
Sources: {stats['source']}.
Base documents dropped as near copies of others before any page was made: {stats['dropped_as_near_copies']}.

Pages per kind and language:
{kinds}

Cluster sizes (size: clusters): {stats['cluster_sizes']}
Hard-negative pairs (negatives.jsonl): {stats['negatives']}
Heavy-revision pairs (heavy-pairs.jsonl, duplicate: true, reported apart): {stats['heavy_pairs']}

Which pairs count as duplicates: every page of one truth label. Clough & Stevenson `cut`
and `light` answers share their source's label (kind `rewrite`); `heavy` answers are
singletons (kind `rewrite-heavy`), their pairs with the source listed in heavy-pairs.jsonl;
`non` answers are singletons (kind `plag-non`) and hard negatives. Real second editions
(kind `edition`: 御定全唐詩 against 全唐诗) and real script pairs (kind `script`: 水墨唐诗,
simplified, against 全唐诗, traditional) are duplicates. No script change is made up.

Files
  pages.jsonl        id, url, text (the page's visible lines)
  pages.wet.gz       warcinfo + one WET `conversion` record per page; WARC-Record-ID is the id
  truth.json         JSON Lines: id, truth, kind, lang, host, source, derived_from, url,
                     variant, ops (the chain of kinds from the original), group (lang:kind)
  negatives.jsonl    id_a, id_b, duplicate=false, kind (same-topic, same-author, sibling, plag-non)
  copy-pairs.jsonl   id_a, id_b, duplicate=true, kind, lang: each copy and the page it was made from
  heavy-pairs.jsonl  id_a, id_b, duplicate=true, kind=rewrite-heavy

  neardup eval --truth truth.json --run RUN --by kind      (or --by lang, --by group)
  neardup eval --truth-pairs negatives.jsonl --run RUN
  neardup eval --truth-pairs heavy-pairs.jsonl --run RUN
  neardup eval --truth-pairs copy-pairs.jsonl --run RUN    (split by kind: recall on direct pairs)

Copies against their cluster's original (overlap coefficient of body shingles), and
hard-negative pairs against each other: {json.dumps(stats['checks'], ensure_ascii=False)}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--data", type=Path, default=DATA)
    args = ap.parse_args()
    plan, stats = build(args.seed, args.data)
    stats = write(plan, stats, args.out, args.seed)
    json.dump(stats, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main()
