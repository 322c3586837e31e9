//! WARC and WET reader (ISO 28500; also the WARC/0.18 of ClueWeb).
//!
//! A document is a record that carries text: a `response` with an HTML or plain-text
//! payload and a 2xx status, a `resource` of those types, or a WET `conversion`. Its id is
//! the `WARC-Record-ID`; URL, fetch date and digest travel with it. Other records
//! (`request`, `metadata`, `warcinfo`, `revisit`, responses that are not 2xx or not text)
//! are counted by kind, not listed. A malformed record is a located reject and reading
//! resumes at the next `WARC/` line, also when that line starts inside the record's
//! headers (a record cut short before its blank line); a record's number is its position in
//! the file.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use neardup_core::DocId;

use crate::decompress::{Compression, decompressed};
use crate::error::{Error, Result};
use crate::html::{decode_page, html_to_text};
use crate::input::{CountingFile, InputFile};
use crate::jsonl::read_line_bounded;
use crate::read_options::OnReadError;
use crate::records::{InputDoc, Reason, Record, RejectedRecord, WebMeta};

/// Header lines longer than this are not headers (a damaged record, or not a WARC file).
const MAX_HEADER_LINE_BYTES: usize = 1 << 16;

/// Reads records from one WARC or WET file.
pub struct WarcRecords {
    reader: Box<dyn BufRead + Send>,
    file: InputFile,
    on_error: OnReadError,
    /// Blocks and inflated payloads above this are `too_large` rejects.
    max_record_bytes: u64,
    record: u64,
    line: Vec<u8>,
    /// A `WARC/` line read while resynchronising, to start the next record with.
    pending_version: bool,
    skipped: BTreeMap<String, u64>,
    done: bool,
    /// When set, only these records (by number) are made documents; the others are read
    /// past without decoding their payloads.
    only: Option<std::collections::BTreeSet<u64>>,
    /// Zero bytes read past after the last gzip member.
    trailing_zeros: Arc<AtomicU64>,
}

/// The parsed header block of one record.
struct Headers(Vec<(String, String)>);

impl Headers {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

enum Step {
    Record(Record),
    Skip(&'static str),
}

impl WarcRecords {
    /// Opens `file`, decompressing by its extension (gzip files may have one member per
    /// record, as crawlers write them).
    ///
    /// # Errors
    /// [`Error::Open`] if the file cannot be opened or its decoder cannot start.
    pub fn open(
        file: &InputFile,
        compression: Compression,
        on_error: OnReadError,
        bytes_read: Option<Arc<AtomicU64>>,
        max_record_bytes: u64,
    ) -> Result<Self> {
        let open_err = |source| Error::Open { path: file.path.clone(), source };
        let raw = BufReader::with_capacity(
            1 << 16,
            CountingFile::open_input(file, bytes_read).map_err(open_err)?,
        );
        let trailing_zeros = Arc::default();
        let reader = decompressed(raw, compression, &trailing_zeros).map_err(open_err)?;
        Ok(WarcRecords {
            reader: Box::new(BufReader::with_capacity(1 << 16, reader)),
            file: file.clone(),
            on_error,
            max_record_bytes,
            record: 0,
            line: Vec::new(),
            pending_version: false,
            skipped: BTreeMap::new(),
            done: false,
            only: None,
            trailing_zeros,
        })
    }

    /// Makes documents only of the records numbered in `records`: the others are read
    /// past, their payloads neither decoded nor turned into text, and counted as skipped
    /// (`not_wanted`).
    pub fn only(&mut self, records: std::collections::BTreeSet<u64>) {
        self.only = Some(records);
    }

    /// Records that are not documents, by kind (`request`, `response_not_text`, ...).
    pub fn skipped(&self) -> &BTreeMap<String, u64> {
        &self.skipped
    }

