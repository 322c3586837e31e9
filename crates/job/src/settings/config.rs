//! A job checked: the job file's settings (`spec`) validated and resolved into a
//! [`JobConfig`], with its inputs, outputs and index plan.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use neardup_core::{
    BlockLayout, JaccardMode, LshParams, MAX_NUM_PERM, SIGNATURE_VERSION, SIMHASH_BITS,
};
use neardup_io::index::{Generation, Manifest};
use neardup_io::{InputFile, ReadOptions, resolved_path};
use neardup_text::{FeatureConfig, MAX_FEATURE_COUNT};

use crate::error::{ConfigError, invalid};
use crate::settings::memory::default_max_record_bytes;
use crate::settings::spec::{
    INDEX_LAYOUT_DOCUMENTS, IdfSource, JobSpec, MAX_DISTANCE, Method, MinHashSpec, THRESHOLD,
    WEB_CONTAINMENT, WEB_MAX_DISTANCE, WEB_MAX_FEATURE_COUNT, WEB_TF_MAX_DISTANCE, WEB_THRESHOLD,
    WEB_WEIGHTING, Weighting,
};

/// MinHash settings an index does not compare: the weights and the threshold choose bands
/// and rows, which are compared themselves, and the threshold verifies pairs, which each
/// run does anew; runs that add to one index may differ in them.
const NOT_COMPARED: &[&str] =
    &["minhash.false_positive_weight", "minhash.false_negative_weight", "minhash.threshold"];

/// The containment share among an index's settings, when its rule is on.
fn containment_share(settings: &BTreeMap<String, String>) -> Option<f64> {
    let share = settings.get("minhash.containment")?.parse::<f64>().ok()?;
    (share > 0.0).then_some(share)
}

/// The method's settings, checked, with every value the job file leaves unset chosen for
/// the run's inputs.
#[derive(Clone, Debug)]
pub enum MethodParams {
    /// MinHash with its bands and rows.
    Minhash {
        /// Permutations.
        num_perm: usize,
        /// Bands and rows (given or chosen).
        lsh: LshParams,
        /// `minhash.containment` (given or chosen): the share of the smaller document's
        /// features in the larger that passes a pair; 0 is off.
        containment: f64,
        /// `minhash.threshold` (given or chosen).
        threshold: f64,
    },
    /// SimHash with a fixed layout, or one chosen from the corpus size at run time.
    Simhash {
        /// A fixed layout, when `blocks` was given (or an index has one).
        layout: Option<BlockLayout>,
        /// `simhash.max_distance` (given or chosen).
        max_distance: u32,
        /// `simhash.weighting` (given or chosen).
        weighting: Weighting,
        /// `features.max_feature_count` (given or chosen).
        max_feature_count: u32,
    },
}

/// A checked job: the settings as given, the values chosen for those left unset, the input
/// files, and the output folder. Only this reaches [`crate::run`]; it is made once and
/// never changed (a run's record of its settings is [`JobConfig::effective_spec`]).
#[derive(Clone, Debug)]
pub struct JobConfig {
    /// The settings as the job file and flags give them: checking never changes them. The
    /// method's values they leave unset are chosen in `params`, the record size limit by
    /// [`JobConfig::max_record_bytes`], and the n-gram lengths by [`JobSpec::ngram_chars`] and
    /// [`JobSpec::han_ngram_chars`].
    pub spec: JobSpec,
    /// Input files in order.
    pub inputs: Vec<InputFile>,
    /// Output folder.
    pub output: PathBuf,
    /// The method's settings, checked and chosen.
    pub params: MethodParams,
    /// Where to write the deduplicated dataset (the kept records), if anywhere.
    pub write_kept: Option<PathBuf>,
    /// The index of earlier runs this run is deduplicated against and adds to, if any.
    pub index: Option<Arc<IndexPlan>>,
    /// Whether some input holds web pages: a web archive, or JSON Lines or Parquet with
    /// URLs in `input.url_field` ([`neardup_io::has_urls`]). Their templates are learned.
    pub web_pages: bool,
}

/// A run's use of an index (`--index`): the index as it was when the run started, and
/// the generation the run adds.
#[derive(Clone, Debug)]
pub struct IndexPlan {
    /// The index folder.
    pub dir: PathBuf,
    /// Its manifest as read (a new one for an index yet to be made).
    pub manifest: Manifest,
    /// The generation this run writes.
    pub generation: u32,
    /// Its folder name; equal in every process of the run.
    pub folder: String,
    /// This run's name, shown as `duplicate_of_run` by later runs.
    pub run: String,
    /// The generations of the index as the run read them (`manifest` leaves out the one
    /// replaced): the index must still have them when the run takes its lock.
    pub read: Vec<Generation>,
    /// The committed generation of the same run (same name and output) that this run
    /// replaces: a retry of a run that died after its commit.
    pub replaces: Option<Generation>,
    /// The run's output folder, resolved, recorded in its generation.
    pub output: String,
}

impl IndexPlan {
    /// The folder of the generation this run writes.
    pub fn new_generation_dir(&self) -> PathBuf {
        self.dir.join(&self.folder)
    }

    /// The folder of the segment whose first generation is `first`.
    pub fn segment_dir(&self, first: u32) -> Option<PathBuf> {
        self.manifest.generation(first).map(|g| self.dir.join(&g.folder))
    }

    /// The run name of generation `number`.
    pub fn run_of(&self, number: u32) -> &str {
        self.manifest.generation(number).map_or("", |g| g.run.as_str())
    }

    /// The runs of the index that kept no paragraphs (made without `--paragraphs`, or
    /// before the index kept them): a run with paragraph-level dedup cannot leave out
    /// theirs.
    pub fn runs_without_paragraphs(&self) -> Vec<&str> {
        let generations = self.manifest.generations.iter();
        generations.filter(|g| g.paragraphs.is_none()).map(|g| g.run.as_str()).collect()
    }

