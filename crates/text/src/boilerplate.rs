//! Boilerplate lines of web pages left out before analysis: the set learned from the
//! corpus (see `learning.rs`), and what is left of a page without it.
//!
//! Pages of one site share navigation, bylines, "most read" boxes, footers and licence
//! notices, and many sites share notices and promotions. A line (one block of the page:
//! the WARC reader turns HTML into one line per paragraph, heading, list item or table
//! cell) learned as boilerplate for its host or everywhere is left out of every page, and
//! on a page with boilerplate only its main text stays (`main_text.rs`).

use crate::learning::{BoilerplateRule, CORPUS_SCOPE, Lesson, entry, shared_entry};
use crate::lines::{LineKey, LineScratch, line_keys};
use crate::main_text::{self, Line};
use crate::urls::host_key;

/// What [`Boilerplate::strip`] did to one page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    /// Lines left out.
    pub lines: u32,
    /// Characters left out.
    pub chars: u64,
    /// Every line with letters or digits was boilerplate: the page has no text of its own
    /// (an empty listing, a soft 404, a page whose text the template swallowed). It is
    /// kept whole, and never joined to another page by what its template shares with it.
    pub template_only: bool,
}

/// The learned boilerplate: a sorted set of entries, those of boilerplate lines
/// ([`entry`]) and of shared passages. Holds 8 bytes per entry.
#[derive(Clone, Debug, Default)]
pub struct Boilerplate {
    entries: Vec<u64>,
    /// Entries of boilerplate lines (the others are shared passages').
    lines: usize,
    corpus_max_chars: Option<u32>,
    main_text: bool,
    seed: u64,
}

impl Boilerplate {
    /// The set learned from `lessons` (every learner's, in any order) under `rule` with
    /// `seed`: the host entries, and the corpus-wide entries of the passages on enough of
    /// the hosts the learners saw.
    pub fn learned(lessons: &[Lesson], rule: &BoilerplateRule, seed: u64) -> Self {
        let hosts =
            lessons.iter().map(|l| if let Lesson::Hosts(n) = l { u64::from(*n) } else { 0 }).sum();
        let needed = rule.corpus_hosts_needed(hosts);
        let entries = lessons
            .iter()
            .filter_map(|lesson| match *lesson {
                Lesson::Entry(e) => Some(e),
                Lesson::Passage { line, hosts, contexts, repeated_on } => {
                    // A template of many sites is on several pages of many of them; a text
                    // copied to many sites is on one page of each.
                    let many = u64::from(hosts.min(contexts)) >= needed
                        && u64::from(repeated_on) * 2 >= needed;
                    Some(if many { entry(CORPUS_SCOPE, line) } else { shared_entry(line) })
                }
                Lesson::Hosts(_) => None,
            })
            .collect();
        Boilerplate::new(entries, rule, seed)
    }

    /// The set of `entries` (any order, repeats allowed) learned under `rule` with `seed`.
    pub fn new(mut entries: Vec<u64>, rule: &BoilerplateRule, seed: u64) -> Self {
        entries.sort_unstable();
        entries.dedup();
        entries.shrink_to_fit();
        Boilerplate {
            lines: entries.iter().filter(|e| *e & 1 == 0).count(),
            entries,
            corpus_max_chars: rule.corpus_max_chars,
            main_text: rule.main_text,
            seed,
        }
    }

    /// The entries, sorted.
    pub fn entries(&self) -> &[u64] {
        &self.entries
    }

    /// Boilerplate lines learned (shared passages not counted).
    pub fn len(&self) -> usize {
        self.lines
    }

