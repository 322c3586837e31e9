#!/usr/bin/env python3
"""Make a labelled web-crawl evaluation set for neardup (the "crawlset").

    python3 bench/make_crawlset.py --articles shipped|research --out DIR [--seed N] [--pages N]

This script builds the set from real article text and invented site templates. It
uses the Python standard library only and gives the same output for the same seed.
This set is held out: the defaults are judged on it, so do not tune them to it. It
is built separately from bench/make_webset.py.

Article text comes from ../shared/data-samples (next to the repository root; see its
README.md for formats and licences). The base texts are used as they are: the script
picks documents, splits them into paragraphs (it also repairs the paragraph marks of
the GBK Sogou file), and makes only the labelled changes listed below.

  research  For evaluation only: nothing it writes may be shipped.
            English: Reuters-21578 <BODY> texts of at least 500 characters.
            Chinese: Sogou news (GBK or UTF-8, with its paragraph marks repaired),
            openings of administrative court judgments, and a share of Tang-poem
            anthologies. Research use only (Reuters, Sogou).
  shipped   Chinese only, from the two files the README allows to be copied into the
            product: the chinese-poetry Tang subset (MIT; only the 全唐诗 edition, so
            the 御定全唐詩 digitisation of the same poems adds no unlabelled duplicates)
            and the court-judgment openings (MIT repository; PRC Copyright Law Art. 5
            excludes judicial documents from protection). At most 600 pages. The
            default, 280 pages on 40 hosts, keeps all outputs under 1.5 MB; 60
            hosts would leave about 3 articles per host and no long tail.

Base documents are deduplicated among themselves first. A document whose character
5-gram Jaccard with one already kept is >= 0.5, or whose containment in it is >= 0.6,
is dropped (both estimated on a 1-in-4 sample of the 5-grams). Without this, a natural duplicate (a re-issued Reuters story, a brief next
to its full story, two near-identical court openings) would be counted as a false
positive.

Each host has its own template, drawn from random parts: site name, navigation,
breadcrumbs, byline with a date, a view counter, a related-links box, share buttons,
a newsletter line, a cookie notice and a long copyright footer. Each host also has
its own URL scheme. Every page is labelled with a `kind`:

  original     the first publication of an article
  mirror       the same article on another host's template
  url-variant  same host, another URL: tracking parameters, /print/ID, AMP, m.host, or
               an alternative path (`variant` in truth.json says which)
  repost       another host, with an "Originally published at ..." line, maybe a new title
  recrawl      the same URL captured again later: new date, counter and related links
  edit         a few words or a sentence changed, a paragraph added or removed
  ads          1-3 advertisement paragraphs inserted into the body
  date         the dates in the text (and byline) changed
  truncate     a teaser: the first 50-90% of the paragraphs and a "Read more" line
  reorder      two paragraphs swapped
  noise        whitespace, punctuation, full-/half-width changes and typos in a few places
  edition      Chinese only: the text in the other script. Simplified sources are
               converted to traditional characters, and the (traditional) poems to
               simplified, with the built-in one-to-one table below. Characters with
               more than one counterpart (发/發/髮, 后/後, 干/乾/幹, ...) are left as
               they are, so the conversion is partial but never wrong.

Pages that are not duplicates but look alike are hard negatives. Their pages are
singletons, labelled by kind:

  short        two different short articles on one host (the template dominates)
  quote        an article that quotes 1-2 paragraphs of another
  same-event   two articles built from disjoint paragraphs of one source plus other text
  court        two different court judgments that share their boilerplate formulas

Outputs in DIR:
  pages.warc.gz    WARC/1.0 warcinfo + one `response` record per page, one gzip member
                   per record
  pages.wet.gz     Common-Crawl-style WET: one `conversion` record per page holding the
                   visible text (title, then one line per block element)
  pages.jsonl      {"id", "url", "text"} with the WET text
  truth.json       JSON Lines (as `neardup eval --truth` reads it): id, truth (cluster
                   label), kind, variant, url, lang, source, host, derived_from
  negatives.jsonl  labelled hard-negative pairs {"id_a", "id_b", "duplicate": false,
                   "kind"} (`neardup eval --truth-pairs`)
  README.txt       how the set was made

The document ids are the WARC-Record-IDs exactly as neardup reads them, angle brackets
included (`<urn:crawlset:00001>`). One truth.json therefore serves all three inputs.
"""

import argparse
import base64
import datetime as dt
import gzip
import hashlib
import html
import json
import math
import re
import sys
import tarfile
import zlib
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path
from random import Random

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data-samples"

# ---------------------------------------------------------------------------------------
# Simplified <-> traditional: one-to-one pairs only (simplified, traditional).

S2T_PAIRS = (
    "们們这這说說国國时時会會对對为為来來个個学學经經过過动動现現开開关關长長门門问問"
    "间間题題见見觉覺员員区區报報记記进進还還没沒样樣点點东東车車马馬鸟鳥鱼魚龙龍风風"
    "飞飛书書华華业業产產场場处處实實际際边邊让讓认認识識话話语語读讀谁誰请請谢謝该該"
    "设設计計论論议議证證译譯讲講许許诉訴词詞调調谈談试試课課变變应應听聽热熱乐樂买買"
    "卖賣贵貴费費资資贸貿质質财財负負责責货貨贷貸购購银銀钱錢铁鐵错錯键鍵镇鎮闻聞闭閉"
    "闹鬧阅閱阳陽阴陰陆陸队隊阶階险險随隨难難鸡雞达達运運连連远遠迟遲选選递遞邮郵邻鄰"
    "郑鄭乡鄉亚亞优優伤傷众眾传傳侧側债債倾傾儿兒兴興养養农農决決况況净淨凉涼减減则則"
    "刚剛创創剧劇劳勞势勢务務劝勸协協单單卫衛压壓厅廳厂廠县縣参參双雙叙敘号號吗嗎启啟"
    "吴吳响響园園围圍图圖圆圓圣聖坏壞块塊坚堅执執扩擴扫掃扬揚扰擾抢搶护護担擔拥擁择擇"
    "挡擋换換损損摄攝摆擺敌敵数數断斷无無旧舊显顯晓曉暂暫机機杀殺杂雜权權条條杨楊极極"
    "构構枪槍标標树樹桥橋检檢楼樓欢歡欧歐残殘毕畢气氣汉漢汤湯沟溝泽澤洁潔浅淺测測济濟"
    "浓濃涛濤润潤涨漲渐漸温溫湾灣湿濕满滿滚滾灭滅灯燈灵靈灾災炉爐炼煉烟煙烦煩烧燒爱愛"
    "爷爺牵牽状狀犹猶独獨猎獵献獻环環电電画畫畅暢疗療盖蓋盘盤监監矿礦码碼础礎礼禮祸禍"
    "离離种種称稱积積稳穩穷窮竞競笔筆简簡类類纪紀约約级級纯純纲綱纳納纸紙纷紛练練组組"
    "细細织織终終结結绕繞绘繪给給络絡统統继繼绩績续續维維综綜绿綠编編缘緣缩縮网網罗羅"
    "罚罰职職联聯肃肅肠腸肤膚脑腦脚腳脸臉舰艦艺藝节節荣榮药藥营營萧蕭蓝藍虑慮虽雖补補"
    "装裝观觀规規视視览覽订訂讨討训訓讯訊访訪评評诚誠询詢详詳误誤诸諸谋謀谓謂谨謹贝貝"
    "贡貢败敗贫貧贯貫贴貼赏賞赔賠赛賽赵趙趋趨跃躍践踐轨軌转轉轮輪软軟轻輕载載较較辅輔"
    "输輸辞辭辽遼迁遷迈邁违違迹跡逊遜逻邏遗遺邓鄧释釋钢鋼钦欽铜銅铭銘链鏈销銷锁鎖锅鍋"
    "锦錦镜鏡闪閃闷悶阁閣阔闊阵陣陈陳陕陝隐隱雾霧韩韓页頁顶頂项項顺順顾顧顿頓预預领領"
    "频頻颜顏额額饭飯饮飲馆館驱驅驶駛驻駐验驗骑騎骗騙鲁魯鲜鮮鸣鳴齐齊龄齡龟龜亲親仅僅"
    "从從仓倉伟偉冯馮写寫军軍凤鳳击擊刘劉办辦勋勳医醫卢盧卧臥却卻厉厲吓嚇咏詠唤喚严嚴"
    "丧喪临臨举舉义義乌烏乱亂争爭亏虧亩畝亿億仪儀伞傘伦倫侨僑俩倆审審讼訟偿償驳駁户戶"
    "张張孙孫吕呂蒋蔣贾賈阎閻谭譚邹鄒乔喬贺賀赖賴龚龔与與专專两兩丽麗习習仑侖伪偽体體"
    "侠俠侣侶侦偵俭儉储儲兰蘭册冊冻凍凑湊凭憑凯凱删刪剂劑剑劍励勵劲勁匀勻厌厭叠疊吨噸"
    "喷噴嘱囑坠墜垒壘垦墾墙牆壮壯声聲壳殼备備头頭夹夾夺奪奋奮奖獎妆妝妇婦妈媽娱娛婴嬰"
    "宝寶宠寵宪憲宽寬宾賓寝寢寻尋导導寿壽将將尔爾尘塵尝嘗层層属屬岁歲岂豈岗崗岛島岭嶺"
    "峡峽币幣帅帥师師带帶帮幫库庫庙廟庞龐废廢异異弃棄弯彎弹彈归歸录錄彻徹径徑忆憶忧憂"
    "怀懷态態怜憐总總恋戀恳懇恼惱悬懸惊驚惧懼惨慘惩懲愤憤懒懶戏戲战戰扑撲抛拋拟擬拦攔"
    "拨撥挚摯挣掙挤擠挥揮捞撈捡撿掷擲揽攬摇搖摊攤撑撐敛斂斋齋旷曠昼晝晒曬晕暈枢樞枣棗"
    "柜櫃栋棟栏欄档檔梦夢歼殲毙斃沪滬泪淚泻瀉泼潑浆漿浏瀏涝澇渊淵渔漁溃潰滤濾滥濫滨濱"
    "滩灘潜潛灿燦烂爛烛燭牺犧狭狹狮獅猪豬猫貓玛瑪琐瑣疯瘋盏盞盐鹽矫矯砖磚硕碩确確碍礙"
    "粮糧紧緊纠糾红紅纬緯纱紗纵縱纹紋纺紡绍紹绑綁绝絕绪緒缓緩缴繳罢罷聪聰肿腫胀脹舱艙"
    "艰艱芦蘆苍蒼荐薦荡蕩莲蓮蛮蠻袜襪诈詐诗詩诞誕谊誼谜謎谱譜谦謙贞貞贤賢账賬贩販贪貪"
    "赋賦赚賺赠贈赶趕踪蹤轩軒轰轟辆輛辈輩辉輝酿釀针針钥鑰钻鑽铃鈴铺鋪闯闖韦韋顽頑飘飄"
    "饰飾饱飽驰馳驾駕骂罵鸭鴨鸿鴻鹅鵝麦麥齿齒"
)
S2T = {S2T_PAIRS[i]: S2T_PAIRS[i + 1] for i in range(0, len(S2T_PAIRS), 2)}
T2S = {t: s for s, t in S2T.items()}
# Traditional characters with one simplified form whose simplified form has several
# traditional ones (so they are not in S2T).
T2S_EXTRA = (
    "雲云後后發发髮发裏里裡里麵面臺台颱台係系繫系隻只歷历曆历復复複复製制準准範范鐘钟"
    "鍾钟衝冲鬆松鬥斗穀谷醜丑餘余遊游徵征匯汇彙汇團团簽签籤签捲卷盡尽儘尽錶表鬚须須须"
    "獲获穫获瞭了幾几劃划彆别闆板纔才據据緻致採采傢家夥伙適适捨舍嚮向壇坛蘇苏睏困摺折"
    "鬱郁嶽岳惡恶願愿闢辟讚赞贊赞佔占掛挂鹹咸價价術术僕仆黨党葉叶迴回姦奸佈布齣出鬍胡"
    "屍尸剋克誌志週周線线綫线註注颳刮閑闲閒闲當当歎叹嘆叹築筑饑饥飢饥勝胜纖纤塗涂湧涌"
    "臘腊豐丰於于麼么內内爲为衆众峯峰羣群"
)
for _i in range(0, len(T2S_EXTRA), 2):
    T2S[T2S_EXTRA[_i]] = T2S_EXTRA[_i + 1]


