//! Web pages to text: charset decoding and readable-text extraction.
//!
//! The charset is taken, as browsers do, from a byte-order mark, the HTTP `Content-Type`
//! header, a `<meta>` declaration near the top of the page, and otherwise guessed by
//! `chardetng` (Firefox's detector); `encoding_rs` decodes it. The text comes from
//! `html5gum`, a WHATWG tokenizer: scripts, styles, templates and the head (except the
//! title) are dropped, and block elements become line breaks, so one line of output is one
//! paragraph, heading, list item or table cell of the page.

use encoding_rs::Encoding;
use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Span, Tokenizer};

/// How many bytes at the top of a page are searched for a `<meta>` charset.
const META_PRESCAN_BYTES: usize = 4096;

/// Decodes a page's bytes. `http_content_type` is the HTTP header value, if any, and `tld`
/// the top-level domain of the page's URL, which helps the detector.
pub fn decode_page(
    body: &[u8],
    http_content_type: Option<&str>,
    tld: Option<&[u8]>,
) -> (String, &'static Encoding) {
    let encoding = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| http_content_type.and_then(charset_param).and_then(label))
        .or_else(|| meta_charset(&body[..body.len().min(META_PRESCAN_BYTES)]).and_then(label))
        .unwrap_or_else(|| {
            // Nothing here runs scripts, so ISO-2022-JP and UTF-8 guesses are safe to take.
            let mut detector =
                chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Allow);
            detector.feed(body, true);
            detector.guess(tld, chardetng::Utf8Detection::Allow)
        });
    let (text, used, _had_errors) = encoding.decode(body);
    (text.into_owned(), used)
}

/// The encoding of a label; UTF-16 declared inside a page means UTF-8 (WHATWG).
fn label(name: &[u8]) -> Option<&'static Encoding> {
    let e = Encoding::for_label(name)?;
    Some(if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
        encoding_rs::UTF_8
    } else {
        e
    })
}

/// The `charset` parameter of a `Content-Type` value.
pub fn charset_param(content_type: &str) -> Option<&[u8]> {
    let lower = content_type.to_ascii_lowercase();
    let at = lower.find("charset")?;
    let rest = content_type[at + "charset".len()..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start().trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == '"' || c == '\'' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest.as_bytes()[..end])
}

/// A charset declared by a `<meta charset>` or `<meta http-equiv=content-type>` tag.
fn meta_charset(head: &[u8]) -> Option<&[u8]> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = find(&lower[from..], b"<meta") {
        let start = from + p;
        let end = lower[start..].iter().position(|&b| b == b'>').map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset") {
            let mut i = start + c + b"charset".len();
            while i < end
                && (head[i].is_ascii_whitespace()
                    || head[i] == b'='
                    || head[i] == b'"'
                    || head[i] == b'\'')
            {
                i += 1;
            }
            let stop = (i..end)
                .find(|&j| {
                    matches!(head[j], b'"' | b'\'' | b';' | b'/' | b'>')
                        || head[j].is_ascii_whitespace()
                })
                .unwrap_or(end);
            if stop > i {
                return Some(&head[i..stop]);
            }
        }
        from = end.max(start + 1);
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Elements whose content is not readable text: raw text (scripts, styles) and embedded
/// or fallback content. An unclosed one ends at the next tag ([`close_unclosed`]).
const SKIPPED: &[&[u8]] = &[
    b"script",
    b"style",
    b"noscript",
    b"template",
    b"iframe",
    b"object",
    b"noembed",
    b"noframes",
    b"xmp",
];
/// Foreign (SVG, MathML) elements: their content is not page text. `<svg/>` is empty, and
/// an unclosed one ends at the next HTML element that breaks out of foreign content.
const FOREIGN: &[&[u8]] = &[b"svg", b"math"];
/// Start tags that end foreign content (WHATWG, "parsing tokens in foreign content").
const BREAKOUT: &[&[u8]] = &[
    b"b",
    b"big",
    b"blockquote",
    b"body",
    b"br",
    b"center",
    b"code",
    b"dd",
    b"div",
    b"dl",
    b"dt",
    b"em",
    b"embed",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"head",
    b"hr",
    b"i",
    b"img",
    b"li",
    b"listing",
    b"menu",
    b"meta",
    b"nobr",
    b"ol",
    b"p",
    b"pre",
    b"ruby",
    b"s",
    b"small",
    b"span",
    b"strong",
    b"strike",
    b"sub",
    b"sup",
    b"table",
    b"tt",
    b"u",
    b"ul",
    b"var",
];
/// Elements whose content the tokenizer reads as text up to their end tag (WHATWG raw text
/// and RCDATA), and the skipped elements: without an end tag each ends at the next tag.
const CLOSED_AT_NEXT_TAG: &[&str] = &[
    "script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
    "template", "object",
];