    /// Zero bytes read past after the last gzip member so far: padding that `gzip -d`
    /// ignores, and so does this reader.
    pub fn trailing_zero_bytes(&self) -> u64 {
        self.trailing_zeros.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Reads a line into `self.line`; `false` at the end of the file. A line too long for
    /// a header is read past, and stands as a line that is neither blank nor a header.
    fn read_line(&mut self) -> std::io::Result<bool> {
        self.line.clear();
        let (read, over) =
            read_line_bounded(&mut self.reader, &mut self.line, MAX_HEADER_LINE_BYTES)?;
        if over {
            self.line.extend_from_slice(b"(a line too long for a header)\n");
        }
        Ok(read > 0)
    }

    /// Puts `bytes` back in front of what is still to be read.
    fn unread(&mut self, bytes: Vec<u8>) {
        let rest = std::mem::replace(&mut self.reader, Box::new(std::io::empty()));
        self.reader = Box::new(std::io::Cursor::new(bytes).chain(rest));
    }

    /// Checks that the block just read ends where the next record starts (its blank line
    /// terminator, then a `WARC/` line or the end of the file), as robust readers do: a
    /// wrong `Content-Length` must not swallow the records after it. Returns `None` when it
    /// does; otherwise what was wrong, after putting back the records the block ran into (a
    /// length too large) or skipping to the next record (a length too small). Other bytes
    /// after a whole record are left for the next step, which rejects them as a record.
    fn check_boundary(&mut self, block: &mut Vec<u8>) -> std::io::Result<Option<String>> {
        let blank = |line: &[u8]| line.iter().all(u8::is_ascii_whitespace);
        let mut after = Vec::new();
        let mut terminated = false;
        for _ in 0..2 {
            if !self.read_line()? {
                return Ok(None);
            }
            after.extend_from_slice(&self.line);
            if self.line.starts_with(b"WARC/") {
                self.pending_version = true;
                return Ok(None);
            }
            if !blank(&self.line) {
                break;
            }
            terminated = true;
        }
        if blank(&self.line) {
            return Ok(None);
        }
        let length = block.len();
        if let Some(at) = next_record_start(block) {
            let mut rest = block.split_off(at);
            rest.extend_from_slice(&after);
            self.unread(rest);
            return Ok(Some(format!(
                "Content-Length {length} runs into the next record, {at} bytes in; reading goes on there"
            )));
        }
        if terminated {
            // A whole record, then bytes that are no record: the next step rejects them.
            self.pending_version = true;
            return Ok(None);
        }
        self.resync()?;
        Ok(Some(format!(
            "the record goes on past its Content-Length {length}; reading goes on at the next record"
        )))
    }

    fn reject(&self, reason: Reason, detail: String, id: Option<String>) -> Record {
        Record::Reject(RejectedRecord {
            doc: DocId::new(self.file.index, self.record),
            id,
            reason,
            detail,
        })
    }

    /// Reads one record; `Ok(None)` at the end of the file.
    fn step(&mut self) -> std::io::Result<Option<Step>> {
        // The version line, after any blank lines between records.
        if !self.pending_version {
            loop {
                if !self.read_line()? {
                    return Ok(None);
                }
                if !self.line.iter().all(u8::is_ascii_whitespace) {
                    break;
                }
            }
        }
        self.pending_version = false;
        self.record += 1;
        if !self.line.starts_with(b"WARC/") {
            let found = String::from_utf8_lossy(&self.line[..self.line.len().min(40)])
                .trim_end()
                .to_string();
            self.resync()?;
            let detail = format!("expected a WARC/ version line, found \"{found}\"");
            return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, None))));
        }
        let mut headers = Vec::new();
        loop {
            if !self.read_line()? {
                let id = Headers(headers).get("WARC-Record-ID").map(str::to_string);
                let detail = "the file ends inside the record's headers".to_string();
                return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
            }
            if self.at_record_start() {
                // Cut short before its blank line: the next record starts here. A header
                // line it cut is not read, so a cut id is not taken for the record's own.
                let id = Headers(headers).get("WARC-Record-ID").map(str::to_string);
                let detail = "the record's headers end without a blank line where the next record starts; reading goes on there".to_string();
                return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
            }
            let line =
                String::from_utf8_lossy(&self.line).trim_end_matches(['\r', '\n']).to_string();
            if line.is_empty() {
                break;
            }
            match (line.starts_with([' ', '\t']), headers.last_mut(), line.split_once(':')) {
                (true, Some((_, value)), _) => {
                    let value: &mut String = value;
                    value.push(' ');
                    value.push_str(line.trim());
                }
                (_, _, Some((name, value))) => {
                    headers.push((name.trim().to_string(), value.trim().to_string()))
                }
                _ => {}
            }
        }
        let headers = Headers(headers);
        let id = headers.get("WARC-Record-ID").map(str::to_string);
        let Some(length) = headers.get("Content-Length").and_then(|v| v.parse::<u64>().ok()) else {
            self.resync()?;
            let detail = "the record has no valid Content-Length".to_string();
            return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
        };
        let kind = headers.get("WARC-Type").unwrap_or("").to_ascii_lowercase();
        let wanted = matches!(kind.as_str(), "response" | "resource" | "conversion");
        if length > self.max_record_bytes {
            // Read past, never held whole. Its end is taken on trust, unless the file ends
            // before it: then reading goes on at the first record inside it.
            let (copied, swallowed) = self.skip_block(length)?;
            if copied < length {
                let detail = self.past_the_end(length, copied, swallowed);
                return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
            }
            if wanted {
                let detail = format!(
                    "the record has {length} bytes, above input.max_record_bytes = {}",
                    self.max_record_bytes
                );
                return Ok(Some(Step::Record(self.reject(Reason::TooLarge, detail, id))));
            }
            return Ok(Some(Step::Skip(skip_kind(&kind))));
        }
        let mut block = Vec::with_capacity(length as usize);
        (&mut self.reader).take(length).read_to_end(&mut block)?;
        if (block.len() as u64) < length {
            let read = block.len() as u64;
            let swallowed = next_record_start(&block).map(|at| block.split_off(at));
            let detail = self.past_the_end(length, read, swallowed);
            return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
        }
        if let Some(detail) = self.check_boundary(&mut block)? {
            return Ok(Some(Step::Record(self.reject(Reason::MalformedRecord, detail, id))));
        }
        if !wanted {
            return Ok(Some(Step::Skip(skip_kind(&kind))));
        }
        if self.only.as_ref().is_some_and(|only| !only.contains(&self.record)) {
            return Ok(Some(Step::Skip("not_wanted")));
        }
        let Some(id) = id else {
            let detail = "the record has no WARC-Record-ID".to_string();
            return Ok(Some(Step::Record(self.reject(Reason::MissingId, detail, None))));
        };
        Ok(Some(self.document(&kind, &headers, id, block)))
    }

    /// The reject detail of a block that claimed `length` bytes where the file ended after
    /// `read`. A length past the end of the file may have swallowed whole records: reading
    /// goes on at the first of them (`swallowed`, the block's bytes from its start on), as
    /// for a length that runs into the next record.
    fn past_the_end(&mut self, length: u64, read: u64, swallowed: Option<Vec<u8>>) -> String {
        match swallowed {
            Some(rest) => {
                let at = read - rest.len() as u64;
                self.unread(rest);
                format!(
                    "Content-Length {length} runs past the end of the file; the next record starts {at} bytes in, and reading goes on there"
                )
            }
            None => format!("the file ends {read} bytes into a {length}-byte record"),
        }
    }

    /// Reads past a block of `length` bytes, too large to hold. Returns the bytes read and,
    /// when the file ends before the block does, the bytes from the first record start in
    /// it on ([`next_record_start`]): the records a length past the end of the file
    /// swallowed, when they fit in the record limit (past it they are read past with the
    /// block, and none is returned).
    fn skip_block(&mut self, length: u64) -> std::io::Result<(u64, Option<Vec<u8>>)> {
        // A record start (`\r\n\r\nWARC/1.`) spans 11 bytes: the last 16 read are kept,
        // so that one across two reads is found.
        const CARRY: usize = 16;
        let limit = usize::try_from(self.max_record_bytes).unwrap_or(usize::MAX);
        let mut reader = (&mut self.reader).take(length);
        let mut chunk = vec![0u8; 1 << 16];
        let (mut read, mut carry, mut held) = (0u64, Vec::new(), None::<Vec<u8>>);
        let mut over = false;
        loop {
            let n = match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            read += n as u64;
            match &mut held {
                Some(rest) => {
                    over |= rest.len() + n > limit;
                    if !over {
                        rest.extend_from_slice(&chunk[..n]);
                    }
                }
                None if !over => {
                    carry.extend_from_slice(&chunk[..n]);
                    if let Some(at) = next_record_start(&carry) {
                        over = carry.len() - at > limit;
                        held = Some(carry[at..].to_vec());
                    }
                    carry.drain(..carry.len().saturating_sub(CARRY));
                }
                None => {}
            }
        }
        Ok((read, held.filter(|_| read < length && !over)))
    }

    /// Skips lines, from the one last read on, until one that starts a record.
    fn resync(&mut self) -> std::io::Result<()> {
        if self.at_record_start() {
            return Ok(());
        }
        while self.read_line()? {
            if self.at_record_start() {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Whether the line last read starts a record ([`version_at`]); if so, it is cut to
    /// the version line and kept for the next step.
    fn at_record_start(&mut self) -> bool {
        let Some(at) = version_at(&self.line) else { return false };
        self.line.drain(..at);
        self.pending_version = true;
        true
    }

    /// The document (or skip) a wanted record's block makes.
    fn document(&self, kind: &str, headers: &Headers, id: String, block: Vec<u8>) -> Step {
        let url = headers
            .get("WARC-Target-URI")
            .map(|u| u.trim_start_matches('<').trim_end_matches('>').to_string());
        let meta = WebMeta {
            url: url.clone(),
            date: headers.get("WARC-Date").map(str::to_string),
            digest: headers
                .get("WARC-Payload-Digest")
                .or(headers.get("WARC-Block-Digest"))
                .map(str::to_string),
            ..WebMeta::default()
        };
        let tld = url.as_deref().and_then(top_level_domain);
        let text = match kind {
            // Valid UTF-8 (as extracted text is) becomes the text without a copy.
            "conversion" => String::from_utf8(block)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            "resource" => {
                // Crawlers also store their own logs as resources (`metadata://...`).
                let web = url
                    .as_deref()
                    .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"));
                if !web {
                    return Step::Skip("resource_not_web");
                }
                let content_type = headers.get("Content-Type").unwrap_or("");
                match payload_text(content_type, &block, tld.as_deref()) {
                    Some(text) => text,
                    None => return Step::Skip("resource_not_text"),
                }
            }
            _ => {
                let Some((status, http, body)) = split_http(&block) else {
                    let detail = "the response has no HTTP status line and headers".to_string();
                    return Step::Record(self.reject(Reason::MalformedRecord, detail, Some(id)));
                };
                if !(200..300).contains(&status) {
                    return Step::Skip("response_not_ok");
                }
                let body = match decoded_body(&http, body, self.max_record_bytes) {
                    Ok(body) => body,
                    Err((reason, detail)) => {
                        return Step::Record(self.reject(reason, detail, Some(id)));
                    }
                };
                let content_type = http.get("Content-Type").unwrap_or("text/html");
                match payload_text(content_type, &body, tld.as_deref()) {
                    Some(text) => text,
                    None => return Step::Skip("response_not_text"),
                }
            }
        };
        if text.trim().is_empty() {
            let detail = "the page has no readable text".to_string();
            return Step::Record(self.reject(Reason::EmptyText, detail, Some(id)));
        }
        Step::Record(Record::Doc(InputDoc {
            doc: DocId::new(self.file.index, self.record),
            id,
            text,
            meta: Some(Box::new(meta)),
        }))
    }
}

impl Iterator for WarcRecords {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            if self.record >= DocId::MAX_RECORD {
                self.done = true;
                return Some(Err(Error::TooManyRecords { path: self.file.path.clone() }));
            }
            match self.step() {
                Ok(None) => self.done = true,
                Ok(Some(Step::Record(record))) => return Some(Ok(record)),
                Ok(Some(Step::Skip(kind))) => {
                    *self.skipped.entry(kind.to_string()).or_default() += 1
                }
                Err(source) => {
                    self.done = true;
                    let (path, record) = (&self.file.path, self.record);
                    let fail = |source| Error::Read { path: path.clone(), record, source };
                    return Some(self.on_error.rest_of_file(
                        source,
                        fail,
                        self.file.index,
                        record + 1,
                    ));
                }
            }
        }
        None
    }
}