    /// The runs of the index that kept only paragraphs longer than `min_chars` (made with a
    /// higher `paragraphs.min_chars`), with theirs: a run with paragraphs of `min_chars`
    /// cannot leave out their shorter ones, which they did not keep.
    pub fn runs_with_longer_paragraphs(&self, min_chars: u32) -> Vec<(&str, u32)> {
        let generations = self.manifest.generations.iter();
        let longer = generations.filter_map(|g| Some((g.run.as_str(), g.paragraph_min_chars?)));
        longer.filter(|(_, least)| *least > min_chars).collect()
    }
}

impl JobConfig {
    /// A fingerprint of the input list: processes that disagree on it would number
    /// documents differently.
    pub(crate) fn input_fingerprint(&self) -> u64 {
        let mut bytes = Vec::new();
        for f in &self.inputs {
            bytes.extend_from_slice(f.path.display().to_string().as_bytes());
            bytes.push(0);
            bytes.extend_from_slice(&f.bytes.to_le_bytes());
        }
        neardup_core::hash::hash_bytes(&bytes, 0)
    }

    /// Whether the job learns boilerplate before signing: it is enabled and some input
    /// holds web pages ([`JobConfig::web_pages`]).
    pub fn needs_boilerplate(&self) -> bool {
        self.spec.boilerplate.enabled && self.web_pages
    }

    /// The SimHash weighting the run uses (given or chosen); `None` for MinHash.
    pub fn weighting(&self) -> Option<Weighting> {
        match &self.params {
            MethodParams::Simhash { weighting, .. } => Some(*weighting),
            MethodParams::Minhash { .. } => None,
        }
    }

    /// Whether signing needs corpus document frequencies.
    pub fn needs_corpus_idf(&self) -> bool {
        self.weighting() == Some(Weighting::TfIdf) && self.spec.simhash.idf == IdfSource::Corpus
    }

    /// The record size limit of a run with a budget of `memory_budget_bytes`
    /// (`--memory-budget`, per process): `input.max_record_bytes` as set, or else
    /// [`default_max_record_bytes`] of the budget.
    pub fn max_record_bytes(&self, memory_budget_bytes: u64) -> u64 {
        let set = self.spec.input.max_record_bytes;
        set.unwrap_or_else(|| default_max_record_bytes(memory_budget_bytes))
    }

    /// How a run with that record size limit ([`JobConfig::max_record_bytes`]) reads its
    /// input.
    pub fn read_options(&self, max_record_bytes: u64) -> ReadOptions {
        ReadOptions { max_record_bytes, ..self.spec.input.read_options() }
    }

    /// The settings the run uses, as a job file would give them: the spec with every
    /// value it leaves unset filled in with the one chosen, and the record size limit
    /// `max_record_bytes` when known ([`JobConfig::max_record_bytes`]). A run records this
    /// (`summary.json`, the Parquet metadata, the report), the processes of a distributed
    /// run compare it, and an index keeps its signature settings; given as a job file, it
    /// runs the same job.
    pub fn effective_spec(&self, max_record_bytes: Option<u64>) -> JobSpec {
        let mut spec = self.spec.clone();
        spec.features = self.feature_config();
        spec.input.max_record_bytes = spec.input.max_record_bytes.or(max_record_bytes);
        match &self.params {
            MethodParams::Minhash { .. } => spec.minhash = self.minhash_spec(),
            MethodParams::Simhash { max_distance, weighting, .. } => {
                spec.simhash.max_distance = Some(*max_distance);
                spec.simhash.weighting = Some(*weighting);
            }
        }
        spec
    }

    /// The MinHash settings the run uses: the spec's, with the containment rule and the
    /// bands and rows it leaves unset as chosen for the inputs.
    pub fn minhash_spec(&self) -> MinHashSpec {
        let mut m = self.spec.minhash.clone();
        if let MethodParams::Minhash { lsh, containment, threshold, .. } = &self.params {
            (m.containment, m.threshold) = (Some(*containment), Some(*threshold));
            (m.bands, m.rows) = (Some(lsh.bands()), Some(lsh.rows()));
        }
        m
    }

    /// The feature settings analysers of this run take: [`JobSpec::feature_config`], with
    /// SimHash's over-frequency cap as chosen for the inputs.
    pub fn feature_config(&self) -> FeatureConfig {
        let mut features = self.spec.feature_config();
        if let MethodParams::Simhash { max_feature_count, .. } = &self.params {
            features.max_feature_count = Some(*max_feature_count);
        }
        features
    }

    /// Every setting that signatures and bucket keys depend on, flattened to
    /// `section.name = value`, for an index (`--index`): runs that add to one index must
    /// agree on all of them. Decision rules, bucket limits and inputs are not among them:
    /// they may change from run to run.
    pub fn index_settings(&self) -> BTreeMap<String, String> {
        let spec = &self.effective_spec(None);
        let mut settings = BTreeMap::new();
        settings.insert("signature_version".to_string(), SIGNATURE_VERSION.to_string());
        let mut add = |section: &str, value: serde_json::Value| {
            flatten(section, &value, &mut settings);
        };
        add("method", serde_json::to_value(spec.method).expect("serialises"));
        add("seed", serde_json::to_value(spec.seed).expect("serialises"));
        add("normalize", serde_json::to_value(&spec.normalize).expect("serialises"));
        add("features", serde_json::to_value(&spec.features).expect("serialises"));
        add("boilerplate", serde_json::to_value(&spec.boilerplate).expect("serialises"));
        match &self.params {
            MethodParams::Minhash { num_perm, lsh, .. } => {
                add("minhash", serde_json::to_value(&spec.minhash).expect("serialises"));
                settings.insert("minhash.num_perm".into(), num_perm.to_string());
                settings.insert("minhash.bands".into(), lsh.bands().to_string());
                settings.insert("minhash.rows".into(), lsh.rows().to_string());
                for key in NOT_COMPARED {
                    settings.remove(*key);
                }
            }
            MethodParams::Simhash { layout, .. } => {
                add("simhash", serde_json::to_value(&spec.simhash).expect("serialises"));
                let blocks =
                    layout.as_ref().map_or("(chosen per run)".into(), |l| l.blocks().to_string());
                settings.insert("simhash.blocks".into(), blocks);
            }
        }
        if spec.normalize.han_fold {
            // A changed table folds texts differently.
            settings.insert("normalize.han_fold_table".into(), neardup_text::HAN_FOLD_TABLE.into());
        }
        settings
    }

