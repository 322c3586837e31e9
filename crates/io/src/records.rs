//! What readers produce and what the outputs say about each record: documents, rejects,
//! decisions and reasons.

use neardup_core::DocId;
use serde::{Deserialize, Serialize};

/// A document read from the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputDoc {
    /// Position in the input.
    pub doc: DocId,
    /// The id from the record's id field (or generated from its location).
    pub id: String,
    /// The text field.
    pub text: String,
    /// Where a web page came from (WARC and WET input).
    pub meta: Option<Box<WebMeta>>,
}

/// Where a web page came from, carried into `documents/`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WebMeta {
    /// `WARC-Target-URI`, without the `<...>` some crawlers wrap it in.
    pub url: Option<String>,
    /// `WARC-Date`: when the page was fetched, as the archive wrote it.
    pub date: Option<String>,
    /// `WARC-Payload-Digest` (or `WARC-Block-Digest`).
    pub digest: Option<String>,
    /// What is left of the page once its boilerplate is out: set as the job leaves it out,
    /// before signing; not a column.
    #[serde(default)]
    pub own_text: OwnText,
}

/// Whether anything is left of a web page once its boilerplate (template lines, notices
/// and promotions the corpus repeats) is left out.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum OwnText {
    /// Text of its own (or no boilerplate was learned for it).
    #[default]
    Present,
    /// Nothing: every line is boilerplate. It is kept, never joined by its template.
    Absent,
}

/// A record that could not become a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedRecord {
    /// Position in the input.
    pub doc: DocId,
    /// The record's id, when it could be read.
    pub id: Option<String>,
    /// Why it was rejected.
    pub reason: Reason,
    /// What exactly was wrong, for people.
    pub detail: String,
}

/// One record from a reader.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Record {
    /// A readable document.
    Doc(InputDoc),
    /// A record rejected with its reason.
    Reject(RejectedRecord),
}

impl Record {
    /// The record's position.
    pub fn doc(&self) -> DocId {
        match self {
            Record::Doc(d) => d.doc,
            Record::Reject(r) => r.doc,
        }
    }
}

/// The decision for a document, as written to the `decision` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// In the deduplicated dataset.
    Keep,
    /// A duplicate of the kept document of its cluster.
    Remove,
    /// Not a usable document (see the reason).
    Reject,
}

impl Decision {
    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Keep => "keep",
            Decision::Remove => "remove",
            Decision::Reject => "reject",
        }
    }

    /// Parses a column value.
    pub fn parse(s: &str) -> Option<Self> {
        [Decision::Keep, Decision::Remove, Decision::Reject].into_iter().find(|d| d.as_str() == s)
    }
}

/// Why a record was rejected or removed, or why a kept document was not compared, as
/// written to the `reason` column. The values are stable: analysts group by them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// The line is not a JSON object.
    MalformedJson,
    /// The line or text is not valid UTF-8.
    InvalidUtf8,
    /// The id field is missing or null.
    MissingId,
    /// The id field is neither a string nor an integer.
    InvalidId,
    /// The text field is missing or null.
    MissingText,
    /// The text field is not a string.
    TextNotString,
    /// The text is empty, or nothing is left of it after normalisation.
    EmptyText,
    /// An earlier record has the same id.
    DuplicateId,
    /// The rest of a damaged file could not be read.
    Unreadable,
    /// A web-archive record whose structure is broken (headers, length, HTTP part).
    MalformedRecord,
    /// A record bigger than the reader's limit.
    TooLarge,
    /// Same normalised text as the kept document.
    ExactDuplicate,
    /// Verified near-duplicate of a document in the kept document's cluster.
    NearDuplicate,
    /// Kept without near-duplicate matching: fewer than `min_features` features.
    TooFewFeatures,
    /// Kept although a cluster member: never verified against the kept document, and
    /// `decision.removal` is `verified`.
    UnverifiedInCluster,
    /// Kept without near-duplicate matching: a web page whose every line is boilerplate
    /// (template lines, notices, promotions), so nothing of its own is left to compare.
    BoilerplateOnly,
    /// Removed with paragraph-level dedup: more of its characters than
    /// `paragraphs.max_repeated_share` are in paragraphs other documents hold, and it holds
    /// no paragraph that a later document left out.
    MostlyRepeated,
}

impl Reason {
    /// Every reason, in column-value order.
    pub const ALL: [Reason; 17] = [
        Reason::MalformedJson,
        Reason::InvalidUtf8,
        Reason::MissingId,
        Reason::InvalidId,
        Reason::MissingText,
        Reason::TextNotString,
        Reason::EmptyText,
        Reason::DuplicateId,
        Reason::Unreadable,
        Reason::MalformedRecord,
        Reason::TooLarge,
        Reason::ExactDuplicate,
        Reason::NearDuplicate,
        Reason::TooFewFeatures,
        Reason::UnverifiedInCluster,
        Reason::BoilerplateOnly,
        Reason::MostlyRepeated,
    ];

    /// The column value.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MalformedJson => "malformed_json",
            Reason::InvalidUtf8 => "invalid_utf8",
            Reason::MissingId => "missing_id",
            Reason::InvalidId => "invalid_id",
            Reason::MissingText => "missing_text",
            Reason::TextNotString => "text_not_string",
            Reason::EmptyText => "empty_text",
            Reason::DuplicateId => "duplicate_id",
            Reason::Unreadable => "unreadable",
            Reason::MalformedRecord => "malformed_record",
            Reason::TooLarge => "too_large",
            Reason::ExactDuplicate => "exact_duplicate",
            Reason::NearDuplicate => "near_duplicate",
            Reason::TooFewFeatures => "too_few_features",
            Reason::BoilerplateOnly => "boilerplate_only",
            Reason::UnverifiedInCluster => "unverified_in_cluster",
            Reason::MostlyRepeated => "mostly_repeated",
        }
    }

    /// Parses a column value.
    pub fn parse(s: &str) -> Option<Self> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_values_round_trip() {
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.as_str()), Some(r));
            // serde and the column agree, so summary.json and Parquet use one vocabulary.
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{}\"", r.as_str()));
        }
        for d in [Decision::Keep, Decision::Remove, Decision::Reject] {
            assert_eq!(Decision::parse(d.as_str()), Some(d));
        }
    }
}