/// The skip counter of a record kind that never carries a document.
fn skip_kind(kind: &str) -> &'static str {
    match kind {
        "request" => "request",
        "metadata" => "metadata",
        "warcinfo" => "warcinfo",
        "revisit" => "revisit",
        "continuation" => "continuation",
        _ => "other",
    }
}

/// The text of a payload of `content_type`, or `None` when it is not HTML or plain text.
fn payload_text(content_type: &str, body: &[u8], tld: Option<&[u8]>) -> Option<String> {
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" | "" => {
            Some(html_to_text(&decode_page(body, Some(content_type), tld).0))
        }
        "text/plain" => Some(decode_page(body, Some(content_type), tld).0),
        _ => None,
    }
}

/// Status code, headers and body of an HTTP response block.
fn split_http(block: &[u8]) -> Option<(u16, Headers, &[u8])> {
    if !block.starts_with(b"HTTP/") {
        return None;
    }
    let end = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| block.windows(2).position(|w| w == b"\n\n").map(|p| (p, p + 2)))?;
    let head = String::from_utf8_lossy(&block[..end.0]);
    let mut lines = head.lines();
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Some((status, Headers(headers), &block[end.1..]))
}

/// The payload with transfer and content encodings undone where the bytes show them; a
/// payload that inflates past `limit` bytes is too large.
fn decoded_body(
    http: &Headers,
    body: &[u8],
    limit: u64,
) -> std::result::Result<Vec<u8>, (Reason, String)> {
    let mut body = body.to_vec();
    let chunked =
        http.get("Transfer-Encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked && let Some(joined) = dechunk(&body) {
        body = joined;
    }
    let encoding = http.get("Content-Encoding").unwrap_or("").to_ascii_lowercase();
    // Archives often store the payload already decoded but keep the header: inflate only
    // when the bytes are gzip.
    if (encoding.contains("gzip") || encoding.is_empty()) && body.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&body[..])
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| {
                let detail = format!("the gzip-encoded payload cannot be inflated: {e}");
                (Reason::MalformedRecord, detail)
            })?;
        if out.len() as u64 > limit {
            let detail =
                format!("the gzip-encoded payload inflates past input.max_record_bytes = {limit}");
            return Err((Reason::TooLarge, detail));
        }
        body = out;
    }
    Ok(body)
}