    /// Deduplicates against the index in `dir` (made when it does not exist yet) and adds
    /// this run to it as a new generation named `run`, in a folder named after the
    /// generation and a hash of the inputs (so equal in every process of the run). A
    /// committed generation of the same run (same name and output folder) is left out of
    /// the lookups and replaced at the commit, when no later run depends on it.
    ///
    /// # Errors
    /// [`ConfigError::Index`] when the manifest cannot be read, was written with other
    /// settings, or holds the run name for a run that cannot be replaced;
    /// [`ConfigError::Overlap`] when the index and the output folder overlap or an input is
    /// inside the index; [`ConfigError::Index`] with [`neardup_io::Error::OtherRole`] when
    /// `dir` holds a run's outputs or kept dataset; [`ConfigError::Invalid`] for settings an index cannot hold (exact-Jaccard
    /// verification needs feature sets the index does not keep). SimHash's block layout,
    /// unset, is the index's, or for a new index the one chosen for
    /// [`INDEX_LAYOUT_DOCUMENTS`] documents; corpus document frequencies are the
    /// batch's plus the index's (`neardup_io::index::read_frequencies`).
    pub fn with_index(mut self, dir: PathBuf, run: String) -> Result<Self, ConfigError> {
        let invalid = |key: &'static str, message: &str| ConfigError::Invalid {
            key,
            message: message.to_string(),
        };
        match &self.params {
            MethodParams::Minhash { .. } if self.spec.minhash.verify == JaccardMode::Exact => {
                return Err(invalid(
                    "minhash.verify",
                    "an index keeps signatures, not feature sets: use \"signature\" with --index",
                ));
            }
            _ => {}
        }
        let (index_folder, output_folder) = (resolved_path(&dir), resolved_path(&self.output));
        if index_folder.starts_with(&output_folder) || output_folder.starts_with(&index_folder) {
            return Err(ConfigError::Overlap {
                what: "the index",
                path: dir,
                role: "output folder",
                folder: self.output.clone(),
            });
        }
        if let Some(kept) = &self.write_kept {
            let kept_folder = resolved_path(kept);
            if index_folder.starts_with(&kept_folder) || kept_folder.starts_with(&index_folder) {
                return Err(ConfigError::Overlap {
                    what: "the index",
                    path: dir,
                    role: "--write-kept folder",
                    folder: kept.clone(),
                });
            }
        }
        self.refuse_inputs_in(&dir, "index")?;
        match neardup_io::folder_role(&dir).map_err(ConfigError::Index)? {
            Some(holds) if holds != neardup_io::Role::Index => {
                let wanted = neardup_io::Role::Index;
                let error = neardup_io::Error::OtherRole { folder: dir, holds, wanted };
                return Err(ConfigError::Index(error));
            }
            _ => {}
        }
        let loaded = neardup_io::index::Manifest::load(&dir).map_err(ConfigError::Index)?;
        if let MethodParams::Simhash { layout: layout @ None, max_distance, .. } = &mut self.params
        {
            let chosen = index_layout(loaded.as_ref(), *max_distance)
                .map_err(|e| invalid("simhash.blocks", &e.to_string()))?;
            *layout = Some(chosen);
        }
        // The containment share only verifies pairs, as the threshold does: a run that
        // leaves it unset takes the share the index recorded (its batches decide alike when
        // the default changes), and the index records each run's share for the runs after
        // it. Turning the rule on or off changes the bands, and is compared.
        let recorded_share = loaded.as_ref().and_then(|m| containment_share(&m.settings));
        if let (Some(share), MethodParams::Minhash { containment, .. }) =
            (recorded_share, &mut self.params)
            && self.spec.minhash.containment.is_none()
            && *containment > 0.0
        {
            *containment = share;
        }
        let settings = self.index_settings();
        let mut manifest = match loaded {
            Some(mut m) => {
                // Indexes made before kept the threshold among their settings.
                m.settings.retain(|key, _| !NOT_COMPARED.contains(&key.as_str()));
                if recorded_share.is_some() && containment_share(&settings).is_some() {
                    let key = "minhash.containment";
                    m.settings.insert(key.to_string(), settings[key].clone());
                }
                m.check(&dir, &settings).map_err(ConfigError::Index)?;
                m
            }
            None => neardup_io::index::Manifest::new(settings),
        };
        let read = manifest.generations.clone();
        let output = output_folder.display().to_string();
        let replaces = replaceable(&dir, &manifest, &run, &output)?;
        let fingerprint = self.input_fingerprint();
        let (generation, token) = match &replaces {
            // A retry of a committed run: its generation is left out of the lookups and
            // replaced at the commit, by a folder of another name.
            Some(old) => {
                manifest.generations.retain(|g| g.number != old.number);
                let mut bytes = fingerprint.to_le_bytes().to_vec();
                bytes.extend_from_slice(old.folder.as_bytes());
                (old.number, neardup_core::hash::hash_bytes(&bytes, 0))
            }
            None => (manifest.next_generation(), fingerprint),
        };
        let folder = neardup_io::index::generation_folder(generation, &format!("{token:016x}"));
        self.index = Some(Arc::new(IndexPlan {
            dir,
            manifest,
            read,
            replaces,
            generation,
            folder,
            run,
            output,
        }));
        Ok(self)
    }

    /// Checks `spec`, lists the inputs and resolves derived parameters.
    ///
    /// # Errors
    /// [`ConfigError`] naming the offending setting, or the input listing error.
    pub fn new(spec: JobSpec, inputs: &[PathBuf], output: PathBuf) -> Result<Self, ConfigError> {
        Self::with_kept(spec, inputs, output, None)
    }

    /// As [`JobConfig::new`], also writing the kept records (the deduplicated dataset) to
    /// `write_kept`; that folder, like the output folder, is never read as input.
    ///
    /// # Errors
    /// As [`JobConfig::new`].
    pub fn with_kept(
        spec: JobSpec,
        inputs: &[PathBuf],
        output: PathBuf,
        write_kept: Option<PathBuf>,
    ) -> Result<Self, ConfigError> {
        spec.check()?;
        let exclude: Vec<PathBuf> =
            std::iter::once(output.clone()).chain(write_kept.clone()).collect();
        refuse_outputs_as_inputs(inputs, &exclude)?;
        let inputs = neardup_io::discover(inputs, &exclude).map_err(ConfigError::Input)?;
        let fields = spec.input.read_options();
        let web_pages = inputs.iter().any(|f| neardup_io::has_urls(f, &fields));
        let params = match spec.method {
            Method::Minhash => resolve_minhash(&spec.minhash, web_pages)?,
            Method::Simhash => resolve_simhash(&spec, web_pages)?,
        };
        let config = JobConfig { spec, inputs, output, params, write_kept, index: None, web_pages };
        let output_folder = resolved_path(&config.output);
        if let Some(kept) = &config.write_kept
            && resolved_path(kept) == output_folder
        {
            return Err(ConfigError::Overlap {
                what: "the --write-kept folder",
                path: kept.clone(),
                role: "output folder",
                folder: config.output.clone(),
            });
        }
        config.refuse_inputs_in(&config.output, "output folder")?;
        if let Some(kept) = &config.write_kept {
            config.refuse_inputs_in(kept, "--write-kept folder")?;
        }
        Ok(config)
    }

    /// Refuses an input file inside `folder`, which the run changes: a run clears what an
    /// earlier run wrote there, and reading its own outputs would be wrong either way.
    fn refuse_inputs_in(&self, folder: &Path, role: &'static str) -> Result<(), ConfigError> {
        let resolved = resolved_path(folder);
        // An address resolves to itself: a remote input is inside a prefix, never a folder.
        let inside = |f: &&neardup_io::InputFile| resolved_path(&f.path).starts_with(&resolved);
        match self.inputs.iter().find(inside) {
            Some(f) => Err(ConfigError::Overlap {
                what: "input",
                path: f.path.clone(),
                role,
                folder: folder.to_path_buf(),
            }),
            None => Ok(()),
        }
    }
}

