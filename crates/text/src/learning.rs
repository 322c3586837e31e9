//! Learning which lines of web pages are boilerplate, from the corpus (see
//! [`crate::Boilerplate`] for leaving them out).
//!
//! A line is boilerplate for a host when it appears on many distinct pages of that host,
//! and boilerplate everywhere when it appears on many hosts with other text around it.
//! Lines are compared in a canonical form (case folded, whitespace collapsed, every number
//! one `#`), so "Views: 1,024" and "Views: 17" are one line.
//!
//! A template is what pages with different content share; text that only copies of one
//! page share is content. So pages are counted by their content, not by URL. A page's
//! identity is the pair of its two longest sentences (lines of more than
//! [`PROSE_IDENTITY_CHARS`] canonical characters that end a sentence or a clause: its
//! paragraphs or a poem's verses, rather than menus, headlines and a related box's
//! one-line sentences), which copies of one text (at several URLs of a host: tracking
//! parameters, print, AMP or mobile versions, reposts; or crawled again with changed
//! counters) share, and different texts almost never. When a line is counted, the page is
//! named by its identity without that line (by its other sentence, where it has only
//! two), so one long template sentence does not make all of its host's pages one page. A
//! page with fewer than two sentences is named by its long lines (of more than
//! [`IDENTITY_LINE_CHARS`] characters and at least half as many as its longest line, or a
//! quarter where half leaves too few), the two least keys of them, and with fewer than
//! [`MIN_IDENTITY_LINES`] of those by its canonical URL ([`crate::url_key`]).
//!
//! Identities can name a template rather than a text: on a site of short texts under long
//! template lines, the host's pages may collapse into one or two identities, too few to
//! learn anything from. So each line is counted by URL as well, and a line on enough URLs
//! is boilerplate when it is on pages of every identity the host has, or of all but one
//! where it has three or more (with the default rule that matters on a host of three
//! identities; from four, a line on all but one is on enough of them anyway): a template
//! line is, and so is a teaser that a related box shows on every page of its host but its
//! own story's, while the lines of an article copied at several URLs are on pages of its
//! one identity (unless the host has nothing else, where nothing tells the two apart). On
//! a host of three identities where two are copies of one article, one of them edited, the
//! article's lines are on two of the three and are learned: its copies are then compared
//! by what differs, and may be missed, which is what keeps the short stories of a related
//! box from being joined by its teasers. Where the pages of a small host collapse into one
//! or two identities (a related box quotes every story's lead on every page, so the pages
//! of its one-sentence stories hold the same sentences), a line on enough URLs, and on
//! half of them, is boilerplate when enough of those URLs have a line of their own (on no
//! other URL of the host: a headline), as pages of different texts do and copies of one
//! text do not (see [`OwnLines`]).
//!
//! A host of two URLs whose pages share one identity is either one text at two URLs or
//! two short texts (two poems, two briefs) under a template whose sentences are longer
//! than theirs. Its lines on both URLs are its template when each URL has at least
//! [`OWN_SENTENCES`] sentences of its own: copies of one text differ in an edited line or
//! two, and two texts in all of theirs (see [`TwoUrls`]).
//!
//! Across hosts, a line is counted by host and by the sentences nearest it before and
//! after ([`Neighbours`]): a notice or a promotion that many sites put beside their own
//! texts has other sentences around it on each, where a paragraph of an article copied to
//! many sites has that article's. A line on enough hosts with enough different sentences
//! around it is boilerplate everywhere; on fewer (two or more) it is a shared passage,
//! which stays in a page's text but never makes the page's own text too small to be its
//! main text.
//!
//! Learning takes the corpus as [`Occurrence`]s sorted by `(scope, line, distinct)` and
//! reads it once ([`Learner`]), which emits [`Lesson`]s; [`crate::Boilerplate::learned`]
//! makes them a sorted set of (scope, line) entries.

use neardup_core::hash::hash_u64s;
use serde::{Deserialize, Serialize};

use crate::lines::{CONTENT_BIT, LineKey, LineScratch, PROSE_BIT};
use crate::urls::{host_key, url_key};

/// The scope of corpus-wide entries (hosts are never 0).
pub const CORPUS_SCOPE: u64 = 0;

/// The line of an occurrence that counts a host's distinct canonical URLs.
pub const URL_MARKER: u64 = 0;

