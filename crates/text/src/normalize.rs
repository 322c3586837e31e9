//! Normalisation: markup removal, NFKC, Han script and variant folding, full-width folding,
//! case folding, whitespace.
//!
//! Each step can be switched off in the job file. The output is the text whose hash decides
//! exact duplicates and from which features are taken.

use serde::{Deserialize, Serialize};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use crate::han_fold::HanFold;
use crate::markup::{looks_like_html, strip_markup};
use crate::segment::is_han;

/// Which normalisation steps run, in this order: `html`, `nfkc`, `han_fold`, `width`,
/// `case_fold`, `collapse_whitespace`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NormalizeConfig {
    /// Remove HTML tags, comments, scripts and styles, and decode character references.
    pub html: bool,
    /// Unicode NFKC (compatibility composition): folds ligatures, full-width forms, circled
    /// digits and similar variants.
    pub nfkc: bool,
    /// Fold traditional Chinese characters and variant forms to simplified characters, one
    /// character at a time (OpenCC's character tables, without its phrase rules), so that
    /// a text in either script, or with variant characters, is one text.
    pub han_fold: bool,
    /// Fold full-width ASCII (U+FF01..U+FF5E) and the ideographic space to half-width; a
    /// subset of what NFKC does, for when NFKC is off.
    pub width: bool,
    /// Unicode lowercase mapping (case folding for every script that has case).
    pub case_fold: bool,
    /// Collapse runs of whitespace to one space and trim both ends.
    pub collapse_whitespace: bool,
}

impl Default for NormalizeConfig {
    fn default() -> Self {
        NormalizeConfig {
            html: true,
            nfkc: true,
            han_fold: true,
            width: true,
            case_fold: true,
            collapse_whitespace: true,
        }
    }
}

/// Applies a [`NormalizeConfig`]. Cheap to clone; holds no state between documents.
#[derive(Clone, Debug)]
pub struct Normalizer {
    config: NormalizeConfig,
    /// What each ASCII byte becomes under `config`: the byte in the low eight bits, and
    /// bit 8 when it is whitespace that collapses.
    ascii: [u16; 128],
    /// The Han folding table, when `config.han_fold` is on.
    han_fold: Option<&'static HanFold>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Normalizer::new(NormalizeConfig::default())
    }
}

/// Reusable buffers for [`Normalizer::normalize_into`].
#[derive(Debug, Default)]
pub struct NormalizeScratch {
    a: String,
    b: String,
    ascii: Vec<u8>,
}

impl Normalizer {
    /// A normaliser running the steps `config` enables.
    pub fn new(config: NormalizeConfig) -> Self {
        let ascii = std::array::from_fn(|b| {
            let byte = b as u8;
            if config.collapse_whitespace && is_ascii_white_space(byte) {
                0x100 | u16::from(b' ')
            } else if config.case_fold {
                u16::from(byte.to_ascii_lowercase())
            } else {
                u16::from(byte)
            }
        });
        let han_fold = config.han_fold.then(HanFold::get);
        Normalizer { config, ascii, han_fold }
    }

    /// The configuration.
    pub fn config(&self) -> &NormalizeConfig {
        &self.config
    }

