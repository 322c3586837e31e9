//! A web page's main text: which of its lines that are not boilerplate are the article.
//!
//! Learned boilerplate lines cut a page into blocks. A block's text is what its content
//! lines hold; the blocks with at least half the text of the biggest stay, each from its
//! first content line on (see [`crate::Boilerplate::strip`]). What makes a line content is
//! its length and how it ends:
//!
//! - a line cut short (ending in an ellipsis, as a related box's teaser of another article
//!   does) is never content, and does not set the length either, unless it is as long as
//!   a paragraph (on a page of such lines only, they are its text);
//! - a line that ends a sentence (or a clause, as a poem's verse does) is prose, and so is
//!   a line of at least [`PARAGRAPH_CHARS`] with punctuation inside it (a paragraph that lost
//!   its full stop or was cut; a long menu, link list or row of labels has none, and stays
//!   open); on a page with prose, a line is content when it has at least
//!   [`CONTENT_LINE_CHARS`] canonical characters, or half the length of the page's typical
//!   prose line when that is less (the median: one long notice or footer, or two, do not
//!   make a poem's verses short);
//! - a line that ends otherwise (a headline, a menu item, a byline) counts a quarter of its
//!   characters ([`OPEN_LINE_SHARE`]), and a block of prose runs from its first prose
//!   content line to its last prose line (the short lines that follow the text in its
//!   block, as links to the previous and next article, tags or a caption, go).
//!
//! On a page with prose, a block without a prose content line (a menu, a box of headlines)
//! is never main text, however long its lines. So a poem of verses shorter than a teaser
//! beside it keeps its verses, a long menu above it goes, and a related box of headlines
//! below a short ruling does not weigh as much as the ruling. A page without prose (a
//! list, verses without punctuation) is read by length alone.

/// A line of at least this many canonical characters, or half the length of the page's
/// prose lines when that is less (see the module documentation), is a content line for
/// [`crate::BoilerplateRule::main_text`].
pub const CONTENT_LINE_CHARS: u32 = 40;

/// A line of at least this many canonical characters is prose however it ends: a
/// paragraph whose full stop is missing (a news agency's sign-off, an edit) or that is cut
/// short, longer than headlines, titles and a related box's teasers are (two content
/// lines).
pub const PARAGRAPH_CHARS: u32 = 2 * CONTENT_LINE_CHARS;

/// A line that does not end a sentence counts this fraction (one in four) of its
/// characters in its block's text: the related box of headlines below a short text weighs
/// a quarter of what a paragraph of that length does.
pub const OPEN_LINE_SHARE: u32 = 4;

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// With a sentence's or clause's punctuation (`.`, `!`, `?`, `,`, `;`, `:` and their
    /// full-width and CJK forms), before any closing quotes or brackets.
    Prose,
    /// Otherwise (a letter, digit, symbol or bracketed title).
    Open,
    /// With an ellipsis: a line cut short.
    Cut,
}

/// A short bracketed link after a paragraph (`［详细］`, `[全文]`, `(more)`), of at most this
/// many characters inside its brackets: the paragraph ends before it.
const LINK_MARK_CHARS: usize = 4;

/// `line` without a short bracketed link at its end ([`LINK_MARK_CHARS`]).
fn without_link_mark(line: &str) -> &str {
    let Some(close) = line.chars().next_back() else { return line };
    let open = match close {
        ']' => '[',
        '］' => '［',
        '】' => '【',
        ')' => '(',
        '）' => '（',
        _ => return line,
    };
    let inner = &line[..line.len() - close.len_utf8()];
    match inner.rfind(open) {
        Some(at) if inner[at + open.len_utf8()..].chars().count() <= LINK_MARK_CHARS => {
            inner[..at].trim_end()
        }
        _ => line,
    }
}

