//! Boilerplate lines of web pages: learned from the corpus, left out before analysis.
//!
//! Pages of one site share navigation, bylines, "most read" boxes, footers and licence
//! notices. A line (one block of the page: the WARC reader turns HTML into one line per
//! paragraph, heading, list item or table cell) is boilerplate for a host when it appears
//! on many distinct pages of that host, and boilerplate everywhere when it is short and
//! appears on many hosts. Lines are compared in a canonical form (case folded, whitespace collapsed,
//! every number one `#`), so "Views: 1,024" and "Views: 17" are one line.
//!
//! A template is what pages with different content share; text that only copies of one
//! page share is content. So pages are counted by their content, not by URL. A page's
//! identity is the pair of the two least keys among its identity lines (lines of more than
//! [`IDENTITY_LINE_CHARS`] canonical characters and at least half as many as its longest
//! line, or a quarter where half leaves too few: paragraphs rather than menu items,
//! bylines and boxes), a bottom-2 sketch of its
//! text that copies of one article (at several URLs of a host: tracking parameters,
//! print, AMP or mobile versions, reposts; or crawled again with changed counters) share
//! with a probability about their overlap, and different articles almost never. When a
//! line is counted, the page is named by its identity without that line, so one long
//! template line (a footer longer than the paragraphs) does not make all of its host's
//! pages one page. A page with fewer than [`MIN_IDENTITY_LINES`] identity lines is
//! counted by its canonical URL ([`url_key`]).
//!
//! Identities can name a template rather than a text: on a site of short texts (poems
//! under a footer of long lines) every identity line may be the template's, and the
//! host's pages collapse into one or two identities, too few to learn anything from. So
//! each line is counted by URL as well, and a line on enough URLs is boilerplate when it
//! is on pages of every identity the host has: a template line is, while the lines of an
//! article copied at several URLs are on pages of its one identity (unless the host has
//! nothing else, where nothing tells the two apart).
//!
//! Learning takes the corpus as [`Occurrence`]s sorted by `(scope, line, distinct)` and
//! reads it once ([`Learner`]); the result is a sorted set of (scope, line) entries
//! ([`Boilerplate`]), which [`Boilerplate::strip`] uses to drop a page's boilerplate
//! lines.

use neardup_core::hash::{hash_bytes, hash_u64s};
use serde::{Deserialize, Serialize};

use crate::lines::{CONTENT_BIT, LineKey, LineScratch, line_key};
use crate::main_text::{self, Line, ending};

/// The scope of corpus-wide entries (hosts are never 0).
pub const CORPUS_SCOPE: u64 = 0;

/// The line of an occurrence that counts a host's distinct canonical URLs.
pub const URL_MARKER: u64 = 0;

/// The line of an occurrence that counts a host's distinct page contents (identities).
pub const PAGE_MARKER: u64 = 1;

/// Lines of more canonical characters than this identify a page's content (paragraphs,
/// headlines, a poem's stanza, rather than menu items, buttons and short bylines).
pub const IDENTITY_LINE_CHARS: u32 = 15;

/// A page with fewer lines of half its longest line's characters than
/// [`MIN_IDENTITY_LINES`] takes its identity lines from those of this fraction of it (a
/// quarter: chosen on `bench/make_webset.py`'s research set, pair F1 0.991 instead of
/// 0.989, a third giving 0.989; an article whose second paragraph is twice its first
/// otherwise has one identity line and is counted by URL).
pub const IDENTITY_FALLBACK_SHARE: u32 = 4;

/// A page with fewer distinct identity lines than this is counted by its canonical URL (an
/// identity without one of its lines needs two). Three: two paragraphs of a short text
/// under a long footer name the text (measured on `bench/make_crawlset.py`'s court pages,
/// whose copies at four were counted by URL and learned as their host's template).
pub const MIN_IDENTITY_LINES: usize = 3;

/// When a line is boilerplate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoilerplateRule {
    /// Learn boilerplate from web pages (documents with a URL) and leave it out.
    pub enabled: bool,
    /// A line is boilerplate for a host when it is on at least this many pages of the host
    /// with distinct contents (see the module documentation)...
    #[serde(alias = "min_urls")]
    pub min_pages: u32,
    /// ...and on at least this share of the host's distinct pages.
    pub min_share: f64,
    /// A line of at most `corpus_max_chars` characters is boilerplate everywhere when it is
    /// on at least this many hosts. High by default: a short sentence of an article copied
    /// to many sites is on many hosts too, and leaving it out of every copy lowers their
    /// similarity (measured on the benchmark corpus, where sentences recur across hosts).
    pub corpus_min_hosts: u32,
    /// The longest line (in canonical characters) the corpus-wide rule applies to, so an
    /// article copied to many sites keeps its text.
    pub corpus_max_chars: u32,
    /// On a page with boilerplate, keep only its main text (see [`Boilerplate::strip`]):
    /// leave out the lines of its template that differ from page to page and so are never
    /// learned (a title with the site's name, a byline, the links of a related box).
    pub main_text: bool,
}

