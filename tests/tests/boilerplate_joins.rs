//! Pages are never joined by their boilerplate. Each test rebuilds one way a page used to be
//! reduced to its template (a menu, a footer, a notice many sites carry, a promotion two
//! sites inject, a box of headlines) and joined to another page by it, and checks that
//! every page keeps its own text, under MinHash and SimHash, in one run and in a batch
//! against an index of the batches before it.

use std::path::{Path, PathBuf};

use neardup_e2e::dedup;
use neardup_io::{Decision, Reason, read_documents};

/// A page: its id, URL and text.
type Page = (String, String, String);

fn page(id: &str, url: &str, lines: &[&str]) -> Page {
    (id.to_string(), url.to_string(), lines.join("\n"))
}

fn write(dir: &Path, name: &str, pages: &[Page]) -> PathBuf {
    let path = dir.join(name);
    let lines: Vec<String> = pages
        .iter()
        .map(|(id, url, text)| {
            serde_json::json!({ "id": id, "url": url, "text": text }).to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Each document's decision, reason and the document it was removed for, by id.
fn decisions(out: &Path) -> Vec<(String, Decision, Option<Reason>, Option<String>)> {
    let mut rows: Vec<_> = read_documents(&out.join("documents"))
        .unwrap()
        .into_iter()
        .map(|d| (d.id.unwrap(), d.decision, d.reason, d.duplicate_of))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// Runs `input` (of `records` records) with each method and checks that every record has
/// its row, that the documents `removed` names (id, the id it is a duplicate of) are
/// removed for those (under SimHash, which has no containment, they may be kept unless
/// `by_simhash`), and every other one is kept.
fn check_input(input: &Path, records: usize, removed: &[(&str, &str)], by_simhash: bool) {
    let dir = tempfile::tempdir().unwrap();
    for method in ["minhash", "simhash"] {
        let out = dir.path().join(method);
        dedup(input, &out, &["--method", method]).unwrap();
        let rows = decisions(&out);
        assert_eq!(rows.len(), records, "{method}: a row for every record");
        for (id, decision, reason, of) in rows {
            match removed.iter().find(|(r, _)| *r == id) {
                Some(_) if method == "simhash" && !by_simhash && decision == Decision::Keep => {}
                Some((_, kept)) => {
                    assert_eq!(decision, Decision::Remove, "{method}: {id}");
                    assert_eq!(of.as_deref(), Some(*kept), "{method}: {id}");
                }
                None => assert_eq!(decision, Decision::Keep, "{method}: {id} {reason:?} {of:?}"),
            }
        }
    }
}

/// [`check_input`] of `pages`.
fn check(pages: &[Page], removed: &[(&str, &str)], by_simhash: bool) {
    let dir = tempfile::tempdir().unwrap();
    check_input(&write(dir.path(), "pages.jsonl", pages), pages.len(), removed, by_simhash);
}

/// A small poetry site: a long menu of links above each poem (no punctuation in it) and a
/// long footer below it (prose, longer than the verses). Its pages used to keep the menu
/// and the footer and leave the verses out, so three different poems were one text.
#[test]
fn poem_pages_of_a_small_site_keep_their_verses() {
    let menu = "首页 · 作者 · 楚辞 · 飞花令 · 成语 · 古籍 · 对联 · 每日一诗 · 投稿 · 诗人故事 \
                · 字词典 · 元曲 · 韵书 · 乐府诗集 · 诗文 · 书法欣赏 · 诗经";
    let footer = "本站部分信息来源于网络，如有侵权，请联系我们删除。未经授权禁止复制或建立镜像，\
                  违者依法追究责任。Copyright © 2014-2024 雅集网 All Rights Reserved. \
                  冀ICP备68062584号-1";
    let police = "云公网安备 80314876260728号　违法和不良信息举报电话：040-37347407，\
                  举报邮箱：jubao@yaji.example.cn";
    let poems = [
        ("歲日作", "顧況", "不覺老將春共至，更悲攜手幾人全。", "還丹寂寞羞明鏡，手把屠蘇讓少年。"),
        ("竹枝", "劉禹錫", "巫峽蒼蒼煙雨時，清猨啼在最高枝。", "箇裏愁人腸自斷，由來不是此聲悲。"),
        ("探得古槎", "皇甫冉", "千年古貌多，八月秋濤晚。", "偶被主人留，那知來近遠。"),
    ];
    let hot = [
        "登金陵鳳凰臺（李白）",
        "《望月懷遠》張九齡",
        "留別武陵袁丞（王昌齡）",
        "《夜同宴用人字》張謂",
        "遙同杜員外審言過嶺（沈佺期）",
        "雩祀樂章 肅和（褚亮）",
        "《贈范金卿二首 二》李白",
        "即事奉呈郎中韋使君（秦系）",
        "雜曲歌辭 竹枝 七（劉禹錫）",
        "《薊丘覽古贈盧居士藏用七首 田光先生》陳子昂",
    ];
    let mut pages = Vec::new();
    for (k, (title, author, first, second)) in poems.iter().enumerate() {
        let head = format!("{title}_{}_雅集网", ["诗人专题", "诗文", "唐诗"][k]);
        let byline = format!("{author}（唐代）");
        let source = format!("来源：雅集网　作者：雅集网　发布时间：2020-05-0{k}");
        let mut lines = vec![&head[..], "雅集网有温度的城市门户", menu, title, &byline, &source];
        lines.extend([*first, *second, "【责任编辑：郑一凡】", "热点排行"]);
        lines.extend(&hot[2 * k..2 * k + 6]);
        lines.extend([footer, police]);
        pages.push(page(
            &format!("poem-{k}"),
            &format!("https://yaji.example.cn/a/{k}.shtml"),
            &lines,
        ));
    }
    // The print version of the third poem: no menu, box or footer.
    let (title, author, first, second) = poems[2];
    let byline = format!("{author}（唐代）");
    pages.push(page(
        "poem-2-print",
        "https://yaji.example.cn/print/2.html",
        &[
            &format!("{title}_唐诗_雅集网"),
            "雅集网有温度的城市门户",
            title,
            &byline,
            "来源：雅集网　作者：雅集网　发布时间：2020-05-02",
            first,
            second,
            "本文链接：https://yaji.example.cn/a/2.shtml",
            "【责任编辑：郑一凡】",
        ],
    ));
    check(&pages, &[("poem-2-print", "poem-2")], true);
}

/// A poetry site of two pages: a poem of two verses each, under a menu and a footer of six
/// sentences longer than the verses. Both pages are named by the footer's sentences, so
/// nothing told the site's template from one text at two URLs, and the second poem was
/// removed as a near-duplicate of the first by the footer they share.
fn two_poem_site() -> Vec<Page> {
    let footer = [
        "本站部分诗词来源于网络公开资料，仅供学习交流使用，如有侵权请联系我们删除。",
        "未经本站书面授权，任何单位和个人不得转载、摘编或以其他方式使用本站内容。",
        "诗词鉴赏栏目每日更新，欢迎读者朋友投稿，来稿请注明作者姓名与联系方式和通讯地址。",
        "本站所载作品的译文与赏析均为编辑整理，观点仅代表作者本人，与本站立场无关。",
        "如发现本站内容有错误或不妥之处，欢迎通过页面底部的意见反馈入口告诉我们。",
        "本站诗词按朝代与作者分类整理，读者可在作者页查看诗人生平与全部作品目录及相关赏析文章。",
        "Copyright 2024 诗词网 版权所有 京ICP备12345678号",
    ];
    let poems = [
        ("静夜思", "李白", "床前明月光，疑是地上霜。", "举头望明月，低头思故乡。"),
        ("登鹳雀楼", "王之涣", "白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"),
    ];
    let mut pages = Vec::new();
    for (i, (title, author, first, second)) in poems.iter().enumerate() {
        let byline = format!("唐 · {author}");
        let mut lines =
            vec!["首页 | 诗词 | 作者 | 名句 | 古籍 | 关于我们", title, &byline, first, second];
        lines.extend(footer);
        pages.push(page(
            &format!("poem-{i}"),
            &format!("https://shici.example.cn/poem/{i}.html"),
            &lines,
        ));
    }
    pages
}

/// [`two_poem_site`] in one run, and in two batches (a poem each) against an index: the
/// second batch learns the site's template from the index's sample of the first's page.
#[test]
fn two_poems_of_a_site_of_two_pages_are_not_joined_by_its_footer() {
    let pages = two_poem_site();
    check(&pages, &[], true);
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), "b1.jsonl", &pages[..1]);
    let second = write(dir.path(), "b2.jsonl", &pages[1..]);
    for method in ["minhash", "simhash"] {
        let index = dir.path().join(format!("index-{method}"));
        let index = index.to_str().unwrap();
        for (input, name) in [(&first, "b1"), (&second, "b2")] {
            let out = dir.path().join(format!("{method}-{name}"));
            dedup(input, &out, &["--method", method, "--index", index, "--run-name", name])
                .unwrap();
            let decisions = decisions(&out);
            assert!(
                decisions.iter().all(|d| d.1 == Decision::Keep),
                "{method} {name}: {decisions:?}"
            );
        }
    }
}

/// A reprint notice that many news sites carry below their articles (on every page), and a
/// small poetry site carries below two of its poems. A poem page used to keep only the notice (longer
/// than its verses) and be joined to every news page by containment.
fn notice_sites() -> (Vec<Page>, Vec<Page>) {
    let notice = "本网转载其他媒体之稿件，意在为公众提供免费服务，并不代表本网观点或证实其内容的\
                  真实性。如稿件版权单位或个人不想在本网发布，可与本网联系，本网视情况可立即将其撤除。";
    let poems = [
        ("春晓", "孟浩然", "春眠不觉晓，处处闻啼鸟。", "夜来风雨声，花落知多少。"),
        ("相思", "王维", "红豆生南国，春来发几枝。", "愿君多采撷，此物最相思。"),
        ("登鹳雀楼", "王之涣", "白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"),
    ];
    let mut poem_pages = Vec::new();
    for (k, (title, author, first, second)) in poems.iter().enumerate() {
        let head = format!("{title} - 诗词天地");
        let by = format!("作者：{author}");
        let mut lines = vec![&head[..], "首页 | 唐诗 | 宋词 | 元曲 | 诗人 | 名句", title, &by];
        lines.extend([*first, *second, "分享到：微信 微博 QQ空间"]);
        if k < 2 {
            lines.push(notice);
        }
        lines.push("诗词天地 版权所有 联系我们 网站地图");
        poem_pages.push(page(
            &format!("poem-{k}"),
            &format!("https://shici.example.com/p/{k}"),
            &lines,
        ));
    }
    let news = [
        (
            "东方晨报",
            "dongfang",
            "市政府昨日召开常务会议，研究部署今冬明春供暖保障工作。",
            "会议要求各区确保居民室温达标，对困难群众给予补贴。",
        ),
        (
            "西城在线",
            "xicheng",
            "公交集团宣布，自下月起新开通三条公交线路，连接城东新区与地铁站。",
            "预计每日可服务乘客两万人次，票价执行现行标准。",
        ),
        (
            "南湖新闻网",
            "nanhu",
            "国际油价周三小幅上涨，布伦特原油期货价格站上每桶八十美元。",
            "分析人士认为，需求回暖是油价上涨的主要原因。",
        ),
        (
            "北岭资讯",
            "beiling",
            "全市中小学本周开展消防安全演练，近二十万名师生参加。",
            "演练内容包括疏散逃生、灭火器使用和应急救护。",
        ),
    ];
    // A second story on each news site: the notice is below both.
    let briefs = [
        "市图书馆新馆下月开放，藏书一百二十万册，设有少儿阅览区和古籍修复室。",
        "本市启动老旧小区加装电梯工程，首批三十个小区年内完工，居民可申请补贴。",
        "春季花展本周末在湖滨公园开幕，展出郁金香、樱花等四十余个品种。",
        "城东污水处理厂扩建完成，日处理能力提高一倍，周边河道水质明显改善。",
    ];
    let mut news_pages = Vec::new();
    for (i, (name, host, first, second)) in news.into_iter().enumerate() {
        let menu = format!("{name}首页 新闻 财经 体育 娱乐");
        let rights = format!("{name}版权所有");
        for (n, body) in [[first, second], [briefs[i], ""]].iter().enumerate() {
            let lines = [name, &menu, body[0], body[1], "责任编辑：本网编辑", notice, &rights];
            news_pages.push(page(
                &format!("news-{host}-{n}"),
                &format!("https://{host}.example.cn/n/{n}.html"),
                &lines,
            ));
        }
    }
    (poem_pages, news_pages)
}

#[test]
fn a_notice_many_sites_carry_joins_no_pages() {
    let (poems, news) = notice_sites();
    check(&[poems, news].concat(), &[], true);
}

/// The notice's sites in two batches, the second against an index of the first: the
/// second learns the notice from the index's pages of the first batch's sites as well,
/// as one run over both does, and joins nothing either.
#[test]
fn a_batch_learns_a_notice_from_the_sites_of_earlier_batches() {
    let (poems, news) = notice_sites();
    let dir = tempfile::tempdir().unwrap();
    // The second batch has one page of each of two news sites, whose other pages are in
    // the first.
    let (earlier, later): (Vec<_>, Vec<_>) =
        news.into_iter().enumerate().partition(|(i, _)| *i < 4 || i % 2 == 1);
    let earlier: Vec<Page> = earlier.into_iter().map(|(_, p)| p).collect();
    let later: Vec<Page> = later.into_iter().map(|(_, p)| p).collect();
    let first = write(dir.path(), "b1.jsonl", &[poems, earlier].concat());
    let second = write(dir.path(), "b2.jsonl", &later);
    for method in ["minhash", "simhash"] {
        let index = dir.path().join(format!("index-{method}"));
        let run = |input: &Path, name: &str| {
            let out = dir.path().join(format!("{method}-{name}"));
            let index = index.to_str().unwrap();
            dedup(input, &out, &["--method", method, "--index", index, "--run-name", name])
                .unwrap();
            out
        };
        run(&first, "b1");
        let batch = run(&second, "b2");
        assert!(decisions(&batch).iter().all(|d| d.1 == Decision::Keep), "{method}");
        // The batch left the notice out of its pages, as one run over both does.
        let learned = neardup_e2e::summary(&batch)["boilerplate"]["lines_removed"].as_u64();
        assert!(learned.unwrap() >= 2, "{method}");
        let alone = dir.path().join(format!("{method}-alone"));
        dedup(&second, &alone, &["--method", method]).unwrap();
        let alone_removed = neardup_e2e::summary(&alone)["boilerplate"]["lines_removed"].as_u64();
        assert_eq!(
            alone_removed,
            Some(0),
            "{method}: the batch alone sees the notice on two sites"
        );
    }
}

/// Two sites inject one promotion below a one-sentence brief; the promotion is longer than
/// the brief, in a block of its own. Each brief used to be left out for the promotion, and
/// the two pages were one text.
#[test]
fn a_promotion_two_sites_inject_joins_no_pages() {
    let promo = "想要告别失眠？星耀空气净化器名师一对一辅导，已帮助超过八十万名用户解决了烦恼。\
                 点击下方链接免费试用七天，不满意随时退款。";
    let sites = [
        (
            "体坛快报",
            "titan",
            [
                "主队在昨晚的比赛中以二比一逆转取胜，锁定季后赛席位。",
                "联赛第十轮今晚开打，卫冕冠军客场挑战升班马，门将伤愈复出，主帅表示球队将全力争胜。",
                "女排集训名单公布，三名新人入选，主教练称将在热身赛中给年轻球员更多机会，以备战明年大赛。",
            ],
        ),
        (
            "能源观察",
            "nengyuan",
            [
                "国内成品油价格今日下调，每吨降低一百二十元。",
                "天然气供应商表示今冬储气量充足，城市燃气价格将保持稳定，居民用气不受影响。",
                "新能源汽车充电桩建设提速，全年新增公共充电桩十万个，覆盖所有县城，方便车主出行。",
            ],
        ),
    ];
    let mut pages = Vec::new();
    for (name, host, texts) in sites {
        for (k, body) in texts.iter().enumerate() {
            let head = format!("{name} - 首页");
            let menu = format!("{name} 新闻 | 数据 | 评论 | 图片 | 视频");
            let date = format!("发布时间：2024-03-0{} 来源：{name}", k + 1);
            let feature = format!("{name}第{k}期专题报道正在进行中，欢迎读者来信参与讨论。");
            let rights = format!("{name}版权所有 未经授权禁止转载");
            let below = if k == 0 { promo } else { &feature };
            let lines = [&head[..], &menu, &date, body, "相关推荐", below, &rights];
            pages.push(page(
                &format!("{host}-{k}"),
                &format!("https://{host}.example.cn/a/{k}"),
                &lines,
            ));
        }
    }
    check(&pages, &[], true);
}

/// Pages of one site given as HTML in a JSON Lines text field, cut into lines where its
/// source had them: a box of two other pages' headlines sits on one source line, longer
/// than a one-sentence brief. The HTML is read as a web archive's page is, one block a
/// line, so the box is learned as template and the two briefs under the same box stay
/// apart; and a copy of an article on another site, minified on one line, is found.
#[test]
fn html_in_a_json_lines_field_is_read_as_a_page() {
    let heads = [
        "市政府召开常务会议部署冬季供暖工作",
        "本市新增三条公交线路方便市民出行",
        "国际油价周三小幅上涨布伦特原油站上八十美元",
        "全市中小学开展消防安全演练活动",
    ];
    let bodies = [
        "市政府昨日召开常务会议，研究部署今冬明春供暖保障工作，要求各区确保居民室温达标，并对困难群众给予补贴，会议还听取了燃气供应情况汇报。",
        "公交集团宣布，自下月起新开通三条公交线路，连接城东新区与地铁站，预计每日可服务乘客两万人次，票价执行现行标准。",
        "国际油价周三小幅上涨。",
        "全市中小学开展消防演练。",
    ];
    let html = |i: usize, boxed: [&str; 2]| {
        [
            format!("<html><head><title>{} - 城市新闻网</title></head><body>", heads[i]),
            "<div class=\"nav\"><a href=\"/\">首页</a> | <a href=\"/news\">新闻</a> | <a href=\"/city\">本地</a> | <a href=\"/finance\">财经</a></div>".to_string(),
            format!("<h1>{}</h1>", heads[i]),
            format!("<div class=\"byline\">来源：城市新闻网　发布时间：2024-03-0{} 10:00　编辑：王明</div>", i + 1),
            format!("<p>{}</p>", bodies[i]),
            format!("<div class=\"hot\"><h3>热点排行</h3><ol><li><a href=\"/n/10\">{}</a></li><li><a href=\"/n/11\">{}</a></li></ol></div>", boxed[0], boxed[1]),
            "<div class=\"share\">分享到：微信 微博 QQ空间</div>".to_string(),
            "<div class=\"footer\">城市新闻网版权所有，未经授权不得转载。地址：人民路1号　电话：12345678</div>".to_string(),
            "</body></html>".to_string(),
        ]
    };
    let mut pages = Vec::new();
    for i in 0..4 {
        let boxed = if i < 2 { [heads[1 - i], heads[2]] } else { [heads[0], heads[1]] };
        let lines = html(i, boxed);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        pages.push(page(&format!("p{i}"), &format!("https://citynews.example/n/{i}.html"), &lines));
    }
    // The first article on another site, minified.
    let copy = format!(
        "<html><head><title>{} - 晚报网</title></head><body><div class=\"top\"><a>晚报首页</a> \
         <a>要闻</a> <a>民生</a></div><h1>{}</h1><p>{}</p><div class=\"foot\">晚报网 \
         版权所有</div></body></html>",
        heads[0], heads[0], bodies[0]
    );
    pages.push(("copy".to_string(), "https://wanbao.example/a/1".to_string(), copy));
    check(&pages, &[("copy", "p0")], false);
}

/// Pages whose every line is their site's template (empty listings) are kept, with their
/// own reason, and never joined to each other by the template they share.
#[test]
fn pages_that_are_all_template_are_kept_apart() {
    // The template's lines, one of them with a number in it (the page's number in the
    // listing), which template learning reads as any number.
    let template = |n: usize| {
        [
            "Harbour Times - local news".to_string(),
            "Home | News | Sport | Weather | Opinion".to_string(),
            format!("Page {n} of 40"),
            "Sign in to follow the stories you care about and get them in your inbox.".to_string(),
            "Copyright Harbour Times. All rights reserved; no copying without leave.".to_string(),
        ]
    };
    let mut pages = Vec::new();
    let stories = [
        "The old mill by the river will become a library, the council decided on Monday.",
        "Stallholders at the Saturday market asked for a roof before the winter rains come.",
        "The primary school on Hill Street opens a second building for its youngest pupils.",
        "Repairs close the harbour bridge to cars for six weeks from the first of June.",
    ];
    for (i, story) in stories.iter().enumerate() {
        let story = story.to_string();
        let mut lines = template(i + 1).to_vec();
        lines.insert(2, story);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        pages.push(page(&format!("story-{i}"), &format!("https://harbour.example/s/{i}"), &lines));
    }
    // Two empty listings: all template, their page numbers aside.
    for i in 0..2 {
        let lines = template(10 + i);
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        pages.push(page(
            &format!("empty-{i}"),
            &format!("https://harbour.example/list?p={i}"),
            &lines,
        ));
    }
    check(&pages, &[], true);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    dedup(&write(dir.path(), "pages.jsonl", &pages), &out, &[]).unwrap();
    let empty: Vec<_> = decisions(&out).into_iter().filter(|d| d.0.starts_with("empty")).collect();
    assert!(empty.iter().all(|d| d.2 == Some(Reason::BoilerplateOnly)), "{empty:?}");
}

/// Openings of one legal formula that differ only in their docket number are different
/// rulings, though near duplicates as text; a copy of a ruling keeps its number and is
/// found.
#[test]
fn rulings_that_differ_in_their_docket_number_are_not_joined() {
    let ruling = |number: u32, date: &str| {
        format!(
            "申请执行人天津市西青区人力资源和社会保障局于{date}向本院申请强制执行其作出的\
             [津西]人社联补缴字[2016]第{number:03}号《天津市社会保险基金管理中心社会保险费\
             限期补缴处理决定书》。本院依法进行了审查，现已审查终结。"
        )
    };
    let docs = [
        ("r066", ruling(66, "2017年1月11日")),
        ("r068", ruling(68, "2017年1月11日")),
        ("r077", ruling(77, "2017年1月11日")),
        ("r066-copy", ruling(66, "2017年1月12日")),
    ];
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = docs
        .iter()
        .map(|(id, text)| serde_json::json!({ "id": id, "text": text }).to_string())
        .collect();
    let input = dir.path().join("rulings.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    // SimHash, at distance 3 for text that is not web pages, may miss the copy.
    check_input(&input, docs.len(), &[("r066-copy", "r066")], false);
}

/// A news site whose pages carry a headline, an article (one of them a single short
/// sentence), and a long box of the site's most read headlines with a share bar and a
/// footer below: the box is the site's template, every story keeps its own lines, and only
/// the print copy of one story is removed.
#[test]
fn a_short_news_story_keeps_its_headline_and_article() {
    let menu = "首页 | 新闻 | 财经 | 体育 | 娱乐 | 科技 | 汽车 | 房产 | 教育 | 健康 | 旅游 | 视频";
    let hot = [
        "全市新增三条公交线路 方便城东居民出行",
        "市政府召开常务会议部署冬季供暖保障工作",
        "国际油价周三小幅上涨 布伦特原油站上八十美元",
        "全市中小学开展消防安全演练活动",
        "本地楼市成交量连续三个月回升",
        "新建体育公园下月起免费向市民开放",
        "老旧小区改造今年完成一百二十个",
    ];
    let share = "分享到：微信 微博 QQ空间 复制链接 打印本页 关闭窗口 字号：大 中 小";
    let footer = "城南晚报社版权所有，未经书面授权不得转载、摘编或以其他方式使用本网内容。\
                  违法和不良信息举报电话：010-12345678 举报邮箱：jubao@chengnan.example.cn";
    let stories = [
        ("城南菜市场今起恢复营业", "改造后的城南菜市场今天上午重新开门，摊位增加到二百个。"),
        (
            "地铁五号线南延段开通试运营",
            "地铁五号线南延段今天开通试运营，新增车站六座，全程运行时间约二十分钟。\
             沿线居民表示出行方便了许多，早高峰期间列车间隔缩短到三分钟。",
        ),
        (
            "秋季马拉松赛报名人数创新高",
            "今年秋季马拉松赛报名人数超过三万人，创历届新高，组委会将通过抽签确定参赛名单。\
             赛事路线途经老城区和滨江公园，沿途设置十二个补给站。",
        ),
    ];
    let mut pages = Vec::new();
    for (k, (headline, article)) in stories.iter().enumerate() {
        let title = format!("{headline}_城南晚报");
        let byline = format!("2024-10-0{} 08:3{k} 来源：城南晚报 记者 王晓明", k + 1);
        let mut lines = vec![&title[..], menu, headline, &byline, article, "热点排行"];
        lines.extend(hot.iter().copied());
        lines.extend([share, footer]);
        pages.push(page(
            &format!("news-{k}"),
            &format!("https://chengnan.example.cn/news/{k}.html"),
            &lines,
        ));
    }
    // The print copy of the second story: headline, byline and article only.
    let (headline, article) = stories[1];
    pages.push(page(
        "news-1-print",
        "https://chengnan.example.cn/print/1.html",
        &[headline, "2024-10-02 08:31 来源：城南晚报 记者 王晓明", article],
    ));
    check(&pages, &[("news-1-print", "news-1")], true);
}

/// One host's story pages, each with a "related reading" box that quotes the lead sentence
/// (its first sentence) of each of the host's other stories. A one-sentence story's lead
/// is then on every page of the host, and a longer story's lead on all pages but its own.
fn related_box_host(stories: &[(&str, &[&'static str])]) -> Vec<Page> {
    let menu = "首页 | 要闻 | 本地 | 财经 | 文体 | 评论 | 图片 | 专题";
    let notice = "本文为江川日报原创稿件，转载请注明出处，违者必究。";
    let share = "分享到：微信 微博 QQ空间 打印 关闭";
    let footer =
        "江川日报社版权所有　地址：江川市解放路88号　电话：0871-6543210　备案号：滇ICP备12345678号";
    let lead = |text: &'static str| &text[..text.find('。').unwrap() + '。'.len_utf8()];
    let mut pages = Vec::new();
    for (k, (headline, article)) in stories.iter().enumerate() {
        let title = format!("{headline}_江川日报");
        let byline = format!("2024-04-0{} 09:1{k} 来源：江川日报 记者 李文", k + 1);
        let mut lines = vec![&title[..], menu, headline, &byline];
        lines.extend(article.iter().copied());
        lines.extend([notice, "相关阅读"]);
        lines
            .extend(stories.iter().enumerate().filter(|&(j, _)| j != k).map(|(_, s)| lead(s.1[0])));
        lines.extend([share, footer]);
        pages.push(page(
            &format!("story-{k}"),
            &format!("https://jcrb.example.cn/news/{k}.html"),
            &lines,
        ));
    }
    pages
}

/// Runs `first`, then `second` against an index of it, with each method, and checks that
/// every page of both is kept.
fn check_batches(first: &[Page], second: &[Page]) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = [
        (write(dir.path(), "b1.jsonl", first), "b1", first.len()),
        (write(dir.path(), "b2.jsonl", second), "b2", second.len()),
    ];
    for method in ["minhash", "simhash"] {
        let index = dir.path().join(format!("index-{method}"));
        for (input, name, records) in &inputs {
            let out = dir.path().join(format!("{method}-{name}"));
            let args = ["--method", method, "--index", index.to_str().unwrap(), "--run-name", name];
            dedup(input, &out, &args).unwrap();
            let rows = decisions(&out);
            assert_eq!(rows.len(), *records, "{method} {name}");
            assert!(rows.iter().all(|d| d.1 == Decision::Keep), "{method} {name}: {rows:?}");
        }
    }
}

/// Stories of one host under a related box ([`related_box_host`]), in one run and in two
/// batches: the leads of one-sentence stories are learned as template, and so are the
/// teasers of the longer stories, however many of those there are, so no story is
/// compared by the teasers it quotes. Where only one story is longer, the one-sentence
/// stories' pages (each holds every lead) have one identity, and the teaser is learned as
/// a line on enough URLs that each have lines of their own (their headlines).
#[test]
fn stories_whose_leads_a_related_box_quotes_are_not_joined() {
    let short: [(&str, &[&str]); 5] = [
        ("江川湖湿地公园正式开园", &["江川湖湿地公园今天正式开园，市民可免费入园参观。"]),
        (
            "全市首条智慧公交线路开通",
            &["全市首条智慧公交线路今天开通，乘客可通过手机实时查询车辆位置。"],
        ),
        ("江川一中新校区投入使用", &["江川一中新校区本学期投入使用，可容纳学生三千人。"]),
        ("市图书馆延长开放时间", &["市图书馆从下周起延长开放时间至晚上九点。"]),
        ("江川夜市今晚开放", &["江川夜市今晚开放，摊位三百个。"]),
    ];
    let long: [(&str, &[&str]); 2] = [
        (
            "春季农产品展销会开幕",
            &[
                "春季农产品展销会今天在会展中心开幕，两百多家企业参展。展销会为期五天，展出蔬菜、水果、茶叶等特色农产品一千多种，现场设有直播带货专区。",
                "主办方表示，展会期间还将举办农业技术讲座和产销对接会，帮助农户拓宽销路。",
            ],
        ),
        (
            "城区老旧管网改造启动",
            &[
                "城区老旧供水管网改造工程今天启动，计划年内完成四十公里。改造涉及十二个社区，施工期间将分段停水，自来水公司将提前三天发布停水通知。",
                "工程完成后，城区管网漏损率预计由百分之十五降至百分之八以下，供水水压更加稳定。",
            ],
        ),
    ];
    // Three short stories and two long ones; four and one; five and one.
    for (shorts, longs) in [(3, 2), (4, 1), (5, 1)] {
        let stories = [&short[..shorts], &long[..longs]].concat();
        let pages = related_box_host(&stories);
        check(&pages, &[], true);
        // In batches: the longer stories and one short one, then the other short ones.
        check_batches(&[&pages[shorts..], &pages[..1]].concat(), &pages[1..shorts]);
    }
}
