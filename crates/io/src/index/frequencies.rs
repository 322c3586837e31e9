//! Document frequencies in the index: what SimHash TF-IDF weights are computed from.
//!
//! A run that weighs features by corpus document frequencies counts them over its batch
//! in a count-min sketch; with an index, it weighs by the sum of its batch's counts and
//! every committed generation's, as one run over all of them would, and commits its
//! batch's counts in its segment (`<segment>/frequencies.bin`). [`compact`](fn@super::compact)
//! sums the merged generations' files into the merged segment. The counts hold no text
//! and no document's identity, so [`forget`](fn@super::forget) leaves them.
//!
//! The file: `NDDF`, a format byte (1), then little-endian `u32` depth, `u32` width bits
//! and `u64` documents counted, then the counters (`u32`, row by row) compressed with
//! zstd.

use std::path::Path;

use crate::error::{Error, Result};

/// The file of a segment's document frequencies.
pub const FREQUENCIES_FILE: &str = "frequencies.bin";

const MAGIC: &[u8; 4] = b"NDDF";
const FORMAT: u8 = 1;
const HEADER_BYTES: usize = 4 + 1 + 4 + 4 + 8;

/// Document frequencies: the counters of a count-min sketch and the documents counted.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Frequencies {
    /// Rows of the sketch.
    pub depth: u32,
    /// Each row has `2^width_bits` counters.
    pub width_bits: u32,
    /// Documents counted.
    pub documents: u64,
    /// The counters, row by row.
    pub counts: Vec<u32>,
}

impl Frequencies {
    /// Adds `other`'s counts (saturating).
    ///
    /// # Errors
    /// [`Error::Damaged`] naming `path` (where `other` was read) when the shapes differ.
    fn add(&mut self, other: &Frequencies, path: &Path) -> Result<()> {
        if (self.depth, self.width_bits) != (other.depth, other.width_bits) {
            let detail = format!(
                "a sketch of {} x 2^{} counters, where others have {} x 2^{}",
                other.depth, other.width_bits, self.depth, self.width_bits
            );
            return Err(Error::Damaged { path: path.to_path_buf(), detail });
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a = a.saturating_add(*b);
        }
        self.documents += other.documents;
        Ok(())
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(HEADER_BYTES);
        bytes.extend_from_slice(MAGIC);
        bytes.push(FORMAT);
        bytes.extend_from_slice(&self.depth.to_le_bytes());
        bytes.extend_from_slice(&self.width_bits.to_le_bytes());
        bytes.extend_from_slice(&self.documents.to_le_bytes());
        let raw: Vec<u8> = self.counts.iter().flat_map(|c| c.to_le_bytes()).collect();
        bytes.extend(zstd::bulk::compress(&raw, 3).expect("compressing in memory"));
        bytes
    }

    fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self> {
        let damaged = |detail: String| Error::Damaged { path: path.to_path_buf(), detail };
        if bytes.len() < HEADER_BYTES || &bytes[..4] != MAGIC || bytes[4] != FORMAT {
            return Err(damaged("not a document-frequency file of format 1".into()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        let (depth, width_bits) = (u32_at(5), u32_at(9));
        let documents = u64::from_le_bytes(bytes[13..21].try_into().expect("8 bytes"));
        if !(1..=16).contains(&depth) || !(4..=28).contains(&width_bits) {
            return Err(damaged(format!("a sketch of {depth} x 2^{width_bits} counters")));
        }
        let cells = (depth as usize) << width_bits;
        let raw = zstd::bulk::decompress(&bytes[HEADER_BYTES..], cells * 4)
            .map_err(|e| damaged(format!("counters: {e}")))?;
        if raw.len() != cells * 4 {
            return Err(damaged(format!("{} bytes of counters, not {}", raw.len(), cells * 4)));
        }
        let counts =
            raw.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4"))).collect();
        Ok(Frequencies { depth, width_bits, documents, counts })
    }
}

/// Writes `frequencies` as the document frequencies of the segment in `segment_dir`
/// (atomically: a run that dies leaves no half-written file, and its segment is not
/// committed anyway).
///
/// # Errors
/// [`Error::Write`].
pub fn write_frequencies(segment_dir: &Path, frequencies: &Frequencies) -> Result<()> {
    crate::destination::create_dir_all(segment_dir)
        .map_err(|source| Error::Write { path: segment_dir.to_path_buf(), source })?;
    crate::destination::write_atomically(
        &segment_dir.join(FREQUENCIES_FILE),
        &frequencies.to_bytes(),
    )
}

/// The sum of the document frequencies of the segments in `segment_dirs`, or `None` when
/// none has any (an index of MinHash runs, or of runs before frequencies were kept).
///
/// # Errors
/// [`Error::ReadFile`] when a file cannot be read, [`Error::Damaged`] when one does not
/// parse or has another shape than the others.
pub fn read_frequencies<'a>(
    segment_dirs: impl IntoIterator<Item = &'a Path>,
) -> Result<Option<Frequencies>> {
    let mut total: Option<Frequencies> = None;
    for dir in segment_dirs {
        let path = dir.join(FREQUENCIES_FILE);
        let bytes = match crate::destination::read_optional(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => continue,
            Err(source) => return Err(Error::ReadFile { path, source }),
        };
        let one = Frequencies::from_bytes(&bytes, &path)?;
        match &mut total {
            Some(total) => total.add(&one, &path)?,
            None => total = Some(one),
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(documents: u64, first: u32) -> Frequencies {
        let mut counts = vec![0; 2 << 4];
        counts[0] = first;
        counts[31] = 7;
        Frequencies { depth: 2, width_bits: 4, documents, counts }
    }

    #[test]
    fn segments_files_sum_and_segments_without_one_count_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, none) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("c"));
        assert_eq!(read_frequencies([a.as_path()]).unwrap(), None);
        write_frequencies(&a, &sample(10, 3)).unwrap();
        write_frequencies(&b, &sample(5, u32::MAX)).unwrap();
        let sum = read_frequencies([a.as_path(), none.as_path(), b.as_path()]).unwrap().unwrap();
        assert_eq!((sum.documents, sum.counts[0], sum.counts[31]), (15, u32::MAX, 14));
        assert_eq!(read_frequencies([a.as_path()]).unwrap(), Some(sample(10, 3)));
    }

    #[test]
    fn a_damaged_or_other_shaped_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        write_frequencies(&a, &sample(1, 1)).unwrap();
        let mut other = sample(1, 1);
        other.width_bits = 5;
        other.counts = vec![0; 2 << 5];
        write_frequencies(&b, &other).unwrap();
        let error = read_frequencies([a.as_path(), b.as_path()]).unwrap_err().to_string();
        assert!(error.contains("b/frequencies.bin") && error.contains("2 x 2^5"), "{error}");
        std::fs::write(b.join(FREQUENCIES_FILE), b"NDDF\x01short").unwrap();
        let error = read_frequencies([b.as_path()]).unwrap_err().to_string();
        assert!(error.contains("b/frequencies.bin"), "{error}");
    }
}