/// How `line` ends.
pub(crate) fn ending(line: &str) -> Ending {
    let line = line.trim_end();
    if line.ends_with('…') || line.ends_with('⋯') || line.ends_with("...") {
        return Ending::Cut;
    }
    let line = match without_link_mark(line) {
        // Only a paragraph before it makes the mark a link after a paragraph.
        rest if rest.len() < line.len() && ending(rest) == Ending::Prose => return Ending::Prose,
        _ => line,
    };
    let closing = |c: char| {
        matches!(c, '"' | '\'' | '”' | '’' | '」' | '』' | ')' | '）' | ']' | '］' | '】' | '〕')
    };
    match line.trim_end_matches(closing).chars().next_back() {
        Some(
            '.' | '!' | '?' | ',' | ';' | ':' | '。' | '！' | '？' | '，' | '；' | '：' | '、'
            | '．' | '｡' | '､',
        ) => Ending::Prose,
        _ => Ending::Open,
    }
}

/// Whether `line` has a sentence's or clause's punctuation before its last character: a
/// paragraph that lost its full stop still has its commas and full stops inside, where a
/// menu, a link list or a row of labels and numbers (`地址：… 电话：…`) has none. A colon
/// does not count: labels end in one.
fn punctuated_inside(line: &str) -> bool {
    let line = line.trim_end();
    let last = line.char_indices().next_back().map_or(0, |(at, _)| at);
    line[..last]
        .contains(['.', '!', '?', ',', ';', '。', '！', '？', '，', '；', '、', '．', '｡', '､'])
}

/// A line that is not boilerplate, as selection reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// Canonical characters (at least 1 for a line with letters or digits, else 0).
    pub chars: u32,
    /// How it ends, as selection reads it: a line of at least [`PARAGRAPH_CHARS`] with
    /// punctuation inside it is prose however it ends (a paragraph whose full stop is
    /// missing, as a news agency's sign-off or an edit leaves it, or that is cut short).
    pub ending: Ending,
    /// A passage a few other sites have around other text (a promotion, a notice): it
    /// never makes a block of the page's own text too small to stay.
    pub shared: bool,
}

impl Line {
    /// `line` of `chars` canonical characters.
    pub(crate) fn read(line: &str, chars: u32) -> Line {
        let mut ending = ending(line);
        if chars >= PARAGRAPH_CHARS && ending != Ending::Prose && punctuated_inside(line) {
            ending = Ending::Prose;
        }
        Line { chars, ending, shared: false }
    }
}

/// Marks the lines outside the page's main text as left out (`None`). `kept` holds `None`
/// for boilerplate lines.
pub(crate) fn select(kept: &mut [Option<Line>]) {
    // On a page of teasers only, they are its text.
    let lines = || kept.iter().flatten().filter(|l| l.chars > 0);
    if lines().all(|l| l.ending == Ending::Cut) {
        kept.iter_mut().flatten().for_each(|l| l.ending = Ending::Open);
    }
    let lines = || kept.iter().flatten().filter(|l| l.chars > 0);
    let has_prose = lines().any(|l| l.ending == Ending::Prose);
    let length = if has_prose {
        median(lines().filter(|l| l.ending == Ending::Prose).map(|l| l.chars).collect())
    } else {
        lines().filter(|l| l.ending == Ending::Open).map(|l| l.chars).max()
    };
    let content = CONTENT_LINE_CHARS.min(length.unwrap_or(0).div_ceil(2));
    let is_content =
        |k: &Option<Line>| k.is_some_and(|l| l.chars >= content && l.ending != Ending::Cut);
    let is_prose = |k: &Option<Line>| k.is_some_and(|l| l.ending == Ending::Prose);
    // A block's text in quarters of a character, with or without shared passages.
    let text = |block: &[Option<Line>], shared: bool| -> u64 {
        let share = |l: &Line| if l.ending == Ending::Prose { OPEN_LINE_SHARE } else { 1 };
        block
            .iter()
            .filter(|k| is_content(k))
            .flatten()
            .filter(|l| shared || !l.shared)
            .map(|l| u64::from(l.chars) * u64::from(share(l)))
            .sum()
    };
    // A block stays when it holds at least half the text of the biggest, counting shared
    // passages or not: a short article is not left out for a promotion beside it.
    let biggest = |shared| kept.split(Option::is_none).map(|b| text(b, shared)).max().unwrap_or(0);
    let (biggest, own_biggest) = (biggest(true), biggest(false));
    for block in kept.split_mut(Option::is_none) {
        let small = |shared, biggest| text(block, shared) * 2 < biggest;
        if small(true, biggest) && (own_biggest == 0 || small(false, own_biggest)) {
            block.fill(None);
        } else if let Some(first) = block.iter().position(|k| is_content(k) && is_prose(k)) {
            // Prose: from its first prose content line to its last prose line.
            let end = block.iter().rposition(is_prose).map_or(first, |last| last) + 1;
            block[..first].fill(None);
            block[end..].fill(None);
        } else if has_prose {
            // A block without prose on a page with prose: a menu, a box of headlines.
            block.fill(None);
        } else {
            // No prose on the page: from the first content line on.
            let first = block.iter().position(is_content).unwrap_or(block.len());
            block[..first].fill(None);
        }
    }
}