/// The block layout of an index's SimHash keys when `simhash.blocks` is unset: the one the
/// index recorded (its first run chose it), or for a new index the one
/// [`BlockLayout::choose`] picks for [`INDEX_LAYOUT_DOCUMENTS`], as every later run of the
/// index must use it whatever its batch. When the recorded one does not suit the distance,
/// the chosen one, so that the settings check names both differences.
fn index_layout(
    manifest: Option<&Manifest>,
    max_distance: u32,
) -> Result<BlockLayout, neardup_core::Error> {
    let recorded = manifest
        .and_then(|m| m.settings.get("simhash.blocks"))
        .and_then(|blocks| blocks.parse().ok())
        .and_then(|blocks| BlockLayout::try_new(blocks, max_distance).ok());
    recorded.map_or_else(|| BlockLayout::choose(max_distance, INDEX_LAYOUT_DOCUMENTS), Ok)
}

/// The committed generation that a run named `run` writing to `output` replaces: one of
/// the same name is a retry of the same run when it wrote to the same output, is the last
/// generation (no later run was deduplicated against it) and has a segment of its own.
///
/// # Errors
/// [`ConfigError::Index`] with [`neardup_io::Error::RunNameTaken`] when a generation of that
/// name exists but cannot be replaced.
fn replaceable(
    dir: &Path,
    manifest: &Manifest,
    run: &str,
    output: &str,
) -> Result<Option<Generation>, ConfigError> {
    let Some(old) = manifest.generations.iter().find(|g| g.run == run) else {
        return Ok(None);
    };
    let last = manifest.generations.last().expect("the index has the generation found");
    let reason = if old.output != output {
        Some(format!("(generation {}, written by the run into \"{}\")", old.number, old.output))
    } else if old.number != last.number {
        Some(format!(
            "(generation {}), and later runs were deduplicated against it (\"{}\")",
            old.number, last.run
        ))
    } else if manifest.generations.iter().filter(|g| g.folder == old.folder).count() > 1 {
        Some(format!("(generation {}), merged with others by index compact", old.number))
    } else {
        None
    };
    match reason {
        Some(reason) => Err(ConfigError::Index(neardup_io::Error::RunNameTaken {
            path: dir.to_path_buf(),
            run: run.to_string(),
            reason,
        })),
        None => Ok(Some(old.clone())),
    }
}