/// The line of an occurrence that counts a host's distinct page contents (identities).
pub const PAGE_MARKER: u64 = 1;

/// Lines that end a sentence or a clause and have more canonical characters than this are
/// a page's identity lines (see the module documentation): its paragraphs, or a poem's
/// verses, however short beside its template's lines.
pub const PROSE_IDENTITY_CHARS: u32 = 8;

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

/// On a host of two URLs with one identity, each URL needs this many sentences (lines
/// that end one) on it alone for the lines on both to be the host's template: a poem's two
/// verses, or a brief's two sentences, under a footer of longer sentences. A copy of one
/// text with an edited sentence has one; with more edits, what is left of each page is
/// those sentences, still alike.
pub const OWN_SENTENCES: u32 = 2;

/// `boilerplate.corpus_min_hosts` unless set.
pub const CORPUS_MIN_HOSTS: u32 = 4;

/// `boilerplate.corpus_min_share` unless set.
pub const CORPUS_MIN_SHARE: f64 = 0.01;

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
    /// A line is boilerplate everywhere (a licence or reprint notice, an injected promotion,
    /// a share button) when it is on at least `corpus_min_share` of the hosts learning
    /// sees, and on at least this many, with as many distinct lines before it and after
    /// it (see the module documentation): the paragraphs of an article copied to many
    /// sites are on many hosts too, but with its other paragraphs around them.
    pub corpus_min_hosts: u32,
    /// ...and on at least this share of the hosts learning sees.
    pub corpus_min_share: f64,
    /// When set, the corpus-wide rule applies only to lines of at most this many canonical
    /// characters.
    pub corpus_max_chars: Option<u32>,
    /// On a page with boilerplate, keep only its main text (see [`Boilerplate::strip`](crate::boilerplate::Boilerplate::strip)):
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
            corpus_min_hosts: CORPUS_MIN_HOSTS,
            corpus_min_share: CORPUS_MIN_SHARE,
            corpus_max_chars: None,
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

    /// [`BoilerplateRule::host_line`] for pages told apart by their content: on a host of
    /// two pages with different texts (a poetry site with two poems), a line on both is
    /// its template, as nothing else can be (`min_pages` would never be reached there).
    pub fn host_line_by_content(&self, pages: u32, host_pages: u32) -> bool {
        if host_pages == 2 && self.min_pages > 2 {
            return pages == 2;
        }
        self.host_line(pages, host_pages)
    }

    /// How many hosts (and distinct contents) a line must be on to be boilerplate
    /// everywhere, when learning sees `hosts` hosts.
    pub fn corpus_hosts_needed(&self, hosts: u64) -> u64 {
        let by_share = (self.corpus_min_share * hosts as f64).ceil() as u64;
        by_share.max(u64::from(self.corpus_min_hosts))
    }

    /// Whether the corpus-wide rule applies to a line of `chars` canonical characters.
    fn corpus_applies(&self, chars: u32) -> bool {
        self.corpus_max_chars.is_none_or(|max| chars <= max)
    }
}

/// The entry of a line in a scope (a host key or [`CORPUS_SCOPE`]): its lowest bit is
/// clear (a shared passage's is set).
pub fn entry(scope: u64, line: u64) -> u64 {
    hash_u64s(&[scope, line], 0x626f_696c_6572_706c) & !1
}

/// The entry of a shared passage (see [`SHARED_MIN_HOSTS`]): its lowest bit is set.
pub(crate) fn shared_entry(line: u64) -> u64 {
    hash_u64s(&[line], 0x7368_6172_6564_7061) | 1
}

/// A line on at least this many hosts, with as many distinct lines before it and after
/// it, that is not on enough to be boilerplate everywhere, is a shared passage: an
/// injected promotion or a notice of a few sites, or a paragraph of a text copied to a few
/// with edits around it (nothing tells them apart). It stays in the page's text, but it
/// never makes a block of the page's own text too small to be main text (see
/// `main_text.rs`), so a short article is never left out for a promotion beside it.
pub const SHARED_MIN_HOSTS: u32 = 2;

