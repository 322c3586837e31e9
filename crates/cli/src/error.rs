//! Usage errors (exit code 2) and the hints printed under an error.

use neardup_io::Reason;
use neardup_job::JobError;

/// A usage or job-file error (exit code 2), as opposed to a failed job (exit code 1).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(String);

impl UsageError {
    /// A usage error with this message.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

/// A suggestion for common mistakes, chosen from the error's type.
pub(crate) fn hint(e: &anyhow::Error) -> Option<&'static str> {
    const TEXT: &str =
        "set `input.text_field` (or --text-field) to the field that holds the document text";
    const ID: &str =
        "set `input.id_field` (or --id-field) to the id field, or \"\" to number records";
    const REJECTS: &str = "documents/ lists every rejected record with its reason; raise `decision.max_reject_ratio` to accept them";
    match e.chain().find_map(|cause| cause.downcast_ref::<JobError>())? {
        JobError::Input { missing_column: Some(setting), .. } if setting == "id_field" => Some(ID),
        JobError::Input { missing_column: Some(_), .. } => Some(TEXT),
        JobError::TooManyRejects { top_reason, .. }
            if *top_reason == Reason::MissingText.as_str() =>
        {
            Some(TEXT)
        }
        JobError::TooManyRejects { top_reason, .. }
            if *top_reason == Reason::MissingId.as_str() =>
        {
            Some(ID)
        }
        JobError::TooManyRejects { .. } => Some(REJECTS),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejects(top_reason: &'static str) -> anyhow::Error {
        let by_reason = format!("{top_reason} 9");
        let e = JobError::TooManyRejects {
            rejected: 9,
            top_reason,
            by_reason,
            records: 10,
            max_ratio: 0.5,
        };
        anyhow::Error::new(e).context("the job failed")
    }

    #[test]
    fn hints_come_from_the_error_type_under_any_context() {
        let missing = JobError::Input {
            worker: 0,
            message: "\"a.parquet\" has no column \"text\"".into(),
            missing_column: Some("text_field".into()),
        };
        let missing = anyhow::Error::new(missing).context("the job failed");
        assert!(hint(&missing).unwrap().contains("input.text_field"));
        let no_id = JobError::Input {
            worker: 0,
            message: "\"a.parquet\" has no column \"id\"".into(),
            missing_column: Some("id_field".into()),
        };
        assert!(hint(&anyhow::Error::new(no_id)).unwrap().contains("input.id_field"));
        assert!(hint(&rejects("missing_text")).unwrap().contains("input.text_field"));
        assert!(hint(&rejects("missing_id")).unwrap().contains("input.id_field"));
        assert!(hint(&rejects("invalid_utf8")).unwrap().contains("max_reject_ratio"));
        // A message that only mentions a column is not a missing column.
        let other = JobError::Input {
            worker: 1,
            message: "cannot read \"has no column.jsonl\"".into(),
            missing_column: None,
        };
        assert_eq!(hint(&anyhow::Error::new(other)), None);
        assert_eq!(hint(&anyhow::Error::new(UsageError::new("missing_text"))), None);
    }
}