def to_trad(text):
    return "".join(S2T.get(c, c) for c in text)


def to_simp(text):
    return "".join(T2S.get(c, c) for c in text)


# ---------------------------------------------------------------------------------------
# Articles


class Article:
    """A base document: title, paragraphs and a publication date."""

    __slots__ = ("src", "lang", "title", "paras", "date", "script", "author", "extra")

    def __init__(self, src, lang, title, paras, date, script="s", extra=None):
        self.src = src
        self.lang = lang
        self.title = title
        self.paras = paras
        self.date = date
        self.script = script
        self.author = None
        self.extra = extra or {}

    def text(self):
        return "\n".join(self.paras)


def smart_title(raw):
    raw = re.sub(r"<[^>]*>", "", raw)
    raw = re.sub(r"\s+", " ", raw).strip()
    keep = {"U.S.", "U.K.", "OPEC", "GATT", "IMF", "EC", "EEC", "NYSE", "USDA", "CBT", "ECU",
            "FED", "GNP", "GDP", "LDC", "UAW", "CPI", "SEC", "FDIC", "USSR", "NV", "PLC",
            "AG", "SA", "NZ", "UK", "US", "QTR", "1ST", "2ND", "3RD", "4TH"}
    small = {"OF", "TO", "IN", "FOR", "ON", "AT", "AND", "THE", "A", "AN", "BY", "WITH", "AS",
             "FROM", "VS", "OR"}
    out = []
    for i, w in enumerate(raw.split(" ")):
        if w in keep or re.fullmatch(r"[A-Z](\.[A-Z])+\.?", w):
            out.append(w if w not in {"QTR", "1ST", "2ND", "3RD", "4TH"} else w.lower().capitalize())
        elif i > 0 and w in small:
            out.append(w.lower())
        else:
            out.append(w[:1] + w[1:].lower())
    return " ".join(out)


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def reuters_paras(raw, dateline):
    text = CONTROL.sub("", html.unescape(raw))
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and re.fullmatch(r"\s*reuter\s*", lines[-1], re.I):
        lines.pop()
    paras, cur = [], []
    for line in lines:
        if not line.strip():
            if cur:
                paras.append(cur)
                cur = []
            continue
        if line[:1].isspace() and cur:
            paras.append(cur)
            cur = []
        cur.append(line.strip())
    if cur:
        paras.append(cur)
    paras = [re.sub(r"\s+", " ", " ".join(p)).strip() for p in paras]
    paras = [p for p in paras if p]
    dateline = re.sub(r"\s+", " ", CONTROL.sub("", html.unescape(dateline or ""))).strip()
    if paras and dateline:
        paras[0] = dateline + " " + paras[0]
    return paras


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
MON3 = {m[:3].upper(): i + 1 for i, m in enumerate(MONTHS)}


def load_reuters(data):
    long_docs, short_docs = [], []
    with tarfile.open(data / "en_reuters21578_sgm.tar.gz") as tf:
        names = sorted(m.name for m in tf.getmembers() if m.name.endswith(".sgm"))
        for name in names:
            text = tf.extractfile(name).read().decode("latin-1")
            for block in re.findall(r"<REUTERS(.*?)</REUTERS>", text, re.S):
                body = re.search(r"<BODY>(.*?)</BODY>", block, re.S)
                title = re.search(r"<TITLE>(.*?)</TITLE>", block, re.S)
                if not body or not title:
                    continue
                raw = body.group(1)
                dl = re.search(r"<DATELINE>(.*?)</DATELINE>", block, re.S)
                dm = re.search(r"<DATE>\s*(\d+)-([A-Z]{3})-(\d{4}) (\d\d):(\d\d)", block)
                date = dt.datetime(1987, 3, 1, 12, 0)
                if dm and dm.group(2) in MON3:
                    date = dt.datetime(int(dm.group(3)), MON3[dm.group(2)], int(dm.group(1)),
                                       int(dm.group(4)), int(dm.group(5)))
                t = smart_title(CONTROL.sub("", html.unescape(title.group(1))))
                if not t:
                    continue
                if len(raw) >= 500:
                    paras = reuters_paras(raw, dl.group(1) if dl else "")
                    if len(paras) < 2:
                        continue
                    tiny = sum(1 for p in paras if len(p) < 40)
                    if tiny > 0.3 * len(paras) or sum(map(len, paras)) / len(paras) < 80:
                        continue  # tables
                    long_docs.append(Article("reuters", "en", t, paras, date))
                elif 150 <= len(raw) < 450:
                    paras = reuters_paras(raw, dl.group(1) if dl else "")
                    if paras and sum(map(len, paras)) >= 120:
                        short_docs.append(Article("reuters", "en", t, paras, date))
    return long_docs, short_docs


PARA = "\ue40c"


