//! Text kernels on real documents: `cargo bench -p neardup-text`.
//!
//! Normalisation, line keys (boilerplate), feature text, character 5-gram features (also
//! with Han 2-grams), word segmentation, the whole analysis, and signing (analysis plus MinHash or SimHash), each over English and Chinese
//! documents separately, with throughput in bytes of input text. `hash_5grams_once` is the
//! yardstick: xxh3 of every character 5-gram of the text, and nothing else. The documents are the `text` fields of a JSON Lines corpus: the file
//! named by `NEARDUP_BENCH_CORPUS`, else `target/bench/real-10000.jsonl` (made by
//! `bench/make_real_corpus.py`) when it exists, else the bundled court openings (Chinese
//! only).

use std::hint::black_box;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use neardup_core::hash::hash_bytes;
use neardup_core::{MinHashSignature, MinHasher, SimHash};
use neardup_text::{
    Analysis, AnalyzeScratch, Analyzer, FeatureConfig, FeatureExtractor, FeatureKind,
    FeatureScratch, Features, LineScratch, NormalizeConfig, NormalizeScratch, Normalizer,
    Segmenter, feature_text_into, is_han, line_key,
};

/// At most this many bytes of documents per language, so one iteration stays short.
const SAMPLE_BYTES: usize = 4 << 20;

fn corpus_path() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    if let Some(path) = std::env::var_os("NEARDUP_BENCH_CORPUS") {
        return PathBuf::from(path);
    }
    let generated = root.join("target/bench/real-10000.jsonl");
    if generated.exists() {
        return generated;
    }
    root.join("data-samples/zh-court-openings/openings.jsonl.gz")
}

/// English and Chinese documents (a document is Chinese when most of its letters are Han).
fn documents() -> (Vec<String>, Vec<String>) {
    let path = corpus_path();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let (mut english, mut chinese) = (Vec::new(), Vec::new());
    let (mut english_bytes, mut chinese_bytes) = (0, 0);
    for line in BufReader::new(reader).lines() {
        let line = line.expect("a readable corpus");
        let doc: serde_json::Value = serde_json::from_str(&line).expect("JSON lines");
        let Some(text) = doc["text"].as_str() else { continue };
        let han = text.chars().filter(|c| is_han(*c)).count();
        let letters = text.chars().filter(|c| c.is_alphabetic()).count();
        let (docs, bytes) = if 2 * han > letters {
            (&mut chinese, &mut chinese_bytes)
        } else {
            (&mut english, &mut english_bytes)
        };
        if *bytes < SAMPLE_BYTES {
            *bytes += text.len();
            docs.push(text.to_string());
        }
    }
    eprintln!(
        "{}: {} English documents ({english_bytes} bytes), {} Chinese ({chinese_bytes} bytes)",
        path.display(),
        english.len(),
        chinese.len()
    );
    (english, chinese)
}

