//! Settings from the command line: a job file merged with the flags that override it (in
//! one place, for every subcommand), the flags' value types, and byte sizes.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use neardup_job::{JobSpec, KeepRule, Method, Removal};

use crate::error::UsageError;

/// Signature method on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum MethodArg {
    /// MinHash with banded LSH, verified by Jaccard similarity.
    Minhash,
    /// SimHash with block tables, verified by Hamming distance.
    Simhash,
}

/// Removal rule on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RemovalArg {
    /// Every member of a cluster but the kept document.
    Connected,
    /// Only members verified against the kept document.
    Verified,
}

/// Keep rule on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum KeepArg {
    /// Keep the earliest document of a cluster (files in path order, then records).
    First,
    /// Keep the longest document of a cluster; ties go to the earliest.
    Longest,
}

/// Flags that override a job file's settings; `None` leaves the job file's value.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `method`.
    pub method: Option<MethodArg>,
    /// `minhash.threshold`.
    pub threshold: Option<f64>,
    /// `simhash.max_distance`.
    pub max_distance: Option<u32>,
    /// `decision.keep`.
    pub keep: Option<KeepArg>,
    /// `decision.removal`.
    pub removal: Option<RemovalArg>,
    /// `input.id_field`.
    pub id_field: Option<String>,
    /// `input.text_field`.
    pub text_field: Option<String>,
    /// `seed`.
    pub seed: Option<u64>,
    /// `index.dir`.
    pub index: Option<PathBuf>,
    /// `paragraphs.enabled` (only turned on).
    pub paragraphs: bool,
    /// `--set KEY=VALUE`: any job-file key, applied over the job file before the flags
    /// above.
    pub set: Vec<String>,
}

/// The job file at `job` (the defaults without one) with `overrides` applied.
///
/// # Errors
/// [`UsageError`] when the job file cannot be read or parsed.
pub fn job_spec(job: Option<&Path>, overrides: &Overrides) -> anyhow::Result<JobSpec> {
    let text = job.map(job_file_text).transpose()?;
    let mut spec = match (job, &text) {
        (Some(path), Some(text)) => parse_job_file(path, text)?,
        _ => JobSpec::default(),
    };
    if !overrides.set.is_empty() {
        spec = with_keys_set(text.as_deref(), &overrides.set)?;
    }
    let o = overrides;
    if let Some(m) = o.method {
        spec.method = m.into();
    }
    if let Some(t) = o.threshold {
        spec.minhash.threshold = Some(t);
    }
    if let Some(k) = o.max_distance {
        spec.simhash.max_distance = Some(k);
    }
    if let Some(k) = o.keep {
        spec.decision.keep = match k {
            KeepArg::First => KeepRule::First,
            KeepArg::Longest => KeepRule::Longest,
        };
    }
    if let Some(r) = o.removal {
        spec.decision.removal = match r {
            RemovalArg::Connected => Removal::Connected,
            RemovalArg::Verified => Removal::Verified,
        };
    }
    if let Some(f) = &o.id_field {
        spec.input.id_field.clone_from(f);
    }
    if let Some(f) = &o.text_field {
        spec.input.text_field.clone_from(f);
    }
    if let Some(s) = o.seed {
        spec.seed = s;
    }
    if let Some(dir) = &o.index {
        spec.index.dir = Some(dir.clone());
    }
    if o.paragraphs {
        spec.paragraphs.enabled = true;
    }
    for warning in ignored_flags(&spec, o) {
        eprintln!("warning: {warning}");
    }
    Ok(spec)
}

/// The flags given that the job's method does not use, each with why.
fn ignored_flags(spec: &JobSpec, o: &Overrides) -> Vec<String> {
    let mut ignored = Vec::new();
    match spec.method {
        Method::Minhash if o.max_distance.is_some() => ignored.push(
            "--max-distance is ignored: the method is MinHash, which uses --threshold (SimHash \
             uses --max-distance)"
                .to_string(),
        ),
        Method::Simhash if o.threshold.is_some() => ignored.push(
            "--threshold is ignored: the method is SimHash, which uses --max-distance (MinHash \
             uses --threshold)"
                .to_string(),
        ),
        _ => {}
    }
    ignored
}

/// The job file at `path`, holding `text`.
fn parse_job_file(path: &Path, text: &str) -> anyhow::Result<JobSpec> {
    Ok(toml::from_str::<JobSpec>(text)
        .map_err(|e| UsageError::new(format!("invalid job file \"{}\": {e}", path.display())))?)
}

fn job_file_text(path: &Path) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(path).map_err(|e| {
        UsageError::new(format!("cannot read job file \"{}\": {e}", path.display()))
    })?)
}

/// The job file's `text` (checked before) with each `KEY=VALUE` of `sets` set in
/// turn, checked as the job file is: a key the job file could not hold, or a value of the
/// wrong type, is an error naming the `--set`. A value is read as TOML (`3`, `0.7`,
/// `false`, `"text"`, `[1, 2]`), or else taken as a string (`--set input.url_field=link`).
fn with_keys_set(text: Option<&str>, sets: &[String]) -> anyhow::Result<JobSpec> {
    let mut table: toml::Table = match text {
        Some(text) => toml::from_str(text).expect("checked as a job file"),
        None => toml::Table::new(),
    };
    let mut spec = JobSpec::default();
    for set in sets {
        let invalid = |why: &str| UsageError::new(format!("invalid --set \"{set}\": {why}"));
        let (key, value) = set.split_once('=').ok_or_else(|| invalid("expected KEY=VALUE"))?;
        let path: Vec<&str> = key.trim().split('.').collect();
        if path.iter().any(|part| part.is_empty()) {
            return Err(invalid("expected a key such as features.ngram_chars").into());
        }
        let value = value.trim();
        let value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        let (last, folders) = path.split_last().expect("a key has a part");
        let mut at = &mut table;
        for folder in folders {
            let entry = at.entry(folder.to_string()).or_insert_with(|| toml::Table::new().into());
            at =
                entry.as_table_mut().ok_or_else(|| invalid(&format!("{folder} is not a table")))?;
        }
        at.insert(last.to_string(), value);
        spec = toml::Value::Table(table.clone())
            .try_into::<JobSpec>()
            .map_err(|e| invalid(e.to_string().trim_end()))?;
    }
    Ok(spec)
}

