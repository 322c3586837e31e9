//! The deduplicated dataset: kept records copied out of their input files, in the input's
//! own format family, every original field preserved.
//!
//! JSONL lines are copied byte for byte (same compression as the input), but for the
//! paragraphs paragraph-level dedup leaves out of a record's text field (`kept_text.rs`,
//! and of a Parquet row's text column); Parquet rows keep
//! their full schema; web-archive documents become JSON Lines with their id, URL, date,
//! digest, the text compared (`main_text`: without the template lines and the lines
//! outside the main text, as the caller gives it) and the whole extracted text. Files are written under a hidden name and renamed when
//! complete; objects are uploaded under their names and appear when complete.

use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use crate::decompress::{Compression, decompressed};
use crate::destination::OutFile;
use crate::error::{Error, Result};
use crate::input::{Format, InputFile};
use crate::jsonl::read_line_bounded;
use crate::read_options::OnReadError;
use crate::records::{InputDoc, Record};
use crate::warc::WarcRecords;

/// The name of a file's kept copy: its input position and name, so copies of
/// equally named files in different folders do not collide.
pub fn kept_file_name(file: &InputFile) -> String {
    let name = file.path.file_name().map_or("input".into(), |n| n.to_string_lossy());
    match file.format {
        Format::Warc(_) => format!("{:05}-{name}.jsonl.gz", file.index),
        _ => format!("{:05}-{name}", file.index),
    }
}

/// Copies the records of `file` whose record numbers are in `kept` (ascending) into `dir`;
/// returns how many were written. `max_record_bytes` is the run's record size limit, so
/// records are numbered as the run numbered them and no larger one is held. A file with nothing kept still gets an (empty) copy, so
/// the output lists every input.
///
/// # Errors
/// [`Error::Open`], [`Error::Read`], [`Error::Parquet`] or [`Error::Write`], naming the file.
pub fn write_kept(
    file: &InputFile,
    kept: &KeptRecords<'_>,
    dir: &Path,
    max_record_bytes: u64,
    main_text: &mut dyn FnMut(&InputDoc) -> String,
) -> Result<u64> {
    let path = dir.join(kept_file_name(file));
    let write_err = |source| Error::Write { path: path.clone(), source };
    let out = OutFile::create(&path).map_err(write_err)?;
    let copying = Copying { file, kept, path: &path, max_record_bytes };
    let (written, out) = match file.format {
        Format::Jsonl(compression) => {
            let out = Encoder::new(out, compression, &path)?;
            copy_jsonl(&copying, compression, out)?
        }
        Format::Parquet => copy_parquet(file, copying.kept, out, &path)?,
        Format::Warc(compression) => {
            let out = Encoder::new(out, Compression::Gzip, &path)?;
            copy_web_documents(&copying, compression, out, main_text)?
        }
    };
    out.commit().map_err(write_err)?;
    Ok(written)
}

/// The kept copy's writer, compressed as its input was.
enum Encoder {
    Plain(BufWriter<OutFile>),
    Gzip(flate2::write::GzEncoder<BufWriter<OutFile>>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<OutFile>>),
}

impl Encoder {
    fn new(out: OutFile, compression: Compression, path: &Path) -> Result<Self> {
        let out = BufWriter::with_capacity(1 << 16, out);
        Ok(match compression {
            Compression::None => Encoder::Plain(out),
            Compression::Gzip => {
                Encoder::Gzip(flate2::write::GzEncoder::new(out, flate2::Compression::default()))
            }
            Compression::Zstd => Encoder::Zstd(
                zstd::stream::write::Encoder::new(out, 3)
                    .map_err(|source| Error::Write { path: path.to_path_buf(), source })?,
            ),
        })
    }

    /// Ends the stream; returns the file, ready to commit.
    fn finish(self) -> std::io::Result<OutFile> {
        let out = match self {
            Encoder::Plain(out) => out,
            Encoder::Gzip(enc) => enc.finish()?,
            Encoder::Zstd(enc) => enc.finish()?,
        };
        out.into_inner().map_err(std::io::IntoInnerError::into_error)
    }
}

impl Write for Encoder {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(data),
            Encoder::Gzip(w) => w.write(data),
            Encoder::Zstd(w) => w.write(data),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(w) => w.flush(),
            Encoder::Zstd(w) => w.flush(),
        }
    }
}

/// The records of a file to keep: their numbers (ascending) and, with paragraph-level
/// dedup, the byte ranges of each one's text field to leave out (JSON Lines only; none, or
/// one list per record).
#[derive(Clone, Copy, Debug)]
pub struct KeptRecords<'a> {
    /// Record numbers, ascending.
    pub records: &'a [u64],
    /// Per record, the ranges of its text to leave out (empty: copied whole).
    pub cuts: &'a [Vec<(u64, u64)>],
    /// The text field whose value the ranges are of.
    pub text_field: &'a str,
}

