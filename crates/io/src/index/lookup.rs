//! Lookups: the key rows of probed keys, and the docs rows of wanted documents, reading
//! only the row groups and pages that can hold them.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::file::statistics::Statistics;

use crate::error::{Error, Result};

use crate::parquet_in::ParquetInput;

use super::parts::{
    DOC_ROW_GROUP_ROWS, IndexRef, IndexedDoc, KEY_ROW_GROUP_ROWS, KeyRow, KeyTable, as_i64,
    damaged, doc_part_path, doc_rows, open_part, table_part_path,
};

/// What a lookup read, for the benchmark and the run summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProbeStats {
    /// Parts opened (their footers read).
    pub parts: u64,
    /// Row groups whose key range holds a probed key (their bloom filters read).
    pub bloom_filters: u64,
    /// Row groups read.
    pub row_groups_read: u64,
    /// Rows decoded.
    pub rows_read: u64,
}

/// The `(min, max)` of integer column `column` (Int64 or Int32) in row group `rg`.
pub(super) fn column_range(
    builder: &ParquetRecordBatchReaderBuilder<ParquetInput>,
    rg: usize,
    column: usize,
    path: &Path,
) -> Result<(i64, i64)> {
    let range = match builder.metadata().row_group(rg).column(column).statistics() {
        Some(Statistics::Int64(s)) => s.min_opt().copied().zip(s.max_opt().copied()),
        Some(Statistics::Int32(s)) => {
            s.min_opt().map(|&v| i64::from(v)).zip(s.max_opt().map(|&v| i64::from(v)))
        }
        _ => return Err(damaged(path, "a row group has no integer statistics")),
    };
    range.ok_or_else(|| damaged(path, "a row group has no range"))
}

/// The pages of the key column of row group `rg`, as `(first row, end row, min key, max
/// key)`; one page spanning the row group when the file has no page index.
pub(super) fn page_ranges(
    metadata: &parquet::file::metadata::ParquetMetaData,
    rg: usize,
    rows: usize,
) -> Vec<(usize, usize, i64, i64)> {
    use parquet::file::page_index::column_index::ColumnIndexMetaData;
    let index = metadata.page_index_for_row_group(rg);
    let (Some(ColumnIndexMetaData::INT64(column)), Some(offsets)) =
        (index.column_index(0), index.offset_index(0))
    else {
        return vec![(0, rows, i64::MIN, i64::MAX)];
    };
    let locations = offsets.page_locations();
    (0..locations.len())
        .map(|p| {
            let first = usize::try_from(locations[p].first_row_index).unwrap_or(0);
            let end = locations
                .get(p + 1)
                .map_or(rows, |l| usize::try_from(l.first_row_index).unwrap_or(rows));
            let min = column.min_value(p).copied().unwrap_or(i64::MIN);
            let max = column.max_value(p).copied().unwrap_or(i64::MAX);
            (first, end, min, max)
        })
        .collect()
}

/// Rows of the key part `partition` of the segment in `segment_dir` whose key is in `keys`
/// (sorted, distinct), in key order. A missing part (no keys fell in that partition) has no
/// rows.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn probe_keys(
    segment_dir: &Path,
    partition: u32,
    keys: &[u64],
    stats: &mut ProbeStats,
) -> Result<Vec<KeyRow>> {
    probe_table(segment_dir, partition, keys, stats)
}

/// Rows of the part `partition` of table `R` of the segment in `segment_dir` whose key is
/// in `keys` (sorted, distinct), in the part's order: [`probe_keys`] for any [`KeyTable`].
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn probe_table<R: KeyTable>(
    segment_dir: &Path,
    partition: u32,
    keys: &[u64],
    stats: &mut ProbeStats,
) -> Result<Vec<R>> {
    debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "probe keys sorted and distinct");
    let path = table_part_path::<R>(segment_dir, partition);
    let mut found = Vec::new();
    if keys.is_empty() {
        return Ok(found);
    }
    let Some(builder) = open_part(&path, true)? else { return Ok(found) };
    stats.parts += 1;
    // Keys are stored as i64 bits, so the stored order is the signed order: compare in it.
    let mut probes: Vec<i64> = keys.iter().map(|&k| as_i64(k)).collect();
    probes.sort_unstable();
    let metadata = builder.metadata().clone();
    let mut row_groups = Vec::new();
    let mut wanted: Vec<i64> = Vec::new();
    let mut selectors: Vec<RowSelector> = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let (min, max) = column_range(&builder, rg, 0, &path)?;
        let from = probes.partition_point(|&k| k < min);
        let to = probes.partition_point(|&k| k <= max);
        if from == to {
            continue;
        }
        stats.bloom_filters += 1;
        let bloom = builder
            .get_row_group_column_bloom_filter(rg, 0)
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let hits: Vec<i64> = probes[from..to]
            .iter()
            .copied()
            .filter(|k| bloom.as_ref().is_none_or(|b| b.check(k)))
            .collect();
        if hits.is_empty() {
            continue;
        }
        // Only the pages whose key range holds a hit (keys are sorted, so a key's rows
        // are in one page or a few adjacent ones); the whole row group without a page
        // index.
        let rows = usize::try_from(metadata.row_group(rg).num_rows()).unwrap_or(0);
        let pages = page_ranges(&metadata, rg, rows);
        let mut at = 0usize;
        let mut selected_any = false;
        for (first, end, page_min, page_max) in pages {
            let lo = hits.partition_point(|&k| k < page_min);
            if lo < hits.len() && hits[lo] <= page_max {
                if first > at {
                    selectors.push(RowSelector::skip(first - at));
                }
                selectors.push(RowSelector::select(end - first));
                stats.rows_read += (end - first) as u64;
                at = end;
                selected_any = true;
            }
        }
        if !selected_any {
            continue; // a bloom false positive outside every page's range
        }
        if rows > at {
            selectors.push(RowSelector::skip(rows - at));
        }
        row_groups.push(rg);
        wanted.extend(hits);
    }
    if row_groups.is_empty() {
        return Ok(found);
    }
    stats.row_groups_read += row_groups.len() as u64;
    let reader = builder
        .with_row_groups(row_groups)
        .with_row_selection(RowSelection::from(selectors))
        .with_batch_size(KEY_ROW_GROUP_ROWS)
        .build()
        .map_err(|source| Error::Parquet { path: path.clone(), source })?;
    let mut next = 0usize; // wanted is sorted: a merge join with the sorted rows
    for batch in reader {
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        for row in R::decode(&batch, &path)? {
            let k = as_i64(row.key());
            while next < wanted.len() && wanted[next] < k {
                next += 1;
            }
            if next < wanted.len() && wanted[next] == k {
                found.push(row);
            }
        }
        // Row groups are read in order and keys ascend across them: `next` carries over.
    }
    found.sort_unstable();
    Ok(found)
}

