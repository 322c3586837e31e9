//! Markup out of text that is HTML: whether a text is HTML at all (decided per document),
//! and its text with tags, comments and the content of non-text elements removed,
//! following the WHATWG rules for where elements end (see `looks_like_html` and
//! `strip_markup`).

/// Elements whose content is never text: raw text (scripts, styles) and embedded or
/// fallback content. Without an end tag, one ends at the next tag.
const SKIP_CONTENT: &[&str] =
    &["script", "style", "noscript", "template", "iframe", "object", "noembed", "noframes", "xmp"];

/// Foreign elements (SVG, MathML): their content is not text; `<svg/>` is empty, and an
/// unclosed one ends at an HTML element that breaks out of foreign content.
const FOREIGN: &[&str] = &["svg", "math"];

/// Start tags that end foreign content (WHATWG, "parsing tokens in foreign content").
const BREAKOUT: &[&str] = &[
    "b",
    "big",
    "blockquote",
    "body",
    "br",
    "center",
    "code",
    "dd",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "hr",
    "i",
    "img",
    "li",
    "listing",
    "menu",
    "meta",
    "nobr",
    "ol",
    "p",
    "pre",
    "ruby",
    "s",
    "small",
    "span",
    "strong",
    "strike",
    "sub",
    "sup",
    "table",
    "tt",
    "u",
    "ul",
    "var",
];

/// Elements that may be in the head; any other element, or text, ends it (WHATWG, "in
/// head" insertion mode).
const HEAD: &[&str] = &[
    "base", "basefont", "bgsound", "link", "meta", "title", "noscript", "noframes", "style",
    "script", "template",
];

/// Inline elements: removing them must not split a word (`wo<b>rd</b>` is `word`).
const INLINE: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "em", "font", "i", "kbd",
    "mark", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub",
    "sup", "time", "tt", "u", "var", "wbr",
];

/// HTML elements, by name: a text is HTML when it uses them as markup.
const ELEMENTS: &[&str] = &[
    "a",
    "abbr",
    "address",
    "area",
    "article",
    "aside",
    "audio",
    "b",
    "base",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "body",
    "br",
    "button",
    "canvas",
    "caption",
    "center",
    "cite",
    "code",
    "col",
    "colgroup",
    "data",
    "datalist",
    "dd",
    "del",
    "details",
    "dfn",
    "dialog",
    "div",
    "dl",
    "dt",
    "em",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "font",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hr",
    "html",
    "i",
    "iframe",
    "img",
    "input",
    "ins",
    "kbd",
    "label",
    "legend",
    "li",
    "link",
    "main",
    "map",
    "mark",
    "math",
    "menu",
    "meta",
    "meter",
    "nav",
    "noscript",
    "object",
    "ol",
    "optgroup",
    "option",
    "output",
    "p",
    "picture",
    "pre",
    "progress",
    "q",
    "rp",
    "rt",
    "ruby",
    "s",
    "samp",
    "script",
    "section",
    "select",
    "small",
    "source",
    "span",
    "strike",
    "strong",
    "style",
    "sub",
    "summary",
    "sup",
    "svg",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "time",
    "title",
    "tr",
    "track",
    "tt",
    "u",
    "ul",
    "var",
    "video",
    "wbr",
];

/// Void elements: markup on their own, with no end tag.
const VOID: &[&str] = &["br", "hr", "img", "meta", "link", "input", "wbr", "source", "area"];

/// Whether `text` is HTML rather than prose that mentions a tag: it starts with markup (a
/// tag, comment or doctype), or uses an element as markup: a void element (`<br>`), or an
/// element opened and closed later (`<p>...</p>`). A lone `<script>` in a post about HTML
/// is not enough.
pub(crate) fn looks_like_html(text: &str) -> bool {
    let trimmed = text.trim_start();
    if trimmed.starts_with('<') && parse_tag(trimmed).is_some_and(|t| t.name.is_some() || t.markup)
    {
        return true;
    }
    let bytes = text.as_bytes();
    let mut opened = [false; ELEMENTS.len()];
    let mut i = 0;
    while let Some(offset) = memchr_lt(&bytes[i..]) {
        let start = i + offset;
        i = start + 1;
        let Some(tag) = parse_tag(&text[start..]) else { continue };
        let Some(k) = tag.name.and_then(|n| ELEMENTS.iter().position(|e| *e == n)) else {
            continue;
        };
        if VOID.contains(&ELEMENTS[k]) || (tag.closing && opened[k]) {
            return true;
        }
        opened[k] |= !tag.closing;
    }
    false
}

