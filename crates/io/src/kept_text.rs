//! The text of a kept JSON Lines record with its repeated paragraphs left out
//! (`dedup --paragraphs --write-kept`): the paragraphs are cut out of the text field's
//! value, and the line is written again with every other byte as it was.

/// `text` without the byte ranges `cuts` (offset, length; ascending, not overlapping), each
/// with the blank lines after it (or, for the last block, before it), so the blocks around
/// a cut stay one blank line apart.
pub fn without_ranges(text: &str, cuts: &[(u64, u64)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(offset, len) in cuts {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(text.len());
        let end = start.saturating_add(usize::try_from(len).unwrap_or(usize::MAX)).min(text.len());
        if start < at || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            continue;
        }
        let rest = &text[end..];
        let end = end + (rest.len() - rest.trim_start().len());
        out.push_str(&text[at..start]);
        if end == text.len() {
            // The last block: the blank lines before it go instead.
            out.truncate(out.trim_end().len());
        }
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// `line` (one JSON object) with the value of its top-level field `field` replaced by the
/// JSON string `value`; `None` when the line is not an object with that field.
pub fn with_field(line: &str, field: &str, value: &str) -> Option<String> {
    let (start, end) = field_value_span(line, field)?;
    let encoded = serde_json::to_string(value).ok()?;
    Some(format!("{}{encoded}{}", &line[..start], &line[end..]))
}

/// The byte span of the value of top-level `field` in the object `line`.
fn field_value_span(line: &str, field: &str) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut i = skip_space(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_space(bytes, i);
        match bytes.get(i)? {
            b'}' => return None,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let key_end = skip_string(bytes, i)?;
        let key: String = serde_json::from_str(&line[i..key_end]).ok()?;
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, i + 1);
        let value_end = skip_value(bytes, value_start)?;
        if key == field {
            return Some((value_start, value_end));
        }
        i = value_end;
    }
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote).
fn skip_string(bytes: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The end of the value starting at `i`.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match bytes.get(j)? {
                    b'"' => {
                        j = skip_string(bytes, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while bytes
                .get(j)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_are_cut_with_the_blank_lines_after_them() {
        let text = "Title\n\nFirst para.\n\nSecond para.\n\nLast para.";
        let first = text.find("First").unwrap() as u64;
        assert_eq!(without_ranges(text, &[(first, 11)]), "Title\n\nSecond para.\n\nLast para.");
        let last = text.find("Last").unwrap() as u64;
        assert_eq!(without_ranges(text, &[(first, 11), (last, 10)]), "Title\n\nSecond para.");
        assert_eq!(without_ranges(text, &[]), text);
        let second = text.find("Second").unwrap() as u64;
        assert_eq!(without_ranges(text, &[(second, 12), (last, 10)]), "Title\n\nFirst para.");
    }

    #[test]
    fn only_the_text_field_changes() {
        let line = r#"{"id": "a\"1", "meta": {"text": "nested", "n": [1, {"x": "}"}]}, "text": "old\nvalue", "n": 3}"#;
        let rewritten = with_field(line, "text", "new \"text\"\n").unwrap();
        assert_eq!(
            rewritten,
            r#"{"id": "a\"1", "meta": {"text": "nested", "n": [1, {"x": "}"}]}, "text": "new \"text\"\n", "n": 3}"#
        );
        let parsed: serde_json::Value = serde_json::from_str(&rewritten).unwrap();
        assert_eq!(parsed["text"], "new \"text\"\n");
        assert_eq!(with_field(r#"{"id": 1}"#, "text", "x"), None);
        assert_eq!(with_field("[1, 2]", "text", "x"), None);
        // A key spelled with an escape is that key.
        assert_eq!(
            with_field(r#"{"te\u0078t": "a"}"#, "text", "b").unwrap(),
            r#"{"te\u0078t": "b"}"#
        );
    }
}
