#!/usr/bin/env python3
"""Builds a labelled set of templated web pages, for measuring near-duplicate detection on
pages whose sites wrap every article in navigation, bylines, counters, "most read" boxes,
ads and footers.

    python3 bench/make_webset.py --articles shipped --out data-samples/web-templated
    python3 bench/make_webset.py --articles research --out target/webset   # needs ../shared

Real articles are rendered into site templates (several Chinese and English sites, each
with its own navigation, byline with date and view counter, a "most read" box drawn from
the site's popular headlines, ads and footer). Every article has an `original` page on its
home site; some also get variants, each labelled with the transformation that made it:

- `mirror`: the same article on another site (another template and host);
- `recrawl`: the same URL fetched again: view counter, date line and "most read" box changed;
- `edit`: another site, with a few words changed, one sentence dropped;
- `ads`: another site, with advertisement paragraphs inserted between paragraphs;
- `truncate`: another site, without the last paragraph(s) (at most 15% of the text),
  ending in a "read more" link;
- `reorder`: another site, with two paragraphs swapped.

Different articles of one site are the hard negatives (same template, different text);
`court` pages put administrative-court judgement openings (one formula, different parties)
on a court website: hard negatives twice over. The truth is one cluster label per page
(`truth`), with the transformation as `kind`, in `truth.json` (JSON Lines); pages are WARC `response`
records (ids `<urn:webset:...>`) in `pages.warc.gz`.

Articles: `shipped` takes them from the project's own data-samples (Tang poems grouped into
anthology pages, court openings), so the result may be shipped; `research` takes BBC News
(English) and THUCNews (Chinese) from ../shared/data-samples, research use only, never
shipped, plus the court openings.
"""

import argparse
import gzip
import html
import io
import json
import random
import re
import sys
import tarfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_warc import record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data-samples"
KINDS = ["mirror", "recrawl", "edit", "ads", "truncate", "reorder"]

ZH_SITES = [
    ("news.dongfang-ribao.cn", "东方日报", ["首页", "新闻", "国内", "国际", "财经", "科技", "体育", "娱乐", "汽车", "房产", "教育", "健康", "旅游", "文化", "视频", "图片", "评论", "专题"],
     ["关于我们 | 联系我们 | 广告服务 | 招聘信息 | 网站地图 | 版权声明", "东方日报社 版权所有 未经授权禁止转载", "京ICP备12045678号-3 京公网安备11010502030456号", "违法和不良信息举报电话：010-85001234 举报邮箱：jubao@dongfang-ribao.cn", "互联网新闻信息服务许可证编号：11220180003"]),
    ("www.xinhu-news.com.cn", "新湖网", ["新湖首页", "要闻", "时政", "社会", "法治", "军事", "经济", "金融", "产经", "地方", "健康", "教育", "文旅", "生活"],
     ["新湖网 主办 Copyright © 2008-2024 All Rights Reserved", "本网站所刊载信息，不代表新湖网观点。刊用本网站稿件，务经书面授权。", "浙ICP备09013456号 增值电信业务经营许可证 浙B2-20090123", "新湖网客户端下载 | 官方微博 | 官方微信 | 意见反馈"]),
    ("www.shanhai-wang.com", "山海网", ["推荐", "热点", "本地", "民生", "财经", "科技", "数码", "游戏", "读书", "历史", "国学", "诗词", "书画", "收藏"],
     ["分享到：微信 微博 QQ空间 豆瓣", "责任编辑：山海网编辑部", "山海网 ShanHai.com 版权所有 © 2003-2024", "粤ICP备05067890号 粤公网安备 44030402001234号", "本站部分内容来源于网络，如有侵权请联系删除"]),
    ("www.wenyuan.org.cn", "文苑网", ["文苑首页", "诗歌", "散文", "小说", "古典文学", "唐诗", "宋词", "元曲", "名家", "赏析", "论坛", "投稿"],
     ["文苑网 —— 传承中华文化", "投稿邮箱：tougao@wenyuan.org.cn 联系电话：021-61234567", "沪ICP备11022334号-1", "Copyright © 文苑网 保留所有权利"]),
]
EN_SITES = [
    ("www.dailyherald-example.co.uk", "The Daily Herald", ["Home", "News", "UK", "World", "Business", "Politics", "Tech", "Science", "Health", "Sport", "Culture", "Opinion", "Travel", "Weather"],
     ["About us | Contact | Advertise | Careers | Terms of use | Privacy policy | Cookie settings", "© 2024 Daily Herald Media Group Ltd. All rights reserved.", "Registered in England and Wales No. 01234567. Registered office: 1 Fleet Street, London EC4Y 1AA", "Sign up for our morning newsletter and never miss a story"]),
    ("news.example-wire.com", "Example Wire", ["Top stories", "World", "US", "Markets", "Business", "Technology", "Entertainment", "Sports", "Lifestyle", "Video", "Podcasts"],
     ["Example Wire is not responsible for the content of external sites.", "Copyright 2024 Example Wire. All Rights Reserved. This material may not be published, broadcast, rewritten or redistributed.", "Follow us on Facebook, Twitter and Instagram", "Download the Example Wire app for iOS and Android"]),
    ("www.metro-chronicle.net", "Metro Chronicle", ["Front page", "Local", "National", "International", "Money", "Tech", "Arts", "Books", "Food", "Sports", "Obituaries", "Classifieds"],
     ["Share this article: Email | Facebook | Twitter | LinkedIn", "Metro Chronicle, 200 Main Street, Springfield", "Subscribe today: unlimited digital access for $1 a week", "© Metro Chronicle Publishing Co."]),
    ("blog.newsreader-example.org", "NewsReader Blog", ["Home", "Latest", "Archive", "Categories", "Tags", "About", "Contact"],
     ["This post is shared for discussion under fair use.", "Powered by WordPress | Theme by Example Themes", "Leave a comment below. Comments are moderated.", "NewsReader Blog © 2024"]),
]
COURT_SITE = ("wenshu.court-example.gov.cn", "裁判文书公开网", ["首页", "刑事案件", "民事案件", "行政案件", "赔偿案件", "执行案件", "高级检索", "法律法规", "司法解释", "帮助中心"],
              ["主办单位：最高人民法院 技术支持：人民法院信息技术服务中心", "京ICP备05023036号", "本网站所公布的裁判文书仅供学习研究使用", "服务热线：400-601-1234 工作时间：周一至周五 8:30-17:30"])