/// Where a record starts in a `line` just read: at 0 in a line that starts with `WARC/`;
/// further in, when the line ends with a version (`WARC/1.0`, `WARC/0.18`) after the
/// remains of a record cut short in the middle of a line, unless a `/` comes before it (a
/// URL's path, `http://x/spec/WARC/1.1`, is a header value, not a cut). `None` when it
/// starts none.
fn version_at(line: &[u8]) -> Option<usize> {
    if line.starts_with(b"WARC/") {
        return Some(0);
    }
    let line = line.strip_suffix(b"\n")?;
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let at = memchr::memmem::rfind(line, b"WARC/")?;
    if line[..at].ends_with(b"/") {
        return None;
    }
    let (major, minor) = std::str::from_utf8(&line[at + 5..]).ok()?.split_once('.')?;
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (number(major) && number(minor)).then_some(at)
}

/// Where the next record starts inside `block`: a `WARC/1.` line after a blank line, the
/// way records are separated.
fn next_record_start(block: &[u8]) -> Option<usize> {
    memchr::memmem::find_iter(block, b"\nWARC/1.").map(|p| p + 1).find(|&at| {
        let before = &block[..at];
        before.ends_with(b"\r\n\r\n") || before.ends_with(b"\n\n")
    })
}

/// Joins an HTTP chunked body, or `None` when it is not one.
fn dechunk(body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size..)?.strip_prefix(b"\r\n")?;
    }
}