impl Default for BoilerplateRule {
    fn default() -> Self {
        BoilerplateRule {
            enabled: true,
            min_pages: 3,
            min_share: 0.1,
            corpus_min_hosts: 1000,
            corpus_max_chars: 40,
            main_text: true,
        }
    }
}

impl BoilerplateRule {
    /// Whether a line on `pages` distinct pages of a host with `host_pages` distinct pages
    /// is boilerplate.
    pub fn host_line(&self, pages: u32, host_pages: u32) -> bool {
        let by_share = (self.min_share * f64::from(host_pages)).ceil();
        pages >= self.min_pages && f64::from(pages) >= by_share
    }

    /// Whether a short line on `hosts` distinct hosts is boilerplate.
    pub fn corpus_line(&self, hosts: u32) -> bool {
        hosts >= self.corpus_min_hosts
    }
}

/// A URL's host, lowercased, without scheme, user, port, trailing dot and leading `www.`,
/// `m.`, `amp.`, `mobile.` or `wap.`, and the rest of the URL (path and query, `/` when empty) without its fragment.
/// `None` when the URL has no host.
fn split_url(url: &str) -> Option<(String, &str)> {
    let url = url.trim();
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => host.split(':').next()?,
    };
    let mut host = host.trim_end_matches('.').to_ascii_lowercase();
    // The mobile, AMP and www versions of a site are the site.
    while let Some(bare) = ["www.", "m.", "amp.", "mobile.", "wap."]
        .iter()
        .find_map(|p| host.strip_prefix(p).filter(|rest| rest.contains('.')))
    {
        host = bare.to_string();
    }
    (!host.is_empty()).then_some((host, if path.is_empty() { "/" } else { path }))
}

/// Query parameters that track a visit rather than name a page.
fn is_tracking(parameter: &str) -> bool {
    let name = parameter.split('=').next().unwrap_or_default().to_ascii_lowercase();
    name.starts_with("utm_")
        || matches!(
            name.as_str(),
            "fbclid"
                | "gclid"
                | "dclid"
                | "msclkid"
                | "yclid"
                | "mc_cid"
                | "mc_eid"
                | "_ga"
                | "ref"
                | "ref_src"
                | "spm"
                | "igshid"
        )
}

/// The key of a URL's host: lowercased, without scheme, user, port and leading `www.`,
/// `m.`, `amp.`, `mobile.` or `wap.` (the versions of one site). `None` when the URL has
/// no host.
pub fn host_key(url: &str, seed: u64) -> Option<u64> {
    split_url(url).map(|(host, _)| hash_bytes(host.as_bytes(), seed).max(1))
}

/// The key of a canonical URL: what a page without long lines is counted by. The host is
/// taken as in [`host_key`], the fragment and tracking parameters (`utm_*`, `fbclid`,
/// `gclid`, ...) are dropped, so `http://www.Example.com:80/a?utm_source=x#top` and
/// `https://example.com/a` are one URL; path and the other parameters keep their case and
/// order.
pub fn url_key(url: &str, seed: u64) -> u64 {
    match split_url(url) {
        Some((host, rest)) => {
            let mut key = host;
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            key.push_str(path);
            let mut first = true;
            for parameter in query.split('&').filter(|p| !p.is_empty() && !is_tracking(p)) {
                key.push(if first { '?' } else { '&' });
                key.push_str(parameter);
                first = false;
            }
            hash_bytes(key.as_bytes(), seed)
        }
        None => hash_bytes(url.trim().as_bytes(), seed),
    }
}

/// The entry of a line in a scope (a host key or [`CORPUS_SCOPE`]).
pub fn entry(scope: u64, line: u64) -> u64 {
    hash_u64s(&[scope, line], 0x626f_696c_6572_706c)
}

/// One fact for learning: `line` of a page at `scope`, with what distinct ones count.
/// Per host and page: `(host, URL_MARKER, url)` and `(host, PAGE_MARKER, page)`, and for
/// each line `(host, line, page)` and `(host, line & !CONTENT_BIT, url)`, `page` being the
/// page's identity without that line and `url` the key of its canonical URL; corpus wide:
/// `(CORPUS_SCOPE, line, host)` for short lines.
pub type Occurrence = (u64, u64, u64);

/// The identity of a page from the three least keys of its identity lines (ascending):
/// the two least keys other than `without` (a line's key, or [`PAGE_MARKER`] for the page
/// as a whole), or `None` when fewer than two remain.
fn identity(least: &[u64], without: u64, seed: u64) -> Option<u64> {
    let mut two = least.iter().copied().filter(|&k| k != without);
    let (a, b) = (two.next()?, two.next()?);
    Some(hash_u64s(&[a, b], seed ^ 0x6964_656e_7469_7479).max(1))
}