fn kernels(c: &mut Criterion) {
    let (english, chinese) = documents();
    let normalizer = Normalizer::new(NormalizeConfig::default());
    let unfolded =
        Normalizer::new(NormalizeConfig { han_fold: false, ..NormalizeConfig::default() });
    let segmenter = Segmenter::new(true);
    let ngrams = FeatureExtractor::new(FeatureConfig::default(), 42, None);
    let han_bigrams = FeatureConfig { han_ngram_chars: Some(2), ..FeatureConfig::default() };
    let han_bigrams = FeatureExtractor::new(han_bigrams, 42, None);
    let words = FeatureConfig { kind: FeatureKind::Words, ..FeatureConfig::default() };
    let words = FeatureExtractor::new(words, 42, Some(segmenter.clone()));
    let analyzer = Analyzer::new(NormalizeConfig::default(), FeatureConfig::default(), 42, None);
    for (language, docs) in [("english", &english), ("chinese", &chinese)] {
        if docs.is_empty() {
            continue;
        }
        let bytes: usize = docs.iter().map(String::len).sum();
        let normalized: Vec<String> = docs.iter().map(|d| normalizer.normalize(d)).collect();
        let feature_texts: Vec<String> = normalized
            .iter()
            .map(|n| {
                let mut out = String::new();
                feature_text_into(n, true, &mut out);
                out
            })
            .collect();
        let mut group = c.benchmark_group(language);
        group.throughput(Throughput::Bytes(bytes as u64));
        group.sample_size(10);
        for (name, normalizer) in
            [("normalize", &normalizer), ("normalize_without_han_fold", &unfolded)]
        {
            group.bench_function(name, |b| {
                let (mut out, mut scratch) = (String::new(), NormalizeScratch::default());
                b.iter(|| {
                    for d in docs {
                        normalizer.normalize_into(d, &mut out, &mut scratch);
                        black_box(&out);
                    }
                });
            });
        }
        // What template learning and stripping do to every line of every web page.
        group.bench_function("line_keys", |b| {
            let mut scratch = LineScratch::default();
            b.iter(|| {
                for d in docs {
                    for line in d.lines() {
                        black_box(line_key(line, 42, &mut scratch));
                    }
                }
            });
        });
        group.bench_function("feature_text", |b| {
            let mut out = String::new();
            b.iter(|| {
                for n in &normalized {
                    feature_text_into(n, true, &mut out);
                    black_box(&out);
                }
            });
        });
        // What the machine allows: hashing every 5-gram of the text once, no more.
        group.bench_function("hash_5grams_once", |b| {
            let mut offsets = Vec::new();
            b.iter(|| {
                for t in docs {
                    offsets.clear();
                    offsets.extend(t.char_indices().map(|(i, _)| i));
                    offsets.push(t.len());
                    let mut acc = 0u64;
                    for w in offsets.windows(6) {
                        acc ^= hash_bytes(&t.as_bytes()[w[0]..w[5]], 42);
                    }
                    black_box(acc);
                }
            });
        });
        group.bench_function("char_5grams", |b| {
            let (mut out, mut scratch) = (Features::default(), FeatureScratch::default());
            b.iter(|| {
                for t in &feature_texts {
                    ngrams.extract(t, &mut out, &mut scratch);
                    black_box(&out);
                }
            });
        });
        // Han 2-grams beside the 5-grams (`features.han_ngram_chars = 2`).
        group.bench_function("char_5grams_han_2grams", |b| {
            let (mut out, mut scratch) = (Features::default(), FeatureScratch::default());
            b.iter(|| {
                for t in &feature_texts {
                    han_bigrams.extract(t, &mut out, &mut scratch);
                    black_box(&out);
                }
            });
        });
        group.bench_function("segment_words", |b| {
            let (mut out, mut scratch) = (Features::default(), FeatureScratch::default());
            b.iter(|| {
                for t in &feature_texts {
                    words.extract(t, &mut out, &mut scratch);
                    black_box(&out);
                }
            });
        });
        group.bench_function("analyze", |b| {
            let (mut scratch, mut out) = (AnalyzeScratch::default(), Analysis::default());
            b.iter(|| {
                for d in docs {
                    analyzer.analyze_into(d, &mut scratch, &mut out);
                    black_box(&out);
                }
            });
        });
        // Signing as a worker does it: analysis, then the signature.
        let minhasher = MinHasher::try_new(128, 42).expect("valid");
        group.bench_function("sign_minhash_128", |b| {
            let (mut scratch, mut out) = (AnalyzeScratch::default(), Analysis::default());
            let mut signature = MinHashSignature::default();
            b.iter(|| {
                for d in docs {
                    analyzer.analyze_into(d, &mut scratch, &mut out);
                    minhasher.sign_into(out.features.hashes(), &mut signature);
                    black_box(&signature);
                }
            });
        });
        group.bench_function("sign_simhash_64", |b| {
            let (mut scratch, mut out) = (AnalyzeScratch::default(), Analysis::default());
            b.iter(|| {
                for d in docs {
                    analyzer.analyze_into(d, &mut scratch, &mut out);
                    let f = &out.features;
                    black_box(SimHash::from_counts(f.hashes(), f.counts()));
                }
            });
        });
        group.finish();
    }
}

criterion_group!(benches, kernels);
criterion_main!(benches);