/// One fact for learning: `line` of a page at `scope`, with what distinct ones count.
/// Per host and page: `(host, URL_MARKER, url)` and `(host, PAGE_MARKER, page)`, and for
/// each line `(host, line, page)` and `(host, line & !CONTENT_BIT, url)`, `page` being the
/// page's identity without that line and `url` the key of its canonical URL; corpus wide:
/// `(CORPUS_SCOPE, line, host)`, the lines next to it, `(CORPUS_SCOPE, line, before |
/// BEFORE)` and `(CORPUS_SCOPE, line, after | AFTER)`, and its page,
/// `(CORPUS_SCOPE, line, host_page(host, url))`.
pub type Occurrence = (u64, u64, u64);

/// The top two bits of a corpus-wide occurrence's distinct value say what it counts: a
/// host (neither), the line before the line on a page ([`BEFORE`]) or after it
/// ([`AFTER`]), or a page of a host ([`PAGE`]).
const NEIGHBOUR_BITS: u64 = 3 << 62;
const BEFORE: u64 = 1 << 62;
const AFTER: u64 = 2 << 62;
const PAGE: u64 = 3 << 62;

/// A page of a host as a corpus-wide occurrence counts it: [`PAGE`], then 30 bits of the
/// host's key and 32 of the page's URL key, so that a line's pages arrive grouped by host
/// and the hosts it is on several pages of can be counted.
fn host_page(host: u64, url: u64) -> u64 {
    PAGE | ((host & 0x3fff_ffff) << 32) | (url & 0xffff_ffff)
}

/// The sentences (lines that end one, [`LineKey::is_prose`]) nearest each line of a page,
/// before and after it: what tells a passage that a corpus repeats with other text around
/// it (a notice, a promotion: the article before it, the host's footer after it) from a
/// paragraph or a verse of a text copied to many sites, which has its text's other
/// sentences around it wherever it is. Labels, menus and headlines between them (`Related`,
/// `相关推荐`), which many sites share, are passed over. Where there is none, the page's
/// start or end on its host stands in, so a text of one sentence copied to many sites
/// reads as a passage: nothing on its pages tells the two apart.
struct Neighbours;

impl Neighbours {
    /// The key standing in for the start (`end` false) or end of a page of `host`.
    fn edge(host: u64, end: bool) -> u64 {
        hash_u64s(&[host, u64::from(end)], 0x6e65_6967_6862_6f72)
    }
}

/// The identity of a page from its first three identity lines (see [`occurrences`]): the
/// first two other than `without` (a line's key, or [`PAGE_MARKER`] for the page as a
/// whole), or `None` when fewer than `min` (one or two) remain.
fn identity(least: &[u64], without: u64, min: usize, seed: u64) -> Option<u64> {
    let mut two = least.iter().copied().filter(|&k| k != without);
    let a = two.next()?;
    let b = match two.next() {
        Some(b) => b,
        None if min <= 1 => 0,
        None => return None,
    };
    Some(hash_u64s(&[a, b], seed ^ 0x6964_656e_7469_7479).max(1))
}