/// The key of every line of `text` (as `str::lines` splits it), in order, into `out`:
/// what [`occurrences`] and [`Boilerplate::strip_lines`] read, so that a page's lines are
/// put in canonical form and hashed once for both.
pub fn line_keys(text: &str, seed: u64, scratch: &mut LineScratch, out: &mut Vec<Option<LineKey>>) {
    out.clear();
    out.extend(text.lines().map(|line| line_key(line, seed, scratch)));
}

/// The occurrences of one page's lines, distinct and sorted, from its [`line_keys`] under
/// `seed`. `url` is the page's URL. A line is counted for the page's identity without that
/// line (see the module documentation), or the key of its canonical URL when the page has
/// fewer than [`MIN_IDENTITY_LINES`] identity lines, and once more for the key of its
/// canonical URL.
pub fn occurrences(
    lines: &[Option<LineKey>],
    url: &str,
    rule: &BoilerplateRule,
    seed: u64,
    scratch: &mut LineScratch,
    out: &mut Vec<Occurrence>,
) {
    out.clear();
    let Some(host) = host_key(url, seed) else { return };
    let mut keys = std::mem::take(&mut scratch.keys);
    keys.clear();
    for key in lines {
        if let Some(key) = *key {
            // The page is filled in below, once every line is seen.
            out.push((host, key.key, 0));
            if key.chars <= rule.corpus_max_chars {
                out.push((CORPUS_SCOPE, key.key, host));
            }
            if key.chars > IDENTITY_LINE_CHARS {
                keys.push((key.chars, key.key));
            }
        }
    }
    // Identity lines are at least half as long as the longest: paragraphs rather than the
    // template's footers and boxes where the text is long. Where that leaves too few (one
    // paragraph far longer than the others), a quarter.
    let longest = keys.iter().map(|&(chars, _)| chars).max().unwrap_or(0);
    let half = keys.iter().filter(|&&(chars, _)| chars * 2 >= longest).count();
    let share = if half >= MIN_IDENTITY_LINES { 2 } else { IDENTITY_FALLBACK_SHARE };
    keys.retain(|&(chars, _)| chars * share >= longest);
    keys.iter_mut().for_each(|k| k.0 = 0);
    keys.sort_unstable();
    keys.dedup();
    // The three least keys of identity lines, when there are enough of them.
    let mut least = [0; 3];
    let enough = keys.len() >= MIN_IDENTITY_LINES;
    if enough {
        least = [keys[0].1, keys[1].1, keys[2].1];
    }
    let least = if enough { &least[..] } else { &[][..] };
    let by_url = url_key(url, seed);
    let lines = out.len();
    for i in 0..lines {
        let (scope, line, _) = out[i];
        if scope == host {
            out[i].2 = identity(least, line, seed).unwrap_or(by_url);
            out.push((host, line & !CONTENT_BIT, by_url));
        }
    }
    out.push((host, URL_MARKER, by_url));
    out.push((host, PAGE_MARKER, identity(least, PAGE_MARKER, seed).unwrap_or(by_url)));
    scratch.keys = keys;
    out.sort_unstable();
    out.dedup();
}

/// Reads occurrences sorted by `(scope, line, distinct)` and emits the entries of
/// boilerplate lines. Holds one group's counters and the current host's lines that are on
/// enough URLs (at most its line occurrences over `min_pages`, and over a share of its
/// URLs on a big host).
#[derive(Debug)]
pub struct Learner {
    rule: BoilerplateRule,
    group: Option<(u64, u64)>,
    last: Option<Occurrence>,
    distinct: u32,
    host_urls: u32,
    host_pages: u32,
    /// The host's lines (with [`CONTENT_BIT`]) on enough URLs to be boilerplate.
    by_url: std::collections::HashSet<u64>,
}

impl Learner {
    /// A learner for `rule`.
    pub fn new(rule: BoilerplateRule) -> Self {
        Learner {
            rule,
            group: None,
            last: None,
            distinct: 0,
            host_urls: 0,
            host_pages: 0,
            by_url: Default::default(),
        }
    }

    /// The next occurrence, in sorted order (repeats are ignored).
    pub fn push(&mut self, item: Occurrence, emit: &mut impl FnMut(u64)) {
        if self.last == Some(item) {
            return;
        }
        debug_assert!(self.last.is_none_or(|last| last < item), "occurrences out of order");
        self.last = Some(item);
        let (scope, line, _) = item;
        if self.group != Some((scope, line)) {
            self.close(emit);
            if self.group.is_none_or(|(s, _)| s != scope) {
                (self.host_urls, self.host_pages) = (0, 0);
                self.by_url.clear();
            }
            self.group = Some((scope, line));
            self.distinct = 0;
        }
        self.distinct += 1;
    }