def decode_sogou(raw):
    """Decodes a Sogou smarty file. The sohusite file is UTF-8. The tensite file is GBK,
    and in it the paragraph mark U+E40C became '?' plus one stray byte. Some lead bytes
    lost their trail byte to '?', and those characters are dropped."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out, i, n = [], 0, len(raw)
    while i < n:
        c = raw[i]
        if c < 0x80:
            if c == 0x3F and i + 1 < n and raw[i + 1] >= 0x81:
                out.append(PARA)
                i += 2
                continue
            out.append(chr(c))
            i += 1
            continue
        if i + 1 < n and 0x81 <= c <= 0xFE:
            d = raw[i + 1]
            if 0x40 <= d <= 0xFE and d != 0x7F:
                try:
                    out.append(raw[i:i + 2].decode("gb18030"))
                except UnicodeDecodeError:
                    pass
                i += 2
                continue
            if 0x30 <= d <= 0x39 and i + 3 < n:
                try:
                    out.append(raw[i:i + 4].decode("gb18030"))
                    i += 4
                    continue
                except UnicodeDecodeError:
                    pass
            i += 2 if d == 0x3F else 1
            continue
        i += 1
    return "".join(out)


def load_sogou(data):
    long_docs, short_docs = [], []
    with tarfile.open(data / "zh_sogou_news_smarty_gbk.tar.gz") as tf:
        names = sorted(m.name for m in tf.getmembers() if m.name.endswith(".dat"))
        for name in names:
            text = decode_sogou(tf.extractfile(name).read())
            for doc in re.findall(r"<doc>(.*?)</doc>", text, re.S):
                def field(tag):
                    m = re.search(rf"<{tag}>(.*?)</{tag}>", doc, re.S)
                    return m.group(1).strip() if m else ""
                title, content, url = field("contenttitle"), field("content"), field("url")
                title = re.sub(r"\s+", " ", title.replace(PARA, " ")).strip()
                if not title or "\ufffd" in title or "?" in title:
                    continue
                paras = [re.sub(r"[ \t\r\n]+", " ", p).strip(" \u3000") for p in content.split(PARA)]
                paras = [p for p in paras if p and "\ufffd" not in p]
                if not paras:
                    continue
                m = re.search(r"/(20\d\d)(\d\d)(\d\d)/", url)
                date = dt.datetime(2012, 6, 15, 9, 0)
                if m:
                    date = dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), 9, 0)
                total = sum(map(len, paras))
                art = Article("sogou", "zh", title, paras, date)
                if total >= 300 and len(paras) >= 2:
                    long_docs.append(art)
                elif 60 <= total < 250:
                    short_docs.append(art)
    return long_docs, short_docs


def split_sentences_zh(text):
    parts = re.findall(r"[^。；！？]*[。；！？]|[^。；！？]+$", text)
    return [p for p in (x.strip() for x in parts) if p]


COURT_TYPES = ["行政判决书", "行政裁定书"]


def load_court(data, max_len=1200):
    long_docs, short_docs = [], []
    seen = set()
    with gzip.open(data / "zh_admin_court_judgments.tsv.gz", "rt", encoding="utf-8") as f:
        for line in f:
            label, _, text = line.rstrip("\n").partition("\t")
            text = text.strip()
            if not text or text in seen:
                continue
            seen.add(text)
            sents = split_sentences_zh(text)
            art = Article("court", "zh", "", [], None, extra={"cause": label})
            if 180 <= len(text) <= max_len and (len(sents) >= 3 or (len(sents) == 2 and len(text) >= 250)):
                # 1-2 sentences per paragraph.
                paras, cur = [], []
                for s in sents:
                    cur.append(s)
                    if len(cur) == 2 or (len(cur) == 1 and len(s) > 90):
                        paras.append("".join(cur))
                        cur = []
                if cur:
                    paras.append("".join(cur))
                art.paras = paras
                long_docs.append(art)
            elif 50 <= len(text) < 160:
                art.paras = [text]
                short_docs.append(art)
    return long_docs, short_docs


def court_title(art, rng):
    text = "".join(art.paras)
    cause = art.extra["cause"].split("（")[0]
    m = re.search(r"(?<!被)(?:原告|上诉人|申请人|再审申请人)([^，,（(、：:]{2,24}?)(?:（|不服|诉|因|与|要求|对|，|、)", text)
    kind = "行政裁定书" if ("撤回" in text or "撤诉" in text or "裁定" in text) else "行政判决书"
    year = rng.choice([2015, 2016, 2017, 2018])
    docket = f"（{year}）津{rng.randint(1, 3):02d}行{rng.choice(['初', '终', '审'])}{rng.randint(10, 999)}号"
    if m:
        return f"{m.group(1)}与{cause}纠纷一案{kind}{docket}"
    return f"{cause}案件{kind}{docket}"


def load_poems(data):
    """全唐诗 poems in file order, with repeated texts dropped."""
    poems, seen = [], set()
    with gzip.open(data / "zh_chinese_poetry_tang_subset.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            if o.get("collection") != "quantangshi":
                continue
            lines = [p.strip() for p in o.get("paragraphs", []) if p.strip()]
            if not lines:
                continue
            norm = re.sub(r"[\W_]+", "", "".join(lines))
            if len(norm) < 10 or norm in seen:
                continue
            seen.add(norm)
            poems.append((o.get("author") or "佚名", (o.get("title") or "無題").strip(), lines))
    return poems


def poem_articles(poems, rng, max_chars=420, min_poems=3):
    """Anthology articles of consecutive poems of one poet (3-5, or from `min_poems`
    when shorter than `max_chars`); single short poems."""
    arts, singles = [], []
    i = 0
    while i < len(poems):
        author = poems[i][0]
        j = i
        while j < len(poems) and poems[j][0] == author:
            j += 1
        group = poems[i:j]
        k = 0
        while k < len(group):
            want = rng.randint(min_poems, 5)
            chunk, chars = [], 0
            while k < len(group) and len(chunk) < want and chars < max_chars:
                chunk.append(group[k])
                chars += sum(map(len, group[k][2]))
                k += 1
            if len(chunk) >= min_poems and chars >= 100 and len(chunk) * 2 <= sum(len(c[2]) for c in chunk) + len(chunk):
                paras = []
                for _, title, lines in chunk:
                    paras.append(f"《{title}》")
                    for a in range(0, len(lines), 2):
                        paras.append("".join(lines[a:a + 2]))
                t = rng.choice([f"{author}詩選（{len(chunk)}首）", f"{author}：{chunk[0][1]}等{len(chunk)}首",
                                f"唐詩選讀·{author}"])
                arts.append(Article("poems", "zh", t, paras, None, script="t", extra={"poet": author}))
            elif len(chunk) == 1 and 20 <= chars <= 60:
                _, title, lines = chunk[0]
                singles.append(Article("poems", "zh", f"{author}《{title}》", ["".join(lines)], None, script="t",
                                       extra={"poet": author}))
        i = j
    return arts, singles


# ---------------------------------------------------------------------------------------
# Near-duplicate removal among base documents (character 5-grams, 1 in 4 sampled).


def sampled_grams(text, n=5, mod=4):
    t = re.sub(r"[\W_]+", "", text.lower())
    out = set()
    for i in range(max(0, len(t) - n + 1)):
        h = zlib.crc32(t[i:i + n].encode("utf-8"))
        if h % mod == 0:
            out.add(h)
    if not out and t:
        out.add(zlib.crc32(t.encode("utf-8")))
    return out


class Deduper:
    def __init__(self, jaccard=0.5, containment=0.6, df_cap=150):
        self.jaccard, self.containment, self.df_cap = jaccard, containment, df_cap
        self.sets = []
        self.index = defaultdict(list)

    def add(self, text):
        """Keeps `text` unless it is close to one kept before; returns whether it was kept."""
        g = sampled_grams(text)
        counts = Counter()
        for h in g:
            post = self.index.get(h)
            if post and len(post) <= self.df_cap:
                counts.update(post)
        for other, shared in counts.items():
            o = self.sets[other]
            if shared < 0.1 * min(len(g), len(o)):
                continue
            inter = len(g & o)
            if inter / len(g | o) >= self.jaccard or inter / max(1, min(len(g), len(o))) >= self.containment:
                return False
        # Grams on many kept documents (templates) are not searched, but they still count
        # in the Jaccard of a candidate found through its rarer grams.
        n = len(self.sets)
        self.sets.append(g)
        for h in g:
            self.index[h].append(n)
        return True


def jaccard5(a, b):
    def grams(t):
        t = re.sub(r"\s+", " ", t.lower())
        return {t[i:i + 5] for i in range(max(1, len(t) - 4))}
    ga, gb = grams(a), grams(b)
    return len(ga & gb) / max(1, len(ga | gb))


# ---------------------------------------------------------------------------------------
# Sites

EN_A = ["Daily", "Evening", "Harbor", "Metro", "Capital", "Northern", "Pacific", "Atlantic",
        "Prairie", "Union", "Market", "Valley", "Coastal", "Global", "National", "City", "River",
        "Summit", "Liberty", "Western", "Midland", "Bay", "Granite", "Lakeside", "Frontier"]
EN_B = ["Ledger", "Dispatch", "Herald", "Wire", "Tribune", "Post", "Courier", "Observer",
        "Gazette", "Journal", "Report", "Times", "Chronicle", "Bulletin", "Review", "Monitor",
        "Insider", "Digest", "Sentinel", "Record", "Examiner", "Standard"]
EN_TLD = [".com", ".com", ".com", ".net", ".co.uk", ".org", ".news", ".co"]
EN_NAV = ["World", "US", "Business", "Markets", "Economy", "Tech", "Energy", "Commodities",
          "Politics", "Opinion", "Sports", "Culture", "Science", "Health", "Video", "Podcasts",
          "Weather", "Local", "Latest", "Money", "Investing", "Autos", "Real Estate", "Companies"]
EN_SECTIONS = ["Business", "Markets", "Economy", "Companies", "Commodities", "World", "Energy",
               "Finance", "Trade"]
EN_NAMES = ["Alice Morgan", "David Chen", "Maria Lopez", "James Okafor", "Sarah Klein",
            "Tom Becker", "Priya Nair", "Robert Hale", "Emma Schultz", "Daniel Park",
            "Laura Bianchi", "Michael Grant", "Nina Petrova", "Peter Walsh", "Grace Liu"]

ZH_A = ["东方", "华夏", "今日", "环球", "南方", "北国", "中原", "天下", "锦绣", "江南", "长城",
        "神州", "九州", "星辰", "晨光", "时代", "民生", "海峡", "津门", "燕赵", "齐鲁", "岭南",
        "西部", "大河", "新城"]
ZH_NEWS_B = ["快讯网", "视点", "在线", "资讯网", "日报网", "新闻网", "观察", "热线", "头条",
             "传媒", "之声", "前沿"]
ZH_LEGAL_B = ["法治在线", "法院网", "法制网", "司法观察", "裁判文书速递", "法治日报网"]
ZH_CULT_B = ["诗词网", "古诗文苑", "文化网", "国学堂", "诗词鉴赏", "书香网"]
ZH_SYL = ["dong", "fang", "hua", "xia", "jin", "ri", "huan", "qiu", "nan", "bei", "zhong",
          "yuan", "tian", "shen", "zhou", "xing", "chen", "min", "sheng", "cai", "jing", "fa",
          "zhi", "shi", "ci", "wen", "kuai", "xun", "hai", "jiang", "shan", "lin", "guo"]
ZH_TLD = [".cn", ".com.cn", ".com", ".net", ".org.cn", ".cn"]
ZH_NAV = {
    "news": ["国内", "国际", "社会", "财经", "科技", "体育", "娱乐", "军事", "评论", "图片", "视频",
             "专题", "本地", "健康", "教育", "汽车", "房产", "公益"],
    "legal": ["法院动态", "裁判文书", "审判业务", "法治新闻", "法律法规", "诉讼指南", "公告",
              "司法公开", "执行信息", "案例精选"],
    "culture": ["唐诗", "宋词", "诗人", "名句", "古籍", "书法", "国学", "专题", "赏析", "典故"],
}
ZH_NAMES = ["王丽", "李明", "张伟", "刘洋", "陈静", "杨帆", "赵磊", "黄敏", "周涛", "吴娜",
            "徐强", "孙悦", "马骏", "朱琳", "胡斌"]


def pinyin_domain(rng):
    return "".join(rng.choice(ZH_SYL) for _ in range(rng.randint(2, 3)))


def fmt_num(n, comma):
    return f"{n:,}" if comma else str(n)


def fmt_date_en(d, style):
    if style == 0:
        return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    if style == 1:
        return f"{d.day} {MONTHS[d.month - 1][:3]} {d.year} {d.hour:02d}:{d.minute:02d}"
    if style == 2:
        return f"{d.year}-{d.month:02d}-{d.day:02d}"
    return f"{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][d.weekday()]} {d.day} {MONTHS[d.month - 1]} {d.year}"


def fmt_date_zh(d, style):
    if style == 0:
        return f"{d.year}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}"
    if style == 1:
        return f"{d.year}年{d.month:02d}月{d.day:02d}日 {d.hour:02d}:{d.minute:02d}"
    if style == 2:
        return f"{d.year}/{d.month}/{d.day}"
    return f"{d.year}年{d.month}月{d.day}日"


class Host:
    def __init__(self, hid, lang, topic, rng, compact=False):
        self.hid, self.lang, self.topic = hid, lang, topic
        self.rng = Random(rng.getrandbits(64))
        self.trad = False
        self.ids = set()
        self.weight = 1.0
        r = self.rng
        if lang == "en":
            a, b = r.sample(EN_A, 1)[0], r.choice(EN_B)
            self.name = r.choice([f"The {a} {b}", f"{a} {b}", f"{a}{b}", f"{a} {b} Online", f"The {b} {a}"])
            slug = re.sub(r"[^a-z]", "", self.name.lower().replace("the ", "", 1).replace("online", ""))
            self.bare = slug + r.choice(EN_TLD)
        else:
            if topic == "legal":
                self.name = r.choice(ZH_A) + r.choice(ZH_LEGAL_B)
            elif topic == "culture":
                self.name = r.choice(ZH_A) + r.choice(ZH_CULT_B)
            else:
                self.name = r.choice(ZH_A) + r.choice(ZH_NEWS_B)
            self.bare = pinyin_domain(r) + r.choice(ZH_TLD)
        self.domain = ("www." if r.random() < 0.6 else "") + self.bare
        self.scheme = r.choice(["a", "news", "story", "p"])
        self.date_style = r.randrange(4)
        self.parts = {
            "nav": r.random() < 0.95,
            "crumbs": r.random() < 0.6,
            "byline": r.random() < 0.9,
            "views": r.random() < 0.6,
            "related": r.random() < 0.75,
            "share": r.random() < 0.6,
            "newsletter": r.random() < 0.5,
            "cookie": r.random() < 0.45,
            "tagline": r.random() < 0.4,
            "footlinks": r.random() < 0.7,
            "script": r.random() < 0.5,
        }
        self.layout = {
            "cookie_top": r.random() < 0.5,
            "share_top": r.random() < 0.4,
            "related_first": r.random() < 0.3,
            "title_sep": r.choice([" - ", " | ", " – ", "_", "：" if lang == "zh" else " :: "]),
            "site_first": r.random() < 0.2,
            "related_n": r.randint(3, 4) if compact else r.randint(3, 6),
            "comma": r.random() < 0.5,
            "cls": r.choice(["story", "article", "post", "entry", "content", "main-text"]),
        }
        if lang == "en":
            nav = r.sample(EN_NAV, r.randint(5, 9))
            self.nav = (["Home"] if r.random() < 0.85 else []) + nav
            self.sections = [s for s in nav if s in EN_SECTIONS] or nav[:2]
            corp = self.name + r.choice([" Media Group", " Publishing Ltd", " Inc", " Holdings LLC", " Network"])
            bare_name = self.name[4:] if self.name.startswith("The ") else self.name
            y1 = r.randint(1995, 2015)
            self.copyright = r.choice([
                f"© {y1}-2024 {corp}. All rights reserved. This material may not be published, broadcast, rewritten or redistributed without permission.",
                f"Copyright {y1}-2024 {corp}. Content on this site is for personal, non-commercial use only; see our Terms of Use and Privacy Policy for details.",
                f"All content © {corp} {y1}-2024 unless otherwise noted. Reproduction in whole or in part without written permission is strictly prohibited.",
            ])
            self.cookie = r.choice([
                "We use cookies to personalise content and ads and to analyse our traffic. By continuing to use this site you consent to our use of cookies.",
                "This website uses cookies to ensure you get the best experience on our website. Accept | Manage settings",
                "Cookies help us deliver our services. By using our services, you agree to our use of cookies. Learn more",
            ])
            self.newsletter = r.choice([
                f"Sign up for the {bare_name} newsletter and get the day's top stories in your inbox every morning.",
                f"Get our free daily briefing: subscribe to the {bare_name} newsletter today.",
                "Never miss a story. Enter your email address to receive our morning headlines.",
            ])
            self.share = r.choice([
                "Share this article: Facebook Twitter LinkedIn Email",
                "Share: Facebook | X | WhatsApp | Copy link",
                "Share on Facebook · Share on Twitter · Email this story",
            ])
            self.related_head = r.choice(["Related stories", f"More from {self.name}", "You may also like",
                                          "Recommended", "Most read", "Related coverage"])
            self.views_fmt = r.choice(["Views: {n}", "{n} views", "Read {n} times", "Page views: {n}"])
            self.tagline = r.choice(["Independent news since 1998", "Business news you can trust",
                                     "Your source for markets and the economy", "News, analysis, opinion"])
            self.footlinks = "About us | Contact | Advertise | Careers | Privacy Policy | Terms of Use"
            self.crumb_sep = r.choice([" > ", " / ", " » ", " › "])
            self.byline_fmt = r.choice(["By {author} | {date}", "{date} — {author}, Staff Reporter",
                                        "Published {date} by {author}", "{author} · {date}"])
            self.more = r.choice(["Read more »", "Continue reading", "Read the full story", "More >>"])
        else:
            nav = r.sample(ZH_NAV[topic], r.randint(5, min(9, len(ZH_NAV[topic]))))
            self.nav = (["首页"] if r.random() < 0.9 else []) + nav
            self.sections = nav[:3]
            y1 = r.randint(1998, 2015)
            icp = f"{r.choice('京沪津粤浙苏鲁')}ICP备{r.randint(10000000, 99999999)}号"
            self.copyright = r.choice([
                f"版权所有 © {y1}-2024 {self.name}　未经书面授权，禁止转载、摘编、复制或建立镜像。违者将依法追究法律责任。{icp}",
                f"Copyright © {y1}-2024 {self.name} 版权所有　本网站所刊登的各种新闻、信息和各种专题专栏资料，均为{self.name}版权所有，未经协议授权禁止下载使用。{icp}",
                f"{self.name}（{self.bare}）版权所有，{y1}-2024。凡注明“来源：{self.name}”的所有作品，未经本网授权不得转载、摘编或利用其它方式使用。{icp}　违法和不良信息举报电话：{r.randint(10000000, 99999999)}",
            ])
            self.cookie = r.choice([
                "本网站使用Cookie以提升您的浏览体验，继续浏览即表示您同意我们使用Cookie。",
                "我们使用Cookie来改善网站功能和您的体验。了解更多 | 接受",
                "为了给您提供更好的服务，本站会使用Cookie。点击“同意”即表示您接受我们的隐私政策。",
            ])
            self.newsletter = r.choice([
                f"订阅{self.name}每日简报，第一时间获取最新资讯。",
                f"关注{self.name}微信公众号，每天推送精选内容。",
                "输入邮箱订阅我们的新闻周刊，重要消息不错过。",
            ])
            self.share = r.choice(["分享到：微信 微博 QQ空间 复制链接", "分享：微信朋友圈 | 新浪微博 | QQ好友",
                                   "一键分享：微信 · 微博 · 豆瓣"])
            self.related_head = r.choice(["相关阅读", "相关新闻", "延伸阅读", "猜你喜欢", "热门推荐", "24小时排行"])
            self.views_fmt = r.choice(["阅读 {n}", "阅读量：{n}", "浏览次数：{n}", "点击：{n}次", "{n}人阅读"])
            self.tagline = r.choice(["权威发布　及时准确", "传播正能量　服务大众", "弘扬传统文化", "让阅读更有价值"])
            self.footlinks = "关于我们 | 联系我们 | 广告服务 | 网站地图 | 隐私政策 | 违法和不良信息举报"
            self.crumb_sep = r.choice([" > ", " » ", " / "])
            self.byline_fmt = r.choice(["来源：{site}　作者：{author}　{date}", "{date}　来源：{site}",
                                        "发布时间：{date}　编辑：{author}", "{date} 责任编辑：{author}"])
            self.more = r.choice(["阅读全文", "点击查看全文>>", "展开全文", "查看原文"])

    def make_trad(self):
        self.trad = True
        for attr in ("name", "copyright", "cookie", "newsletter", "share", "related_head",
                     "views_fmt", "tagline", "footlinks", "byline_fmt", "more"):
            setattr(self, attr, to_trad(getattr(self, attr)))
        self.nav = [to_trad(x) for x in self.nav]
        self.sections = [to_trad(x) for x in self.sections]

    def new_id(self):
        while True:
            i = self.rng.randint(100000, 9999999)
            if i not in self.ids:
                self.ids.add(i)
                return i

    def path(self, scheme, aid, date, slug):
        if scheme == "a":
            return f"/a/{aid}"
        if scheme == "news":
            return f"/news/{date.year}/{date.month:02d}/{date.day:02d}/{aid}.html"
        if scheme == "story":
            return f"/story.php?id={aid}"
        return f"/p/{slug}-{aid}"

    def url(self, aid, date, slug, scheme=None, domain=None):
        return f"https://{domain or self.domain}{self.path(scheme or self.scheme, aid, date, slug)}"

    def fmt_date(self, d):
        return fmt_date_en(d, self.date_style) if self.lang == "en" else fmt_date_zh(d, self.date_style)


SLUGS = {"news": ["guonei", "shehui", "caijing", "keji", "xinwen", "difang", "gongyi"],
         "legal": ["fazhi", "caipan", "anli", "wenshu", "shenpan"],
         "culture": ["shici", "tangshi", "wenhua", "guoxue", "shangxi"]}


def make_slug(content, rng, topic="news"):
    if content.lang == "en":
        words = re.findall(r"[a-z0-9]+", content.title.lower())[:6]
        return "-".join(words) or "story"
    return rng.choice(SLUGS[topic])


# ---------------------------------------------------------------------------------------
# Page content and transformations


class Content:
    """What a page shows in its article: title, byline data and body blocks."""

    __slots__ = ("title", "blocks", "date", "author", "lang", "script")

    def __init__(self, title, blocks, date, author, lang, script):
        self.title, self.blocks, self.date, self.author = title, blocks, date, author
        self.lang, self.script = lang, script

    def copy(self):
        return Content(self.title, list(self.blocks), self.date, self.author, self.lang, self.script)

    def para_idx(self):
        return [i for i, b in enumerate(self.blocks) if b[0] == "p"]


EN_SYN = {"said": "stated", "company": "firm", "rose": "climbed", "fell": "dropped",
          "expected": "anticipated", "about": "around", "reported": "announced", "shares": "stock",
          "increase": "rise", "plans": "intends", "agreed": "consented", "total": "overall",
          "sales": "revenues", "also": "additionally", "bought": "purchased", "told": "informed",
          "major": "leading", "large": "big", "would": "will", "help": "assist"}
ZH_SYN = {"表示": "称", "目前": "当前", "进行": "开展", "已经": "已", "但是": "不过", "因为": "由于",
          "记者": "本报记者", "今年": "本年", "主要": "重点", "问题": "情况", "发现": "察觉",
          "要求": "请求", "本院": "该院", "依法": "依照法律", "认为": "指出", "立即": "马上",
          "工作": "事务", "一些": "部分", "开始": "着手"}
POEM_VAR = {"爲": "為", "為": "爲", "閑": "閒", "閒": "閑", "歎": "嘆", "嘆": "歎", "裏": "裡",
            "裡": "裏", "衆": "眾", "眾": "衆", "峯": "峰", "峰": "峯", "群": "羣", "羣": "群",
            "迴": "回", "遊": "游", "游": "遊", "雞": "鷄", "鷄": "雞", "烟": "煙", "煙": "烟",
            "牀": "床", "床": "牀", "淚": "泪", "濕": "溼", "溼": "濕", "花": "華", "無": "无"}
ZH_TYPO = {"的": "得", "得": "的", "地": "的", "在": "再", "再": "在", "做": "作", "作": "做",
           "已": "以", "以": "已", "他": "她", "她": "他", "象": "像", "像": "象", "那": "哪",
           "即": "既", "账": "帐", "部": "步", "园": "圆", "练": "炼", "辨": "辩"}
EN_UPDATE = [
    "{Org} declined to comment on the matter on {weekday}.",
    "A spokesman for {org} said further details would be released later this month.",
    "The figures have not been independently verified.",
    "Analysts said the announcement had been widely expected in the market.",
    "Separately, {org} said it would hold a news conference next week to discuss the results.",
    "This story has been updated with additional details from {org}.",
    "Officials at {org} could not immediately be reached for comment.",
]
EN_ORGS = ["the company", "the ministry", "the central bank", "the union", "the agency",
           "the department", "the exchange", "the bank"]
ZH_UPDATE = [
    "{org}相关负责人表示，后续进展将及时向社会公布。",
    "截至发稿时，{org}尚未作出进一步回应。",
    "据了解，相关工作目前正在有序推进中。",
    "本文已根据最新情况进行更新。",
    "业内人士认为，这一变化在意料之中，{org}将继续关注事态发展。",
    "记者随后多次联系{org}，对方表示将尽快核实有关情况。",
]
ZH_ORGS = ["有关部门", "当地政府", "涉事企业", "主管部门", "法院", "街道办事处"]
POEM_NOTES = ["【注】此詩一作{a}詩。", "【賞析】全詩語言質樸，意境深遠。", "【注】題下原有小注，今略。",
              "【按】此篇各本文字略有出入，今從通行本。"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

EN_AD_FIXED = [
    "ADVERTISEMENT — Summit Savings Account: rates up to 4.5% APY. Open an account in minutes.",
    "Sponsored: CloudSafe Backup keeps every file safe. Try it free for 30 days.",
    "Advertisement: TravelWise Insurance — cover for your next trip from $9 a month. Get a quote.",
]
EN_AD_PRODUCTS = ["Nimbus Phone X", "GreenLeaf Meal Kits", "Apex Trading Platform", "Orbit Noise-Cancelling Headphones",
                  "Harbor Home Loans", "Peak Fitness Membership"]
ZH_AD_FIXED = ["【广告】云端备份服务首月免费，立即注册领取。", "推广：理财通年化收益率最高4.5%，点击了解详情。",
               "【广告】新款智能手机限时8折，立即抢购！"]
ZH_AD_PRODUCTS = ["在线英语课程", "家用净水器", "旅游保险", "智能手表", "新能源汽车试驾", "健康体检套餐"]


def ad_text(lang, rng):
    if rng.random() < 0.5:
        return rng.choice(EN_AD_FIXED if lang == "en" else ZH_AD_FIXED)
    if lang == "en":
        p = rng.choice(EN_AD_PRODUCTS)
        offer = rng.choice([f"save {rng.randint(10, 60)}% this week only", "now with 3 months free",
                            f"free shipping on orders over ${rng.randint(2, 9)}0"])
        cta = rng.choice(["Learn more.", "Sign up today.", "Shop now.", "Get started in minutes."])
        return f"{rng.choice(['ADVERTISEMENT', 'Sponsored', 'Advertisement'])}: {p} — {offer}. {cta}"
    p = rng.choice(ZH_AD_PRODUCTS)
    offer = rng.choice([f"限时{rng.randint(5, 9)}折", "首月免费", f"新人立减{rng.randint(2, 9)}0元"])
    cta = rng.choice(["立即抢购！", "点击了解详情。", "马上注册领取。", "扫码即享优惠。"])
    return f"{rng.choice(['【广告】', '推广：', '【推广】'])}{p}{offer}，{cta}"


def update_sentence(lang, rng, content):
    if content.script == "t" and lang == "zh":
        return rng.choice(POEM_NOTES).format(a=rng.choice(ZH_NAMES))
    if lang == "en":
        s = rng.choice(EN_UPDATE)
        org = rng.choice(EN_ORGS)
        return s.format(org=org, Org=org[0].upper() + org[1:], weekday=rng.choice(WEEKDAYS[:5]))
    return rng.choice(ZH_UPDATE).format(org=rng.choice(ZH_ORGS))


def change_number(text, rng):
    nums = list(re.finditer(r"[0-9０-９]+", text))
    if not nums:
        return text, False
    m = rng.choice(nums)
    s = m.group(0)
    full = s[0] in "０１２３４５６７８９"
    v = int(s.translate(str.maketrans("０１２３４５６７８９", "0123456789")))
    v = max(0, v + rng.choice([-3, -2, -1, 1, 2, 3]))
    out = str(v)
    if full:
        out = out.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    return text[:m.start()] + out + text[m.end():], True


def replace_words(text, table, rng, n):
    keys = [k for k in table if k in text]
    done = 0
    rng.shuffle(keys)
    for k in keys:
        if done >= n:
            break
        if re.match(r"\w", k, re.A):
            spots = list(re.finditer(rf"\b{re.escape(k)}\b", text))
        else:
            spots = list(re.finditer(re.escape(k), text))
        if not spots:
            continue
        m = rng.choice(spots)
        text = text[:m.start()] + table[k] + text[m.end():]
        done += 1
    return text, done


def t_edit(c, rng):
    """A few words changed, then a sentence replaced, a paragraph added or one removed."""
    c = c.copy()
    ps = c.para_idx()
    ops = []
    table = EN_SYN if c.lang == "en" else (POEM_VAR if c.script == "t" else ZH_SYN)
    changed = 0
    for _ in range(rng.randint(2, 5)):
        i = rng.choice(ps)
        t = c.blocks[i][1]
        if rng.random() < 0.3:
            t, ok = change_number(t, rng)
        else:
            t, ok = replace_words(t, table, rng, 1)
        changed += bool(ok)
        c.blocks[i] = ("p", t)
    ops.append(f"words:{changed}")
    choice = rng.choice(["sentence", "add", "remove"] if len(ps) >= 4 else ["sentence", "add"])
    if choice == "sentence":
        i = rng.choice(ps)
        t = c.blocks[i][1]
        sents = (re.findall(r"[^.!?]+[.!?]+\s*|[^.!?]+$", t) if c.lang == "en" else split_sentences_zh(t))
        if len(sents) >= 2:
            k = rng.randrange(len(sents))
            sents[k] = update_sentence(c.lang, rng, c) + (" " if c.lang == "en" else "")
            c.blocks[i] = ("p", "".join(sents).strip())
        else:
            c.blocks[i] = ("p", t + (" " if c.lang == "en" else "") + update_sentence(c.lang, rng, c))
        ops.append("sentence")
    elif choice == "add":
        at = rng.choice(ps[1:] + [ps[-1] + 1]) if len(ps) > 1 else ps[-1] + 1
        c.blocks.insert(at, ("p", update_sentence(c.lang, rng, c) + (
            " " + update_sentence(c.lang, rng, c) if c.lang == "en" else "")))
        ops.append("add")
    else:
        del c.blocks[rng.choice(ps[1:])]
        ops.append("remove")
    return c, "+".join(ops)


def t_ads(c, rng):
    c = c.copy()
    n = rng.randint(1, 3)
    for _ in range(n):
        ps = c.para_idx()
        at = rng.choice(ps[1:] + [ps[-1] + 1]) if len(ps) > 1 else ps[-1] + 1
        c.blocks.insert(at, ("ad", ad_text(c.lang, rng)))
    return c, str(n)


EN_DATE = re.compile(r"\b(" + "|".join(MONTHS) + r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.? (\d{1,2})\b"
                     r"|\b(" + "|".join(WEEKDAYS) + r")\b|\b(19[4-9]\d|20[0-2]\d)\b")
ZH_DATE = re.compile(r"([0-9０-９]{4})年|([0-9０-９]{1,2})月|([0-9０-９]{1,2})日")


def shift_dates(text, lang, rng):
    count = 0

    def num(s, lo, hi, delta):
        full = s[0] in "０１２３４５６７８９"
        v = int(s.translate(str.maketrans("０１２３４５６７８９", "0123456789")))
        v = lo + (v - lo + delta) % (hi - lo + 1)
        out = str(v)
        return out.translate(str.maketrans("0123456789", "０１２３４５６７８９")) if full else out

    def en(m):
        nonlocal count
        count += 1
        if m.group(1):
            return f"{m.group(1)} {num(m.group(2), 1, 28, rng.choice([1, 2, 3, -1, -2]))}"
        if m.group(3):
            return WEEKDAYS[(WEEKDAYS.index(m.group(3)) + rng.choice([1, 2, -1])) % 7]
        return str(int(m.group(4)) + rng.choice([1, -1]))

    def zh(m):
        nonlocal count
        count += 1
        if m.group(1):
            return num(m.group(1), 1900, 2099, rng.choice([1, -1])) + "年"
        if m.group(2):
            return num(m.group(2), 1, 12, rng.choice([1, 2, -1])) + "月"
        return num(m.group(3), 1, 28, rng.choice([1, 2, 3, -1, -2])) + "日"

    out = (EN_DATE if lang == "en" else ZH_DATE).sub(en if lang == "en" else zh, text)
    return out, count


def has_dates(c):
    pat = EN_DATE if c.lang == "en" else ZH_DATE
    return any(pat.search(b[1]) for b in c.blocks if b[0] == "p")


def t_date(c, rng):
    c = c.copy()
    total = 0
    for i in c.para_idx():
        t, n = shift_dates(c.blocks[i][1], c.lang, rng)
        c.blocks[i] = ("p", t)
        total += n
    c.date = c.date + dt.timedelta(days=rng.choice([-3, -2, -1, 1, 2, 3, 7]))
    return c, str(total)


def t_truncate(c, rng):
    c = c.copy()
    ps = c.para_idx()
    keep = max(1, min(len(ps) - 1, round(len(ps) * rng.uniform(0.5, 0.9))))
    cut = ps[keep]
    c.blocks = c.blocks[:cut] + [("more", None)]
    return c, f"{keep}/{len(ps)}"


def t_reorder(c, rng):
    c = c.copy()
    ps = c.para_idx()
    a, b = rng.sample(ps, 2)
    c.blocks[a], c.blocks[b] = c.blocks[b], c.blocks[a]
    return c, f"{ps.index(a)}<->{ps.index(b)}"


FW = str.maketrans("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                   "０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ")
HW = str.maketrans("０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ",
                   "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def noise_en(t, rng):
    op = rng.randrange(5)
    if op == 0:  # typo
        words = [m for m in re.finditer(r"[A-Za-z]{5,}", t)]
        if words:
            m = rng.choice(words)
            w = m.group(0)
            k = rng.randrange(1, len(w) - 2)
            w2 = rng.choice([w[:k] + w[k + 1] + w[k] + w[k + 2:], w[:k] + w[k + 1:], w[:k] + w[k] + w[k:]])
            return t[:m.start()] + w2 + t[m.end():], "typo"
    if op == 1:  # punctuation
        spots = [m.start() for m in re.finditer(r"[,.'\"]", t)]
        if spots:
            i = rng.choice(spots)
            rep = {",": rng.choice(["", " ,", ";"]), ".": rng.choice(["..", " .", "!"]), "'": "’", '"': "“"}[t[i]]
            return t[:i] + rep + t[i + 1:], "punct"
    if op == 2:  # full width
        spots = list(re.finditer(r"\b[0-9]{2,}\b|\b[A-Z][a-z]{2,}\b", t))
        if spots:
            m = rng.choice(spots)
            return t[:m.start()] + m.group(0).translate(FW) + t[m.end():], "width"
    if op == 3:  # whitespace: join two words or space before punctuation
        spots = [m.start() for m in re.finditer(r"\w \w", t)]
        if spots:
            i = rng.choice(spots) + 1
            return t[:i] + rng.choice(["", "\u00a0"]) + t[i + 1:], "space"
    if op == 4:  # case
        spots = list(re.finditer(r"\b[a-z]{4,}\b", t))
        if spots:
            m = rng.choice(spots)
            return t[:m.start()] + m.group(0).upper() + t[m.end():], "case"
    return t, None


def noise_zh(t, rng, trad):
    op = rng.randrange(4)
    if op == 0:  # typo / variant character
        table = POEM_VAR if trad else ZH_TYPO
        spots = [i for i, ch in enumerate(t) if ch in table]
        if spots:
            i = rng.choice(spots)
            return t[:i] + table[t[i]] + t[i + 1:], "typo"
    if op == 1:  # full-width punctuation to half-width and back
        pairs = {"，": ",", "。": ".", "：": ":", "；": ";", "“": '"', "”": '"', "（": "(", "）": ")",
                 "！": "!", "？": "?", ",": "，", ":": "："}
        spots = [i for i, ch in enumerate(t) if ch in pairs]
        if spots:
            i = rng.choice(spots)
            return t[:i] + pairs[t[i]] + t[i + 1:], "punct"
    if op == 2:  # digit/letter width
        spots = list(re.finditer(r"[0-9A-Za-z]+|[０-９Ａ-Ｚａ-ｚ]+", t))
        if spots:
            m = rng.choice(spots)
            s = m.group(0)
            s2 = s.translate(HW) if s[0] > "\u00ff" else s.translate(FW)
            return t[:m.start()] + s2 + t[m.end():], "width"
    # whitespace between two characters (also when the chosen change found no place)
    spots = [i for i in range(1, len(t)) if not t[i - 1].isspace() and not t[i].isspace()]
    if spots:
        i = rng.choice(spots)
        return t[:i] + rng.choice([" ", "\u3000", " "]) + t[i:], "space"
    return t, None


def t_noise(c, rng):
    c = c.copy()
    ps = c.para_idx()
    ops = Counter()
    for _ in range(rng.randint(3, 8)):
        i = rng.choice(ps)
        t = c.blocks[i][1]
        t, op = noise_en(t, rng) if c.lang == "en" else noise_zh(t, rng, c.script == "t")
        if op:
            ops[op] += 1
            c.blocks[i] = ("p", t)
    return c, ",".join(f"{k}:{v}" for k, v in sorted(ops.items()))


def t_edition(c, rng):
    c = c.copy()
    conv = to_simp if c.script == "t" else to_trad
    before = sum(len(b[1]) for b in c.blocks if b[0] == "p")
    changed = 0
    for i in c.para_idx():
        t = c.blocks[i][1]
        t2 = conv(t)
        changed += sum(1 for x, y in zip(t, t2) if x != y)
        c.blocks[i] = ("p", t2)
    c.title = conv(c.title)
    c.script = "s" if c.script == "t" else "t"
    return c, f"{'t2s' if c.script == 's' else 's2t'}:{changed}/{before}"


# ---------------------------------------------------------------------------------------
# Rendering


def esc(s):
    return html.escape(s, quote=False)


def render(page, host):
    """The HTML of a page."""
    c = page["content"]
    mode = page.get("mode", "normal")
    lay, parts = host.layout, dict(host.parts)
    site = host.name
    if mode == "print":
        for k in ("nav", "crumbs", "views", "related", "share", "newsletter", "cookie", "tagline", "footlinks"):
            parts[k] = False
    elif mode == "amp":
        for k in ("nav", "crumbs", "related", "newsletter", "cookie", "footlinks", "script"):
            parts[k] = False
    elif mode == "mobile":
        parts["crumbs"] = parts["tagline"] = False
    title_full = f"{site}{lay['title_sep']}{c.title}" if lay["site_first"] else f"{c.title}{lay['title_sep']}{site}"
    cls = lay["cls"]
    h = [f'<!DOCTYPE html>\n<html lang="{"zh-Hant" if host.trad else ("zh-CN" if host.lang == "zh" else "en")}">'
         f'<head><meta charset="utf-8"><title>{esc(title_full)}</title>']
    if mode == "amp":
        h.append(f'<link rel="canonical" href="{esc(page["canonical"])}">')
    if parts["script"]:
        h.append(f"<script>window.dataLayer=window.dataLayer||[];dataLayer.push({{'site':'{host.bare}','page':'{cls}'}});</script>")
    h.append(f'</head>\n<body class="{cls}-page">\n')
    cookie = f'<div class="cookie-banner"><p>{esc(host.cookie)}</p></div>\n' if parts["cookie"] else ""
    if cookie and lay["cookie_top"]:
        h.append(cookie)
    h.append(f'<header><div class="logo"><a href="/">{esc(site)}</a></div>')
    if parts["tagline"]:
        h.append(f'<div class="tagline">{esc(host.tagline)}</div>')
    h.append("</header>\n")
    if parts["nav"]:
        nav = host.nav[:4] if mode == "mobile" else host.nav
        h.append("<nav><ul>" + "".join(f'<li><a href="/{i}">{esc(x)}</a></li>' for i, x in enumerate(nav)) + "</ul></nav>\n")
    if parts["crumbs"]:
        home = "Home" if host.lang == "en" else ("首頁" if host.trad else "首页")
        tail = [page["section"]] + ([] if host.lang == "en" else [("正文" if not host.trad else "正文")])
        h.append(f'<div class="breadcrumbs">{esc(host.crumb_sep.join([home] + tail))}</div>\n')
    related = ""
    if parts["related"] and page.get("related"):
        items = page["related"][:3] if mode == "mobile" else page["related"]
        related = (f'<aside class="related"><h3>{esc(host.related_head)}</h3><ul>'
                   + "".join(f'<li><a href="{esc(href)}">{esc(t)}</a></li>' for t, href in items)
                   + "</ul></aside>\n")
    h.append("<main>\n")
    if related and lay["related_first"] and mode != "mobile":
        h.append(related)
    h.append(f'<article class="{cls}">\n<h1>{esc(c.title)}</h1>\n')
    if parts["byline"]:
        b = host.byline_fmt.format(author=c.author or site, date=host.fmt_date(c.date), site=page.get("source_site") or site)
        h.append(f'<div class="byline">{esc(b)}</div>\n')
    if parts["views"]:
        h.append(f'<div class="views">{esc(host.views_fmt.format(n=fmt_num(page["views"], lay["comma"])))}</div>\n')
    share = f'<div class="share">{esc(host.share)}</div>\n' if parts["share"] else ""
    if share and lay["share_top"]:
        h.append(share)
    h.append(f'<div class="{cls}-body">\n')
    if page.get("orig_line") and page["orig_pos"] == "top":
        h.append(f'<p class="source">{esc(page["orig_line"])}</p>\n')
    for kind, text in c.blocks:
        if kind == "p":
            h.append(f"<p>{esc(text)}</p>\n")
        elif kind == "quote":
            h.append(f"<blockquote><p>{esc(text)}</p></blockquote>\n")
        elif kind == "ad":
            h.append(f'<div class="ad-slot"><p>{esc(text)}</p></div>\n')
        elif kind == "more":
            h.append(f'<p class="read-more"><a href="{esc(page["more_href"])}">{esc(host.more)}</a></p>\n')
    if page.get("orig_line") and page["orig_pos"] == "bottom":
        h.append(f'<p class="source">{esc(page["orig_line"])}</p>\n')
    if mode == "print":
        pr = f"Printed from {page['canonical']}" if host.lang == "en" else f"本文打印自 {page['canonical']}"
        h.append(f'<p class="print-note">{esc(pr)}</p>\n')
    h.append("</div>\n")
    if share and not lay["share_top"]:
        h.append(share)
    h.append("</article>\n")
    if related and not (lay["related_first"] and mode != "mobile"):
        h.append(related)
    h.append("</main>\n")
    if parts["newsletter"]:
        button = "Subscribe" if host.lang == "en" else ("訂閱" if host.trad else "订阅")
        h.append(f'<div class="newsletter"><p>{esc(host.newsletter)}</p><form><input type="email"><button>'
                 f'{button}</button></form></div>\n')
    h.append("<footer>")
    if parts["footlinks"]:
        h.append(f'<div class="links">{esc(host.footlinks)}</div>')
    h.append(f"<p>{esc(host.copyright)}</p></footer>\n")
    if cookie and not lay["cookie_top"]:
        h.append(cookie)
    h.append("</body></html>\n")
    return "".join(h)


BLOCK = {"p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "header", "footer",
         "nav", "section", "article", "aside", "main", "blockquote", "form", "table", "tr", "td",
         "th", "br", "hr", "figure", "figcaption", "pre", "dd", "dt", "dl", "body", "html", "title"}
SKIP = {"script", "style", "noscript", "template"}


class TextExtractor(HTMLParser):
    """Visible text as a WET extract has it: the title, then one line per block element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title, self.lines, self.cur = [], [], []
        self.skip = 0
        self.in_title = False
        self.in_head = False

    def flush(self):
        line = re.sub(r"[ \t\r\n\f]+", " ", "".join(self.cur)).strip(" \t\r\n\f")
        if line:
            self.lines.append(line)
        self.cur = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "head":
            self.in_head = True
        elif tag in BLOCK:
            self.flush()

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "head":
            self.in_head = False
        elif tag in BLOCK:
            self.flush()

    def handle_data(self, data):
        if self.skip:
            return
        if self.in_title:
            self.title.append(data)
        elif not self.in_head:
            self.cur.append(data)

    def text(self):
        self.flush()
        title = re.sub(r"[ \t\r\n\f]+", " ", "".join(self.title)).strip()
        return "\n".join(([title] if title else []) + self.lines)