/// The occurrences of one page's lines, distinct and sorted, from its [`line_keys`](crate::lines::line_keys) under
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
            if rule.corpus_applies(key.chars) {
                out.push((CORPUS_SCOPE, key.key, host & !NEIGHBOUR_BITS));
            }
            if key.is_prose() && key.chars > PROSE_IDENTITY_CHARS {
                keys.push((key.chars, key.key));
            }
        }
    }
    // A page's identity lines are its longest sentences: paragraphs and verses rather than
    // the template's menus, headlines and boxes, and rather than a related box's one-line
    // sentences. Where it has fewer than two, its long lines (see below).
    let prose = keys.len();
    if prose >= 2 {
        keys.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    } else {
        keys.clear();
        keys.extend(
            lines
                .iter()
                .flatten()
                .filter(|k| k.chars > IDENTITY_LINE_CHARS)
                .map(|k| (k.chars, k.key)),
        );
        // Long lines at least half as long as the longest: paragraphs rather than the
        // template's footers and boxes where the text is long. Where that leaves too few
        // (one paragraph far longer than the others), a quarter.
        let longest = keys.iter().map(|&(chars, _)| chars).max().unwrap_or(0);
        let half = keys.iter().filter(|&&(chars, _)| chars * 2 >= longest).count();
        let share = if half >= MIN_IDENTITY_LINES { 2 } else { IDENTITY_FALLBACK_SHARE };
        keys.retain(|&(chars, _)| chars * share >= longest);
        keys.iter_mut().for_each(|k| k.0 = 0);
        keys.sort_unstable();
    }
    keys.dedup_by_key(|k| k.1);
    // The first three identity lines (the longest sentences, or the long lines of least
    // key), when there are enough of them: two sentences (a line's identity is then the
    // other one), or three long lines.
    let needed = if prose >= 2 { 2 } else { MIN_IDENTITY_LINES };
    let enough = keys.len() >= needed;
    let mut least = [0; 3];
    for (slot, key) in least.iter_mut().zip(&keys) {
        *slot = key.1;
    }
    let least = if enough { &least[..keys.len().min(3)] } else { &[][..] };
    let by_url = url_key(url, seed);
    let counted = out.len();
    for i in 0..counted {
        let (scope, line, _) = out[i];
        if scope == host {
            out[i].2 = identity(least, line, needed - 1, seed).unwrap_or(by_url);
            out.push((host, line & !CONTENT_BIT, by_url));
        }
    }
    // The page of each line, and the sentences around it, for the corpus-wide rule.
    let page = host_page(host, by_url);
    let keyed: Vec<&LineKey> = lines.iter().flatten().collect();
    let mut before = Neighbours::edge(host, false);
    let mut after_at = 0;
    for (i, key) in keyed.iter().enumerate() {
        if after_at <= i {
            after_at = (i + 1..keyed.len()).find(|&j| keyed[j].is_prose()).unwrap_or(keyed.len());
        }
        let after = keyed.get(after_at).map_or(Neighbours::edge(host, true), |a| a.key);
        if rule.corpus_applies(key.chars) {
            out.push((CORPUS_SCOPE, key.key, (before & !NEIGHBOUR_BITS) | BEFORE));
            out.push((CORPUS_SCOPE, key.key, (after & !NEIGHBOUR_BITS) | AFTER));
            out.push((CORPUS_SCOPE, key.key, page));
        }
        if key.is_prose() {
            before = key.key;
        }
    }
    out.push((host, URL_MARKER, by_url));
    out.push((host, PAGE_MARKER, identity(least, PAGE_MARKER, needed - 1, seed).unwrap_or(by_url)));
    scratch.keys = keys;
    out.sort_unstable();
    out.dedup();
}

/// What learning finds, as [`Learner`] emits it: host entries as they are decided, and
/// what the corpus-wide rule needs the whole corpus's host count for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lesson {
    /// The entry of a line that is boilerplate for its host ([`entry`]).
    Entry(u64),
    /// A line on at least [`SHARED_MIN_HOSTS`] hosts, with as many distinct lines before
    /// it and after it: boilerplate everywhere when that is enough hosts for the corpus
    /// ([`BoilerplateRule::corpus_hosts_needed`]), else a shared passage.
    Passage {
        /// The line's key.
        line: u64,
        /// Distinct hosts it is on.
        hosts: u32,
        /// The fewer of the distinct lines before it and after it on its pages.
        contexts: u32,
        /// Hosts it is on two or more pages of.
        repeated_on: u32,
    },
    /// Hosts one learner saw (each host's occurrences meet at one learner).
    Hosts(u32),
}

/// Reads occurrences sorted by `(scope, line, distinct)` and emits what it learns
/// ([`Lesson`]s). Holds one group's counters and the current host's lines that are on
/// enough URLs (at most its line occurrences over `min_pages`, and over a share of its
/// URLs on a big host).
#[derive(Debug)]
pub struct Learner {
    rule: BoilerplateRule,
    group: Option<(u64, u64)>,
    last: Option<Occurrence>,
    distinct: u32,
    /// In the corpus scope, the distinct lines before and after the line, the hosts it is
    /// on several pages of, and the host (top bits of [`host_page`]) and pages counted last.
    before: u32,
    after: u32,
    repeated_on: u32,
    page_host: Option<(u64, u32)>,
    host_urls: u32,
    host_pages: u32,
    /// Hosts seen.
    hosts: u32,
    /// The host's lines (with [`CONTENT_BIT`]) on enough URLs to be boilerplate.
    by_url: std::collections::HashSet<u64>,
    /// The first distinct value of the current group.
    first: u64,
    /// On a host of two URLs with one identity, what its lines say of the two.
    two_urls: TwoUrls,
    /// On a small host of one or two identities, which URLs have lines of their own, and
    /// the lines on them.
    own_lines: OwnLines,
}