    /// Ends the input.
    pub fn finish(&mut self, emit: &mut impl FnMut(u64)) {
        self.close(emit);
        self.group = None;
    }

    fn close(&mut self, emit: &mut impl FnMut(u64)) {
        let Some((scope, line)) = self.group else { return };
        if scope == CORPUS_SCOPE {
            if self.rule.corpus_line(self.distinct) {
                emit(entry(scope, line));
            }
        } else if line == URL_MARKER {
            self.host_urls = self.distinct;
        } else if line == PAGE_MARKER {
            self.host_pages = self.distinct;
        } else if line & CONTENT_BIT == 0 {
            if self.rule.host_line(self.distinct, self.host_urls) {
                self.by_url.insert(line | CONTENT_BIT);
            }
        } else if self.rule.host_line(self.distinct, self.host_pages)
            || (self.distinct >= self.host_pages && self.by_url.contains(&line))
        {
            emit(entry(scope, line));
        }
    }
}

/// What [`Boilerplate::strip`] did to one page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    /// Lines left out.
    pub lines: u32,
    /// Characters left out.
    pub chars: u64,
    /// Every line was boilerplate, so the page is analysed whole (a page that is all
    /// template, such as an empty listing or a soft 404, still matches its likes).
    pub whole: bool,
}

/// The learned boilerplate: a sorted set of entries. Holds 8 bytes per entry.
#[derive(Clone, Debug, Default)]
pub struct Boilerplate {
    entries: Vec<u64>,
    corpus_max_chars: u32,
    main_text: bool,
    seed: u64,
}

impl Boilerplate {
    /// The set of `entries` (any order, repeats allowed) learned under `rule` with `seed`.
    pub fn new(mut entries: Vec<u64>, rule: &BoilerplateRule, seed: u64) -> Self {
        entries.sort_unstable();
        entries.dedup();
        entries.shrink_to_fit();
        Boilerplate {
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

    /// Entries learned.
    pub fn len(&self) -> usize {
        self.entries.len()
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
        self.contains(host, line.key)
            || (line.chars <= self.corpus_max_chars && self.contains(CORPUS_SCOPE, line.key))
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
        // Per line: None for boilerplate, else its canonical characters (0 for a line
        // without letters or digits) and how it ends.
        let mut kept: Vec<Option<Line>> = Vec::with_capacity(lines.len());
        let mut keys = lines.iter();
        for line in text.lines() {
            let chars = match *keys.next().expect("a key for every line of the text") {
                Some(key) if self.is_boilerplate(key, host) => {
                    kept.push(None);
                    continue;
                }
                Some(key) => key.chars.max(1),
                None => 0,
            };
            kept.push(Some(Line { chars, ending: ending(line) }));
        }
        let longest = kept.iter().flatten().map(|l| l.chars).max().unwrap_or(0);
        if longest == 0 {
            if kept.iter().any(Option::is_none) {
                // Every line was boilerplate: analyse the page whole.
                out.push_str(text);
                return Stripped { whole: true, ..Stripped::default() };
            }
            out.push_str(text);
            return stripped;
        }
        if self.main_text && kept.iter().any(Option::is_none) {
            main_text::select(&mut kept);
        }
        for (line, k) in text.lines().zip(&kept) {
            if k.is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        Boilerplate::new(learned, rule, seed)
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
        assert_eq!((s.lines, s.whole), (4, false));
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
        // Two URLs only: below min_pages, nothing is learned.
        assert!(learned.is_empty());
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

    #[test]
    fn short_lines_on_many_hosts_are_boilerplate_everywhere_long_ones_are_not() {
        let rule = BoilerplateRule { corpus_min_hosts: 3, ..BoilerplateRule::default() };
        let long = "A long sentence of a copied article that many mirror sites carry in full.";
        let texts: Vec<(String, String)> = (0..4)
            .map(|i| {
                (
                    format!("http://mirror{i}.example/x"),
                    format!("Share this page\n{long}\nOwn line {}", "z".repeat(i + 1)),
                )
            })
            .collect();
        let pages: Vec<(&str, &str)> =
            texts.iter().map(|(u, t)| (u.as_str(), t.as_str())).collect();
        let learned = learn(&pages, &rule);
        assert_eq!(learned.len(), 1);
        let mut out = String::new();
        learned.strip(
            "Share this page\nnew text",
            "http://new.example/",
            &mut LineScratch::default(),
            &mut out,
        );
        assert_eq!(out, "new text\n");
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
        assert_eq!((out.as_str(), s.whole, s.lines), (empty, true, 0));
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