    /// Normalises `text` into `out` (cleared first).
    pub fn normalize_into(&self, text: &str, out: &mut String, scratch: &mut NormalizeScratch) {
        let NormalizeScratch { a, b, ascii } = scratch;
        let mut current: &str = text;
        if self.config.html && (text.contains('<') || text.contains('&')) {
            if text.contains('<') && looks_like_html(text) {
                strip_markup(current, a);
            } else {
                a.clear();
                a.push_str(current);
            }
            let decoded = html_escape::decode_html_entities(a.as_str());
            if let std::borrow::Cow::Owned(decoded) = decoded {
                *a = decoded;
            }
            current = a.as_str();
        }
        if self.config.nfkc && !current.is_ascii() {
            nfkc_into(current, b);
            current = b.as_str();
        }
        out.clear();
        out.reserve(current.len());
        let (collapse, case_fold) = (self.config.collapse_whitespace, self.config.case_fold);
        // Whether `out` is empty or ends with a space that collapsing wrote: whitespace
        // then adds nothing. A space written last is taken back at the end.
        let mut space_before = true;
        let mut rest = current;
        while !rest.is_empty() {
            let run = ascii_prefix(rest);
            if run > 0 {
                // ASCII: width folding does nothing there, and case folding is ASCII
                // lowercasing, so a table maps each byte.
                push_ascii(&rest[..run], &self.ascii, &mut space_before, ascii, out);
                rest = &rest[run..];
                continue;
            }
            // A run of Han ideographs is copied whole: no step but `han_fold` changes them.
            let han = match self.han_fold {
                Some(table) => table.push_han_run(rest, out),
                None => {
                    let han = han_prefix(rest);
                    out.push_str(&rest[..han]);
                    han
                }
            };
            if han > 0 {
                rest = &rest[han..];
                space_before = false;
                continue;
            }
            let mut chars = rest.chars();
            let Some(c) = chars.next() else { break };
            rest = chars.as_str();
            let c = if self.config.width { fold_width(c) } else { c };
            if collapse && c.is_whitespace() {
                if !space_before {
                    out.push(' ');
                }
                space_before = true;
                continue;
            }
            if case_fold && has_case(c) {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
            space_before = false;
        }
        if collapse && out.ends_with(' ') {
            out.pop();
        }
    }

    /// Normalises `text`, allocating.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::new();
        self.normalize_into(text, &mut out, &mut NormalizeScratch::default());
        out
    }
}

/// NFKC of `text` into `out` (cleared first), running the normaliser only where it can
/// change something. Normalisation never looks across the start of a [`stable`]
/// character, so the text is normalised piece by piece: runs of stable characters are
/// copied, and each run of other characters is normalised together with the character
/// before it (something may compose with it). A lone full-width form or ideographic space
/// between stable characters is folded directly, as NFKC would.
fn nfkc_into(text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    let mut copied = 0;
    let mut rest = text;
    while let Some(start) = rest.find(|c| !stable(c)) {
        let at = text.len() - rest.len() + start;
        let run = &text[at..];
        let end = at + run.find(stable).unwrap_or(run.len());
        let mut chars = text[at..end].chars();
        if let (Some(c), None) = (chars.next(), chars.next())
            && matches!(c, '\u{FF01}'..='\u{FF5E}' | '\u{3000}')
        {
            out.push_str(&text[copied..at]);
            out.push(fold_width(c));
        } else {
            // Start at the character before the run, when there is one.
            let from = text[copied..at].char_indices().next_back().map_or(at, |(i, _)| copied + i);
            out.push_str(&text[copied..from]);
            let piece = &text[from..end];
            if is_nfkc_quick(piece.chars()) == IsNormalized::Yes {
                out.push_str(piece);
            } else {
                out.extend(piece.nfkc());
            }
        }
        copied = end;
        rest = &text[end..];
    }
    out.push_str(&text[copied..]);
}

/// Characters that NFKC leaves alone whatever surrounds them (quick check "yes", combining
/// class 0, and composing with nothing before them): ASCII, the CJK unified ideographs and
/// the common CJK punctuation.
fn stable(c: char) -> bool {
    c.is_ascii()
        || matches!(c as u32, 0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x3001..=0x3002 | 0x3008..=0x3011)
}

/// Appends the ASCII text `run` to `out` with each byte mapped through `table` (the byte
/// it becomes in the low eight bits, and bit 8 when that is a space that collapses),
/// leaving out a space that follows a space. `space_before` says whether `out` ends with
/// such a space (or is to be treated so) and is updated. Branch-free a byte: every byte is
/// written to `scratch`, and the write position does not move past a repeated space.
pub(crate) fn push_ascii(
    run: &str,
    table: &[u16; 128],
    space_before: &mut bool,
    scratch: &mut Vec<u8>,
    out: &mut String,
) {
    scratch.clear();
    scratch.resize(run.len(), 0);
    let buf = scratch.as_mut_slice();
    let mut len = 0;
    let mut before = usize::from(*space_before);
    for &byte in run.as_bytes() {
        let mapped = table[usize::from(byte & 0x7F)];
        let space = usize::from(mapped >> 8);
        buf[len] = mapped as u8;
        len += 1 - (space & before);
        before = space;
    }
    *space_before = before == 1;
    out.push_str(std::str::from_utf8(&buf[..len]).expect("ASCII"));
}

