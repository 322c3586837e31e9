//! The method's part of an explanation: the MinHash bands or SimHash tables two documents
//! share, whether that makes them candidates and whether verification passes.

use std::io::Write;

use neardup_core::{BlockLayout, JaccardMode, LshParams, MinHasher, Signature, SimHash};
use neardup_job::{IdfWeights, JobSpec};
use neardup_text::Features;

use super::MethodView;

/// MinHash under `spec`, with the run's bands and rows when known.
pub(super) fn minhash_view(
    spec: &JobSpec,
    bands_rows: Option<(u32, u32)>,
    fa: &Features,
    fb: &Features,
) -> anyhow::Result<MethodView> {
    let m = &spec.minhash;
    let lsh = match bands_rows.or(m.bands.zip(m.rows)) {
        Some((b, r)) => LshParams::try_new(b, r)?,
        None => LshParams::choose(
            m.bands_jaccard(),
            m.num_perm,
            m.false_positive_weight,
            m.false_negative_weight,
        )?,
    };
    let hasher = MinHasher::try_new(m.num_perm, spec.seed)?;
    let (sa, sb) = (hasher.sign(fa.hashes()), hasher.sign(fb.hashes()));
    let keys_a: Vec<_> = lsh.band_keys(&sa, spec.seed).collect();
    let keys_b: Vec<_> = lsh.band_keys(&sb, spec.seed).collect();
    let agreeing_bands: Vec<u32> =
        (0..lsh.bands()).filter(|&i| keys_a[i as usize] == keys_b[i as usize]).collect();
    let (sig_a, sig_b) = (Signature::MinHash(sa.clone()), Signature::MinHash(sb.clone()));
    let (set_a, set_b) = (fa.sorted_hashes(), fb.sorted_hashes());
    let count = |set: &[u64]| u32::try_from(set.len()).unwrap_or(u32::MAX);
    let verdict = m.verifier(lsh).verify(
        neardup_core::Side { signature: &sig_a, features: count(&set_a), feature_set: &set_a },
        neardup_core::Side { signature: &sig_b, features: count(&set_b), feature_set: &set_b },
    );
    Ok(MethodView::Minhash {
        bands: lsh.bands(),
        rows: lsh.rows(),
        permutations: m.num_perm,
        estimate: sa.jaccard_estimate(&sb),
        candidate: !agreeing_bands.is_empty(),
        agreeing_bands,
        threshold: m.threshold(),
        exact: m.verify == JaccardMode::Exact,
        containment: verdict.containment,
        containment_rule: m.containment_rule(),
        measure: verdict.measure,
        verified: verdict.is_duplicate,
    })
}

/// SimHash under `spec`, with the run's blocks when known.
pub(super) fn simhash_view(
    spec: &JobSpec,
    blocks: Option<u32>,
    weights: Option<&IdfWeights>,
    fa: &Features,
    fb: &Features,
) -> anyhow::Result<MethodView> {
    let k = spec.simhash.distance();
    let layout = match blocks.or(spec.simhash.blocks) {
        Some(blocks) => BlockLayout::try_new(blocks, k)?,
        None => BlockLayout::choose(k, 1_000_000)?,
    };
    let tf_idf = spec.simhash.weights() == neardup_job::Weighting::TfIdf;
    // As signing weighs them: term frequency, times the run's IDF when it had one.
    let idf = |h: u64| weights.map_or(1.0, |w| w.idf(h));
    let fingerprint = |f: &Features| {
        let weighted = f.hashes().iter().zip(f.counts());
        SimHash::from_weighted(weighted.map(|(h, c)| (*h, f64::from(*c) * idf(*h))))
    };
    let (x, y) = (fingerprint(fa), fingerprint(fb));
    let shared_tables = layout.shared_tables(x, y);
    let hamming = x.hamming(y);
    Ok(MethodView::Simhash {
        blocks: layout.blocks(),
        tables: layout.tables(),
        fingerprints: [format!("{:016x}", x.bits()), format!("{:016x}", y.bits())],
        hamming,
        shared_tables,
        max_distance: k,
        candidate: shared_tables > 0,
        verified: hamming <= k,
        note: (tf_idf && weights.is_none()).then(|| {
            "weighted by term frequency only: the run's TF-IDF weights come from its corpus, which `explain` reads from the run's frequencies.bin (give --run; a run from before it was written has none), so the distance may differ from the run's (a pair's own distance is on the `run:` line and in pairs/)".to_string()
        }),
    })
}

/// Prints the method's part of an explanation for people.
pub(super) fn print_method(out: &mut dyn Write, view: &MethodView) -> std::io::Result<()> {
    match view {
        MethodView::Minhash {
            bands,
            rows,
            permutations,
            estimate,
            agreeing_bands,
            threshold,
            exact,
            containment,
            containment_rule,
            measure,
            candidate,
            verified,
        } => {
            writeln!(
                out,
                "MinHash          estimated Jaccard {estimate:.4} ({permutations} permutations)"
            )?;
            writeln!(
                out,
                "bands            {} of {bands} agree {:?} ({rows} rows each): {}",
                agreeing_bands.len(),
                agreeing_bands,
                if *candidate { "a candidate pair" } else { "not a candidate" }
            )?;
            let jaccard = if *exact { "exact Jaccard" } else { "estimate" };
            let outcome = match (verified, measure) {
                (true, neardup_core::Measure::Containment) => "passes by containment",
                (true, _) => "passes",
                (false, _) => "fails",
            };
            match (containment, containment_rule) {
                (Some(c), Some(rule)) => {
                    let (least, floor) = (rule.min_containment, rule.min_jaccard);
                    let how = if *exact { "exact" } else { "from the estimate and feature counts" };
                    writeln!(
                        out,
                        "containment      {c:.4} of the smaller document in the larger ({how})"
                    )?;
                    writeln!(
                        out,
                        "verification     {jaccard} >= {threshold}, or containment >= {least} with {jaccard} >= {floor}: {outcome}"
                    )?;
                }
                _ => writeln!(out, "verification     {jaccard} >= {threshold}: {outcome}")?,
            }
        }
        MethodView::Simhash {
            blocks,
            tables,
            fingerprints,
            hamming,
            shared_tables,
            max_distance,
            candidate,
            verified,
            note,
        } => {
            writeln!(
                out,
                "SimHash          {} vs {}: Hamming distance {hamming}",
                fingerprints[0], fingerprints[1]
            )?;
            writeln!(
                out,
                "tables           {shared_tables} of {tables} agree ({blocks} blocks): {}",
                if *candidate { "a candidate pair" } else { "not a candidate" }
            )?;
            // Under corpus TF-IDF the fingerprints above are not the run's: judging them
            // against its distance would say what the run did not do.
            let verdict = match (note, *verified) {
                (Some(_), _) => "not judged here (see the note)",
                (None, true) => "passes",
                (None, false) => "fails",
            };
            writeln!(out, "verification     distance <= {max_distance}: {verdict}")?;
            if let Some(note) = note {
                writeln!(out, "note             {note}")?;
            }
        }
    }
    Ok(())
}