/// Hosts of at most this many URLs are read for the URLs that have a line of their own
/// ([`OwnLines`]): the identities of a host's pages collapse where the host is small.
const OWN_LINES_MAX_URLS: u32 = 64;

/// What a small host's lines say of its URLs while they are counted by URL: which URLs
/// have a line on no other URL of the host (a headline, a title), and the URLs of each
/// line on enough of them. A line on enough URLs that each have a line of their own is on
/// pages with texts of their own, so it is the host's template, however few identities
/// those pages collapse into (a related box quotes every story's lead on every page, so
/// the pages of one-sentence stories all have one identity); copies of one article at
/// several URLs have no line of their own, or only one of them has (an edit).
#[derive(Debug, Default)]
struct OwnLines {
    /// The URLs of the current line.
    urls: Vec<u64>,
    /// The URLs with a line of their own.
    owners: Vec<u64>,
    /// The lines (with [`CONTENT_BIT`]) on enough URLs, and their URLs.
    lines: Vec<(u64, Vec<u64>)>,
    /// Once settled: the lines on enough URLs that have lines of their own.
    template: std::collections::HashSet<u64>,
    settled: bool,
}

impl OwnLines {
    /// The current line is on `url` alone.
    fn owner(&mut self, url: u64) {
        self.owners.push(url);
    }

    /// The current line (`line`, with [`CONTENT_BIT`]) is on enough URLs.
    fn line(&mut self, line: u64) {
        if !self.urls.is_empty() {
            self.lines.push((line, std::mem::take(&mut self.urls)));
        }
    }

    /// Decides, once, which lines are on at least `min_pages` URLs with lines of their own,
    /// and on at least half of the host's `urls`.
    fn settle(&mut self, min_pages: u32, host_urls: u32) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        self.owners.sort_unstable();
        for (line, urls) in self.lines.drain(..) {
            let owned = urls.iter().filter(|u| self.owners.binary_search(u).is_ok()).count();
            if owned >= min_pages as usize && urls.len() * 2 >= host_urls as usize {
                self.template.insert(line);
            }
        }
    }
}

/// What a host of two URLs with one identity (see the module documentation) shows while
/// its lines are counted by URL: the lines on both, and each URL's sentences of its own.
#[derive(Debug, Default)]
struct TwoUrls {
    /// The lines on both URLs (with [`CONTENT_BIT`]).
    both: Vec<u64>,
    /// Each URL's key and its sentences on no other URL.
    own: [(u64, u32); 2],
    /// Whether the lines on both were decided.
    settled: bool,
}

impl TwoUrls {
    /// A line counted by URL: on both (`urls` 2), or on the one of key `url`.
    fn line(&mut self, line: u64, urls: u32, url: u64) {
        if urls == 2 {
            self.both.push(line | CONTENT_BIT);
        } else if line & PROSE_BIT != 0 {
            match self.own.iter_mut().find(|(u, n)| *u == url || *n == 0) {
                Some(slot) => *slot = (url, slot.1 + 1),
                None => debug_assert!(false, "a third URL on a host of two"),
            }
        }
    }

    /// The lines on both URLs when they are the host's template (each URL has
    /// [`OWN_SENTENCES`] of its own), once.
    fn settle(&mut self) -> Vec<u64> {
        if std::mem::replace(&mut self.settled, true) {
            return Vec::new();
        }
        let texts = self.own.iter().all(|&(_, n)| n >= OWN_SENTENCES);
        if texts { std::mem::take(&mut self.both) } else { Vec::new() }
    }
}

impl Learner {
    /// A learner for `rule`.
    pub fn new(rule: BoilerplateRule) -> Self {
        Learner {
            rule,
            group: None,
            last: None,
            distinct: 0,
            before: 0,
            after: 0,
            repeated_on: 0,
            page_host: None,
            host_urls: 0,
            host_pages: 0,
            hosts: 0,
            by_url: Default::default(),
            first: 0,
            two_urls: TwoUrls::default(),
            own_lines: OwnLines::default(),
        }
    }