impl From<MethodArg> for Method {
    fn from(m: MethodArg) -> Method {
        match m {
            MethodArg::Minhash => Method::Minhash,
            MethodArg::Simhash => Method::Simhash,
        }
    }
}

/// Parses a byte count with an optional binary suffix: `1073741824`, `512M`, `8G`, `1T`.
///
/// # Errors
/// A message for clap when the text is not such a count.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                'B' => 0,
                _ => return Err(format!("unknown size suffix in \"{text}\" (use K, M, G or T)")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: f64 =
        digits.trim().parse().map_err(|_| format!("\"{text}\" is not a size like 512M or 8G"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(1.0..1e19).contains(&bytes) {
        return Err(format!("size \"{text}\" is out of range"));
    }
    Ok(bytes as u64)
}

/// A count given on the command line that must be at least 1 (workers, processes).
///
/// # Errors
/// A message for clap when `text` is not a whole number of at least 1.
pub(crate) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_of_the_other_method_is_named_as_ignored() {
        let simhash = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        let threshold = Overrides { threshold: Some(0.7), ..Overrides::default() };
        let said = ignored_flags(&simhash, &threshold);
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("--threshold is ignored: the method is SimHash"), "{said:?}");
        let distance = Overrides { max_distance: Some(5), ..Overrides::default() };
        assert!(ignored_flags(&simhash, &distance).is_empty());
        let minhash = JobSpec::default();
        assert!(ignored_flags(&minhash, &threshold).is_empty());
        let said = ignored_flags(&minhash, &distance);
        assert!(
            said[0].starts_with("--max-distance is ignored: the method is MinHash"),
            "{said:?}"
        );
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("8g"), Ok(8 << 30));
        assert_eq!(parse_bytes("1.5G"), Ok(3 << 29));
        assert_eq!(parse_bytes("2T"), Ok(2 << 40));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
        assert!(parse_bytes("0").is_err());
    }

    #[test]
    fn flags_override_the_job_file_and_the_rest_is_left() {
        let dir = std::env::temp_dir().join(format!("neardup-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let job = dir.join("job.toml");
        std::fs::write(&job, "method = \"simhash\"\nseed = 7\n[minhash]\nthreshold = 0.6\n")
            .unwrap();
        let overrides = Overrides {
            threshold: Some(0.9),
            keep: Some(KeepArg::Longest),
            ..Overrides::default()
        };
        let spec = job_spec(Some(&job), &overrides).unwrap();
        assert_eq!(spec.method, Method::Simhash);
        assert_eq!(spec.seed, 7);
        assert_eq!(spec.minhash.threshold, Some(0.9));
        assert_eq!(spec.decision.keep, KeepRule::Longest);
        assert_eq!(spec.input.text_field, JobSpec::default().input.text_field);
        let plain = job_spec(None, &Overrides::default()).unwrap();
        assert_eq!(plain.method, JobSpec::default().method);
        std::fs::write(&job, "method = 3\n").unwrap();
        let error = job_spec(Some(&job), &Overrides::default()).unwrap_err();
        assert!(error.downcast_ref::<UsageError>().is_some(), "{error:#}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn set_keys_go_over_the_job_file_and_under_the_flags_with_the_files_checks() {
        let dir = tempfile::tempdir().unwrap();
        let job = dir.path().join("job.toml");
        std::fs::write(&job, "seed = 7\n[features]\nngram_chars = 4\n").unwrap();
        let set = |sets: &[&str], threshold: Option<f64>| {
            let set = sets.iter().map(ToString::to_string).collect();
            job_spec(Some(&job), &Overrides { set, threshold, ..Overrides::default() })
        };
        let spec = set(
            &[
                "features.ngram_chars=3",
                "minhash.threshold = 0.7",
                "input.url_field=link",
                "boilerplate.enabled=false",
            ],
            Some(0.75),
        )
        .unwrap();
        assert_eq!(
            (spec.seed, spec.features.ngram_chars),
            (7, Some(3)),
            "the file's other keys stay"
        );
        assert_eq!(spec.minhash.threshold, Some(0.75), "a flag goes over --set");
        assert_eq!(spec.input.url_field, "link", "a bare word is a string");
        assert!(!spec.boilerplate.enabled);
        for (bad, says) in [
            ("features.ngram_char=3", "unknown field `ngram_char`"),
            ("features.ngram_chars=abc", "expected usize"),
            ("features", "expected KEY=VALUE"),
            ("seed.x=1", "seed is not a table"),
            (".x=1", "expected a key"),
        ] {
            let error = set(&[bad], None).unwrap_err();
            let text = format!("{error:#}");
            assert!(error.downcast_ref::<UsageError>().is_some(), "{text}");
            assert!(text.contains(&format!("--set \"{bad}\"")) && text.contains(says), "{text}");
        }
        let none =
            job_spec(None, &Overrides { set: vec!["seed=9".into()], ..Overrides::default() });
        assert_eq!(none.unwrap().seed, 9, "without a job file, over the defaults");
    }
}
