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

/// Elements whose content is not readable text.
const SKIPPED: &[&[u8]] =
    &[b"script", b"style", b"noscript", b"template", b"svg", b"head", b"iframe", b"object"];

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
pub fn html_to_text(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 4);
    let mut skip_depth = 0usize;
    let mut in_title = false;
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
                        if SKIPPED.contains(&name.as_slice()) {
                            skip_depth += 1;
                        }
                        if BLOCKS.contains(&name.as_slice()) {
                            text.push('\n');
                        }
                    }
                    CallbackEvent::EndTag { name } => {
                        let name = name.to_ascii_lowercase();
                        if name == b"title" {
                            in_title = false;
                        }
                        if SKIPPED.contains(&name.as_slice()) {
                            skip_depth = skip_depth.saturating_sub(1);
                        }
                        if BLOCKS.contains(&name.as_slice()) {
                            text.push('\n');
                        }
                    }
                    CallbackEvent::String { value } if skip_depth == 0 || in_title => {
                        text.push_str(&String::from_utf8_lossy(value));
                    }
                    _ => {}
                }
                None
            });
        let mut emitter = emitter;
        emitter.naively_switch_states(true);
        for _ in Tokenizer::new_with_emitter(html, emitter) {}
    }
    tidy_lines(&text)
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
