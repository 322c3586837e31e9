//! Built-in stop words: common English and Chinese function words, dropped from word and
//! word-shingle features (never from character n-grams).
//!
//! The English list follows the classic SMART/NLTK core of articles, pronouns, auxiliaries
//! and prepositions; the Chinese list holds frequent particles, pronouns, conjunctions and
//! prepositions. Both are matched after normalisation (lowercase, NFKC).

/// English stop words.
pub const ENGLISH: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Chinese stop words (simplified and traditional forms).
pub const CHINESE: &[&str] = &[
    "的", "了", "是", "在", "和", "与", "與", "及", "或", "也", "都", "就", "而", "并", "並", "但",
    "又", "还", "還", "把", "被", "对", "對", "从", "從", "向", "于", "於", "以", "为", "為", "因",
    "所", "之", "其", "此", "这", "這", "那", "个", "個", "些", "着", "著", "过", "過", "吗", "嗎",
    "呢", "吧", "啊", "呀", "么", "麼", "地", "得", "我", "你", "他", "她", "它", "我们", "我們",
    "你们", "你們", "他们", "他們", "她们", "她們", "它们", "它們", "自己", "一个", "一個", "没有",
    "沒有", "不", "很", "已", "已经", "已經", "会", "會", "能", "要", "将", "將", "由", "等", "各",
    "每", "如", "如果", "因为", "因為", "所以", "但是", "而且", "或者", "以及", "还是", "還是",
    "这个", "這個", "那个", "那個", "这些", "這些", "那些", "什么", "什麼", "怎么", "怎麼", "其中",
    "可以", "进行", "進行", "通过", "通過", "关于", "關於", "对于", "對於", "以上", "以下", "之一",
];

/// Whether `word` (normalised) is a built-in stop word.
pub fn is_stop_word(word: &str) -> bool {
    // Both lists are short; a linear scan over the matching script beats hashing here.
    if word.is_ascii() { ENGLISH.binary_search(&word).is_ok() } else { CHINESE.contains(&word) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_list_is_sorted_for_binary_search() {
        assert!(ENGLISH.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn finds_stop_words() {
        assert!(is_stop_word("the") && is_stop_word("的") && !is_stop_word("們"));
        assert!(!is_stop_word("neardup") && !is_stop_word("中文"));
    }
}
