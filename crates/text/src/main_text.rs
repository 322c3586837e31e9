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
//!   any line of at least [`PARAGRAPH_CHARS`] (a paragraph that lost its full stop or was
//!   cut); on a page
//!   with prose, a line is content when it has at least [`CONTENT_LINE_CHARS`] canonical
//!   characters, or half the length of the page's prose lines when that is less (the
//!   length at which lines at least that long hold half of the prose, so that one long
//!   notice does not make a poem's verses short);
//! - a line that ends otherwise (a headline, a menu item, a byline) counts a quarter of its
//!   characters ([`OPEN_LINE_SHARE`]), and a block of prose runs from its first prose
//!   content line to its last prose line (the short lines that follow the text in its
//!   block, as links to the previous and next article, tags or a caption, go).
//!
//! So a poem of verses shorter than a teaser beside it keeps its verses, and a related box
//! of headlines below a short ruling does not weigh as much as the ruling. A page without
//! prose (a list, verses without punctuation) is read by length alone, as before.

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

/// How `line` ends.
pub(crate) fn ending(line: &str) -> Ending {
    let line = line.trim_end();
    if line.ends_with('…') || line.ends_with('⋯') || line.ends_with("...") {
        return Ending::Cut;
    }
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

/// A line that is not boilerplate, as selection reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    /// Canonical characters (at least 1 for a line with letters or digits, else 0).
    pub chars: u32,
    /// How it ends.
    pub ending: Ending,
}

/// Marks the lines outside the page's main text as left out (`None`). `kept` holds `None`
/// for boilerplate lines.
pub(crate) fn select(kept: &mut [Option<Line>]) {
    // Endings as selection reads them: a paragraph whose full stop is missing (a sign-off,
    // an edit) or that is cut short is prose; on a page of teasers only, they are its text.
    for line in kept.iter_mut().flatten() {
        if line.chars >= PARAGRAPH_CHARS {
            line.ending = Ending::Prose;
        }
    }
    let lines = || kept.iter().flatten().filter(|l| l.chars > 0);
    if lines().all(|l| l.ending == Ending::Cut) {
        kept.iter_mut().flatten().for_each(|l| l.ending = Ending::Open);
    }
    let lines = || kept.iter().flatten().filter(|l| l.chars > 0);
    let length = if lines().any(|l| l.ending == Ending::Prose) {
        half_held(lines().filter(|l| l.ending == Ending::Prose).map(|l| l.chars).collect())
    } else {
        lines().filter(|l| l.ending == Ending::Open).map(|l| l.chars).max()
    };
    let content = CONTENT_LINE_CHARS.min(length.unwrap_or(0).div_ceil(2));
    let is_content =
        |k: &Option<Line>| k.is_some_and(|l| l.chars >= content && l.ending != Ending::Cut);
    let is_prose = |k: &Option<Line>| k.is_some_and(|l| l.ending == Ending::Prose);
    // A block's text in quarters of a character.
    let text = |block: &[Option<Line>]| -> u64 {
        let share = |l: &Line| if l.ending == Ending::Prose { OPEN_LINE_SHARE } else { 1 };
        block
            .iter()
            .filter(|k| is_content(k))
            .flatten()
            .map(|l| u64::from(l.chars) * u64::from(share(l)))
            .sum()
    };
    let biggest = kept.split(Option::is_none).map(text).max().unwrap_or(0);
    for block in kept.split_mut(Option::is_none) {
        if text(block) * 2 < biggest {
            block.fill(None);
        } else if let Some(first) = block.iter().position(|k| is_content(k) && is_prose(k)) {
            // Prose: from its first prose content line to its last prose line.
            let end = block.iter().rposition(is_prose).map_or(first, |last| last) + 1;
            block[..first].fill(None);
            block[end..].fill(None);
        } else {
            // No prose: from the first content line on.
            let first = block.iter().position(is_content).unwrap_or(block.len());
            block[..first].fill(None);
        }
    }
}

/// The length at which lines at least that long hold half of the characters of
/// `lengths`: one long line among many short ones does not set it alone.
fn half_held(mut lengths: Vec<u32>) -> Option<u32> {
    lengths.sort_unstable_by(|a, b| b.cmp(a));
    let half = lengths.iter().map(|&c| u64::from(c)).sum::<u64>().div_ceil(2);
    let mut held = 0;
    lengths.into_iter().find(|&c| {
        held += u64::from(c);
        held >= half
    })
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
        ] {
            assert_eq!(ending(line), Ending::Prose, "{line}");
        }
        for line in [
            "Mobil to Upgrade Refinery Unit",
            "《輞川集二十首 木兰柴》",
            "Page views: 401",
            "Read more »",
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
                (!boilerplate.contains(&i)).then_some(Line { chars, ending: ending(l) })
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