/// Removes tags, comments, and the content of non-text elements (scripts, styles, the
/// head); block-level tags become a space. A `<` that does not open a tag is kept as text.
/// Elements end where the WHATWG tree construction ends them, except that a raw-text
/// element without its end tag ends at the next tag: nothing after it is lost.
pub(crate) fn strip_markup(text: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len());
    let bytes = text.as_bytes();
    // Per element of SKIP_CONTENT and FOREIGN: no end tag at or after this offset, so a
    // later search for one can stop at once (keeps stripping linear in the text).
    let mut no_end_from = [usize::MAX; SKIP_CONTENT.len() + FOREIGN.len()];
    let mut title_no_end_from = usize::MAX;
    let mut in_head = false;
    let mut i = 0;
    let mut copied = 0;
    while let Some(offset) = memchr_lt(&bytes[i..]) {
        let start = i + offset;
        let Some(tag) = parse_tag(&text[start..]) else {
            i = start + 1;
            continue;
        };
        let before = &text[copied..start];
        if in_head && !before.trim().is_empty() {
            in_head = false; // text ends the head, and is kept
        }
        if !in_head {
            out.push_str(before);
        }
        let mut end = start + tag.len;
        let name = tag.name.unwrap_or("");
        if in_head && !tag.closing && !HEAD.contains(&name) {
            in_head = false; // an element that cannot be in the head ends it
        }
        if name == "head" {
            in_head = !tag.closing;
        } else if !tag.closing && !tag.self_closing {
            if let Some(k) = SKIP_CONTENT.iter().position(|n| *n == name) {
                end = skip_to_end(text, end, name, &mut no_end_from[k], None);
            } else if let Some(k) = FOREIGN.iter().position(|n| *n == name) {
                let slot = &mut no_end_from[SKIP_CONTENT.len() + k];
                end = skip_to_end(text, end, name, slot, Some(BREAKOUT));
            } else if in_head && name == "title" {
                end = skip_to_end(text, end, name, &mut title_no_end_from, None);
            }
        }
        if !tag.inline {
            out.push(' ');
        }
        i = end;
        copied = end;
    }
    if !in_head || !text[copied..].trim().is_empty() {
        out.push_str(&text[copied..]);
    }
}

/// Where the content of element `name`, starting at `from`, ends: past its end tag; without
/// one, at the next tag (raw text), or for foreign content at the next tag named in
/// `breakout` (else the end of the text). `no_end_from` remembers that no end tag follows.
fn skip_to_end(
    text: &str,
    from: usize,
    name: &str,
    no_end_from: &mut usize,
    breakout: Option<&[&str]>,
) -> usize {
    if from < *no_end_from {
        match find_close_tag(text, from, name) {
            Some(end) => return end,
            None => *no_end_from = from,
        }
    }
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(p) = memchr_lt(&bytes[i..]) {
        let at = i + p;
        if let Some(tag) = parse_tag(&text[at..]) {
            match breakout {
                None => return at,
                Some(names) if !tag.closing && tag.name.is_some_and(|n| names.contains(&n)) => {
                    return at;
                }
                Some(_) => {}
            }
        }
        i = at + 1;
    }
    text.len()
}

fn memchr_lt(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'<')
}

/// Longest tag recognised, in bytes; a `<` with no `>` within this distance is text.
pub(crate) const MAX_TAG_BYTES: usize = 4096;

struct Tag {
    /// Bytes of the tag, `<` to `>` inclusive.
    len: usize,
    inline: bool,
    /// An end tag (`</p>`).
    closing: bool,
    /// Written `<name/>`.
    self_closing: bool,
    /// A comment, doctype or processing instruction.
    markup: bool,
    /// The element's name, lowercase, when it is an HTML element this module knows.
    name: Option<&'static str>,
}

/// Parses a tag, comment, doctype or processing instruction at the start of `s` (which
/// begins with `<`). Returns `None` when `s` does not start markup.
fn parse_tag(s: &str) -> Option<Tag> {
    let b = s.as_bytes();
    if let Some(body) = s.strip_prefix("<!--") {
        let len = body.find("-->").map_or(s.len(), |p| 4 + p + 3);
        return Some(Tag {
            len,
            inline: true,
            closing: false,
            self_closing: false,
            markup: true,
            name: None,
        });
    }
    let second = *b.get(1)?;
    let closing = second == b'/';
    let name_start = if closing { 2 } else { 1 };
    let first = *b.get(name_start)?;
    let is_decl = !closing && (second == b'!' || second == b'?');
    if !is_decl && !first.is_ascii_alphabetic() {
        return None;
    }
    // A tag ends within MAX_TAG_BYTES; looking no further keeps stripping linear in the
    // text even when it is full of `<` that open nothing.
    let window = &b[..b.len().min(MAX_TAG_BYTES)];
    let close = window.iter().position(|&c| c == b'>')?;
    // A tag never spans a blank paragraph; this guards against a stray `<` in prose.
    if s[..close].contains("\n\n") {
        return None;
    }
    let name_end = s[name_start..close]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
        .map_or(close, |p| name_start + p);
    let raw = &s[name_start..name_end];
    let name = if is_decl {
        None
    } else {
        ELEMENTS
            .iter()
            .chain(FOREIGN)
            .chain(SKIP_CONTENT)
            .copied()
            .find(|e| e.eq_ignore_ascii_case(raw))
    };
    let inline = is_decl || name.is_some_and(|n| INLINE.contains(&n));
    let self_closing = s[..close].ends_with('/');
    Some(Tag { len: close + 1, inline, closing, self_closing, markup: is_decl, name })
}

/// Byte offset just past `</name ...>` at or after `from`, matching the name
/// case-insensitively.
fn find_close_tag(text: &str, from: usize, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(p) = memchr_lt(&bytes[i..]) {
        let at = i + p;
        let rest = &bytes[at..];
        if rest.len() > name.len() + 2
            && rest[1] == b'/'
            && rest[2..2 + name.len()].eq_ignore_ascii_case(name.as_bytes())
        {
            let end = text[at..].find('>').map_or(text.len(), |q| at + q + 1);
            return Some(end);
        }
        i = at + 1;
    }
    None
}