/// Length in bytes of the prefix of `text` that is Han ideographs ([`is_han`]).
pub(crate) fn han_prefix(text: &str) -> usize {
    text.find(|c: char| !is_han(c)).unwrap_or(text.len())
}

/// Length in bytes of the ASCII prefix of `text`, eight bytes at a time.
pub(crate) fn ascii_prefix(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut words = bytes.chunks_exact(8);
    let mut len = 0;
    for word in words.by_ref() {
        let high = u64::from_le_bytes(word.try_into().expect("8 bytes")) & 0x8080_8080_8080_8080;
        if high != 0 {
            return len + (high.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    len + words.remainder().iter().take_while(|b| b.is_ascii()).count()
}

/// ASCII whitespace as [`char::is_whitespace`] has it (which, unlike
/// [`u8::is_ascii_whitespace`], includes the vertical tab).
const fn is_ascii_white_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t'..=b'\r')
}

/// False for characters that certainly have no lowercase mapping: the blocks from Hiragana
/// to Yi (CJK ideographs among them) and Hangul syllables. Lowercasing looks each
/// character up in a table; most characters of Chinese text skip that.
fn has_case(c: char) -> bool {
    !matches!(c as u32, 0x3040..=0xA4CF | 0xAC00..=0xD7A3)
}

/// Full-width ASCII to ASCII, and the ideographic space to a space.
fn fold_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::markup::MAX_TAG_BYTES;

    fn norm(s: &str) -> String {
        Normalizer::default().normalize(s)
    }

    #[test]
    fn folds_width_case_and_space() {
        assert_eq!(norm("ＡＢＣ１２３，Ｈｅｌｌｏ　World"), "abc123,hello world");
        assert_eq!(norm("  Straße\n\t ÉCOLE  "), "straße école");
        assert_eq!(norm("ﬁle ①"), "file 1");
    }

    #[test]
    fn strips_markup_and_entities() {
        assert_eq!(norm("<p>Hello&nbsp;<b>wo</b>rld</p><p>again</p>"), "hello world again");
        assert_eq!(norm("a<script>var x = '<p>';</script>b"), "a b");
        assert_eq!(norm("x<STYLE type=text/css>p{}</style>y"), "x y");
        assert_eq!(norm("<!-- hidden -->shown"), "shown");
        assert_eq!(norm("1 < 2 and 3 > 2"), "1 < 2 and 3 > 2");
        assert_eq!(norm("a &lt;b&gt; &amp;&#x4E2D;&#25991;"), "a <b> &中文");
        assert_eq!(
            norm("<!DOCTYPE html><html><head><title>t</title></head><body>本文</body>"),
            "本文"
        );
        assert_eq!(norm("unclosed <div"), "unclosed <div");
    }

    #[test]
    fn markup_is_stripped_only_from_html_and_never_takes_the_rest() {
        // Prose about HTML keeps every word: a literal tag is not markup.
        for tag in ["<script>", "<style>", "<head>", "<svg>", "<template>", "<noscript>"] {
            let a = format!("Put a {tag} element in the page. Then the first tutorial goes on.");
            let b = format!("Put a {tag} element in the page. Then a different ending.");
            assert_eq!(norm(&a), a.to_lowercase(), "{tag}");
            assert_ne!(norm(&a), norm(&b), "{tag}: two documents stay apart");
        }
        assert!(!looks_like_html("if a < b and c > d, write <b"));
        assert!(looks_like_html("line one<br>line two"));
        assert!(looks_like_html("see <em>this</em>"));
        assert!(looks_like_html("  <div class=x>text"));
        assert_eq!(norm("line one<br>line two"), "line one line two");
        // In HTML, a raw-text element without its end tag ends at the next tag.
        assert_eq!(norm("<p>a</p><script>var x = 1;<p>kept</p>"), "a kept");
        assert_eq!(norm("<p>a</p><style>p {}<div>kept</div> too"), "a kept too");
        // The head ends at the body, at an element that cannot be in it, or at text.
        assert_eq!(norm("<html><head><title>t</title><body>本文"), "本文");
        assert_eq!(norm("<head><meta charset=utf-8>text</p>"), "text");
        assert_eq!(norm("<head><title>t</title><div>div</div>"), "div");
        // `<svg/>` is empty; an unclosed `<svg>` ends at an HTML element.
        assert_eq!(norm("<p>x</p><svg/><p>y</p>"), "x y");
        assert_eq!(norm("<p>x</p><svg><path d='m0'/><p>y</p>"), "x y");
        assert_eq!(norm("<p>x</p><svg><text>icon</text></svg><p>y</p>"), "x y");
    }

    #[test]
    fn stripping_is_linear_in_unclosed_elements() {
        // Thousands of unclosed scripts: each looks for its end tag once at most.
        let text = format!("<p>start</p>{}", "<script>x <i>y</i> ".repeat(20_000));
        let out = norm(&text);
        assert!(out.starts_with("start y y"), "{}", &out[..40]);
    }

    #[test]
    fn stripping_is_linear_in_stray_angle_brackets() {
        // 300,000 `<` that open no tag, with one `>` at the very end: each is given up after
        // MAX_TAG_BYTES, so this takes a fraction of a second (a scan to the end for each
        // `<` took minutes).
        let text = format!("{}>", "if a<b then c ".repeat(300_000));
        let out = norm(&text);
        assert!(out.starts_with("if a<b then c if a<b"));
        // Only the first `<` within MAX_TAG_BYTES of the `>` opens a tag (tag soup, as a
        // browser reads it); everything before it is text.
        assert!(out.len() >= text.len() - MAX_TAG_BYTES, "{} of {}", out.len(), text.len());
    }

    #[test]
    fn every_step_can_be_switched_off() {
        let off = Normalizer::new(NormalizeConfig {
            html: false,
            nfkc: false,
            han_fold: false,
            width: false,
            case_fold: false,
            collapse_whitespace: false,
        });
        let s = "<b>ＡＢ</b>  Ｃ 國語";
        assert_eq!(off.normalize(s), s);
        let width_only = Normalizer::new(NormalizeConfig { width: true, ..off.config().clone() });
        assert_eq!(width_only.normalize(s), "<b>AB</b>  C 國語");
        let han_only = Normalizer::new(NormalizeConfig { han_fold: true, ..off.config().clone() });
        assert_eq!(han_only.normalize(s), "<b>ＡＢ</b>  Ｃ 国语");
    }

    #[test]
    fn scripts_and_variants_of_one_text_are_one_text() {
        // The opening of 將進酒 in the two editions' characters and in simplified ones.
        let traditional = "君不見黃河之水天上來，奔流到海不復回。";
        let simplified = "君不见黄河之水天上来，奔流到海不复回。";
        assert_eq!(norm(traditional), norm(simplified));
        // Variant characters of one word, and a compatibility ideograph.
        assert_eq!(norm("眞正的閒人"), norm("真正的閑人"));
        assert_eq!(norm("\u{F900}"), norm("\u{8C48}"));
    }

    /// The naive twin: NFKC of the whole text when its quick check fails, then one
    /// character at a time.
    fn naive(config: &NormalizeConfig, text: &str) -> String {
        let nfkc: String;
        let mut current = text;
        if config.nfkc && is_nfkc_quick(current.chars()) != IsNormalized::Yes {
            nfkc = current.nfkc().collect();
            current = &nfkc;
        }
        let mut out = String::new();
        let mut pending_space = false;
        let table = crate::han_fold::HanFold::get();
        for c in current.chars() {
            let c = if config.han_fold { table.fold(c).unwrap_or(c) } else { c };
            let c = if config.width { fold_width(c) } else { c };
            if config.collapse_whitespace && c.is_whitespace() {
                pending_space = !out.is_empty();
                continue;
            }
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            if config.case_fold {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn ascii_prefix_stops_at_the_first_other_character() {
        for text in ["", "abc", "abcdefgh", "abcdefghij", "abcdefg中", "中abc", "abcdefghijk€x"]
        {
            let expect = text.find(|c: char| !c.is_ascii()).unwrap_or(text.len());
            assert_eq!(ascii_prefix(text), expect, "{text:?}");
        }
    }

    #[test]
    fn characters_said_to_have_no_case_have_none() {
        for c in (0x3040..=0xA4CF).chain(0xAC00..=0xD7A3).filter_map(char::from_u32) {
            assert!(!has_case(c));
            assert!(c.to_lowercase().eq([c]), "{c:?} has a lowercase mapping");
        }
    }

    #[test]
    fn stable_characters_are_left_alone_by_nfkc() {
        use unicode_normalization::char::canonical_combining_class;
        for c in (0..=0x10FFFF).filter_map(char::from_u32).filter(|c| stable(*c)) {
            assert_eq!(canonical_combining_class(c), 0, "{c:?}");
            assert_eq!(is_nfkc_quick([c].into_iter()), IsNormalized::Yes, "{c:?}");
            // Nothing composes with a stable character as its second part.
            let pair: String = ['e', c].iter().collect();
            assert_eq!(pair.nfkc().collect::<String>(), pair, "{c:?}");
        }
    }

    #[test]
    fn piecewise_nfkc_is_nfkc() {
        let samples = [
            "中文，测试！ＡＢＣ　结束。",
            "e\u{0301} café ﬁle ① 中\u{0301}文",
            "……“引号”——《书名》",
            "\u{0301}start with a mark",
            "한국어 텍스트 and ｶﾀｶﾅ",
            "ａ\u{0301}ｂ",
        ];
        for text in samples {
            let mut out = String::new();
            nfkc_into(text, &mut out);
            assert_eq!(out, text.nfkc().collect::<String>(), "{text:?}");
        }
    }

    #[test]
    fn width_folding_before_nfkc_changes_nothing() {
        for c in ('\u{FF01}'..='\u{FF5E}').chain(['\u{3000}']) {
            let alone: String = c.to_string().nfkc().collect();
            assert_eq!(alone, fold_width(c).to_string(), "{c:?}");
            let combined: String = format!("{c}\u{0301}").nfkc().collect();
            let folded: String = format!("{}\u{0301}", fold_width(c)).nfkc().collect();
            assert_eq!(combined, folded, "{c:?} before a combining mark");
        }
    }

    proptest! {
        #[test]
        fn piecewise_nfkc_matches_nfkc(s in "[a-e 中文字，。…“”ＡＢ　ﬁ①é\u{0301}\u{0308}\u{0341}한ｶﾞ\u{3099}\u{FF9E}]{0,40}") {
            let mut out = String::new();
            nfkc_into(&s, &mut out);
            prop_assert_eq!(out, s.nfkc().collect::<String>());
        }

        #[test]
        fn matches_naive_twin(
            s in "[a-zA-Z0-9 \t\n\x0b,.!?中文字國語眞爲\u{F900}\u{2F800}ＡＢ，。　ﬁ①ÉéΣσς\u{0301}Ａ\u{3000}\u{00A0}]{0,60}",
            nfkc in any::<bool>(), han_fold in any::<bool>(), width in any::<bool>(),
            case_fold in any::<bool>(), collapse_whitespace in any::<bool>(),
        ) {
            let config =
                NormalizeConfig { html: false, nfkc, han_fold, width, case_fold, collapse_whitespace };
            prop_assert_eq!(Normalizer::new(config.clone()).normalize(&s), naive(&config, &s));
        }

        #[test]
        fn normalisation_is_idempotent_on_plain_text(s in "[a-zA-Z0-9 \\t\\n,.!?中文字國語眞爲ＡＢ　]{0,60}") {
            let once = norm(&s);
            prop_assert_eq!(norm(&once), once.clone());
            prop_assert!(!once.starts_with(' ') && !once.ends_with(' '));
            prop_assert!(!once.contains("  "));
        }
    }
}