/// The lower median of `lengths`: a page's typical prose line, which one long line (or a
/// few) among many short ones does not set.
fn median(mut lengths: Vec<u32>) -> Option<u32> {
    lengths.sort_unstable();
    lengths.get(lengths.len().saturating_sub(1) / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_as_prose_open_or_cut() {
        for line in [
            "The mill closed in May.",
            "He said: \"it will not reopen.\"",
            "苍苍落日时，鸟声乱谿水。缘谿路转深，幽兴何时已。",
            "判决如下：",
            "Rough winds do shake the darling buds of May,",
            "他说：“好。”  ",
            "世间本没有歧视，歧视源自于人的内心活动，让“爱”在高校流动。［详细］",
            "The council approved the budget. [more]",
        ] {
            assert_eq!(ending(line), Ending::Prose, "{line}");
        }
        for line in [
            "Mobil to Upgrade Refinery Unit",
            "《輞川集二十首 木兰柴》",
            "Page views: 401",
            "Read more »",
            "四川渠江因暴雨突发洪水（组图）",
            "Budget approved (video)",
            "",
        ] {
            assert_eq!(ending(line), Ending::Open, "{line}");
        }
        for line in [
            "CANTON, Ohio, March 17 - Diebold Inc said it signed...",
            "一时成众……",
            "被告作出的津公（南开）行罚决字⋯",
        ] {
            assert_eq!(ending(line), Ending::Cut, "{line}");
        }
    }

    /// The main text of `text` whose lines at `boilerplate` are learned boilerplate, with
    /// characters counted as letters and digits.
    fn main_text<'a>(text: &'a str, boilerplate: &[usize]) -> Vec<&'a str> {
        let mut selected: Vec<Option<Line>> = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let chars = l.chars().filter(|c| c.is_alphanumeric()).count() as u32;
                (!boilerplate.contains(&i)).then_some(Line::read(l, chars))
            })
            .collect();
        select(&mut selected);
        text.lines().zip(&selected).filter(|(_, k)| k.is_some()).map(|(l, _)| l).collect()
    }

    /// A poem of five-character verses beside a related box whose teaser is twice a verse's
    /// length: the verses are the text, the box goes.
    #[test]
    fn verses_shorter_than_a_teaser_are_the_main_text() {
        let page = "唐诗选读·裴迪\n发布时间：2022-02-03 16:52　编辑：胡斌\n《輞川集二十首 木兰柴》\n\
                    苍苍落日时，鸟声乱谿水。缘谿路转深，幽兴何时已。\n《輞川集二十首 茱萸沜》\n\
                    飘香乱椒桂，布叶间檀欒。云日虽回照，森沈犹自寒。\n相关阅读\n\
                    我国拟修改安全生产法 企业存隐患可被断水断电\n“十分钟”传导“三公里”\n\
                    北京突降暴雨，很多汽车水中熄火，甚至有司机被困车内溺水身亡。司机面对“水门关”时应如何自救？一时成众……\n\
                    监管部门开绿灯小产权房疯长 涉及群众一万余人\n关注本网微信公众号";
        assert_eq!(
            main_text(page, &[6, 11]),
            [
                "苍苍落日时，鸟声乱谿水。缘谿路转深，幽兴何时已。",
                "《輞川集二十首 茱萸沜》",
                "飘香乱椒桂，布叶间檀欒。云日虽回照，森沈犹自寒。"
            ]
        );
    }

    /// A poem page of a small site: a long menu above it (no punctuation inside: not
    /// prose) and a long footer below it (prose, and longer than the four verses together).
    /// The verses are the text; the menu goes, and the footer, prose of the template that
    /// learning did not see, may stay beside them, never instead of them.
    #[test]
    fn verses_stay_beside_a_long_menu_and_footer() {
        let menu = "首页 唐诗 宋词 元曲 诗经 楚辞 乐府诗集 古文观止 诗人大全 名句赏析 成语典故 \
                    书法字帖 国学经典 文学常识 历史人物 当前位置 唐诗频道 五言绝句 七言律诗 边塞诗 \
                    山水田园诗 送别诗 咏物诗";
        let footer =
            "本站所有诗文均来源于网络，版权归原作者所有，如有侵权请联系我们删除，转载请注明出处。";
        let page = format!(
            "{menu}\n静夜思\n分享到\n床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。\n{footer}"
        );
        let kept = main_text(&page, &[2]);
        assert_eq!(&kept[..4], ["床前明月光，", "疑是地上霜。", "举头望明月，", "低头思故乡。"]);
        assert!(!kept.contains(&menu), "{kept:?}");
        // A footer cut off from the verses by a learned line is a block of its own.
        let page = page.replace(&format!("\n{footer}"), &format!("\n分享到\n{footer}"));
        let kept = main_text(&page, &[2, 7]);
        assert_eq!(&kept[..4], ["床前明月光，", "疑是地上霜。", "举头望明月，", "低头思故乡。"]);
    }

    /// A short ruling under a box of other rulings' titles and teasers, with no learned line
    /// between them: the ruling is kept from its first sentence on.
    #[test]
    fn a_related_box_above_a_short_text_in_its_block_goes() {
        let page = "热门推荐\n宋智军与治安管理纠纷一案行政判决书（2016）津02行初431号\n\
                    于洋洋与治安管理纠纷一案行政判决书（2016）津02行审632号\n\
                    原告罗金柱不服被告天津市公安局河西分局作出的《行政处罚决定书》及被……\n\
                    张永敬与房屋拆迁管理纠纷一案行政判决书（2016）津03行终903号\n1,769人阅读\n\
                    原告张永敬诉被告双港镇人民政府行政赔偿一案，本院2015年5月15日受理后，向被告送达了起诉状副本。\n\
                    本院依法组成合议庭，公开开庭审理了本案。\n本案现已审理终结。\n分享";
        assert_eq!(main_text(page, &[0, 9]), page.lines().skip(6).take(3).collect::<Vec<_>>());
    }

    /// An agency article's one paragraph ends in its sign-off, with an advertisement below
    /// it in its block: the paragraph is prose, and stays.
    #[test]
    fn a_paragraph_without_its_full_stop_is_prose() {
        let paragraph = "The sources said it was likely that this proposal and plans to simplify \
                         the withholding tax procedure would now be submitted together to the \
                         cabinet in several weeks. Pay April 17 Record April 10 Reuter";
        let cut = "Construction of these projects has started without approval of the \
                   assessment of their environmental impact, officials said on Monday...";
        let page = format!(
            "d0013228\nHome | News | About\n{paragraph}\nAdvertisement: the best deals on \
             flights are one click away.\n© Example News. All rights reserved."
        );
        assert_eq!(main_text(&page, &[1, 4]), page.lines().skip(2).take(2).collect::<Vec<_>>());
        // So is a paragraph cut short.
        let page = page.replace(paragraph, cut);
        assert_eq!(main_text(&page, &[1, 4]), page.lines().skip(2).take(2).collect::<Vec<_>>());
    }

    /// Long lines that end in no punctuation (a list) are still the text of a page
    /// without prose, and a page of teasers only keeps its teasers.
    #[test]
    fn pages_without_prose_are_read_by_length() {
        let page = "Menu\nOne long item of the list without any punctuation at its end\n\
                    Another long item of the list that ends without punctuation\nFooter\nHome";
        assert_eq!(main_text(page, &[0, 3]), page.lines().skip(1).take(2).collect::<Vec<_>>());
        let page = "Menu\nThe first teaser of the page runs on and on until it is cut...\nFooter";
        assert_eq!(main_text(page, &[0, 2]), [page.lines().nth(1).unwrap()]);
    }
}