/// Adds the leaves of `value` to `out` as `prefix.name = value` (strings unquoted).
fn flatten(prefix: &str, value: &serde_json::Value, out: &mut BTreeMap<String, String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        serde_json::Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        serde_json::Value::Null => {
            out.insert(prefix.to_string(), "(not set)".to_string());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Refuses an input folder inside the output or kept folder: listing would leave it out
/// and find nothing, so say what it is instead. (A file named inside one is refused once
/// listed, by `JobConfig::refuse_inputs_in`.)
fn refuse_outputs_as_inputs(inputs: &[PathBuf], exclude: &[PathBuf]) -> Result<(), ConfigError> {
    let roles = ["output folder", "--write-kept folder"];
    for (folder, role) in exclude.iter().zip(roles) {
        let resolved = resolved_path(folder);
        let inside = |p: &&PathBuf| p.is_dir() && resolved_path(p).starts_with(&resolved);
        if let Some(path) = inputs.iter().find(inside) {
            return Err(ConfigError::InputInOutput { path: path.clone(), role });
        }
    }
    Ok(())
}

/// Checks the MinHash settings and resolves containment, bands and rows.
fn resolve_minhash(m: &MinHashSpec, web_pages: bool) -> Result<MethodParams, ConfigError> {
    // Containment is on for web pages unless set: copies of a page there are
    // often teasers or cut at "Read more".
    let containment = m.containment.unwrap_or(if web_pages { WEB_CONTAINMENT } else { 0.0 });
    let threshold = m.threshold.unwrap_or(if web_pages { WEB_THRESHOLD } else { THRESHOLD });
    if m.num_perm == 0 || m.num_perm > MAX_NUM_PERM {
        return Err(invalid(
            "minhash.num_perm",
            format!("must be 1..={MAX_NUM_PERM}, got {}", m.num_perm),
        ));
    }
    if !(threshold > 0.0 && threshold < 1.0) {
        return Err(invalid(
            "minhash.threshold",
            format!("must be strictly between 0 and 1, got {threshold}"),
        ));
    }
    if !(0.0..=1.0).contains(&containment) {
        return Err(invalid(
            "minhash.containment",
            format!("must be in (0, 1], or 0 for off, got {containment}"),
        ));
    }
    if containment > 0.0 && !(m.containment_min_jaccard > 0.0 && m.containment_min_jaccard < 1.0) {
        return Err(invalid(
            "minhash.containment_min_jaccard",
            format!("must be strictly between 0 and 1, got {}", m.containment_min_jaccard),
        ));
    }
    let lsh = match (m.bands, m.rows) {
        (Some(bands), Some(rows)) => LshParams::try_new(bands, rows)
            .and_then(|p| p.fits(m.num_perm))
            .map_err(|e| invalid("minhash.bands", e.to_string()))?,
        (None, None) => {
            let weights = [m.false_positive_weight, m.false_negative_weight];
            if weights.iter().any(|w| !(w.is_finite() && *w >= 0.0))
                || weights.iter().sum::<f64>() <= 0.0
            {
                return Err(invalid(
                    "minhash.false_positive_weight",
                    "weights must be non-negative and not both zero".into(),
                ));
            }
            let resolved =
                MinHashSpec { containment: Some(containment), threshold: Some(threshold), ..*m };
            LshParams::choose(resolved.bands_jaccard(), m.num_perm, weights[0], weights[1])
                .map_err(|e| invalid("minhash.threshold", e.to_string()))?
        }
        _ => {
            return Err(invalid("minhash.bands", "set both bands and rows, or neither".into()));
        }
    };
    Ok(MethodParams::Minhash { num_perm: m.num_perm, lsh, containment, threshold })
}

/// Checks the SimHash settings and resolves the weighting and the distance.
fn resolve_simhash(spec: &JobSpec, web_pages: bool) -> Result<MethodParams, ConfigError> {
    // Common n-grams pull term-frequency fingerprints of web pages' prose one
    // way; corpus document frequencies take them out (WEB_WEIGHTING; with an
    // index, the frequencies of the batch and of every indexed one). Not when
    // jieba's table is named.
    let corpus_idf = spec.simhash.idf == IdfSource::Corpus;
    let web = if web_pages && corpus_idf { WEB_WEIGHTING } else { Weighting::Tf };
    let weighting = spec.simhash.weighting.unwrap_or(web);
    let web_tf_idf = web_pages && weighting == Weighting::TfIdf && corpus_idf;
    // A long table of numbers pulls two such fingerprints together (the constant's doc).
    let cap = if web_tf_idf { WEB_MAX_FEATURE_COUNT } else { MAX_FEATURE_COUNT };
    let max_feature_count = spec.features.max_feature_count.unwrap_or(cap);
    let s = &spec.simhash;
    // Copies of web pages differ more (edits, ads, cut ends) than the plain
    // texts the distance 3 was chosen for; term frequencies chain unrelated
    // pages at the distance document frequencies allow.
    let k = s.max_distance.unwrap_or(match (web_pages, web_tf_idf) {
        (false, _) => MAX_DISTANCE,
        (true, true) => WEB_MAX_DISTANCE,
        (true, false) => WEB_TF_MAX_DISTANCE,
    });
    if k >= SIMHASH_BITS {
        return Err(invalid("simhash.max_distance", format!("must be below 64, got {k}")));
    }
    let layout = s
        .blocks
        .map(|blocks| BlockLayout::try_new(blocks, k))
        .transpose()
        .map_err(|e| invalid("simhash.blocks", e.to_string()))?;
    if layout.is_none() {
        BlockLayout::choose(k, 1).map_err(|e| invalid("simhash.max_distance", e.to_string()))?;
    }
    let jieba = weighting == Weighting::TfIdf && s.idf == IdfSource::Jieba;
    if jieba && spec.features.kind != neardup_text::FeatureKind::Words {
        let message = "jieba's IDF table holds words: set features.kind = \"words\"";
        return Err(invalid("simhash.idf", message.into()));
    }
    Ok(MethodParams::Simhash { layout, max_distance: k, weighting, max_feature_count })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::spec::{KeepRule, MinHashSpec};

    fn sample_input() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "{\"id\":\"1\",\"text\":\"x\"}\n").unwrap();
        (dir, vec![path])
    }

    /// A JSON Lines input of one web page (a record with a URL), in a folder that has room
    /// for a run's output and index.
    fn web_input() -> (tempfile::TempDir, Vec<PathBuf>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.jsonl");
        std::fs::write(&path, "{\"id\":\"1\",\"text\":\"x\",\"url\":\"https://a.example/1\"}\n")
            .unwrap();
        (dir, vec![path])
    }

    #[test]
    fn defaults_resolve_bands_and_rows() {
        let (_dir, inputs) = sample_input();
        let config = JobConfig::new(JobSpec::default(), &inputs, "out".into()).unwrap();
        let recorded = config.effective_spec(None);
        assert_eq!((recorded.minhash.bands, recorded.minhash.rows), (Some(16), Some(8)));
        assert_eq!(config.inputs.len(), 1);
    }

    /// Checking chooses values into the config and never writes them back into the spec:
    /// the spec stays as given, and the record of what the run used fills in only what the
    /// spec left unset.
    #[test]
    fn checking_leaves_the_spec_as_given() {
        let (_dir, inputs) = sample_input();
        for method in [Method::Minhash, Method::Simhash] {
            let given = JobSpec { method, ..JobSpec::default() };
            let config = JobConfig::new(given.clone(), &inputs, "out".into()).unwrap();
            assert_eq!(config.spec, given);
            let recorded = config.effective_spec(Some(1 << 20));
            assert_eq!(recorded.input.max_record_bytes, Some(1 << 20));
            assert_eq!(recorded.features.ngram_chars, Some(given.ngram_chars()));
            assert_eq!(recorded.features.han_ngram_chars, Some(given.han_ngram_chars()));
            assert_eq!(recorded.seed, given.seed);
            // Given as a job file, the record checks into the same settings.
            let again = JobConfig::new(recorded.clone(), &inputs, "out".into()).unwrap();
            assert_eq!(again.effective_spec(Some(1 << 20)), recorded);
        }
        let mut set = JobSpec::default();
        set.input.max_record_bytes = Some(4096);
        let config = JobConfig::new(set, &inputs, "out".into()).unwrap();
        assert_eq!(config.max_record_bytes(8 << 30), 4096);
        assert_eq!(config.effective_spec(Some(1 << 20)).input.max_record_bytes, Some(4096));
        let unset = JobConfig::new(JobSpec::default(), &inputs, "out".into()).unwrap();
        assert_eq!(unset.max_record_bytes(64 << 20), default_max_record_bytes(64 << 20));
    }

    /// With containment on, the bands are chosen for its Jaccard floor, but not below
    /// CONTAINMENT_BANDS_JACCARD, and the run records the value it used; plain text (no
    /// URLs) leaves it off.
    #[test]
    fn containment_chooses_bands_for_its_floor() {
        let (_dir, inputs) = sample_input();
        let mut spec = JobSpec::default();
        assert_eq!(spec.minhash.least_jaccard(), 0.8, "off: the threshold");
        assert_eq!(spec.minhash.bands_jaccard(), 0.8, "off: the threshold");
        spec.minhash.containment = Some(0.9);
        assert_eq!(spec.minhash.least_jaccard(), 0.4);
        assert_eq!(spec.minhash.bands_jaccard(), 0.6);
        let config = JobConfig::new(spec.clone(), &inputs, "out".into()).unwrap();
        let recorded = config.effective_spec(None).minhash;
        assert_eq!((recorded.bands, recorded.rows), (Some(24), Some(4)));
        spec.minhash.containment_min_jaccard = 0.7;
        assert_eq!((spec.minhash.least_jaccard(), spec.minhash.bands_jaccard()), (0.7, 0.7));
        spec.minhash.threshold = Some(0.65);
        assert_eq!((spec.minhash.least_jaccard(), spec.minhash.bands_jaccard()), (0.65, 0.65));
        // A threshold below 0.6 caps the bands' Jaccard: no verified pair is lower.
        spec.minhash.containment_min_jaccard = 0.5;
        spec.minhash.threshold = Some(0.55);
        assert_eq!((spec.minhash.least_jaccard(), spec.minhash.bands_jaccard()), (0.5, 0.55));
        let plain = JobConfig::new(JobSpec::default(), &inputs, "out".into()).unwrap();
        let recorded = plain.effective_spec(None).minhash;
        assert_eq!((recorded.bands, recorded.rows), (Some(16), Some(8)));
        assert_eq!(recorded.containment, Some(0.0));
        assert_eq!(recorded.containment_rule(), None);
    }

    /// MinHash's threshold is 0.75 for web pages and 0.8 for other text unless set, and a
    /// run records the one it used; the bands stay those of the containment rule's floor.
    #[test]
    fn minhash_threshold_is_lower_for_web_pages_unless_set() {
        let (dir, web) = web_input();
        let (_plain_dir, plain) = sample_input();
        let out = dir.path().join("out");
        let resolved = |spec: &JobSpec, inputs: &[PathBuf]| {
            let m = JobConfig::new(spec.clone(), inputs, out.clone()).unwrap().minhash_spec();
            (m.threshold, m.bands, m.rows)
        };
        let defaults = JobSpec::default();
        assert_eq!(resolved(&defaults, &web), (Some(WEB_THRESHOLD), Some(24), Some(4)));
        assert_eq!(resolved(&defaults, &plain), (Some(THRESHOLD), Some(16), Some(8)));
        let mut given = defaults.clone();
        given.minhash.threshold = Some(0.9);
        assert_eq!(resolved(&given, &web).0, Some(0.9));
        assert_eq!(defaults.minhash.threshold(), THRESHOLD, "unresolved: other text's");
    }

    /// Web pages get TF-IDF weights from the corpus at distance 7 unless set, and distance 6
    /// with term frequencies (set, or under an index); other text distance 3 and term
    /// frequencies. An index compares fingerprints of different runs, so there unset
    /// weights are term frequencies and a set corpus TF-IDF is refused.
    #[test]
    fn simhash_weights_web_pages_by_corpus_frequencies_with_an_index_too() {
        let (dir, web) = web_input();
        let (_plain_dir, plain) = sample_input();
        let out = dir.path().join("out");
        let resolved = |spec: &JobSpec, inputs: &[PathBuf]| {
            let c = JobConfig::new(spec.clone(), inputs, out.clone()).unwrap();
            let recorded = c.effective_spec(None).simhash;
            (recorded.max_distance, recorded.weighting, c.needs_corpus_idf())
        };
        let tf = Some(Weighting::Tf);
        let simhash = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        assert_eq!(resolved(&simhash, &web), (Some(7), Some(Weighting::TfIdf), true));
        assert_eq!(resolved(&simhash, &plain), (Some(3), tf, false));
        // The over-frequency cap: lower for web pages weighed by corpus TF-IDF only, and
        // recorded, so that an index and `explain` see the one the run used.
        let cap = |spec: &JobSpec, inputs: &[PathBuf]| {
            let c = JobConfig::new(spec.clone(), inputs, out.clone()).unwrap();
            c.effective_spec(None).features.max_feature_count
        };
        let ten = Some(neardup_text::MAX_FEATURE_COUNT);
        assert_eq!(cap(&simhash, &web), Some(WEB_MAX_FEATURE_COUNT));
        assert_eq!(cap(&simhash, &plain), ten);
        assert_eq!(cap(&JobSpec::default(), &web), ten, "MinHash ignores counts");
        let mut given = simhash.clone();
        given.features.max_feature_count = Some(10);
        assert_eq!(cap(&given, &web), Some(10));
        let mut set_tf = simhash.clone();
        set_tf.simhash.weighting = tf;
        assert_eq!(resolved(&set_tf, &web), (Some(WEB_TF_MAX_DISTANCE), tf, false));
        assert_eq!(cap(&set_tf, &web), ten);
        // jieba's table named without a weighting leaves term frequencies, as before.
        let mut jieba = simhash.clone();
        jieba.simhash.idf = IdfSource::Jieba;
        assert_eq!(resolved(&jieba, &web), (Some(WEB_TF_MAX_DISTANCE), tf, false));
        // An index (index.dir, as the command line's --index sets it): the same web
        // defaults, its batch's document frequencies added to the index's.
        let index = dir.path().join("index");
        let mut indexed = simhash.clone();
        indexed.index.dir = Some(index.clone());
        assert_eq!(resolved(&indexed, &web), (Some(7), Some(Weighting::TfIdf), true));
        let config = JobConfig::new(indexed.clone(), &web, out.clone())
            .unwrap()
            .with_index(index.clone(), "r1".into())
            .unwrap();
        assert_eq!(config.index_settings()["simhash.weighting"], "tf_idf");
        // Blocks unset: chosen for an index's size, not the batch's; then the index's own.
        let MethodParams::Simhash { layout: Some(layout), .. } = &config.params else { panic!() };
        let for_index = BlockLayout::choose(7, INDEX_LAYOUT_DOCUMENTS).unwrap();
        assert_eq!(layout, &for_index);
        assert_eq!(config.index_settings()["simhash.blocks"], for_index.blocks().to_string());
        let mut nine = indexed.clone();
        nine.simhash.blocks = Some(9);
        let made = JobConfig::new(nine, &web, out.clone())
            .unwrap()
            .with_index(index.clone(), "r0".into())
            .unwrap();
        made.index.as_ref().unwrap().manifest.save(&index).unwrap();
        let config = JobConfig::new(indexed.clone(), &web, out.clone())
            .unwrap()
            .with_index(index.clone(), "r1".into())
            .unwrap();
        let MethodParams::Simhash { layout: Some(layout), .. } = &config.params else { panic!() };
        assert_eq!(layout.blocks(), 9);
        assert_eq!(config.index_settings(), made.index_settings());
        // jieba's table is the same in every run.
        indexed.simhash.weighting = Some(Weighting::TfIdf);
        indexed.simhash.idf = IdfSource::Jieba;
        indexed.features.kind = neardup_text::FeatureKind::Words;
        let config = JobConfig::new(indexed, &web, out.clone())
            .unwrap()
            .with_index(dir.path().join("index-jieba"), "r1".into())
            .unwrap();
        assert_eq!(config.weighting(), Some(Weighting::TfIdf));
    }

    #[test]
    fn the_ngram_lengths_are_chosen_by_method_unless_set() {
        use crate::settings::spec::SIMHASH_HAN_NGRAM_CHARS;
        use neardup_text::{DEFAULT_HAN_NGRAM_CHARS, default_han_ngram_chars};
        let (_dir, inputs) = sample_input();
        let resolved = |spec: JobSpec| {
            let config = JobConfig::new(spec, &inputs, "out".into()).unwrap();
            let features = config.effective_spec(None).features;
            (features.ngram_chars, features.han_ngram_chars)
        };
        let minhash_han = default_han_ngram_chars(DEFAULT_HAN_NGRAM_CHARS, 5);
        assert_eq!(resolved(JobSpec::default()), (Some(5), Some(minhash_han)));
        let simhash = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        let simhash_han = default_han_ngram_chars(SIMHASH_HAN_NGRAM_CHARS, 4);
        assert_eq!(simhash.feature_config().ngram_chars, Some(4));
        assert_eq!(simhash.feature_config().han_ngram_chars, Some(simhash_han));
        assert_eq!(resolved(simhash.clone()), (Some(4), Some(simhash_han)));
        let mut set = simhash;
        set.features.ngram_chars = Some(5);
        let han = default_han_ngram_chars(SIMHASH_HAN_NGRAM_CHARS, 5);
        assert_eq!(resolved(set.clone()), (Some(5), Some(han)));
        set.features.han_ngram_chars = Some(2);
        assert_eq!(resolved(set.clone()), (Some(5), Some(2)));
        // Unset, Han n-grams are no longer than the others.
        set.features.han_ngram_chars = None;
        set.features.ngram_chars = Some(1);
        assert_eq!(resolved(set), (Some(1), Some(1)));
    }

    #[test]
    fn index_settings_cover_what_keys_depend_on_and_not_the_rest() {
        let (_dir, inputs) = sample_input();
        let settings =
            |spec: JobSpec| JobConfig::new(spec, &inputs, "out".into()).unwrap().index_settings();
        let base = settings(JobSpec::default());
        assert_eq!(base["method"], "minhash");
        assert_eq!(base["minhash.bands"], "16");
        assert_eq!(base["signature_version"], SIGNATURE_VERSION.to_string());
        assert!(base.contains_key("features.ngram_chars") && base.contains_key("normalize.nfkc"));
        let han = neardup_text::default_han_ngram_chars(neardup_text::DEFAULT_HAN_NGRAM_CHARS, 5);
        assert_eq!(base["features.han_ngram_chars"], han.to_string());
        // What changes signatures or keys changes the settings ...
        let mut spec = JobSpec::default();
        spec.features.ngram_chars = Some(4);
        assert_ne!(settings(spec), base);
        let mut spec = JobSpec::default();
        spec.features.han_ngram_chars = Some(if han == 2 { 3 } else { 2 });
        assert_ne!(settings(spec), base);
        assert_ne!(settings(JobSpec { seed: 7, ..JobSpec::default() }), base);
        // The Han folding table is named, so that a changed table is another setting.
        assert_eq!(base["normalize.han_fold"], "true");
        assert_eq!(base["normalize.han_fold_table"], neardup_text::HAN_FOLD_TABLE);
        let mut spec = JobSpec::default();
        spec.normalize.han_fold = false;
        let unfolded = settings(spec);
        assert_eq!(unfolded["normalize.han_fold"], "false");
        assert!(!unfolded.contains_key("normalize.han_fold_table"));
        // ... what only decides or limits does not.
        let mut spec = JobSpec::default();
        spec.decision.keep = KeepRule::Longest;
        spec.buckets.max_bucket_size = 100;
        spec.minhash.false_negative_weight = 0.951;
        assert_eq!(settings(spec), base);
    }

    /// The threshold verifies pairs, which each run does anew, and chooses bands only
    /// through the bands, which are compared: an index takes runs at another threshold, and
    /// one made when it was compared (it kept `minhash.threshold`) takes them too.
    #[test]
    fn an_index_takes_runs_at_another_threshold() {
        let (dir, web) = web_input();
        let at = |threshold: f64| {
            let mut spec = JobSpec::default();
            spec.minhash.threshold = Some(threshold);
            JobConfig::new(spec, &web, dir.path().join("out")).unwrap()
        };
        let default = at(crate::settings::spec::THRESHOLD);
        assert_eq!(default.index_settings(), at(0.75).index_settings());
        let index = dir.path().join("index");
        let mut recorded = default.index_settings();
        recorded.insert("minhash.threshold".into(), "0.8".into());
        neardup_io::index::Manifest::new(recorded).save(&index).unwrap();
        let indexed = default.with_index(index, "r1".into()).unwrap();
        assert!(!indexed.index_settings().contains_key("minhash.threshold"));
    }

    /// An index made when web pages' containment default was another value keeps it for
    /// runs that leave it unset, so that its batches decide alike; a share set in the job
    /// file replaces it (the next runs take that), and turning the rule off is refused.
    #[test]
    fn an_index_keeps_the_containment_it_recorded_unless_set() {
        let (dir, web) = web_input();
        let default = JobConfig::new(JobSpec::default(), &web, dir.path().join("out")).unwrap();
        assert_eq!(default.minhash_spec().containment, Some(WEB_CONTAINMENT));
        let index = dir.path().join("index");
        let mut recorded = default.index_settings();
        recorded.insert("minhash.containment".into(), "0.9".into());
        neardup_io::index::Manifest::new(recorded).save(&index).unwrap();
        let indexed = default.clone().with_index(index.clone(), "r1".into()).unwrap();
        assert_eq!(indexed.minhash_spec().containment, Some(0.9));
        assert_eq!(indexed.index_settings()["minhash.containment"], "0.9");
        let at = |share: f64| {
            let mut spec = JobSpec::default();
            spec.minhash.containment = Some(share);
            JobConfig::new(spec, &web, dir.path().join("out")).unwrap()
        };
        let set = at(WEB_CONTAINMENT).with_index(index.clone(), "r1".into()).unwrap();
        assert_eq!(set.minhash_spec().containment, Some(WEB_CONTAINMENT));
        let recorded = &set.index.as_ref().unwrap().manifest.settings["minhash.containment"];
        assert_eq!(recorded, &WEB_CONTAINMENT.to_string());
        let refused = at(0.0).with_index(index, "r1".into()).unwrap_err();
        let chain = crate::error::error_chain(&refused);
        assert!(chain.contains("minhash.containment"), "{chain}");
    }

    /// `jobs/default.toml` writes out every default, so it must read as the defaults.
    #[test]
    fn the_shipped_default_job_file_is_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../jobs/default.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let spec: JobSpec = toml::from_str(&text).unwrap();
        assert_eq!(spec, JobSpec::default());
        // A changed default is caught.
        let stale = text.replace("containment_min_jaccard = 0.4", "containment_min_jaccard = 0.5");
        assert_ne!(toml::from_str::<JobSpec>(&stale).unwrap(), JobSpec::default());
    }

    #[test]
    fn job_files_are_strict_toml() {
        use neardup_text::FeatureKind;
        let spec: JobSpec = toml::from_str(
            "method = \"simhash\"\n[simhash]\nmax_distance = 4\n[features]\nkind = \"words\"\n",
        )
        .unwrap();
        assert_eq!(spec.method, Method::Simhash);
        assert_eq!(spec.simhash.max_distance, Some(4));
        assert_eq!(spec.features.kind, FeatureKind::Words);
        assert_eq!(spec.minhash, MinHashSpec::default());
        let err = toml::from_str::<JobSpec>("[minhash]\nthreshhold = 0.7\n").unwrap_err();
        assert!(err.to_string().contains("threshhold"), "{err}");
    }

    #[test]
    fn invalid_settings_name_their_key() {
        let (_dir, inputs) = sample_input();
        let check = |spec: JobSpec, key: &str| {
            let err = JobConfig::new(spec, &inputs, "out".into()).unwrap_err();
            assert!(matches!(&err, ConfigError::Invalid { key: k, .. } if *k == key), "{err}");
        };
        let mut s = JobSpec::default();
        s.minhash.threshold = Some(1.5);
        check(s, "minhash.threshold");
        let mut s = JobSpec::default();
        s.minhash.bands = Some(20);
        check(s, "minhash.bands");
        let mut s = JobSpec::default();
        s.minhash.bands = Some(20);
        s.minhash.rows = Some(10);
        check(s, "minhash.bands");
        let mut s = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        s.simhash.blocks = Some(3);
        check(s, "simhash.blocks");
        let mut s = JobSpec::default();
        s.buckets.bucket_anchors = 1000;
        check(s, "buckets.bucket_anchors");
        let mut s = JobSpec::default();
        s.decision.max_reject_ratio = 2.0;
        check(s, "decision.max_reject_ratio");
        let mut s = JobSpec { method: Method::Simhash, ..JobSpec::default() };
        s.simhash.weighting = Some(Weighting::TfIdf);
        s.simhash.idf = IdfSource::Jieba;
        check(s, "simhash.idf");
        let mut s = JobSpec::default();
        s.features.han_ngram_chars = Some(0);
        check(s, "features.han_ngram_chars");
        let mut s = JobSpec::default();
        s.features.han_ngram_chars = Some(65);
        check(s, "features.han_ngram_chars");
    }
}
