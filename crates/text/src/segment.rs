//! Word segmentation for mixed text: jieba for runs of Han characters, Unicode word
//! boundaries (UAX #29) for everything else, so `我们 love Rust程序` gives
//! `我们, love, rust, 程序` after normalisation.

use std::sync::Arc;

use jieba_rs::Jieba;
use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
use unicode_segmentation::UnicodeSegmentation;

/// Version of the segmentation dictionary, recorded in output metadata because it shapes
/// features and therefore signatures.
pub const JIEBA_DICTIONARY: &str =
    "jieba-rs 0.11 embedded default dictionary (dict.txt, 349,045 words)";

/// Whether `c` is a Han ideograph (CJK Unified Ideographs and extensions, compatibility
/// ideographs).
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F | 0x30000..=0x323AF)
}

/// Whether `c` is written without spaces between words: Han, Hiragana and Katakana.
pub fn is_unspaced_script(c: char) -> bool {
    is_han(c) || matches!(c as u32, 0x3040..=0x30FF | 0x31F0..=0x31FF)
}

/// Whether `c` is punctuation or a symbol (Unicode general categories P* and S*).
pub fn is_punctuation_or_symbol(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    matches!(
        c.general_category_group(),
        GeneralCategoryGroup::Punctuation | GeneralCategoryGroup::Symbol
    )
}

/// Splits mixed Chinese and other text into words. Cheap to clone: the dictionary is
/// shared.
#[derive(Clone)]
pub struct Segmenter {
    jieba: Arc<Jieba>,
    hmm: bool,
}

impl std::fmt::Debug for Segmenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segmenter").field("hmm", &self.hmm).finish_non_exhaustive()
    }
}

impl Segmenter {
    /// Loads jieba's embedded dictionary (about 0.1-0.2 s and 33 MB); build one per job and
    /// clone it into workers. `hmm` lets jieba's HMM join characters it has no word for.
    pub fn new(hmm: bool) -> Self {
        Segmenter { jieba: Arc::new(Jieba::new()), hmm }
    }

    /// Calls `f` with each word of `text`, in order. Punctuation, symbols and whitespace are
    /// not words.
    pub fn for_each_word<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) {
        let mut run_start = 0;
        let mut run_is_han = None;
        for (i, c) in text.char_indices() {
            let han = is_han(c);
            match run_is_han {
                Some(h) if h != han => {
                    self.run_words(&text[run_start..i], h, &mut f);
                    run_start = i;
                }
                _ => {}
            }
            run_is_han = Some(han);
        }
        if let Some(h) = run_is_han {
            self.run_words(&text[run_start..], h, &mut f);
        }
    }

    fn run_words<'t>(&self, run: &'t str, han: bool, f: &mut impl FnMut(&'t str)) {
        if han {
            for token in self.jieba.cut(run, self.hmm) {
                f(token.word);
            }
        } else {
            for word in run.unicode_words() {
                if !word.chars().all(is_punctuation_or_symbol) {
                    f(word);
                }
            }
        }
    }

    /// The words of `text`, allocating.
    pub fn words<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        self.for_each_word(text, |w| out.push(w));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_text_uses_jieba_for_han_and_uax29_for_the_rest() {
        let seg = Segmenter::new(true);
        assert_eq!(seg.words("我们 love Rust程序"), vec!["我们", "love", "Rust", "程序"]);
        assert_eq!(seg.words("中华人民共和国成立了"), vec!["中华人民共和国", "成立", "了"]);
        assert_eq!(seg.words("don't stop, 3.14!"), vec!["don't", "stop", "3.14"]);
        assert!(seg.words("，。！—— …").is_empty());
    }

    #[test]
    fn character_classes() {
        assert!(is_han('中') && is_han('𠀀') && !is_han('あ') && !is_han('a'));
        assert!(is_unspaced_script('あ') && is_unspaced_script('カ') && !is_unspaced_script('한'));
        for c in [',', '，', '。', '「', '€', '—', '…', '！'] {
            assert!(is_punctuation_or_symbol(c), "{c}");
        }
        for c in ['a', '1', '中', '한', ' '] {
            assert!(!is_punctuation_or_symbol(c), "{c}");
        }
    }
}