/// What one kept copy copies: the records of `file` numbered in `kept` (ascending), read
/// with the run's record size limit, into the copy at `path`.
struct Copying<'a> {
    file: &'a InputFile,
    kept: &'a KeptRecords<'a>,
    path: &'a Path,
    max_record_bytes: u64,
}

fn copy_jsonl(
    copying: &Copying<'_>,
    compression: Compression,
    mut out: Encoder,
) -> Result<(u64, OutFile)> {
    let Copying { file, kept: records, path, max_record_bytes } = *copying;
    let kept = records.records;
    let open_err = |source| Error::Open { path: file.path.clone(), source };
    let raw = BufReader::new(crate::input::CountingFile::open_input(file, None).map_err(open_err)?);
    // The run that kept these records counted any zero padding after the last gzip member.
    let reader = decompressed(raw, compression, &Default::default()).map_err(open_err)?;
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let write_err = |source| Error::Write { path: path.to_path_buf(), source };
    let (mut line, mut number, mut next, mut written) = (Vec::new(), 0u64, 0usize, 0u64);
    while next < kept.len() {
        line.clear();
        let limit = usize::try_from(max_record_bytes).unwrap_or(usize::MAX);
        let (read, _) = read_line_bounded(&mut reader, &mut line, limit)
            .map_err(|source| Error::Read { path: file.path.clone(), record: number, source })?;
        if read == 0 {
            break;
        }
        number += 1;
        if number == kept[next] {
            if let Some(cuts) = records.cuts.get(next).filter(|c| !c.is_empty()) {
                // Its repeated paragraphs left out of the text field, every other byte kept.
                let rewritten = std::str::from_utf8(&line).ok().and_then(|l| {
                    let value: serde_json::Value = serde_json::from_str(l).ok()?;
                    let text = value.get(records.text_field)?.as_str()?;
                    crate::kept_text::with_field(
                        l.trim_end_matches(['\n', '\r']),
                        records.text_field,
                        &crate::kept_text::without_ranges(text, cuts),
                    )
                });
                if let Some(rewritten) = rewritten {
                    line = rewritten.into_bytes();
                }
            }
            out.write_all(&line).map_err(write_err)?;
            if !line.ends_with(b"\n") {
                out.write_all(b"\n").map_err(write_err)?;
            }
            written += 1;
            next += 1;
        }
    }
    Ok((written, out.finish().map_err(write_err)?))
}

fn copy_parquet(
    file: &InputFile,
    records: &KeptRecords<'_>,
    out: OutFile,
    tmp: &Path,
) -> Result<(u64, OutFile)> {
    let kept = records.records;
    let path = &file.path;
    let parquet_err = |source| Error::Parquet { path: path.clone(), source };
    let handle =
        crate::parquet_in::ParquetInput::open(path, Some(file.bytes), file.remote_version())
            .map_err(|source| Error::Open { path: path.clone(), source })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(handle).map_err(parquet_err)?;
    let schema = builder.schema().clone();
    let batches = builder.build().map_err(parquet_err)?;
    let props = WriterProperties::builder()
        .set_compression(ParquetCompression::ZSTD(ZstdLevel::try_new(3).expect("valid level")))
        .build();
    let mut writer = ArrowWriter::try_new(out, schema, Some(props))
        .map_err(|source| Error::ParquetWrite { path: tmp.to_path_buf(), source })?;
    let (mut first_row, mut next, mut written) = (1u64, 0usize, 0u64);
    for batch in batches {
        let batch = batch.map_err(|source| Error::Arrow {
            path: path.clone(),
            record: first_row,
            source,
        })?;
        let rows = batch.num_rows() as u64;
        let mut chosen_kept = Vec::new();
        let mask: BooleanArray = (first_row..first_row + rows)
            .map(|row| {
                let keep = next < kept.len() && kept[next] == row;
                if keep {
                    chosen_kept.push(next);
                }
                next += usize::from(keep);
                Some(keep)
            })
            .collect();
        let batch_err = |source| Error::Batch { path: tmp.to_path_buf(), source };
        let mut chosen: RecordBatch =
            arrow_select::filter::filter_record_batch(&batch, &mask).map_err(batch_err)?;
        let cuts = |i: usize| records.cuts.get(chosen_kept[i]).filter(|c| !c.is_empty());
        if (0..chosen.num_rows()).any(|i| cuts(i).is_some()) {
            chosen = without_repeated(&chosen, records.text_field, cuts).map_err(batch_err)?;
        }
        written += chosen.num_rows() as u64;
        writer
            .write(&chosen)
            .map_err(|source| Error::ParquetWrite { path: tmp.to_path_buf(), source })?;
        first_row += rows;
    }
    let out = writer
        .into_inner()
        .map_err(|source| Error::ParquetWrite { path: tmp.to_path_buf(), source })?;
    Ok((written, out))
}