    /// Whether the current host's lines are read for [`OwnLines`]: a host of at most
    /// [`OWN_LINES_MAX_URLS`] URLs whose pages are one or two identities, the only hosts
    /// its rule applies to.
    fn reads_own_lines(&self) -> bool {
        self.host_urls <= OWN_LINES_MAX_URLS && self.host_pages <= 2
    }

    /// The next occurrence, in sorted order (repeats are ignored).
    pub fn push(&mut self, item: Occurrence, emit: &mut impl FnMut(Lesson)) {
        if self.last == Some(item) {
            return;
        }
        debug_assert!(self.last.is_none_or(|last| last < item), "occurrences out of order");
        self.last = Some(item);
        let (scope, line, distinct) = item;
        if self.group != Some((scope, line)) {
            self.close(emit);
            if self.group.is_none_or(|(s, _)| s != scope) {
                (self.host_urls, self.host_pages) = (0, 0);
                self.by_url.clear();
                self.two_urls = TwoUrls::default();
                self.own_lines = OwnLines::default();
                if scope != CORPUS_SCOPE {
                    self.hosts += 1;
                }
            }
            self.group = Some((scope, line));
            (self.distinct, self.before, self.after, self.repeated_on) = (0, 0, 0, 0);
            self.page_host = None;
            self.own_lines.urls.clear();
        }
        match distinct & NEIGHBOUR_BITS {
            BEFORE if scope == CORPUS_SCOPE => self.before += 1,
            AFTER if scope == CORPUS_SCOPE => self.after += 1,
            PAGE if scope == CORPUS_SCOPE => {
                let host = distinct >> 32;
                match &mut self.page_host {
                    Some((last, pages)) if *last == host => {
                        *pages += 1;
                        if *pages == 2 {
                            self.repeated_on += 1;
                        }
                    }
                    other => *other = Some((host, 1)),
                }
            }
            _ => {
                if self.distinct == 0 {
                    self.first = distinct;
                }
                self.distinct += 1;
                let by_url = scope != CORPUS_SCOPE && line > PAGE_MARKER && line & CONTENT_BIT == 0;
                if by_url && self.reads_own_lines() {
                    self.own_lines.urls.push(distinct);
                }
            }
        }
    }

    /// Ends the input.
    pub fn finish(&mut self, emit: &mut impl FnMut(Lesson)) {
        self.close(emit);
        self.group = None;
        emit(Lesson::Hosts(self.hosts));
        self.hosts = 0;
    }

    fn close(&mut self, emit: &mut impl FnMut(Lesson)) {
        let Some((scope, line)) = self.group else { return };
        if scope == CORPUS_SCOPE {
            let contexts = self.before.min(self.after);
            if self.distinct.min(contexts) >= SHARED_MIN_HOSTS {
                let repeated_on = self.repeated_on;
                emit(Lesson::Passage { line, hosts: self.distinct, contexts, repeated_on });
            }
        } else if line == URL_MARKER {
            self.host_urls = self.distinct;
        } else if line == PAGE_MARKER {
            self.host_pages = self.distinct;
        } else if line & CONTENT_BIT == 0 {
            if self.distinct == 1 && self.reads_own_lines() {
                self.own_lines.owner(self.first);
            }
            if self.rule.host_line(self.distinct, self.host_urls) {
                self.by_url.insert(line | CONTENT_BIT);
                self.own_lines.line(line | CONTENT_BIT);
            } else if self.host_urls == 2 && self.host_pages == 1 {
                self.two_urls.line(line, self.distinct, self.first);
            }
        } else {
            // Lines with the content bit come after every line counted by URL.
            let template = self.two_urls.settle();
            self.by_url.extend(template);
            self.own_lines.settle(self.rule.min_pages, self.host_urls);
            // On enough URLs, and on pages of every identity of the host, or of all but
            // one (a teaser is on every page but its story's); or, where the host's pages
            // collapse into one or two identities, on enough URLs with lines of their own.
            let identities = self.distinct + u32::from(self.host_pages >= 3);
            if self.rule.host_line_by_content(self.distinct, self.host_pages)
                || (identities >= self.host_pages && self.by_url.contains(&line))
                || self.own_lines.template.contains(&line)
            {
                emit(Lesson::Entry(entry(scope, line)));
            }
        }
    }
}