/// Where elements end, as the WHATWG tree construction says, except that an element of
/// [`CLOSED_AT_NEXT_TAG`] without its end tag ends at the next tag (a browser would read
/// the rest of the page as its content): an end tag is put there. Borrowed when every one
/// is closed.
fn close_unclosed(html: &str) -> std::borrow::Cow<'_, str> {
    let bytes = html.as_bytes();
    // One pass: where each element opens, and where it is last closed.
    let mut opened: Vec<(usize, usize)> = Vec::new();
    let mut last_end = [None; CLOSED_AT_NEXT_TAG.len()];
    for start in memchr::memchr_iter(b'<', bytes) {
        let (closing, rest) = match bytes.get(start + 1) {
            Some(b'/') => (true, &bytes[start + 2..]),
            _ => (false, &bytes[start + 1..]),
        };
        // Most tags start with another letter than these elements do: skip them at once.
        let first = rest.first().map_or(0, u8::to_ascii_lowercase);
        if !matches!(first, b's' | b't' | b'x' | b'i' | b'n' | b'o') {
            continue;
        }
        if let Some(k) = CLOSED_AT_NEXT_TAG.iter().position(|name| opens(rest, name)) {
            if closing {
                last_end[k] = Some(start);
            } else {
                opened.push((start, k));
            }
        }
    }
    let mut inserts: Vec<(usize, &str)> = Vec::new();
    let mut from = 0;
    for (start, k) in opened {
        if start < from || last_end[k].is_some_and(|e| e > start) {
            continue;
        }
        let Some(gt) = bytes[start..].iter().position(|&b| b == b'>') else { break };
        let content = start + gt + 1;
        let next = (content..bytes.len())
            .find(|&i| bytes[i] == b'<' && bytes.get(i + 1).is_some_and(|c| starts_tag(*c)))
            .unwrap_or(bytes.len());
        inserts.push((next, CLOSED_AT_NEXT_TAG[k]));
        from = next;
    }
    if inserts.is_empty() {
        return std::borrow::Cow::Borrowed(html);
    }
    let mut out = String::with_capacity(html.len() + inserts.len() * 12);
    let mut copied = 0;
    for (at, name) in inserts {
        out.push_str(&html[copied..at]);
        out.push_str("</");
        out.push_str(name);
        out.push('>');
        copied = at;
    }
    out.push_str(&html[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Whether `rest` (after `<` or `</`) starts a tag named `name`, case-insensitively.
fn opens(rest: &[u8], name: &str) -> bool {
    rest.len() > name.len()
        && rest[..name.len()].eq_ignore_ascii_case(name.as_bytes())
        && matches!(rest[name.len()], b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Whether a byte after `<` starts a tag, an end tag, a comment or a declaration.
fn starts_tag(c: u8) -> bool {
    c.is_ascii_alphabetic() || matches!(c, b'/' | b'!' | b'?')
}

/// Elements that start a new line of text.
const BLOCKS: &[&[u8]] = &[
    b"address",
    b"article",
    b"aside",
    b"blockquote",
    b"br",
    b"dd",
    b"details",
    b"dialog",
    b"div",
    b"dl",
    b"dt",
    b"fieldset",
    b"figcaption",
    b"figure",
    b"footer",
    b"form",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"header",
    b"hr",
    b"li",
    b"main",
    b"nav",
    b"ol",
    b"option",
    b"p",
    b"pre",
    b"section",
    b"summary",
    b"table",
    b"td",
    b"th",
    b"title",
    b"tr",
    b"ul",
    b"body",
    b"html",
    b"caption",
    b"center",
    b"menu",
];

/// The readable text of an HTML page: one line per block, whitespace collapsed inside lines,
/// empty lines dropped. The title, when there is one, is the first line.
///
/// Elements end where the WHATWG tree construction ends them: the head ends at the first
/// text or element that cannot be in it (so an unclosed `<head>` loses nothing), `<svg/>` is
/// empty and an unclosed `<svg>` ends at an HTML element; a script, style or other raw-text
/// element without its end tag ends at the next tag.
pub fn html_to_text(html: &str) -> String {
    let html = close_unclosed(html);
    let mut text = String::with_capacity(html.len() / 4);
    let mut skip_depth = 0usize;
    let mut foreign_depth = 0usize;
    let mut in_title = false;
    // The start tag being read, for its `/>`.
    let mut open: Vec<u8> = Vec::new();
    {
        let text = &mut text;
        let emitter =
            CallbackEmitter::new(move |event: CallbackEvent<'_>, _span: Span<()>| -> Option<()> {
                match event {
                    CallbackEvent::OpenStartTag { name } => {
                        let name = name.to_ascii_lowercase();
                        if name == b"title" {
                            in_title = true;
                        }
                        if foreign_depth > 0 && BREAKOUT.contains(&name.as_slice()) {
                            foreign_depth = 0;
                        }
                        if SKIPPED.contains(&name.as_slice()) {
                            skip_depth += 1;
                        }
                        if FOREIGN.contains(&name.as_slice()) {
                            foreign_depth += 1;
                        }
                        if BLOCKS.contains(&name.as_slice()) {
                            text.push('\n');
                        }
                        open = name;
                    }
                    // Only foreign elements can be empty by `/>`; an HTML element's `/` is
                    // ignored.
                    CallbackEvent::CloseStartTag { self_closing: true }
                        if FOREIGN.contains(&open.as_slice()) =>
                    {
                        foreign_depth = foreign_depth.saturating_sub(1);
                    }
                    CallbackEvent::EndTag { name } => {
                        let name = name.to_ascii_lowercase();
                        if name == b"title" {
                            in_title = false;
                        }
                        if SKIPPED.contains(&name.as_slice()) {
                            skip_depth = skip_depth.saturating_sub(1);
                        }
                        if FOREIGN.contains(&name.as_slice()) {
                            foreign_depth = foreign_depth.saturating_sub(1);
                        }
                        if BLOCKS.contains(&name.as_slice()) {
                            text.push('\n');
                        }
                    }
                    CallbackEvent::String { value }
                        if (skip_depth == 0 && foreign_depth == 0) || in_title =>
                    {
                        text.push_str(&String::from_utf8_lossy(value));
                    }
                    _ => {}
                }
                None
            });
        let mut emitter = emitter;
        emitter.naively_switch_states(true);
        for _ in Tokenizer::new_with_emitter(html.as_ref(), emitter) {}
    }
    tidy_lines(&text)
}

/// A web page's text as a JSON Lines or Parquet text field holds it: HTML (as crawl exports
/// often store pages, cut into lines wherever its source had them, or on one line) becomes
/// its readable text, one block a line, as a web archive's payload does ([`html_to_text`]),
/// so that its template's lines and its main text are read the same way whatever the
/// container. Other text is returned as it is.
pub fn field_page_text(text: String) -> String {
    if is_html(&text) { html_to_text(&text) } else { text }
}

/// Whether `text` is HTML: it has the end tag of a block element, or a `<br>` or `<p>` tag.
/// Plain text that mentions a tag in passing ("use <b> for bold") is not.
fn is_html(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'<', bytes).any(|start| {
        let rest = &bytes[start + 1..];
        match rest.first() {
            Some(b'/') => BLOCKS.iter().any(|name| opens(&rest[1..], tag_name(name))),
            _ => ["br", "p"].iter().any(|name| opens(rest, name)),
        }
    })
}

/// A block element's name as [`opens`] takes it.
fn tag_name(name: &[u8]) -> &str {
    std::str::from_utf8(name).expect("element names are ASCII")
}

/// Collapses whitespace inside lines, trims them and drops empty ones.
fn tidy_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut words = line.split_whitespace().peekable();
        if words.peek().is_none() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        for (i, w) in words.enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_blocks_as_lines_and_drops_scripts() {
        let html = "<!doctype html><html><head><title>The  title</title><style>p{}</style>\
                    <script>var x = '<p>no</p>';</script></head><body><nav>Home | News</nav>\
                    <p>First <b>bold</b> para&amp;graph.</p><div>Second<br>line</div>\
                    <noscript>enable js</noscript><table><tr><td>a</td><td>b</td></tr></table></body></html>";
        assert_eq!(
            html_to_text(html),
            "The title\nHome | News\nFirst bold para&graph.\nSecond\nline\na\nb"
        );
    }

    #[test]
    fn elements_end_where_the_whatwg_rules_end_them() {
        // An unclosed head ends at the body, or at the first text or element not of the head.
        assert_eq!(html_to_text("<html><head><title>T</title><body><p>Body</p>"), "T\nBody");
        assert_eq!(html_to_text("<head><meta charset=utf-8>Text at once"), "Text at once");
        assert_eq!(html_to_text("<head><link rel=x><div>In a div</div>"), "In a div");
        // `<svg/>` is empty; an unclosed `<svg>` ends at an HTML element.
        assert_eq!(html_to_text("<p>a<svg/>b</p><p>c</p>"), "ab\nc");
        assert_eq!(html_to_text("<svg><text>icon</text><p>After</p>"), "After");
        assert_eq!(html_to_text("<svg><text>x</text></svg><p>y</p>"), "y");
        // A raw-text element without its end tag ends at the next tag.
        assert_eq!(html_to_text("<p>a</p><iframe/><p>Body</p>"), "a\nBody");
        assert_eq!(
            html_to_text("<p>x</p><script>var a = 1;<p>Kept</p><div>too</div>"),
            "x\nKept\ntoo"
        );
        assert_eq!(html_to_text("<title>T<p>P</p>"), "T\nP");
        assert_eq!(html_to_text("<template><p>t</p></template><p>shown</p>"), "shown");
        // Closed ones are whole, whatever they hold.
        assert_eq!(html_to_text("<script>if (a<b) {}</script><p>p</p>"), "p");
        assert_eq!(html_to_text("<SCRIPT>x</Script ><p>p</p>"), "p");
    }

    /// HTML in a text field is read as a web archive's payload is; plain text, including
    /// text that mentions a tag, is left alone.
    #[test]
    fn html_in_a_text_field_becomes_its_blocks() {
        let html = "<html><body>\n<div class=\"nav\"><a href=\"/\">Home</a> | <a>News</a></div>\n\
                    <h1>Title</h1><p>One paragraph.</p><div class=\"hot\"><h3>Hot</h3><ol>\
                    <li>First</li><li>Second</li></ol></div>\n</body></html>";
        assert_eq!(
            field_page_text(html.to_string()),
            "Home | News\nTitle\nOne paragraph.\nHot\nFirst\nSecond"
        );
        assert_eq!(field_page_text("a<br>b".to_string()), "a\nb");
        for plain in ["use <b> for bold and x < y", "a </b> alone", "1<2 and 3>2", "<pre"] {
            assert_eq!(field_page_text(plain.to_string()), plain);
        }
    }

    #[test]
    fn charset_comes_from_header_meta_or_detection() {
        assert_eq!(charset_param("text/html; charset=\"GBK\""), Some(&b"GBK"[..]));
        assert_eq!(charset_param("text/html"), None);
        let (gbk, _, _) = encoding_rs::GBK.encode("中文网页的内容，编码是国标码。");
        let (text, used) = decode_page(&gbk, Some("text/html; charset=gb2312"), None);
        assert_eq!((text.as_str(), used), ("中文网页的内容，编码是国标码。", encoding_rs::GBK));
        let page = [
            b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">"
                .to_vec(),
            encoding_rs::EUC_JP.encode("日本語のページです").0.into_owned(),
        ]
        .concat();
        let (text, used) = decode_page(&page, None, None);
        assert!(text.ends_with("日本語のページです"), "{text}");
        assert_eq!(used, encoding_rs::EUC_JP);
        // No declaration at all: the detector recognises a longer GBK text.
        let long =
            "国家气象中心发布暴雨蓝色预警，预计今天白天到夜间江南北部等地有大到暴雨。".repeat(4);
        let (text, used) = decode_page(&encoding_rs::GBK.encode(&long).0, None, Some(b"cn"));
        assert_eq!((text.as_str(), used), (long.as_str(), encoding_rs::GBK));
    }
}
