//! Compressed inputs, decompressed as `gzip -d` and `zstd -d` read them: every gzip member
//! or zstd frame in turn; after the last gzip member, zero bytes (padding that `gzip -d`
//! ignores) are read past and counted; other bytes there are an error saying where they start.

use std::io::{BufRead, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Compression of an input file, from its extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// Not compressed (`.jsonl`, `.warc`).
    None,
    /// `.gz`: one or more gzip members.
    Gzip,
    /// `.zst`: one or more zstd frames.
    Zstd,
}

/// `raw` decompressed as `compression` says. Zero bytes after the last gzip member are
/// read past and added to `trailing_zeros`; `zstd -d` rejects them after a zstd frame, and
/// so does this reader. Errors say at which byte of `raw` the member they met starts, or
/// where zstd decoding stopped (for bytes after the last member or frame, where they start).
///
/// # Errors
/// When the zstd decoder cannot start.
pub(crate) fn decompressed<R: BufRead + Send + 'static>(
    raw: R,
    compression: Compression,
    trailing_zeros: &Arc<AtomicU64>,
) -> std::io::Result<Box<dyn Read + Send>> {
    let raw = Offset { inner: raw, consumed: 0 };
    Ok(match compression {
        Compression::None => Box::new(raw.inner),
        Compression::Gzip => Box::new(GzipMembers {
            member: Some(flate2::bufread::GzDecoder::new(raw)),
            start: 0,
            trailing_zeros: Arc::clone(trailing_zeros),
        }),
        Compression::Zstd => Box::new(ZstdFrames(zstd::stream::read::Decoder::with_buffer(raw)?)),
    })
}

/// A reader that counts the bytes consumed from it: the offset reached in the compressed
/// file.
struct Offset<R> {
    inner: R,
    consumed: u64,
}

impl<R: Read> Read for Offset<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Offset<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.consumed += amount as u64;
        self.inner.consume(amount);
    }
}

/// The gzip members of a file, one after another. flate2's `MultiGzDecoder` fails on
/// anything after the last member, zero padding included, and does not say where.
struct GzipMembers<R: BufRead> {
    /// The member being read; `None` past the last one, or after an error.
    member: Option<flate2::bufread::GzDecoder<Offset<R>>>,
    /// Where the member being read starts in the file.
    start: u64,
    trailing_zeros: Arc<AtomicU64>,
}

impl<R: BufRead> GzipMembers<R> {
    /// Moves past the member just read: to the next one, or to the end of the file when
    /// only zero bytes follow.
    fn next_member(&mut self) -> std::io::Result<()> {
        let Some(member) = self.member.take() else { return Ok(()) };
        let mut raw = member.into_inner();
        self.start = raw.consumed;
        match raw.fill_buf()?.first() {
            None => Ok(()),
            Some(0) => {
                let mut zeros = 0u64;
                loop {
                    let buf = raw.fill_buf()?;
                    if buf.is_empty() {
                        self.trailing_zeros.fetch_add(zeros, Ordering::Relaxed);
                        return Ok(());
                    }
                    let n = buf.iter().take_while(|b| **b == 0).count();
                    let more = n < buf.len();
                    raw.consume(n);
                    zeros += n as u64;
                    if more {
                        let what = format!("{zeros} zero bytes and then other bytes");
                        return Err(self.not_a_member(std::io::ErrorKind::InvalidData, what));
                    }
                }
            }
            Some(_) => {
                self.member = Some(flate2::bufread::GzDecoder::new(raw));
                Ok(())
            }
        }
    }

    /// The error for bytes after the last member that are neither a member nor zeros.
    fn not_a_member(&self, kind: std::io::ErrorKind, what: String) -> std::io::Error {
        std::io::Error::new(
            kind,
            format!(
                "the bytes after the last gzip member, from byte {} on, are not a gzip member ({what}); only zero bytes may follow it",
                self.start
            ),
        )
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while let Some(member) = &mut self.member {
            match member.read(buf) {
                Ok(0) => self.next_member()?,
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Err(e),
                Err(e) => {
                    // A member whose header cannot be read, after another: trailing bytes.
                    let header_unread = member.header().is_none() && self.start > 0;
                    self.member = None;
                    return Err(if header_unread {
                        self.not_a_member(e.kind(), e.to_string())
                    } else {
                        let at = format!("{e} (in the gzip member from byte {})", self.start);
                        std::io::Error::new(e.kind(), at)
                    });
                }
            }
        }
        Ok(0)
    }
}