/// `batch` with the ranges `cuts` gives for a row cut out of its `text_field` column (a
/// string column; any other column, or a batch without it, is as it was).
fn without_repeated<'c>(
    batch: &RecordBatch,
    text_field: &str,
    cuts: impl Fn(usize) -> Option<&'c Vec<(u64, u64)>>,
) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    let Some((at, _)) = batch.schema().column_with_name(text_field) else {
        return Ok(batch.clone());
    };
    let column = batch.column(at);
    let text = |i: usize| -> Option<String> {
        if column.is_null(i) {
            return None;
        }
        let value = match column.data_type() {
            arrow_schema::DataType::Utf8 => column.as_string::<i32>().value(i),
            arrow_schema::DataType::LargeUtf8 => column.as_string::<i64>().value(i),
            arrow_schema::DataType::Utf8View => column.as_string_view().value(i),
            _ => return None,
        };
        Some(match cuts(i) {
            Some(cuts) => crate::kept_text::without_ranges(value, cuts),
            None => value.to_string(),
        })
    };
    let values: Vec<Option<String>> = (0..batch.num_rows()).map(text).collect();
    let rewritten: arrow_array::ArrayRef = match column.data_type() {
        arrow_schema::DataType::Utf8 => Arc::new(arrow_array::StringArray::from(values)),
        arrow_schema::DataType::LargeUtf8 => Arc::new(arrow_array::LargeStringArray::from(values)),
        arrow_schema::DataType::Utf8View => Arc::new(arrow_array::StringViewArray::from(values)),
        _ => return Ok(batch.clone()),
    };
    let mut columns = batch.columns().to_vec();
    columns[at] = rewritten;
    RecordBatch::try_new(batch.schema(), columns)
}

fn copy_web_documents(
    copying: &Copying<'_>,
    compression: Compression,
    mut out: Encoder,
    main_text: &mut dyn FnMut(&InputDoc) -> String,
) -> Result<(u64, OutFile)> {
    let Copying { file, kept, path, max_record_bytes } = *copying;
    let kept = kept.records;
    let write_err = |source| Error::Write { path: path.to_path_buf(), source };
    let (mut next, mut written) = (0usize, 0u64);
    for record in WarcRecords::open(file, compression, OnReadError::Fail, None, max_record_bytes)? {
        if next >= kept.len() {
            break;
        }
        let Record::Doc(doc) = record? else { continue };
        while next < kept.len() && kept[next] < doc.doc.record() {
            next += 1;
        }
        if next < kept.len() && kept[next] == doc.doc.record() {
            let web = doc.meta.as_deref().cloned().unwrap_or_default();
            let line = serde_json::json!({
                "id": doc.id,
                "url": web.url,
                "date": web.date,
                "digest": web.digest,
                "main_text": main_text(&doc),
                "text": doc.text,
            });
            serde_json::to_writer(&mut out, &line)
                .map_err(|e| write_err(std::io::Error::other(e)))?;
            out.write_all(b"\n").map_err(write_err)?;
            written += 1;
            next += 1;
        }
    }
    Ok((written, out.finish().map_err(write_err)?))
}

/// The kept copies already in `dir`, for readers and tests.
pub fn kept_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).map_err(|source| Error::Open { path: dir.to_path_buf(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !n.starts_with('.')))
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Write as _};

    use super::*;

    fn input(path: &Path, index: u32) -> InputFile {
        InputFile {
            index,
            path: path.to_path_buf(),
            format: Format::of(path).unwrap(),
            bytes: 0,
            version: None,
        }
    }

    #[test]
    fn jsonl_lines_are_copied_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl.gz");
        let body = "{\"id\":\"a\",\"text\":\"x\",\"extra\":{\"k\":[1,2]}}\n\n{\"id\":\"b\",\"text\":\"y\"}\n{\"id\":\"c\",\"text\":\"z\"}";
        let mut enc = flate2::write::GzEncoder::new(
            File::create(&path).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(body.as_bytes()).unwrap();
        enc.finish().unwrap();
        let out = dir.path().join("kept");
        assert_eq!(
            write_kept(
                &input(&path, 3),
                &KeptRecords { records: &[1, 4], cuts: &[], text_field: "text" },
                &out,
                1 << 20,
                &mut |d| d.text.clone()
            )
            .unwrap(),
            2
        );
        let copy = out.join("00003-in.jsonl.gz");
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(File::open(copy).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(
            text,
            "{\"id\":\"a\",\"text\":\"x\",\"extra\":{\"k\":[1,2]}}\n{\"id\":\"c\",\"text\":\"z\"}\n"
        );
        assert_eq!(kept_files(&out).unwrap().len(), 1, "no temporary file left");
    }
}