    /// Whether nothing was learned.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn contains(&self, scope: u64, line: u64) -> bool {
        self.entries.binary_search(&entry(scope, line)).is_ok()
    }

    /// Whether `line` of a page of `host` is boilerplate.
    pub fn is_boilerplate(&self, line: LineKey, host: u64) -> bool {
        self.kind(line, host) != LineKind::Text
    }

    /// What `line` of a page of `host` is.
    fn kind(&self, line: LineKey, host: u64) -> LineKind {
        if self.contains(host, line.key) {
            return LineKind::Template;
        }
        if self.corpus_max_chars.is_none_or(|max| line.chars <= max) {
            if self.contains(CORPUS_SCOPE, line.key) {
                return LineKind::Passage;
            }
            if self.entries.binary_search(&shared_entry(line.key)).is_ok() {
                return LineKind::Shared;
            }
        }
        LineKind::Text
    }

    /// Writes the lines of `text` (a page at `url`) that are not boilerplate into `out`,
    /// one per line, and says what was left out. A page without a host is copied whole.
    ///
    /// With [`BoilerplateRule::main_text`], a page with learned boilerplate keeps only its
    /// main text, as text extractors that look for a page's main text do: its boilerplate
    /// lines cut it into blocks, and the blocks that hold the text stay, read by the length
    /// of their lines and how the lines end (`main_text.rs` says how). What goes is the
    /// template's lines that change from page to page: a title with the site's name and a
    /// byline above the text, the headlines and teasers of a related box, the links to the
    /// previous and next article below it. The short lines inside a block that stays
    /// (subheadings, captions, a poem's verses after its title) stay with it, and so do an
    /// article's two halves around a learned "Advertisement" line.
    pub fn strip(
        &self,
        text: &str,
        url: &str,
        scratch: &mut LineScratch,
        out: &mut String,
    ) -> Stripped {
        let Some(host) = self.host(url) else { return Self::whole(text, out) };
        let mut lines = std::mem::take(&mut scratch.lines);
        line_keys(text, self.seed, scratch, &mut lines);
        let stripped = self.strip_host(text, host, &lines, out);
        scratch.lines = lines;
        stripped
    }

    /// [`Boilerplate::strip`] of a page whose [`line_keys`] under this set's seed are
    /// `lines` (as the first pass over the corpus kept them).
    ///
    /// # Panics
    /// If `lines` has fewer keys than `text` has lines (keys of another text).
    pub fn strip_lines(
        &self,
        text: &str,
        url: &str,
        lines: &[Option<LineKey>],
        out: &mut String,
    ) -> Stripped {
        let Some(host) = self.host(url) else { return Self::whole(text, out) };
        self.strip_host(text, host, lines, out)
    }

    /// The key of `url`'s host, when the page may have boilerplate to leave out.
    fn host(&self, url: &str) -> Option<u64> {
        host_key(url, self.seed).filter(|_| !self.is_empty())
    }

    /// A page copied whole.
    fn whole(text: &str, out: &mut String) -> Stripped {
        out.clear();
        out.push_str(text);
        Stripped::default()
    }

    /// [`Boilerplate::strip_lines`] of a page of `host`.
    fn strip_host(
        &self,
        text: &str,
        host: u64,
        lines: &[Option<LineKey>],
        out: &mut String,
    ) -> Stripped {
        out.clear();
        let mut stripped = Stripped::default();
        // Per line: what it is, and (for lines that are not boilerplate) its canonical
        // characters (0 for a line without letters or digits) and how it ends.
        let mut read: Vec<(LineKind, Line)> = Vec::with_capacity(lines.len());
        let mut keys = lines.iter();
        for line in text.lines() {
            let (kind, chars) = match *keys.next().expect("a key for every line of the text") {
                Some(key) => (self.kind(key, host), key.chars.max(1)),
                None => (LineKind::Text, 0),
            };
            read.push((kind, Line::read(line, chars)));
        }
        let has_letters = |(k, l): &(LineKind, Line)| *k != LineKind::Text || l.chars > 0;
        let own = |k: &LineKind| matches!(k, LineKind::Text | LineKind::Shared);
        if !read.iter().any(|(k, l)| own(k) && l.chars > 0) {
            out.push_str(text);
            stripped.template_only = read.iter().any(has_letters);
            return stripped;
        }
        // What selection reads: template lines cut the page into blocks (None); passages
        // of the corpus are left out without cutting it, since they are put anywhere, an
        // article's middle too.
        let mut selected: Vec<Option<Line>> = Vec::with_capacity(read.len());
        let mut at: Vec<usize> = Vec::with_capacity(read.len());
        for (i, (kind, line)) in read.iter().enumerate() {
            match kind {
                LineKind::Template => selected.push(None),
                LineKind::Passage => continue,
                LineKind::Shared => selected.push(Some(Line { shared: true, ..*line })),
                LineKind::Text => selected.push(Some(*line)),
            }
            at.push(i);
        }
        if self.main_text && read.iter().any(|(k, _)| !own(k)) {
            main_text::select(&mut selected);
        }
        let mut keep = vec![false; read.len()];
        for (i, k) in at.into_iter().zip(&selected) {
            keep[i] = k.is_some();
        }
        for (line, keep) in text.lines().zip(keep) {
            if keep {
                out.push_str(line);
                out.push('\n');
            } else {
                stripped.lines += 1;
                stripped.chars += line.chars().count() as u64;
            }
        }
        stripped
    }
}