/// The zstd frames of a file, with errors that say where decoding stopped: after the last
/// frame, where the bytes that are not a frame start.
struct ZstdFrames<R: BufRead>(zstd::stream::read::Decoder<'static, Offset<R>>);

impl<R: BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::Interrupted {
                return e;
            }
            // The decoder consumes a frame's bytes as it decodes them and none of a frame it
            // cannot start: the offset is where the bytes it failed on start.
            let raw = self.0.get_mut();
            let at = raw.consumed;
            let zeros = raw.fill_buf().is_ok_and(|b| !b.is_empty() && b.iter().all(|b| *b == 0));
            let what = if zeros { " (zero bytes, which `zstd -d` rejects too)" } else { "" };
            std::io::Error::new(e.kind(), format!("cannot decode zstd at byte {at}{what}: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(text: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(text).unwrap();
        enc.finish().unwrap()
    }

    /// What reading `bytes` as `compression` gives: the text or the error's message, and
    /// the trailing zero bytes counted.
    fn decode(bytes: Vec<u8>, compression: Compression) -> (Result<String, String>, u64) {
        let zeros = Arc::new(AtomicU64::new(0));
        let raw = std::io::BufReader::with_capacity(7, std::io::Cursor::new(bytes));
        let mut text = String::new();
        let read = decompressed(raw, compression, &zeros).unwrap().read_to_string(&mut text);
        (read.map(|_| text).map_err(|e| e.to_string()), zeros.load(Ordering::Relaxed))
    }

    #[test]
    fn gzip_members_are_read_in_turn_and_trailing_zero_bytes_are_counted() {
        let members = [gzip(b"one\n"), gzip(b""), gzip(b"two\n")].concat();
        assert_eq!(decode(members.clone(), Compression::Gzip), (Ok("one\ntwo\n".into()), 0));
        // Zeros across several buffer fills (of 7 bytes here).
        let padded = [&members[..], &[0; 100]].concat();
        assert_eq!(decode(padded, Compression::Gzip), (Ok("one\ntwo\n".into()), 100));
        let at = format!("byte {}", members.len());
        for tail in [&b"x"[..], b"\0\0\0\0\0\0\0\0\0x", b"\x1f", b"\x1f\x8b\x08\0garbage"] {
            let (read, _) = decode([&members[..], tail].concat(), Compression::Gzip);
            let message = read.unwrap_err();
            assert!(message.contains(&at), "{tail:?}: {message}");
        }
        // Zeros and then a member: `gzip -d` stops at the zeros and calls the rest garbage.
        let (read, _) =
            decode([&members[..], &[0; 4], &gzip(b"three\n")].concat(), Compression::Gzip);
        assert!(read.unwrap_err().contains(&at));
    }

    #[test]
    fn damage_inside_a_member_is_reported_as_the_decoder_does() {
        let mut member = gzip(&b"some text to compress\n".repeat(100));
        let middle = member.len() / 2;
        member[middle] ^= 0xff;
        let (read, _) = decode(member, Compression::Gzip);
        let message = read.unwrap_err();
        assert!(message.ends_with("(in the gzip member from byte 0)"), "{message}");
        let (read, _) = decode(b"not gzip at all".to_vec(), Compression::Gzip);
        assert!(read.is_err());
        assert_eq!(decode(Vec::new(), Compression::None), (Ok(String::new()), 0));
    }

    #[test]
    fn zstd_frames_are_read_in_turn_and_trailing_bytes_are_located() {
        let frames = [
            zstd::encode_all(&b"one\n"[..], 3).unwrap(),
            zstd::encode_all(&b"two\n"[..], 3).unwrap(),
        ]
        .concat();
        assert_eq!(decode(frames.clone(), Compression::Zstd), (Ok("one\ntwo\n".into()), 0));
        let (read_zeros, counted) = decode([&frames[..], &[0; 100]].concat(), Compression::Zstd);
        let message = read_zeros.unwrap_err();
        assert!(message.contains(&format!("at byte {}", frames.len())), "{message}");
        assert!(message.contains("zero bytes"), "{message}");
        assert_eq!(counted, 0);
        let (read, _) = decode([&frames[..], b"garbage"].concat(), Compression::Zstd);
        let message = read.unwrap_err();
        assert!(message.contains(&format!("at byte {}", frames.len())), "{message}");
    }
}