ZH_ADS = ["【广告】夏季清仓大促，全场商品低至三折，点击立即抢购！", "扫码下载客户端，新用户注册即送五十元红包。", "【推广】专业装修团队，免费上门设计，电话咨询享优惠。",
          "热门推荐：这种方法三天学会理财，月入过万不是梦。", "【广告】名校名师在线辅导，首课免费试听，名额有限。"]
EN_ADS = ["ADVERTISEMENT: Summer sale now on, up to 70% off everything. Shop now!", "Sponsored: Refinance your mortgage today and save hundreds every month.",
          "Advertisement: Learn a new language in just three weeks with our award-winning app.", "Sponsored content: Five gadgets everyone will want this year.",
          "ADVERTISEMENT: Book your holiday now and get a free upgrade."]


def is_zh(text):
    return sum("\u4e00" <= c <= "\u9fff" for c in text) > len(text) / 4


def poem_articles(rng):
    """Anthology pages: three to six poems of one author from 全唐诗 (one edition only, so
    no page is a natural near duplicate of another)."""
    by_author = {}
    with gzip.open(ROOT / "data-samples/zh-tang-poems/poems.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            if p["edition"] == "quantangshi":
                by_author.setdefault(p["author"], []).append(p)
    articles = []
    for author in sorted(by_author):
        poems = by_author[author]
        i = 0
        while i + 3 <= len(poems):
            n = rng.randint(3, 6)
            group = poems[i:i + n]
            i += n
            paragraphs = []
            for p in group:
                paragraphs.append(f"《{p['title']}》")
                paragraphs.append("".join(p["text"].split("\n")))
            articles.append({"key": group[0]["id"], "title": f"{author}诗选：{group[0]['title']}等{len(group)}首", "paragraphs": paragraphs, "zh": True})
    return articles


def court_articles():
    out = []
    with gzip.open(ROOT / "data-samples/zh-court-openings/openings.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            sentences = [s + "。" for s in o["text"].split("。") if s.strip()]
            out.append({"key": o["id"], "truth": o["truth"], "title": o["cause"] + " 行政裁定书", "paragraphs": sentences, "zh": True})
    return out


def bbc_articles():
    """BBC News; copies with the same title or the same opening are dropped (the collection
    has natural exact and near duplicates)."""
    articles, seen = [], set()
    with tarfile.open(SHARED / "en_bbc_news_2225.tar.gz") as tar:
        for m in sorted((m for m in tar.getmembers() if m.name.endswith(".txt")), key=lambda m: m.name):
            text = tar.extractfile(m).read().decode("latin-1")
            lines = [l.strip() for l in text.split("\n")]
            title, body = lines[0], [l for l in lines[1:] if l]
            keys = {re.sub(r"\W+", "", title.lower()), re.sub(r"\W+", "", " ".join(body).lower())[:300]}
            if not body or keys & seen:
                continue
            seen |= keys
            articles.append({"key": m.name, "title": title, "paragraphs": body, "zh": False})
    return articles


def thucnews_articles():
    """THUCNews: the body has no paragraph breaks, so every three sentences make one;
    copies sharing their first 40 characters are dropped."""
    articles, seen = [], set()
    with gzip.open(SHARED / "zh_thucnews_subset.tsv.gz", "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            _, _, text = line.rstrip("\n").partition("\t")
            if len(text) < 200 or text[:40] in seen:
                continue
            seen.add(text[:40])
            sentences = [s + "。" for s in text.split("。") if s.strip()]
            paragraphs = ["".join(sentences[i:i + 3]) for i in range(0, len(sentences), 3)]
            articles.append({"key": f"thucnews-{n}", "title": sentences[0][:24], "paragraphs": paragraphs, "zh": True})
    return articles


def drop_near_copies(articles):
    """Drops articles whose body shares half its character 8-grams with an earlier one:
    the collections hold natural copies (under other titles) that would otherwise count as
    false positives. Candidates share one of their 8 smallest shingle hashes."""
    kept, index = [], {}
    for a in articles:
        text = re.sub(r"\s+", "", "".join(a["paragraphs"]).lower())
        shingles = {zlib.crc32(text[i:i + 8].encode()) for i in range(max(1, len(text) - 7))}
        sketch = sorted(shingles)[:8]
        candidates = {j for h in sketch for j in index.get(h, ())}
        if any(len(shingles & kept[j][1]) >= 0.5 * min(len(shingles), len(kept[j][1])) for j in candidates):
            continue
        for h in sketch:
            index.setdefault(h, []).append(len(kept))
        kept.append((a, shingles))
    return [a for a, _ in kept]


class Site:
    def __init__(self, spec, zh, rng):
        self.host, self.name, self.nav, self.footer = spec
        self.zh = zh
        self.rng = rng
        self.popular = []  # headlines of the site's "most read" box

    def page(self, article, url_path, views, date, rng, paragraphs=None, extra_end=None):
        paragraphs = paragraphs if paragraphs is not None else article["paragraphs"]
        zh = self.zh
        most = rng.sample(self.popular, min(5, len(self.popular))) if self.popular else []
        byline = (f"来源：{self.name} 发布时间：{date} 阅读：{views}次" if zh
                  else f"By Staff Reporter | Published {date} | {views:,} views")
        e = html.escape
        body = [
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\">",
            f"<title>{e(article['title'])} - {e(self.name)}</title>",
            "<script>window.dataLayer=[];function track(){}</script><style>nav li{display:inline}</style></head><body>",
            f"<header><div class=\"logo\">{e(self.name)}</div><div>{'登录 | 注册 | 手机版' if zh else 'Sign in | Subscribe | Edition: UK'}</div></header>",
            "<nav><ul>" + "".join(f"<li><a href=\"/{i}\">{e(x)}</a></li>" for i, x in enumerate(self.nav)) + "</ul></nav>",
            f"<div class=\"crumbs\">{'当前位置：首页 > 正文' if zh else 'You are here: Home > News > Article'}</div>",
            f"<main><h1>{e(article['title'])}</h1><div class=\"byline\">{e(byline)}</div><article>",
            "".join(f"<p>{e(p)}</p>" for p in paragraphs),
            f"<p>{e(extra_end)}</p>" if extra_end else "",
            "</article>",
            f"<div class=\"share\">{'分享到：' if zh else 'Share:'} <a>WeChat</a> <a>Weibo</a> <a>Facebook</a> <a>X</a></div>",
            "</main><aside><h3>" + ("热门排行" if zh else "Most read") + "</h3><ol>" + "".join(f"<li>{e(h)}</li>" for h in most) + "</ol></aside>",
            "<footer>" + "".join(f"<div>{e(x)}</div>" for x in self.footer) + "</footer></body></html>",
        ]
        return "".join(body)


def edit_text(paragraphs, rng, zh):
    """Changes a few words (Chinese: characters) and drops one sentence."""
    out = list(paragraphs)
    if zh:
        pool = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经"
        for _ in range(max(2, sum(map(len, out)) // 120)):
            i = rng.randrange(len(out))
            if len(out[i]) > 4:
                j = rng.randrange(len(out[i]))
                out[i] = out[i][:j] + rng.choice(pool) + out[i][j + 1:]
    else:
        for _ in range(max(2, sum(len(p.split()) for p in out) // 60)):
            i = rng.randrange(len(out))
            words = out[i].split()
            if len(words) > 3:
                words[rng.randrange(len(words))] = rng.choice(["the", "new", "said", "also", "major", "local"])
                out[i] = " ".join(words)
    longest = max(range(len(out)), key=lambda i: len(out[i]))
    sep = "。" if zh else ". "
    parts = [s for s in out[longest].split(sep) if s]
    if len(parts) > 2:
        del parts[rng.randrange(len(parts))]
        out[longest] = sep.join(parts) + ("。" if zh else "")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--articles", choices=["shipped", "research"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", type=float, default=0.4, help="share of articles that get variants")
    ap.add_argument("--court", type=int, default=200, help="court-opening pages")
    ap.add_argument("--limit", type=int, default=0, help="articles per language at most (0: all)")
    args = ap.parse_args()
    rng = random.Random(20261122)
    if args.articles == "shipped":
        pools = {"zh": poem_articles(rng)[: args.limit or 400], "en": []}
    else:
        if not SHARED.exists():
            sys.exit(f"{SHARED} is missing: the research articles are read from there")
        pools = {"zh": drop_near_copies(thucnews_articles()), "en": drop_near_copies(bbc_articles())}
        if args.limit:
            pools = {k: v[: args.limit] for k, v in pools.items()}
    sites = {"zh": [Site(s, True, rng) for s in ZH_SITES], "en": [Site(s, False, rng) for s in EN_SITES]}
    for lang, articles in pools.items():
        for a in articles:
            a["home"] = rng.randrange(len(sites[lang]))
        for i, site in enumerate(sites[lang]):
            own = [a["title"] for a in articles if a["home"] == i]
            site.popular = rng.sample(own, min(12, len(own)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pages, truth = [], []

    def add(page_id, url, html_text, label, kind, day):
        pages.append((page_id, url, html_text, f"2026-{1 + day // 28:02}-{1 + day % 28:02}T08:00:00Z"))
        truth.append({"id": f"<urn:webset:{page_id}>", "truth": label, "kind": kind, "url": url})

    for lang, articles in pools.items():
        ads = ZH_ADS if lang == "zh" else EN_ADS
        for n, a in enumerate(articles):
            home = sites[lang][a["home"]]
            label = f"{lang}-{n:05}"
            day = rng.randrange(300)
            date = f"2024-{1 + day // 28:02}-{1 + day % 28:02} {rng.randrange(24):02}:{rng.randrange(60):02}"
            path = f"/{2024}/{1 + day // 28:02}/{n:05}.html"
            add(f"{label}-original", f"https://{home.host}{path}", home.page(a, path, rng.randrange(50, 90000), date, rng), label, "original", day)
            if rng.random() >= args.variants:
                continue
            others = [s for s in sites[lang] if s is not home]
            for kind in rng.sample(KINDS, rng.choice([1, 1, 2])):
                site = home if kind == "recrawl" else rng.choice(others)
                paras = list(a["paragraphs"])
                extra = None
                if kind == "edit":
                    paras = edit_text(paras, rng, a["zh"])
                elif kind == "ads":
                    for ad in rng.sample(ads, 2):
                        paras.insert(rng.randrange(1, len(paras) + 1), ad)
                elif kind == "truncate":
                    total = sum(map(len, paras))
                    while len(paras) > 2 and sum(map(len, paras[:-1])) >= 0.85 * total:
                        paras.pop()
                    extra = "阅读全文请访问原网站" if a["zh"] else "Read the full story on our partner's site"
                elif kind == "reorder" and len(paras) >= 3:
                    i, j = rng.sample(range(len(paras)), 2)
                    paras[i], paras[j] = paras[j], paras[i]
                url_path = path if kind == "recrawl" else f"/a/{rng.getrandbits(40):x}"
                add(f"{label}-{kind}", f"https://{site.host}{url_path}",
                    site.page(a, url_path, rng.randrange(50, 90000), date, rng, paras, extra), label, kind, day + rng.randrange(1, 30))
    if args.court:
        court = Site(COURT_SITE, True, rng)
        openings = court_articles()[: args.court]
        court.popular = [o["title"] for o in openings[:12]]
        for n, o in enumerate(openings):
            path = f"/wenshu/{n:06}.html"
            add(f"court-{n:05}", f"https://{court.host}{path}", court.page(o, path, rng.randrange(10, 5000), "2016-06-01", rng), o["truth"], "court", 100 + n % 100)
    order = list(range(len(pages)))
    rng.shuffle(order)
    with open(out / "pages.warc.gz", "wb") as warc:
        for i in order:
            page_id, url, html_text, fetched = pages[i]
            payload = html_text.encode("utf-8")
            http = f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
            warc.write(record([("WARC-Type", "response"), ("WARC-Record-ID", f"<urn:webset:{page_id}>"), ("WARC-Target-URI", url),
                               ("WARC-Date", fetched), ("Content-Type", "application/http; msgtype=response")], http + payload))
    # JSON Lines named .json: read when named directly, skipped when the folder is input.
    with open(out / "truth.json", "w", encoding="utf-8") as f:
        for i in order:
            f.write(json.dumps(truth[i], ensure_ascii=False) + "\n")
    kinds = {}
    for t in truth:
        kinds[t["kind"]] = kinds.get(t["kind"], 0) + 1
    print(f"{out}: {len(pages)} pages; " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