/// The top-level domain of a URL's host, for the charset detector.
fn top_level_domain(url: &str) -> Option<Vec<u8>> {
    let host = url.split("://").nth(1)?.split(['/', ':', '?', '#']).next()?;
    let tld = host.rsplit('.').next()?;
    (!tld.is_empty() && tld.bytes().all(|b| b.is_ascii_alphabetic()))
        .then(|| tld.to_ascii_lowercase().into_bytes())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::input::Format;

    fn sample(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data-samples/warc").join(name)
    }

    fn read(path: &Path) -> (Vec<Record>, BTreeMap<String, u64>) {
        read_limited(path, crate::read_options::DEFAULT_MAX_RECORD_BYTES)
    }

    fn read_limited(path: &Path, limit: u64) -> (Vec<Record>, BTreeMap<String, u64>) {
        let format = Format::of(path).expect("a web archive");
        let Format::Warc(c) = format else { panic!("{format:?}") };
        let file =
            InputFile { index: 0, path: path.to_path_buf(), format, bytes: 0, version: None };
        let mut reader = WarcRecords::open(&file, c, OnReadError::Fail, None, limit).unwrap();
        let records = reader.by_ref().map(Result::unwrap).collect();
        (records, reader.skipped().clone())
    }

    fn docs(records: &[Record]) -> Vec<&InputDoc> {
        records.iter().filter_map(|r| if let Record::Doc(d) = r { Some(d) } else { None }).collect()
    }

    fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn common_crawl_warc_and_wet() {
        let (records, skipped) = read(&sample("cc_whirlwind.warc.gz"));
        assert_eq!(skipped, counts(&[("metadata", 1), ("request", 1), ("warcinfo", 1)]));
        let page = docs(&records)[0];
        assert_eq!(page.id, "<urn:uuid:2aabeff2-67f5-4608-8466-e87c6296e2b6>");
        let meta = page.meta.as_deref().unwrap();
        assert_eq!(meta.url.as_deref(), Some("https://an.wikipedia.org/wiki/Escopete"));
        assert!(meta.date.is_some() && meta.digest.as_deref().unwrap().starts_with("sha1:"));
        assert!(page.text.starts_with("Escopete - Biquipedia"), "{}", &page.text[..80]);
        assert!(!page.text.contains("<div") && !page.text.contains("function("));

        let (records, skipped) = read(&sample("cc_whirlwind.warc.wet.gz"));
        assert_eq!(skipped, counts(&[("warcinfo", 1)]));
        let wet = docs(&records)[0];
        assert_eq!(
            wet.meta.as_deref().unwrap().url.as_deref(),
            Some("https://an.wikipedia.org/wiki/Escopete")
        );
        assert!(wet.text.starts_with("Escopete"));
    }

    #[test]
    fn wrapped_uris_revisits_and_crawler_logs() {
        let (records, skipped) = read(&sample("dolma_sample-0001.warc.gz"));
        assert_eq!(docs(&records).len(), 15);
        assert_eq!(
            skipped,
            counts(&[("metadata", 1), ("request", 15), ("resource_not_web", 2), ("warcinfo", 1)])
        );
        for d in docs(&records) {
            let url = d.meta.as_deref().unwrap().url.as_deref().unwrap();
            assert!(url.starts_with("https://"), "{url}");
        }
        let (records, skipped) = read(&sample("warcio_example.warc.gz"));
        assert_eq!(skipped, counts(&[("request", 2), ("revisit", 1), ("warcinfo", 2)]));
        assert!(docs(&records)[0].text.starts_with("Example Domain"));
    }

    #[test]
    fn chinese_and_japanese_charsets_are_decoded() {
        let (records, _) = read(&sample("resiliparse_warcfile.warc.gz"));
        let by_url = |prefix: &str| {
            docs(&records)
                .into_iter()
                .find(|d| d.meta.as_deref().unwrap().url.as_deref().unwrap().starts_with(prefix))
                .unwrap()
                .text
                .clone()
        };
        // Declared gbk in a <meta> tag; gb2312 in the HTTP header; windows-1251 (Russian).
        assert!(by_url("http://041696.com/").contains("上海特舟实业有限公司"));
        assert!(by_url("http://0760.jxtdw.com/").contains("三乡人才市场"));
        assert!(by_url("http://01spb.ru/").contains("О компании"));

        let (records, skipped) = read(&sample("resiliparse_clueweb-quirk.warc.gz"));
        assert_eq!(docs(&records).len(), 29, "WARC/0.18 with EUC-JP pages");
        assert_eq!(skipped, counts(&[("warcinfo", 1)]));
        assert!(docs(&records).iter().all(|d| d.text.contains("アイテム検索")));
    }

    #[test]
    fn converted_text_keeps_valid_bytes_and_replaces_invalid_ones() {
        let dir = tempfile::tempdir().unwrap();
        let record = |id: &str, block: &[u8]| {
            let head = format!(
                "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Record-ID: <{id}>\r\nWARC-Target-URI: http://x.org/{id}\r\nContent-Length: {}\r\n\r\n",
                block.len()
            );
            [head.as_bytes(), block, b"\r\n\r\n"].concat()
        };
        let bytes = [
            record("a", "Grüße, 你好\nsecond line".as_bytes()),
            record("b", b"caf\xe9 \xff and more"),
        ]
        .concat();
        let path = dir.path().join("pages.warc.wet");
        std::fs::write(&path, bytes).unwrap();
        let (records, _) = read(&path);
        let texts: Vec<&str> = docs(&records).iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["Grüße, 你好\nsecond line", "caf\u{fffd} \u{fffd} and more"]);
    }

    #[test]
    fn a_malformed_record_is_a_reject_and_reading_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let record = |id: &str, body: &str| {
            let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>{body}</p>");
            format!(
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <{id}>\r\nWARC-Target-URI: http://x.org/{id}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
                block.len()
            )
        };
        let text = [
            record("a", "first page"),
            "garbage that is not a record\r\nmore garbage\r\n".to_string(),
            record("b", "second page"),
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <c>\r\n\r\nno length\r\n".to_string(),
            record("d", "third page"),
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <e>\r\nContent-Length: 500\r\n\r\ncut short".to_string(),
        ]
        .concat();
        let path = dir.path().join("damaged.warc");
        std::fs::write(&path, text).unwrap();
        let (records, _) = read(&path);
        let summary: Vec<String> = records
            .iter()
            .map(|r| match r {
                Record::Doc(d) => format!("{} {}", d.doc.record(), d.text),
                Record::Reject(r) => format!("{} {}", r.doc.record(), r.reason.as_str()),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "1 first page",
                "2 malformed_record",
                "3 second page",
                "4 malformed_record",
                "5 third page",
                "6 malformed_record"
            ]
        );
    }

    fn response(id: &str, body: &str, length_off_by: i64) -> String {
        let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>{body}</p>");
        let length = block.len() as i64 + length_off_by;
        format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <{id}>\r\nWARC-Target-URI: http://x.org/{id}\r\nContent-Length: {length}\r\n\r\n{block}\r\n\r\n"
        )
    }

    /// `text` gzipped into `dir/name` a member per record (each `WARC/1.` version starts
    /// one), as crawlers write archives.
    fn gzip_per_record(dir: &Path, name: &str, text: &str) -> PathBuf {
        let mut starts: Vec<usize> = text.match_indices("WARC/1.").map(|(at, _)| at).collect();
        starts.push(text.len());
        let mut bytes = Vec::new();
        for record in starts.windows(2) {
            let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut out, &text.as_bytes()[record[0]..record[1]]).unwrap();
            bytes.extend(out.finish().unwrap());
        }
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    fn outline(records: &[Record]) -> Vec<String> {
        records
            .iter()
            .map(|r| match r {
                Record::Doc(d) => format!("{} {}", d.doc.record(), d.text),
                Record::Reject(r) => format!("{} {}", r.doc.record(), r.reason.as_str()),
            })
            .collect()
    }

    #[test]
    fn a_wrong_content_length_swallows_no_record() {
        let dir = tempfile::tempdir().unwrap();
        // Too large: the length runs 700 bytes into the records after it.
        let mut text = response("a", "first", 0) + &response("b", "damaged", 700);
        for i in 0..14 {
            text += &response(&format!("c{i}"), &format!("page {i}"), 0);
        }
        // Too small: the record goes on past its length.
        text += &response("d", "cut by its length", -10);
        text += &response("e", "last", 0);
        let path = dir.path().join("lengths.warc");
        std::fs::write(&path, &text).unwrap();
        let (records, _) = read(&path);
        let mut expected = vec!["1 first".to_string(), "2 malformed_record".to_string()];
        expected.extend((0..14).map(|i| format!("{} page {i}", i + 3)));
        expected.extend(["17 malformed_record".to_string(), "18 last".to_string()]);
        assert_eq!(outline(&records), expected);
        let Record::Reject(r) = &records[1] else { panic!() };
        assert!(r.detail.contains("runs into the next record"), "{}", r.detail);
        // The same archive with a member per record, as crawlers write it.
        let gz = gzip_per_record(dir.path(), "lengths.warc.gz", &text);
        assert_eq!(outline(&read(&gz).0), expected);
    }

    #[test]
    fn a_content_length_past_the_end_of_the_file_swallows_no_record() {
        let dir = tempfile::tempdir().unwrap();
        // The first record claims 5,000 bytes more than the whole file holds.
        let text = response("a", "damaged", 5000)
            + &response("b", "second", 0)
            + &response("c", "third", 0);
        let path = dir.path().join("past-end.warc");
        std::fs::write(&path, &text).unwrap();
        let expected = ["1 malformed_record", "2 second", "3 third"];
        let (records, _) = read(&path);
        assert_eq!(outline(&records), expected);
        let Record::Reject(r) = &records[0] else { panic!() };
        assert!(r.detail.contains("past the end of the file"), "{}", r.detail);
        let gz = gzip_per_record(dir.path(), "past-end.warc.gz", &text);
        assert_eq!(outline(&read(&gz).0), expected);
        // A claim above the record limit, read past rather than held, swallows none either.
        let huge = response("a", "damaged", 1 << 20)
            + &response("b", "second", 0)
            + &response("c", "third", 0);
        let path = dir.path().join("huge.warc");
        std::fs::write(&path, &huge).unwrap();
        let (records, _) = read_limited(&path, 4096);
        assert_eq!(outline(&records), expected);
        let Record::Reject(r) = &records[0] else { panic!() };
        assert!(r.detail.contains("past the end of the file"), "{}", r.detail);
        let gz = gzip_per_record(dir.path(), "huge.warc.gz", &huge);
        assert_eq!(outline(&read_limited(&gz, 4096).0), expected);
        // Records past the limit after the claim's first record start are not held.
        let long = response("a", "damaged", 1 << 20) + &response("b", &"x ".repeat(3000), 0);
        let path = dir.path().join("long.warc");
        std::fs::write(&path, &long).unwrap();
        assert_eq!(outline(&read_limited(&path, 4096).0), ["1 malformed_record"]);
        // A record cut short by the end of the file, with none after it, is the last one.
        let cut = response("a", "whole", 0) + &response("b", "cut", 0)[..60];
        let path = dir.path().join("cut.warc");
        std::fs::write(&path, &cut).unwrap();
        let (records, _) = read(&path);
        assert_eq!(outline(&records), ["1 whole", "2 malformed_record"]);
        let Record::Reject(r) = &records[1] else { panic!() };
        assert!(r.detail.contains("the file ends"), "{}", r.detail);
    }

    #[test]
    fn a_url_ending_in_a_version_is_a_header_value_not_a_record_start() {
        assert_eq!(version_at(b"WARC/1.1\r\n"), Some(0));
        assert_eq!(version_at(b"WARC-TarWARC/1.1\r\n"), Some(8));
        assert_eq!(version_at(b"WARC-Target-URI: http://exWARC/1.0\r\n"), Some(26));
        assert_eq!(version_at(b"WARC-Target-URI: http://x/spec/WARC/1.1\r\n"), None);
        assert_eq!(version_at(b"WARC-Target-URI: http://x/WARC/1.1x\r\n"), None);
    }

    #[test]
    fn a_header_cut_short_is_its_own_reject() {
        let dir = tempfile::tempdir().unwrap();
        let fragment = "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:x>\r\n";
        let text = [
            response("a", "first", 0),
            // Whole header lines and no blank line, then the next record.
            fragment.to_string(),
            response("b", "second", 0),
            response("c", "third", 0),
            // Cut inside a header line: the next version line ends it.
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:y>\r\nWARC-Tar".to_string(),
            response("d", "fourth", 0),
            // Cut inside the record's id and inside its version line.
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:z".to_string(),
            response("e", "fifth", 0),
            "WAR".to_string(),
            response("f", "sixth", 0),
            // Cut short at the end of the file.
            fragment.to_string(),
        ]
        .concat();
        let expected = [
            "1 first",
            "2 malformed_record",
            "3 second",
            "4 third",
            "5 malformed_record",
            "6 fourth",
            "7 malformed_record",
            "8 fifth",
            "9 malformed_record",
            "10 sixth",
            "11 malformed_record",
        ];
        let path = dir.path().join("cut-headers.warc");
        std::fs::write(&path, &text).unwrap();
        let gz = gzip_per_record(dir.path(), "cut-headers.warc.gz", &text);
        for path in [path, gz] {
            let (records, _) = read(&path);
            assert_eq!(outline(&records), expected, "{}", path.display());
            let ids: Vec<Option<&str>> = records
                .iter()
                .map(|r| match r {
                    Record::Doc(d) => Some(d.id.as_str()),
                    Record::Reject(r) => r.id.as_deref(),
                })
                .collect();
            assert_eq!(
                ids,
                [
                    Some("<a>"),
                    Some("<urn:x>"),
                    Some("<b>"),
                    Some("<c>"),
                    Some("<urn:y>"),
                    Some("<d>"),
                    None,
                    Some("<e>"),
                    None,
                    Some("<f>"),
                    Some("<urn:x>"),
                ],
                "{}",
                path.display()
            );
        }
    }

    #[test]
    fn zero_bytes_after_the_last_gzip_member_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["cc_whirlwind.warc.gz", "cc_whirlwind.warc.wet.gz"] {
            let bytes = std::fs::read(sample(name)).unwrap();
            let path = dir.path().join(name);
            std::fs::write(&path, [&bytes[..], &[0u8; 4096]].concat()).unwrap();
            let (padded, skipped) = read(&path);
            let (whole, whole_skipped) = read(&sample(name));
            assert_eq!((outline(&padded), skipped), (outline(&whole), whole_skipped), "{name}");
            let file = InputFile {
                index: 0,
                path,
                format: Format::Warc(Compression::Gzip),
                bytes: 0,
                version: None,
            };
            let limit = crate::read_options::DEFAULT_MAX_RECORD_BYTES;
            let mut reader =
                WarcRecords::open(&file, Compression::Gzip, OnReadError::Fail, None, limit)
                    .unwrap();
            assert!(reader.by_ref().all(|r| r.is_ok()));
            assert_eq!(reader.trailing_zero_bytes(), 4096);
        }
    }

    #[test]
    fn records_above_the_limit_are_rejected_and_read_past() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x ".repeat(3000);
        let text = response("a", "small", 0) + &response("b", &big, 0) + &response("c", "after", 0);
        let path = dir.path().join("big.warc");
        std::fs::write(&path, &text).unwrap();
        let (records, _) = read_limited(&path, 4096);
        assert_eq!(outline(&records), ["1 small", "2 too_large", "3 after"]);
        // A gzip-encoded payload that inflates past the limit is too large, not cut short.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut gz, format!("<p>{}</p>", "y".repeat(100_000)).as_bytes())
            .unwrap();
        let payload = gz.finish().unwrap();
        let mut block =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
                .to_vec();
        block.extend_from_slice(&payload);
        let mut record = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <z>\r\nWARC-Target-URI: http://x.org/z\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        record.extend_from_slice(&block);
        record.extend_from_slice(b"\r\n\r\n");
        record.extend_from_slice(response("after", "kept", 0).as_bytes());
        let path = dir.path().join("bomb.warc");
        std::fs::write(&path, &record).unwrap();
        let (records, _) = read_limited(&path, 50_000);
        assert_eq!(outline(&records), ["1 too_large", "2 kept"]);
        // A line that is no header at all (a damaged file) is read past, not held.
        let path = dir.path().join("noise.warc");
        let noise = "z".repeat(1 << 18) + "\r\n\r\n" + &response("n", "found", 0);
        std::fs::write(&path, noise).unwrap();
        assert_eq!(outline(&read(&path).0), ["1 malformed_record", "2 found"]);
    }

    #[test]
    fn http_parts_chunks_and_tlds() {
        let (status, headers, body) =
            split_http(b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\nbody").unwrap();
        assert_eq!(
            (status, headers.get("content-type"), body),
            (404, Some("text/html"), &b"body"[..])
        );
        assert!(split_http(b"no http here").is_none());
        assert_eq!(dechunk(b"4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n").unwrap(), b"Wikipedia");
        assert!(dechunk(b"<html>").is_none());
        assert_eq!(top_level_domain("http://news.example.cn:8080/a").unwrap(), b"cn");
        assert_eq!(top_level_domain("https://192.168.0.1/"), None);
    }
}