/// What a line of a page is, to [`Boilerplate::strip`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineKind {
    /// Boilerplate of its host.
    Template,
    /// Boilerplate everywhere: on enough hosts, with other lines around it.
    Passage,
    /// A shared passage (see [`SHARED_MIN_HOSTS`]).
    Shared,
    /// The page's own.
    Text,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::{Learner, occurrences};
    use crate::lines::line_key;
    use crate::urls::url_key;

    const SEED: u64 = 7;

    fn key(line: &str) -> Option<LineKey> {
        line_key(line, SEED, &mut LineScratch::default())
    }

    #[test]
    fn lines_compare_in_canonical_form() {
        assert_eq!(key("Views: 1,024  today"), key("  views: 17 TODAY "));
        assert_eq!(key("阅读 １２３ 次"), key("阅读 9 次"));
        assert_ne!(key("Home | News"), key("Home | Sport"));
        assert_eq!(key("| » |"), None);
        assert_eq!(key("Views: 17").unwrap().chars, "views: #".chars().count() as u32);
    }

    #[test]
    fn hosts_and_urls_ignore_scheme_case_port_and_www() {
        let h = |u| host_key(u, SEED);
        assert_eq!(h("https://www.Example.com:8080/a?b#c"), h("http://example.com/"));
        assert_ne!(h("http://example.com/"), h("http://example.org/"));
        assert_eq!(h("http://user@[::1]:80/x"), h("http://[::1]/"));
        assert_eq!(h("http:///path"), None);
        assert_eq!(url_key("http://a/b#top", SEED), url_key("http://a/b", SEED));
        let same = ["https://www.Example.com:443/a?x=1#top", "http://example.com./a?x=1"];
        assert_eq!(url_key(same[0], SEED), url_key(same[1], SEED));
        assert_eq!(url_key("http://example.com", SEED), url_key("https://example.com/", SEED));
        assert_ne!(url_key("http://example.com/A", SEED), url_key("http://example.com/a", SEED));
        assert_ne!(url_key("http://a.com/x", SEED), url_key("http://b.com/x", SEED));
    }

    fn learn(pages: &[(&str, &str)], rule: &BoilerplateRule) -> Boilerplate {
        learn_with_seed(pages, rule, SEED)
    }

    /// Learns `pages` (URL and text) under 32 seeds, since which lines have the least keys
    /// is up to the hash, and hands `check` each seed's boilerplate and the pages.
    fn for_every_seed(
        pages: &[(String, String)],
        mut check: impl FnMut(u64, &Boilerplate, &[(&str, &str)]),
    ) {
        let pages: Vec<(&str, &str)> =
            pages.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        for seed in 0..32 {
            check(seed, &learn_with_seed(&pages, &BoilerplateRule::default(), seed), &pages);
        }
    }

    fn learn_with_seed(pages: &[(&str, &str)], rule: &BoilerplateRule, seed: u64) -> Boilerplate {
        let (mut all, mut one) = (Vec::new(), Vec::new());
        let mut scratch = LineScratch::default();
        for (url, text) in pages {
            let mut lines = Vec::new();
            line_keys(text, seed, &mut scratch, &mut lines);
            occurrences(&lines, url, rule, seed, &mut scratch, &mut one);
            all.extend_from_slice(&one);
        }
        all.sort_unstable();
        let mut learned = Vec::new();
        let mut learner = Learner::new(rule.clone());
        for item in all {
            learner.push(item, &mut |e| learned.push(e));
        }
        learner.finish(&mut |e| learned.push(e));
        Boilerplate::learned(&learned, rule, seed)
    }

    fn page(article: &str, views: u32) -> String {
        format!("Home | News | Sport\nViews: {views}\n{article}\nMost read: a headline\n© Site")
    }

    #[test]
    fn template_lines_of_a_host_are_learned_and_left_out() {
        let rule = BoilerplateRule::default();
        let pages: Vec<(String, String)> = (0..10)
            .map(|i| {
                (
                    format!("https://site.example/a/{i}"),
                    page(&format!("Article {} body.", "x".repeat(i as usize + 1)), i * 7),
                )
            })
            .collect();
        let pages: Vec<(&str, &str)> =
            pages.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        let mut out = String::new();
        let s = learned.strip(pages[3].1, pages[3].0, &mut LineScratch::default(), &mut out);
        assert_eq!(out, "Article xxxx body.\n");
        assert_eq!((s.lines, s.template_only), (4, false));
        // Another host's page keeps everything.
        let other = page("Other body.", 1);
        learned.strip(&other, "http://elsewhere.example/", &mut LineScratch::default(), &mut out);
        assert_eq!(out.trim_end(), other);
    }

    #[test]
    fn recrawls_of_one_url_do_not_make_their_article_boilerplate() {
        let rule = BoilerplateRule::default();
        let mut pages = Vec::new();
        for crawl in 0..5 {
            pages.push(("https://s.example/story".to_string(), page("The story itself.", crawl)));
        }
        pages.push(("https://s.example/other".to_string(), page("Other story.", 9)));
        let pages: Vec<(&str, &str)> =
            pages.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        // Two pages: the lines both have are their template, and the recrawled article,
        // on one page however often crawled, stays.
        let mut out = String::new();
        learned.strip(pages[0].1, pages[0].0, &mut LineScratch::default(), &mut out);
        assert_eq!(out, "The story itself.\n");
    }

    /// An article of a small host at several URLs (tracking parameters, print and mobile
    /// versions, another path) is one page's content: its paragraphs stay, while the lines
    /// that pages with different articles share are learned.
    #[test]
    fn copies_of_one_article_at_several_urls_are_not_its_hosts_template() {
        let rule = BoilerplateRule::default();
        // Numbers read as one `#`: the paragraphs differ in words.
        let paragraph = |topic: &str, n: &str| {
            format!(
                "The {n} paragraph of the story about {topic}: a paragraph of an article is \
                 long, longer than the template's footer, its related headlines and buttons."
            )
        };
        let article = |topic: &str| {
            ["first", "second", "third", "fourth"].map(|n| paragraph(topic, n)).to_vec()
        };
        let render = |body: &[String], views: u32| {
            format!(
                "Home | News | Sport\nViews: {views}\n{}\nRelated: the council votes on the \
                 harbour budget again\n© Small Site. All rights reserved; no copying without leave.",
                body.join("\n")
            )
        };
        let copied = article("the harbour");
        let mut edited = copied.clone();
        edited[2] = "A paragraph rewritten in the print version, still long enough to be content \
                     rather than template, as the paragraphs of articles are."
            .into();
        let mut pages = vec![
            ("https://small.example/a/17".to_string(), render(&copied, 3)),
            ("https://small.example/a/17?utm_source=feed&fbclid=x".to_string(), render(&copied, 4)),
            ("https://m.small.example/news/2024/05/17/17.html".to_string(), render(&copied, 5)),
            ("https://small.example/print/17".to_string(), render(&edited, 6)),
        ];
        for topic in ["the mill", "the market", "the school"] {
            pages.push((format!("https://small.example/a/{topic}"), render(&article(topic), 1)));
        }
        let pages: Vec<(&str, &str)> =
            pages.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        let mut out = String::new();
        learned.strip(pages[1].1, pages[1].0, &mut LineScratch::default(), &mut out);
        // The template is out, the article whole.
        assert_eq!(out.trim_end(), copied.join("\n"));
    }

    /// A site of short texts (poems) whose footer is its pages' longest line: each page is
    /// still counted once, so the template is learned and the poems stay.
    #[test]
    fn a_footer_longer_than_the_texts_does_not_make_the_hosts_pages_one() {
        let rule = BoilerplateRule::default();
        let poems = [
            "床前明月光，疑是地上霜。",
            "白日依山尽，黄河入海流。",
            "春眠不觉晓，处处闻啼鸟。",
            "千山鸟飞绝，万径人踪灭。",
            "红豆生南国，春来发几枝。",
            "独坐幽篁里，弹琴复长啸。",
        ];
        let footer = "本站部分内容来源于网络，如有侵权请联系删除。古诗文苑版权所有，未经授权不得转载、摘编或以其他方式使用。";
        let texts: Vec<(String, String)> = poems
            .iter()
            .enumerate()
            .map(|(i, poem)| {
                let title = format!("唐诗选读第{}首（五言绝句）：{poem}", i + 1);
                let text = format!("首页 | 唐诗 | 宋词\n{title}\n{poem}\n{footer}");
                (format!("https://poems.example/p/{i}"), text)
            })
            .collect();
        let pages: Vec<(&str, &str)> =
            texts.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        let mut out = String::new();
        learned.strip(pages[2].1, pages[2].0, &mut LineScratch::default(), &mut out);
        assert_eq!(out, format!("唐诗选读第3首（五言绝句）：{}\n{}\n", poems[2], poems[2]));
    }

    /// The lines of a template that change from page to page (a title with the site's
    /// name, a byline, the links of a related box) are never on enough pages to be learned;
    /// the main text leaves them out, and keeps a subheading inside the article.
    #[test]
    fn the_main_text_leaves_out_the_short_lines_around_the_article() {
        let words = ["harbour", "mill", "market", "school", "bridge", "library"];
        let render = |i: usize| {
            let topic = words[i];
            let body: Vec<String> = ["opening", "middle", "closing"]
                .iter()
                .map(|part| {
                    format!(
                        "The {part} paragraph about the {topic}, long enough to be the text \
                         of an article rather than a line of its template."
                    )
                })
                .collect();
            format!(
                "Home | News | Sport | Weather\nThe {topic} story - Small Site\nBy Writer {i} | \
                 May {i}\n{}\nWhat the {topic} did next\n{}\nRelated stories\nA {} headline\nAnother \
                 {} headline\n© Small Site. All rights reserved; no copying without leave.",
                body[..2].join("\nAdvertisement\n"),
                body[2],
                words[(i + 1) % 6],
                words[(i + 2) % 6],
            )
        };
        let texts: Vec<(String, String)> =
            (0..6).map(|i| (format!("https://small.example/a/{i}"), render(i))).collect();
        let pages: Vec<(&str, &str)> =
            texts.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let mut out = String::new();
        let learned = learn(&pages, &BoilerplateRule::default());
        let s = learned.strip(pages[0].1, pages[0].0, &mut LineScratch::default(), &mut out);
        // The article's two halves around a learned line stay.
        let article: Vec<&str> =
            pages[0].1.lines().skip(3).take(5).filter(|l| *l != "Advertisement").collect();
        assert_eq!(out.lines().collect::<Vec<_>>(), article);
        assert_eq!(s.lines, 8);
        // Without the main text, only the learned lines are out.
        let rule = BoilerplateRule { main_text: false, ..BoilerplateRule::default() };
        let learned = learn(&pages, &rule);
        let s = learned.strip(pages[0].1, pages[0].0, &mut LineScratch::default(), &mut out);
        // (The byline is learned: numbers read as one `#`.)
        assert_eq!(s.lines, 5);
        assert!(out.contains("The harbour story - Small Site") && out.contains("A mill headline"));
    }

    /// Court rulings on one site: a paragraph each, under a template of many long lines.
    /// The template's lines are not the pages' identity (they are less than half as long
    /// as the paragraph), so the pages count as different and the template is learned.
    #[test]
    fn many_long_template_lines_do_not_make_the_hosts_pages_one() {
        let template = [
            "Share this ruling: mail, print, copy link",
            "Published by the court's press office",
            "Most read: rulings on tenancy and labour",
            "Hotline for the public: weekdays nine to five",
            "All rulings are published for study only",
            "Run by the provincial high court information centre",
        ];
        let names = ["Zhang", "Wang", "Li", "Zhao", "Chen", "Liu", "Yang", "Huang"];
        let texts: Vec<(String, String)> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let ruling = format!(
                    "The plaintiff {name} sued the district labour bureau over a pension \
                     decision; the court accepted the case, formed a panel and heard it in \
                     public, and the plaintiff {name} withdrew the suit before judgement."
                );
                let text =
                    format!("{}\n{ruling}\n{}", template[..3].join("\n"), template[3..].join("\n"));
                (format!("https://court.example/ruling/{i}"), text)
            })
            .collect();
        for_every_seed(&texts, |seed, learned, pages| {
            let mut out = String::new();
            let s = learned.strip(pages[5].1, pages[5].0, &mut LineScratch::default(), &mut out);
            assert_eq!((out.lines().count(), s.lines), (1, 6), "seed {seed}: {out}");
        });
    }

    /// Under any seed, the first three of `pages` (copies of one text) keep `text` whole,
    /// and none keeps the template's lines that start with `template`.
    fn assert_copies_keep_their_text(pages: &[(String, String)], text: &str, template: [&str; 2]) {
        for_every_seed(pages, |seed, learned, pages| {
            let mut out = String::new();
            for page in &pages[..3] {
                learned.strip(page.1, page.0, &mut LineScratch::default(), &mut out);
                assert!(out.starts_with(text), "seed {seed}: {out}");
                assert!(!out.contains(template[0]) && !out.contains(template[1]), "seed {seed}");
            }
        });
    }

    /// A small host of short texts (a court's openings: two paragraphs under a footer
    /// longer than either) with one of them at three URLs: its paragraphs are that text's,
    /// not the host's template, and stay on every copy.
    #[test]
    fn short_texts_copied_at_several_urls_of_a_small_host_stay() {
        let footer = "Copyright 2008-2024 The Court Gazette. All rights reserved; the rulings, \
                      notices and reports on this site are published for study only.";
        let ruling = |party: &str| {
            [
                format!(
                    "The plaintiff {party} sued the district labour bureau over a pension decision, and the court accepted the case."
                ),
                format!(
                    "The court formed a panel and heard the case of {party} in public; the agents of both sides were present."
                ),
            ]
        };
        let render = |body: &[String; 2], related: &str| {
            format!(
                "Home | Rulings | Notices\n{}\n{}\nRelated: {related}\n{footer}",
                body[0], body[1]
            )
        };
        let copied = ruling("Zhang Wei");
        let mut pages = vec![
            (
                "https://court.example/news/2016/11/24/7850442.html".to_string(),
                render(&copied, "a tenancy case"),
            ),
            (
                "https://court.example/news/2016/12/01/3609828.html".to_string(),
                render(&copied, "a pension case"),
            ),
            (
                "https://court.example/news/2016/11/24/5688232.html".to_string(),
                render(&copied, "a land case"),
            ),
        ];
        for (i, party) in ["Li Na", "Wang Fang"].iter().enumerate() {
            pages.push((
                format!("https://court.example/news/2018/0{i}/03/1.html"),
                render(&ruling(party), "a tax case"),
            ));
        }
        // The text whole, the footer out (the related line that varies stays).
        assert_copies_keep_their_text(&pages, &copied.join("\n"), ["Copyright", "Home |"]);
    }

    /// An article whose second paragraph is far longer than its first (and than the
    /// footer) still has enough identity lines, so its copies at three URLs of a host are
    /// one page and its paragraphs stay on them.
    #[test]
    fn an_article_with_one_long_paragraph_at_several_urls_stays() {
        let footer = "About us | Contact | Advertise | Sitemap | Privacy | Report abuse here";
        let article = |topic: &str| {
            [
                format!("The {topic} opens a season of talks for young office workers."),
                format!(
                    "The {topic} is a party where office workers raise money by auction, plan \
                     their own projects and carry them out with the money raised, and each \
                     drew the attention of the press for {topic}."
                ),
            ]
        };
        let render = |body: &[String; 2], related: &str| {
            format!("Home | News | Sport\n{}\n{}\nMost read: {related}\n{footer}", body[0], body[1])
        };
        let copied = article("summer flower club");
        let mut pages = vec![
            ("https://news.example/a/1".to_string(), render(&copied, "rain in the hills")),
            (
                "https://news.example/a/1?utm_source=x&page=2".to_string(),
                render(&copied, "a bridge"),
            ),
            ("https://news.example/news/old/1.html".to_string(), render(&copied, "a new school")),
        ];
        let topics = ["harbour fair", "river walk", "book market", "chess night", "film week"];
        for (i, topic) in topics.iter().enumerate() {
            pages.push((format!("https://news.example/b/{i}"), render(&article(topic), topic)));
        }
        assert_copies_keep_their_text(&pages, &copied.join("\n"), ["About us", "Home |"]);
    }

    /// A site of short texts whose long lines are all its template's: every page's
    /// identity is the template's, so the host's pages count as one or two by identity.
    /// Its template is still learned (its lines are on enough URLs and on pages of every
    /// identity), and the poems stay.
    #[test]
    fn a_host_whose_identities_are_its_templates_still_learns_it() {
        let template = [
            "本站部分内容来源于网络，如有侵权请联系删除，我们将在第一时间处理。",
            "古诗文苑版权所有，未经授权不得转载、摘编或以其他方式使用本站内容。",
            "关于我们 | 联系我们 | 广告服务 | 网站地图 | 隐私政策 | 违法和不良信息举报",
            "我们使用Cookie来改善网站功能和您的体验，继续浏览即表示您同意。",
        ];
        let poems = [
            "床前明月光，疑是地上霜。",
            "白日依山尽，黄河入海流。",
            "春眠不觉晓，处处闻啼鸟。",
            "千山鸟飞绝，万径人踪灭。",
        ];
        let texts: Vec<(String, String)> = poems
            .iter()
            .enumerate()
            .map(|(i, poem)| {
                // One page has a related headline as long as the template's lines.
                let related = if i == 1 {
                    "\n相关阅读：唐诗三百首中最常被引用的五言绝句与七言律诗赏析合集"
                } else {
                    ""
                };
                let text = format!(
                    "首页 | 唐诗 | 宋词\n{}\n{poem}{related}\n{}",
                    template[..2].join("\n"),
                    template[2..].join("\n")
                );
                (format!("https://poems.example/p/{i}"), text)
            })
            .collect();
        for_every_seed(&texts, |seed, learned, pages| {
            let mut out = String::new();
            learned.strip(pages[2].1, pages[2].0, &mut LineScratch::default(), &mut out);
            assert_eq!(out, format!("{}\n", poems[2]), "seed {seed}");
        });
    }

    /// The pages of a host of two URLs, each a poem of two verses under a menu and a
    /// footer of longer sentences than the verses, so both pages have the footer's
    /// identity, and copies of one article at two URLs of another host with one sentence
    /// edited, whose pages share an identity too.
    fn two_url_hosts() -> [Vec<(String, String)>; 2] {
        let footer = [
            "本站部分诗词来源于网络公开资料，仅供学习交流使用，如有侵权请联系我们删除。",
            "未经本站书面授权，任何单位和个人不得转载、摘编或以其他方式使用本站内容。",
            "诗词鉴赏栏目每日更新，欢迎读者朋友投稿，来稿请注明作者姓名与联系方式。",
        ];
        let poems = [
            ("静夜思", "床前明月光，疑是地上霜。", "举头望明月，低头思故乡。"),
            ("登鹳雀楼", "白日依山尽，黄河入海流。", "欲穷千里目，更上一层楼。"),
        ];
        let poem_pages = poems
            .iter()
            .enumerate()
            .map(|(i, (title, first, second))| {
                let text = format!(
                    "首页 | 诗词 | 作者 | 名句 | 古籍\n{title}\n唐 · 佚名\n{first}\n{second}\n{}\nCopyright 2024 诗词网",
                    footer.join("\n")
                );
                (format!("https://shici.example/poem/{i}.html"), text)
            })
            .collect();
        let article = [
            "The harbour board met on Tuesday to hear the plans for the new ferry terminal.",
            "Residents asked whether the building work would close the beach path in summer.",
            "The board said the path would stay open and the work would end before June.",
        ];
        let copy = |url: &str, last: &str| {
            let text = format!(
                "Home | News | Sport\n{}\n{}\n{last}\nAbout us | Contact",
                article[0], article[1]
            );
            (url.to_string(), text)
        };
        let copies = vec![
            copy("https://harbour.example/news/ferry.html", article[2]),
            copy(
                "https://harbour.example/archive/2024/ferry.html",
                "The board said the path would stay open and the work would end before July.",
            ),
        ];
        [poem_pages, copies]
    }

    /// On a host of two URLs with one identity, the lines both pages have are its template
    /// when each page has sentences of its own (two poems), and stay when the pages are
    /// copies of one text with an edited sentence.
    #[test]
    fn a_host_of_two_texts_under_a_longer_template_learns_it() {
        for_every_seed(&two_url_hosts().concat(), |seed, learned, pages| {
            let mut out = String::new();
            learned.strip(pages[1].1, pages[1].0, &mut LineScratch::default(), &mut out);
            assert_eq!(out, "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n", "seed {seed}");
            for page in &pages[2..] {
                learned.strip(page.1, page.0, &mut LineScratch::default(), &mut out);
                assert_eq!(out.trim_end(), page.1, "seed {seed}");
            }
        });
    }

    #[test]
    fn tracking_parameters_and_site_versions_are_one_url() {
        let k = |u| url_key(u, SEED);
        assert_eq!(
            k("https://s.example/a?id=3&utm_source=x&fbclid=y"),
            k("https://s.example/a?id=3")
        );
        assert_eq!(k("https://m.s.example/a"), k("https://www.s.example/a"));
        assert_eq!(k("https://amp.s.example/a"), k("https://s.example/a"));
        assert_ne!(k("https://s.example/a?id=3"), k("https://s.example/a?id=4"));
        // Paging parameters name pages.
        assert_ne!(k("https://s.example/list?from=20"), k("https://s.example/list?from=40"));
        // Job files written for the old name still read.
        let old: BoilerplateRule = serde_json::from_str(r#"{"min_urls": 5}"#).unwrap();
        assert_eq!(old.min_pages, 5);
        // A host that is only a prefix and a suffix keeps its name.
        assert_ne!(host_key("https://m.example/", SEED), host_key("https://example/", SEED));
        assert_eq!(host_key("https://m.example/", SEED), host_key("https://M.example/", SEED));
    }

    /// A notice (of any length) that many sites put beside their own articles is
    /// boilerplate everywhere, and so is a short line many sites have; the paragraphs of
    /// an article that many sites copied are not, since its other paragraphs are around
    /// them wherever they are.
    #[test]
    fn passages_many_hosts_repeat_around_other_text_are_boilerplate_everywhere() {
        let notice = "Reprinted articles do not represent the views of this site; contact us \
                      to have any of them removed.";
        let copied = [
            "The first paragraph of an article that many sites copied in full, word for word.",
            "Its second paragraph, which every copy carries right after the first one too.",
            "And its third, the last of the copied paragraphs, on every site that took it.",
        ];
        // Five sites of two pages each: the copied article on one page of each, and the
        // notice below every page's own story.
        let sites = ["Ash", "Birch", "Cedar", "Elm", "Oak"];
        let mut texts: Vec<(String, String)> = Vec::new();
        for (i, site) in sites.iter().enumerate() {
            for page in 0..2 {
                let own = format!(
                    "Site {} writes its own story number {i} about its town, {}.",
                    "z".repeat(i + 1),
                    ["a fair", "a flood"][page]
                );
                let article = if page == 0 { copied.join("\n") } else { String::new() };
                let text = format!(
                    "Share this page\n{article}\n{own}\n{notice}\nSite {site} footer, all rights reserved"
                );
                texts.push((format!("http://site{i}.example/{page}"), text));
            }
        }
        let pages: Vec<(&str, &str)> =
            texts.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &BoilerplateRule::default());
        let mut out = String::new();
        let page = format!("Share this page\nnew text of a new site.\n{notice}\n{}", copied[1]);
        learned.strip(&page, "http://new.example/", &mut LineScratch::default(), &mut out);
        assert_eq!(out, format!("new text of a new site.\n{}\n", copied[1]));
        // Too few hosts for the corpus: the notice stays on another site's page.
        let rule = BoilerplateRule { corpus_min_hosts: 6, ..BoilerplateRule::default() };
        learn(&pages, &rule).strip(
            &page,
            "http://new.example/",
            &mut LineScratch::default(),
            &mut out,
        );
        assert!(out.contains(notice), "{out}");
        // With as many hosts, a share of them decides.
        let rule = BoilerplateRule { corpus_min_share: 0.25, ..BoilerplateRule::default() };
        assert_eq!(rule.corpus_hosts_needed(5), 4);
        assert_eq!(rule.corpus_hosts_needed(50), 13);
    }

    #[test]
    fn a_page_that_is_all_boilerplate_is_kept_whole() {
        let rule = BoilerplateRule::default();
        let texts: Vec<(String, String)> = (0..4)
            .map(|i| {
                (format!("http://s.example/{i}"), page(&format!("Body {}", "y".repeat(i + 1)), 1))
            })
            .collect();
        let pages: Vec<(&str, &str)> =
            texts.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        let empty = "Home | News | Sport\nViews: 3\n© Site";
        let mut out = String::new();
        let s = learned.strip(empty, "http://s.example/404", &mut LineScratch::default(), &mut out);
        assert_eq!((out.as_str(), s.template_only, s.lines), (empty, true, 0));
    }

    #[test]
    fn share_of_a_host_decides_on_big_hosts() {
        let rule = BoilerplateRule::default();
        assert!(rule.host_line(3, 10));
        assert!(!rule.host_line(2, 10));
        assert!(!rule.host_line(9, 100));
        assert!(rule.host_line(10, 100));
    }
}