def visible_text(doc):
    p = TextExtractor()
    p.feed(doc)
    p.close()
    return p.text()


# ---------------------------------------------------------------------------------------
# WARC


def sha1_b32(b):
    return "sha1:" + base64.b32encode(hashlib.sha1(b).digest()).decode("ascii")


def warc_record(headers, block):
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    return gzip.compress(head.encode("utf-8") + block + b"\r\n\r\n", compresslevel=9, mtime=0)


def warc_date(d):
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(d):
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    return f"{days[d.weekday()]}, {d.day:02d} {MONTHS[d.month - 1][:3]} {d.year} {d.hour:02d}:{d.minute:02d}:{d.second:02d} GMT"


# ---------------------------------------------------------------------------------------
# The set


KIND_WEIGHTS = {"mirror": 12, "url-variant": 12, "repost": 10, "recrawl": 10, "edit": 10, "ads": 9,
                "date": 7, "truncate": 9, "reorder": 7, "noise": 9, "edition": 6}
COPIES = [1, 1, 1, 1, 1, 2, 2, 2, 3, 4]
CRAWL_START = dt.datetime(2024, 2, 1)
CRAWL_DAYS = 100


class Builder:
    def __init__(self, args):
        self.args = args
        self.rng = Random(args.seed)
        self.pages = []
        self.negatives = []  # (page index a, page index b, kind)
        self.truth_n = 0
        self.headlines = defaultdict(list)  # (lang, topic) -> headlines
        self.min_originals = 4 if args.articles == "research" else 3

    # -- pools -------------------------------------------------------------------------

    def load(self):
        rng, data = self.rng, Path(self.args.data)
        research = self.args.articles == "research"
        target = self.args.pages
        pools = {}
        self.short = {"en": [], "zh": []}
        poems = load_poems(data)
        # Shipped sets are kept small (1.5 MB for all outputs): shorter articles.
        p_long, p_short = poem_articles(poems, Random(rng.getrandbits(64)), *((420, 3) if research else (240, 2)))
        c_long, c_short = load_court(data, 1200 if research else 520)
        for a in c_long:
            a.title = court_title(a, rng)
            a.date = dt.datetime(rng.choice([2016, 2017, 2018]), rng.randint(1, 12), rng.randint(1, 28),
                                 rng.randint(8, 18), rng.randint(0, 59))
        for a in c_short:
            a.title = court_title(a, rng)
            a.date = dt.datetime(rng.choice([2016, 2017, 2018]), rng.randint(1, 12), rng.randint(1, 28), 10, 0)
        for a in p_long + p_short:
            a.date = dt.datetime(rng.randint(2019, 2023), rng.randint(1, 12), rng.randint(1, 28),
                                 rng.randint(7, 22), rng.randint(0, 59))
        if research:
            r_long, r_short = load_reuters(data)
            s_long, s_short = load_sogou(data)
            n_lang = target // 2 + 200
            # Chinese: all of Sogou, poems up to a fifth, court openings for the rest.
            zh_plan = [(s_long, len(s_long)), (p_long, n_lang // 4), (c_long, n_lang)]
            en_plan = [(r_long, n_lang)]
            short_plan = {"en": [(r_short, 400)], "zh": [(s_short, 200), (c_short, 200)]}
        else:
            n_lang = target + 100
            zh_plan = [(p_long, int(n_lang * 0.6)), (c_long, n_lang)]
            en_plan = []
            short_plan = {"en": [], "zh": [(p_short, 150), (c_short, 150)]}
        for lang, plan in (("en", en_plan), ("zh", zh_plan)):
            if not plan:
                pools[lang] = []
                continue
            d = Deduper()
            kept = []
            for docs, cap in plan:
                docs = list(docs)
                rng.shuffle(docs)
                taken = 0
                for a in docs:
                    if len(kept) >= n_lang or taken >= cap:
                        break
                    if d.add(a.title + "\n" + a.text()):
                        kept.append(a)
                        taken += 1
            rng.shuffle(kept)
            pools[lang] = kept
            for docs, cap in short_plan[lang]:
                docs = list(docs)
                rng.shuffle(docs)
                taken = 0
                for a in docs:
                    if taken >= cap:
                        break
                    if d.add(a.title + "\n" + a.text()):
                        self.short[lang].append(a)
                        taken += 1
            rng.shuffle(self.short[lang])
        for lang in pools:
            for a in pools[lang]:
                if a.author is None:
                    a.author = rng.choice(EN_NAMES if lang == "en" else ZH_NAMES)
            for a in self.short[lang]:
                if a.author is None:
                    a.author = rng.choice(EN_NAMES if lang == "en" else ZH_NAMES)
        self.pools = pools
        # Headlines for related-links boxes: titles, and leads cut at 45-90 characters.
        for lang in pools:
            for a in pools[lang]:
                key = (lang, self.topic_of(a))
                self.headlines[key].append(a.title)
                lead = a.paras[0]
                if a.src != "poems" and len(lead) > 45 and rng.random() < 0.35:
                    cut = rng.randint(45, 90) if lang == "en" else rng.randint(41, 52)
                    self.headlines[key].append(lead[:cut].rstrip(" ,，") + ("..." if lang == "en" else "……"))

    def take(self, lang, pred=lambda a: True):
        pool = self.pools[lang]
        for i, a in enumerate(pool):
            if pred(a):
                return pool.pop(i)
        return None

    # -- hosts -------------------------------------------------------------------------

    def make_hosts(self):
        rng = self.rng
        research = self.args.articles == "research"
        n = self.args.hosts or (100 if research else 40)
        specs = []
        if research:
            n_en = n // 2
            specs += [("en", "news")] * n_en
            n_zh = n - n_en
            n_legal, n_cult = max(3, n_zh // 5), max(3, n_zh // 6)
            specs += [("zh", "legal")] * n_legal + [("zh", "culture")] * n_cult + [("zh", "news")] * (n_zh - n_legal - n_cult)
        else:
            n_legal = n // 3
            specs += [("zh", "legal")] * n_legal + [("zh", "culture")] * (n - n_legal)
        self.hosts = []
        used = set()
        for i, (lang, topic) in enumerate(specs):
            while True:
                h = Host(i, lang, topic, rng, compact=not research)
                if h.bare not in used and h.name not in used:
                    used.add(h.bare)
                    used.add(h.name)
                    break
            h.weight = rng.lognormvariate(0, 0.9)
            self.hosts.append(h)
        # A few big hosts per language and topic.
        for lang in ("en", "zh"):
            for topic in ("news", "legal", "culture"):
                group = [h for h in self.hosts if h.lang == lang and h.topic == topic]
                for h in rng.sample(group, max(1, len(group) // 15)) if group else []:
                    h.weight *= 8
        zh = [h for h in self.hosts if h.lang == "zh"]
        for h in rng.sample(zh, max(1, len(zh) // 10)):
            h.make_trad()

    def pick_host(self, lang, topic=None, exclude=(), trad=None):
        cands, weights = [], []
        for h in self.hosts:
            if h.lang != lang or h.hid in exclude:
                continue
            if trad is not None and h.trad != trad:
                continue
            w = h.weight * (1.0 if topic is None or h.topic == topic else 0.05)
            cands.append(h)
            weights.append(w)
        if not cands:
            return self.pick_host(lang, topic, exclude, None)
        return self.rng.choices(cands, weights)[0]

    # -- pages ---------------------------------------------------------------------------

    def topic_of(self, a):
        return {"court": "legal", "poems": "culture"}.get(a.src, "news")

    def new_truth(self):
        self.truth_n += 1
        return f"c{self.truth_n:05d}"

    def related(self, lang, host, exclude):
        """A related-links box: about half from the host's site-wide "popular" list, the
        rest picked for the page."""
        r = self.rng
        pool = self.headlines[(lang, host.topic)] or self.headlines[(lang, "news")]
        if not hasattr(host, "popular"):
            host.popular = []
            while len(host.popular) < 8:
                t = r.choice(pool)
                if t not in host.popular:
                    host.popular.append(t)
        out = []
        n = host.layout["related_n"]
        while len(out) < n:
            t = r.choice(host.popular) if len(out) < n // 2 else r.choice(pool)
            if t != exclude and t not in [x[0] for x in out]:
                out.append((t, host.path(host.scheme, r.randint(100000, 9999999), CRAWL_START, "more")))
        r.shuffle(out)
        return [(to_trad(t) if host.trad else t, href) for t, href in out]

    def crawl_time(self):
        return CRAWL_START + dt.timedelta(seconds=self.rng.randrange(CRAWL_DAYS * 86400))

    def content_of(self, a):
        return Content(a.title, [("p", p) for p in a.paras], a.date, a.author, a.lang, a.script)

    def add_page(self, host, content, kind, truth, src, url=None, aid=None, **extra):
        r = self.rng
        if url is None:
            aid = host.new_id()
            url = host.url(aid, content.date, make_slug(content, r, host.topic))
        page = {"host": host, "content": content, "kind": kind, "truth": truth, "url": url, "aid": aid,
                "lang": content.lang, "source": src, "crawl": self.crawl_time(),
                "views": int(math.exp(r.uniform(math.log(20), math.log(60000)))),
                "section": r.choice(host.sections), "related": self.related(content.lang, host, content.title),
                "mode": "normal", "variant": None, "derived_from": None, "canonical": url}
        page.update(extra)
        self.pages.append(page)
        return len(self.pages) - 1

    def original(self, a, kind="original", host=None):
        # Simplified text mostly on simplified-script sites; poems (traditional) anywhere.
        trad = False if a.lang == "zh" and a.script == "s" and self.rng.random() < 0.9 else None
        host = host or self.pick_host(a.lang, self.topic_of(a), trad=trad)
        return self.add_page(host, self.content_of(a), kind, self.new_truth(), a.src)

    def copy(self, oi, kind):
        """A labelled copy of page `oi` (an original)."""
        r = self.rng
        o = self.pages[oi]
        oh, oc = o["host"], o["content"]
        lang = o["lang"]
        base = dict(truth=o["truth"], src=o["source"], derived_from=oi)

        def other_host(trad=None):
            return self.pick_host(lang, oh.topic if r.random() < 0.9 else None, exclude=(oh.hid,), trad=trad)

        if kind == "mirror":
            return self.add_page(other_host(), oc.copy(), kind, **base)
        if kind == "recrawl":
            i = self.add_page(oh, oc.copy(), kind, url=o["url"], aid=o["aid"], **base)
            p = self.pages[i]
            p["crawl"] = o["crawl"] + dt.timedelta(days=r.randint(7, 120), seconds=r.randrange(86400))
            p["views"] = int(o["views"] * r.uniform(1.05, 3.0)) + r.randint(1, 50)
            p["section"] = o["section"]
            rel = list(o["related"])
            k = r.randint(1, max(1, len(rel) - 1))
            fresh = self.related(lang, oh, oc.title)
            p["related"] = (rel[k:] + [x for x in fresh if x not in rel])[:len(rel)]
            return i
        if kind == "url-variant":
            variant = r.choice(["utm", "utm", "print", "amp", "mobile", "alt-path"])
            aid = o["aid"]
            path = o["url"].split("/", 3)[3]
            mode = "normal"
            if variant == "utm":
                sep = "&" if "?" in o["url"] else "?"
                params = r.choice([
                    f"utm_source={r.choice(['twitter', 'facebook', 'newsletter', 'weibo', 'wechat'])}&utm_medium=social&utm_campaign=share",
                    f"utm_source=rss&utm_medium=feed&fbclid=IwAR{r.getrandbits(100):x}",
                    f"fbclid=IwAR{r.getrandbits(110):x}",
                    f"utm_source=google&utm_medium=cpc&gclid=Cj0K{r.getrandbits(90):x}",
                ])
                url = o["url"] + sep + params
            elif variant == "print":
                url = f"https://{oh.domain}/print/{aid}"
                mode = "print"
            elif variant == "amp":
                url = r.choice([f"https://amp.{oh.bare}/{path}", f"https://{oh.domain}/amp/{path}"])
                mode = "amp"
            elif variant == "mobile":
                url = f"https://m.{oh.bare}/{path}"
                mode = "mobile"
            else:
                alt = {"a": "news", "news": "a", "story": r.choice(["a", "news"]), "p": r.choice(["a", "story"])}[oh.scheme]
                url = oh.url(aid, oc.date, make_slug(oc, r, oh.topic), scheme=alt)
            i = self.add_page(oh, oc.copy(), kind, url=url, aid=aid, mode=mode, variant=variant,
                              canonical=o["url"], **base)
            self.pages[i]["section"] = o["section"]
            return i
        if kind == "repost":
            h = other_host()
            c = oc.copy()
            if r.random() < 0.5:
                if lang == "en":
                    c.title = r.choice([f"{c.title} | via {oh.name}", f"REPOST: {c.title}", f"{c.title} ({oh.name})"])
                else:
                    c.title = r.choice([f"【转载】{c.title}", f"{c.title}（转载）", f"{c.title}_{oh.name}"])
                    if h.trad:
                        c.title = to_trad(c.title)
                variant = "new-title"
            else:
                variant = "same-title"
            if lang == "en":
                line = r.choice([f"Originally published at {o['url']}", f"This article originally appeared on {oh.name}.",
                                 f"Republished with permission from {oh.name}. Original: {o['url']}"])
            else:
                line = r.choice([f"本文来源：{oh.name}，原文链接：{o['url']}", f"转载自{oh.name}", f"本文首发于{oh.name}，转载请注明出处。"])
                if h.trad:
                    line = to_trad(line)
            return self.add_page(h, c, kind, orig_line=line, orig_pos=r.choice(["top", "bottom"]),
                                 variant=variant, source_site=oh.name, **base)
        fn = {"edit": t_edit, "ads": t_ads, "date": t_date, "truncate": t_truncate, "reorder": t_reorder,
              "noise": t_noise, "edition": t_edition}[kind]
        c, variant = fn(oc, r)
        if kind == "edition":
            h = other_host(trad=(c.script == "t"))
        else:
            h = oh if r.random() < 0.35 else other_host()
        i = self.add_page(h, c, kind, variant=variant, **base)
        if kind == "truncate":
            self.pages[i]["more_href"] = o["url"] if h is not oh else self.pages[i]["url"] + "#full"
        return i

    def kinds_for(self, a, n):
        c = self.content_of(a)
        ok = dict(KIND_WEIGHTS)
        if a.lang != "zh":
            ok.pop("edition")
        if len(a.paras) < 3:
            ok.pop("reorder")
        if len(a.paras) < 2:
            ok.pop("truncate")
        if not has_dates(c):
            ok.pop("date")
        kinds = []
        for _ in range(n):
            names = [k for k in ok if k not in kinds]
            kinds.append(self.rng.choices(names, [ok[k] for k in names])[0])
        return kinds

    # -- hard negatives ------------------------------------------------------------------

    def negatives_plan(self, n):
        research = self.args.articles == "research"
        if research:
            return {"short": max(2, round(n * 0.02)), "quote": max(2, round(n * 0.012)),
                    "same-event": max(2, round(n * 0.008)), "court": max(2, round(n * 0.012))}
        return {"short": max(2, round(n * 0.02)), "quote": max(2, round(n * 0.012)),
                "same-event": max(2, round(n * 0.008)), "court": max(2, round(n * 0.02))}

    def build(self):
        rng = self.rng
        self.load()
        self.make_hosts()
        n = self.args.pages
        langs = ["en", "zh"] if self.args.articles == "research" else ["zh"]
        neg = self.negatives_plan(n)
        neg_pages = 2 * neg["short"] + neg["quote"] + 2 * neg["same-event"] + 2 * neg["court"]
        # Reserve court pairs for the court negatives before the pools are used.
        court_pairs = self.court_pairs(neg["court"])
        rest = n - neg_pages
        mean_c = sum(COPIES) / len(COPIES)
        clustered = int(0.40 * n / (1 + mean_c))
        n_art = max(10, round(rest - clustered * mean_c))
        # Material of the quote and same-event negatives, taken before the originals.
        quote_b, events = [], []
        for k in range(neg["quote"]):
            lang = langs[k % len(langs)]
            b = self.take(lang, lambda x: len(x.paras) >= 4 and x.src != "court")
            if b is not None:
                quote_b.append(b)
        for k in range(neg["same-event"]):
            lang = langs[k % len(langs)]
            s = self.take(lang, lambda x: len(x.paras) >= 6 and x.src != "court"
                          and (x.src != "poems" or sum(p.startswith("《") for p in x.paras) >= 4))
            if s is None:
                continue
            fillers = [self.take(lang, lambda x: x.src == s.src and len(x.paras) >= 2) or self.take(lang)
                       for _ in range(2)]
            if None not in fillers:
                events.append((s, fillers))
        # Originals, alternating languages.
        originals = []
        for k in range(n_art):
            lang = langs[k % len(langs)]
            a = self.take(lang)
            if a is None:
                break
            originals.append((a, self.original(a)))
        self.balance_hosts(originals)
        # Copies.
        chosen = rng.sample(range(len(originals)), min(clustered, len(originals)))
        for k in chosen:
            a, oi = originals[k]
            for kind in self.kinds_for(a, rng.choice(COPIES)):
                self.copy(oi, kind)
        # Hard negatives.
        for k in range(neg["short"]):
            self.short_pair(langs[k % len(langs)])
        quotable = [(a, oi) for a, oi in originals if len(a.paras) >= 3 and a.src != "court"]
        for b in quote_b:
            self.quote(b, quotable)
        for s, fillers in events:
            self.same_event(s, fillers)
        for a, b in court_pairs:
            h = self.pick_host("zh", "legal")
            ia = self.original(a, "court", host=h)
            ib = self.original(b, "court", host=h if rng.random() < 0.7 else None)
            self.negatives.append((ia, ib, "court"))

    def balance_hosts(self, originals):
        """Moves originals so that every host has at least a few (4; shipped 3)."""
        count = Counter(self.pages[oi]["host"].hid for _, oi in originals)
        for h in self.hosts:
            while count[h.hid] < self.min_originals:
                donors = [oi for a, oi in originals if a.lang == h.lang
                          and count[self.pages[oi]["host"].hid] > 2 * self.min_originals
                          and (self.topic_of(a) == h.topic or h.lang == "en")]
                if not donors:
                    break
                oi = self.rng.choice(donors)
                p = self.pages[oi]
                count[p["host"].hid] -= 1
                aid = h.new_id()
                p.update(host=h, aid=aid, url=h.url(aid, p["content"].date, make_slug(p["content"], self.rng, h.topic)),
                         section=self.rng.choice(h.sections), related=self.related(h.lang, h, p["content"].title))
                p["canonical"] = p["url"]
                count[h.hid] += 1

    def court_pairs(self, n):
        """Pairs of different court openings (same cause) sharing their formulas: 5-gram
        Jaccard 0.15-0.5."""
        pool = self.pools["zh"]
        court = [a for a in pool if a.src == "court"]
        rng = self.rng
        pairs, used = [], set()
        tries = 0
        while len(pairs) < n and tries < 20000:
            tries += 1
            a, b = rng.sample(court, 2)
            if id(a) in used or id(b) in used or a.extra["cause"] != b.extra["cause"]:
                continue
            if a.paras[0][:2] != b.paras[0][:2]:
                continue
            j = jaccard5(a.text(), b.text())
            if 0.15 <= j < 0.5:
                pairs.append((a, b))
                used.update((id(a), id(b)))
        self.pools["zh"] = [a for a in pool if id(a) not in used]
        return pairs

    def short_pair(self, lang):
        s = self.short[lang]
        if len(s) < 2:
            return
        a, b = s.pop(), s.pop()
        h = self.pick_host(lang, self.topic_of(a))
        ia = self.original(a, "short", host=h)
        ib = self.original(b, "short", host=h)
        self.negatives.append((ia, ib, "short"))

    def quote(self, b, quotable):
        rng = self.rng
        lang = b.lang
        cands = [(a, oi) for a, oi in quotable if a.lang == lang and (a.src == "poems") == (b.src == "poems")]
        if not cands:
            return
        a, oi = rng.choice(cands)
        src_host = self.pages[oi]["host"]
        own = sum(map(len, b.paras))
        order = sorted(range(1, len(a.paras)), key=lambda i: len(a.paras[i]))
        quoted = []
        for i in order[:rng.randint(1, 2)]:
            if sum(map(len, quoted)) + len(a.paras[i]) <= 0.45 * own or not quoted:
                quoted.append(a.paras[i])
        c = self.content_of(b)
        at = rng.randint(1, len(c.blocks) - 1)
        if a.src == "poems":
            lead = rng.choice([f"另見{src_host.name}所錄：", "此前有讀者引述如下：", f"{src_host.name}亦收此詩，錄之如下："])
        elif lang == "en":
            lead = rng.choice([f"As {src_host.name} reported earlier:", f"{src_host.name} wrote on its website:",
                               "In an earlier report, the details were described as follows:"])
        else:
            lead = rng.choice([f"据{src_host.name}此前报道：", f"{src_host.name}曾报道称：", "此前有媒体报道："])
        c.blocks[at:at] = [("p", lead)] + [("quote", q) for q in quoted]
        h = self.pick_host(lang, self.topic_of(b), exclude=(src_host.hid,))
        ib = self.add_page(h, c, "quote", self.new_truth(), b.src, variant=f"{len(quoted)}para")
        self.negatives.append((oi, ib, "quote"))

    def same_event(self, s, fillers):
        rng = self.rng
        lang = s.lang
        if s.src == "poems":  # whole poems: a title paragraph and its lines
            paras = []
            for p in s.paras:
                if p.startswith("《") or not paras:
                    paras.append(p)
                else:
                    paras[-1] += "\n" + p
        else:
            paras = s.paras[1:] if len(s.paras) >= 7 else s.paras
        idx = list(range(len(paras)))
        rng.shuffle(idx)
        half = len(idx) // 2
        parts = [sorted(idx[:half]), sorted(idx[half:])]
        made = []
        for k, part in enumerate(parts):
            filler = fillers[k]
            body = [paras[i] for i in part]
            extra = filler.paras[:rng.randint(1, min(3, len(filler.paras)))]
            body = body[:1] + extra + body[1:] if rng.random() < 0.5 else body + extra
            body = [x for p in body for x in p.split("\n")]
            if lang == "en":
                title = s.title if k == 0 else rng.choice([f"Analysis: {s.title}", f"{s.title} - what we know", f"Update: {s.title}"])
            elif s.script == "t":
                title = s.title if k == 0 else f"{s.title}（續）"
            else:
                title = s.title if k == 0 else rng.choice([f"快讯：{s.title}", f"{s.title}（综合报道）", f"关注｜{s.title}"])
            art = Article(s.src, lang, title, body, s.date + dt.timedelta(hours=rng.randint(1, 30)), script=s.script)
            art.author = rng.choice(EN_NAMES if lang == "en" else ZH_NAMES)
            made.append(self.original(art, "same-event"))
        self.negatives.append((made[0], made[1], "same-event"))

    # -- output --------------------------------------------------------------------------

    def write(self, out):
        out.mkdir(parents=True, exist_ok=True)
        order = sorted(range(len(self.pages)), key=lambda i: (self.pages[i]["crawl"], i))
        ids = {}
        for n, i in enumerate(order, 1):
            ids[i] = f"<urn:crawlset:{n:05d}>"
        info = (f"software: bench/make_crawlset.py\r\nformat: WARC File Format 1.0\r\n"
                f"description: labelled crawlset, articles={self.args.articles} seed={self.args.seed}\r\n").encode()
        info_date = warc_date(CRAWL_START)
        warc = [warc_record([("WARC-Type", "warcinfo"), ("WARC-Date", info_date), ("WARC-Filename", "pages.warc.gz"),
                             ("WARC-Record-ID", "<urn:crawlset:warcinfo-warc>"), ("Content-Type", "application/warc-fields")], info)]
        wet = [warc_record([("WARC-Type", "warcinfo"), ("WARC-Date", info_date), ("WARC-Filename", "pages.wet.gz"),
                            ("WARC-Record-ID", "<urn:crawlset:warcinfo-wet>"), ("Content-Type", "application/warc-fields")], info)]
        jsonl, truth = [], []
        for i in order:
            p = self.pages[i]
            doc = render(p, p["host"])
            body = doc.encode("utf-8")
            server = "nginx" if p["host"].hid % 3 else "Apache"
            http = (f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
                    f"Date: {http_date(p['crawl'])}\r\nServer: {server}\r\nConnection: close\r\n\r\n").encode() + body
            rid = ids[i]
            wd = warc_date(p["crawl"])
            warc.append(warc_record([("WARC-Type", "response"), ("WARC-Target-URI", p["url"]), ("WARC-Date", wd),
                                     ("WARC-Record-ID", rid), ("WARC-Payload-Digest", sha1_b32(body)),
                                     ("WARC-Block-Digest", sha1_b32(http)),
                                     ("Content-Type", "application/http; msgtype=response")], http))
            text = visible_text(doc)
            tb = text.encode("utf-8")
            wet.append(warc_record([("WARC-Type", "conversion"), ("WARC-Target-URI", p["url"]), ("WARC-Date", wd),
                                    ("WARC-Record-ID", rid), ("WARC-Refers-To", rid), ("WARC-Block-Digest", sha1_b32(tb)),
                                    ("WARC-Identified-Content-Language", "eng" if p["lang"] == "en" else "zho"),
                                    ("Content-Type", "text/plain")], tb))
            jsonl.append(json.dumps({"id": rid, "url": p["url"], "text": text}, ensure_ascii=False))
            truth.append(json.dumps({
                "id": rid, "truth": p["truth"], "kind": p["kind"], "variant": p["variant"], "url": p["url"],
                "lang": p["lang"], "source": p["source"], "host": p["host"].bare,
                "derived_from": ids[p["derived_from"]] if p["derived_from"] is not None else None,
            }, ensure_ascii=False))
        (out / "pages.warc.gz").write_bytes(b"".join(warc))
        (out / "pages.wet.gz").write_bytes(b"".join(wet))
        (out / "pages.jsonl").write_text("\n".join(jsonl) + "\n", encoding="utf-8")
        (out / "truth.json").write_text("\n".join(truth) + "\n", encoding="utf-8")
        negs = [json.dumps({"id_a": ids[a], "id_b": ids[b], "duplicate": False, "kind": k}) for a, b, k in self.negatives]
        (out / "negatives.jsonl").write_text("\n".join(negs) + ("\n" if negs else ""), encoding="utf-8")
        stats = self.stats()
        (out / "README.txt").write_text(readme(self.args, stats), encoding="utf-8")
        return stats

    def stats(self):
        kinds = Counter(p["kind"] for p in self.pages)
        sizes = Counter(p["truth"] for p in self.pages)
        dist = Counter(sizes.values())
        in_clusters = sum(n for n in sizes.values() if n >= 2)
        hosts = Counter(p["host"].hid for p in self.pages)
        hs = sorted(hosts.values())
        return {
            "pages": len(self.pages), "langs": dict(Counter(p["lang"] for p in self.pages)),
            "sources": dict(Counter(p["source"] for p in self.pages)),
            "kinds": dict(sorted(kinds.items())), "cluster_sizes": dict(sorted(dist.items())),
            "in_clusters": in_clusters, "truth_labels": len(sizes),
            "negatives": dict(Counter(k for _, _, k in self.negatives)),
            "hosts": len(hs), "host_pages": {"min": hs[0], "median": hs[len(hs) // 2], "max": hs[-1],
                                             "5-30": sum(1 for x in hs if 5 <= x <= 30),
                                             "100+": sum(1 for x in hs if x >= 100), "<5": sum(1 for x in hs if x < 5)},
        }


def readme(args, st):
    src = ("Reuters-21578 (English), Sogou news smarty samples, Chinese administrative court-judgment openings and "
           "全唐诗 poems (Chinese), all read from ../shared/data-samples. Reuters and Sogou are for research use "
           "only: do not ship or commit this set." if args.articles == "research" else
           "the 全唐诗 edition of the chinese-poetry Tang subset (MIT, (c) chinese-poetry contributors; the poems are "
           "public domain) and Chinese administrative court-judgment openings (lr12/textcnnrnn, MIT; judicial "
           "documents are excluded from copyright by PRC Copyright Law Art. 5).")
    return f"""crawlset ({args.articles}, seed {args.seed}): a labelled web-crawl evaluation set for neardup
made by bench/make_crawlset.py --articles {args.articles} --seed {args.seed} --pages {args.pages}

Article text: {src}
The site names, templates, URLs, ads, update sentences and dates around the articles are made
up by the script. Base documents were deduplicated among themselves first (character 5-gram
Jaccard >= 0.5 or containment >= 0.6), so two different truth labels never share an article
by accident.

{st['pages']} pages on {st['hosts']} hosts; {st['in_clusters']} pages are in clusters of two or more.
kinds: {json.dumps(st['kinds'], ensure_ascii=False)}
cluster sizes (size: clusters): {json.dumps(st['cluster_sizes'])}
hard-negative pairs: {json.dumps(st['negatives'])}

Files
  pages.warc.gz    warcinfo + one WARC/1.0 `response` per page (HTTP/1.1 200, text/html; charset=utf-8),
                   one gzip member per record
  pages.wet.gz     one WET `conversion` per page: the page title, then one line per block element
                   (extracted from the HTML with Python's html.parser); WARC-Record-ID and
                   WARC-Refers-To are the response's id
  pages.jsonl      id, url, text (the WET text)
  truth.json       JSON Lines: id, truth (cluster label), kind, variant, url, lang, source, host,
                   derived_from (the page a copy was made from)
  negatives.jsonl  hard-negative pairs: id_a, id_b, duplicate=false, kind (short, quote, same-event, court)

Ids are the WARC-Record-IDs as neardup reads them, angle brackets included, so
  neardup eval --truth truth.json --run RUN --by kind
  neardup eval --truth-pairs negatives.jsonl --run RUN
work for runs on any of the three inputs.

Kinds: original; mirror (another host's template); url-variant (tracking parameters, /print/,
AMP, m. host, alternative path; `variant` says which); repost (another host, "originally
published" line, maybe a new title); recrawl (same URL later: new date, counter, related
links); edit (words, a sentence, a paragraph added or removed); ads (1-3 ad paragraphs);
date (dates in text and byline changed); truncate (first 50-90% of the paragraphs and a read-more
link); reorder (two paragraphs swapped); noise (whitespace, punctuation, width, typos);
edition (Chinese in the other script, by a partial one-to-one character table). Hard-negative
pages are singletons: short (two short articles on one host), quote (quotes 1-2 paragraphs of
another article), same-event (disjoint paragraphs of one source plus other text), court
(different judgments sharing their formulas).
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles", choices=["shipped", "research"], required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--pages", type=int, default=None, help="about this many pages (research 3000, shipped 280)")
    ap.add_argument("--hosts", type=int, default=None,
                    help="hosts (research 100; shipped 40, as 1.5 MB holds only about 290 pages)")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="the shared data-samples folder")
    args = ap.parse_args()
    if args.pages is None:
        args.pages = 3000 if args.articles == "research" else 280
    if args.articles == "shipped" and args.pages > 600:
        ap.error("shipped sets have at most 600 pages")
    b = Builder(args)
    b.build()
    st = b.write(args.out)
    sizes = {f.name: f.stat().st_size for f in sorted(args.out.iterdir()) if f.is_file()}
    st["bytes"] = sizes
    st["total_bytes"] = sum(sizes.values())
    print(json.dumps(st, ensure_ascii=False, indent=1))
    if args.articles == "shipped" and st["total_bytes"] > 1_500_000:
        print(f"warning: the shipped set is {st['total_bytes']} bytes, above 1.5 MB: use fewer --pages",
              file=sys.stderr)


if __name__ == "__main__":
    main()