/// The documents `docs` (sorted, distinct) of docs part `part` of the segment in
/// `segment_dir`, in order; documents not in the part are left out.
///
/// # Errors
/// [`Error::Open`], [`Error::Parquet`], [`Error::Arrow`] or [`Error::Damaged`].
pub fn fetch_docs(
    segment_dir: &Path,
    part: u32,
    docs: &[IndexRef],
    stats: &mut ProbeStats,
) -> Result<Vec<IndexedDoc>> {
    debug_assert!(docs.windows(2).all(|w| w[0] < w[1]), "wanted documents sorted and distinct");
    let path = doc_part_path(segment_dir, part);
    let mut found = Vec::new();
    if docs.is_empty() {
        return Ok(found);
    }
    let Some(builder) = open_part(&path, true)? else { return Ok(found) };
    stats.parts += 1;
    // Row groups that can hold a wanted document. Rows are sorted by (generation, doc_id):
    // a wanted document is in a row group's range when its generation is strictly inside
    // the group's generation range, or is at an end of it with the doc_id in the group's
    // doc_id range (a superset of that generation's doc_ids in the group).
    let metadata = builder.metadata().clone();
    let mut row_groups = Vec::new();
    for rg in 0..metadata.num_row_groups() {
        let (g_min, g_max) = column_range(&builder, rg, 0, &path)?;
        let (d_min, d_max) = column_range(&builder, rg, 1, &path)?;
        let holds = |r: &IndexRef| {
            let (g, d) = (i64::from(r.generation), as_i64(r.doc));
            (g > g_min && g < g_max) || ((g == g_min || g == g_max) && d >= d_min && d <= d_max)
        };
        let from = docs.partition_point(|r| i64::from(r.generation) < g_min);
        let to = docs.partition_point(|r| i64::from(r.generation) <= g_max);
        if docs[from..to].iter().any(holds) {
            row_groups.push(rg);
        }
    }
    if row_groups.is_empty() {
        return Ok(found);
    }
    // First pass: the generation and doc_id columns of those row groups give the positions
    // of wanted rows.
    let mut selectors = Vec::new();
    let mut run_skip = 0usize;
    let mut run_select = 0usize;
    {
        // The same file again, with the metadata already read.
        let mask = ProjectionMask::roots(builder.parquet_schema(), [0, 1]);
        let file = ParquetInput::open(&path, None, None)
            .map_err(|source| Error::Open { path: path.clone(), source })?;
        let metadata = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let ids = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata)
            .with_projection(mask)
            .with_row_groups(row_groups.clone())
            .with_batch_size(DOC_ROW_GROUP_ROWS)
            .build()
            .map_err(|source| Error::Parquet { path: path.clone(), source })?;
        let mut next = 0usize;
        for batch in ids {
            let batch =
                batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
            stats.rows_read += batch.num_rows() as u64;
            let generation = batch.column(0).as_primitive::<Int32Type>().values();
            let doc = batch.column(1).as_primitive::<Int64Type>().values();
            for (&g, &d) in generation.iter().zip(doc.iter()) {
                let here = IndexRef { generation: g as u32, doc: d as u64 };
                while next < docs.len() && docs[next] < here {
                    next += 1;
                }
                let hit = next < docs.len() && docs[next] == here;
                if hit {
                    if run_skip > 0 {
                        selectors.push(RowSelector::skip(run_skip));
                        run_skip = 0;
                    }
                    run_select += 1;
                } else {
                    if run_select > 0 {
                        selectors.push(RowSelector::select(run_select));
                        run_select = 0;
                    }
                    run_skip += 1;
                }
            }
        }
    }
    if run_select > 0 {
        selectors.push(RowSelector::select(run_select));
    }
    let selection = RowSelection::from(selectors);
    if selection.row_count() == 0 {
        return Ok(found);
    }
    stats.row_groups_read += row_groups.len() as u64;
    // Second pass: all columns of the wanted rows only; the page index skips other pages.
    let reader = builder
        .with_row_groups(row_groups)
        .with_row_selection(selection)
        .with_batch_size(1024)
        .build()
        .map_err(|source| Error::Parquet { path: path.clone(), source })?;
    for batch in reader {
        let batch =
            batch.map_err(|source| Error::Arrow { path: path.clone(), record: 0, source })?;
        found.extend(doc_rows(&batch, &path)?);
    }
    Ok(found)
}
