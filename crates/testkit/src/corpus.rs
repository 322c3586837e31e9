//! Seeded corpora with planted duplicates.

use std::fmt::Write as _;
use std::path::Path;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// What to generate.
#[derive(Clone, Debug)]
pub struct CorpusSpec {
    /// Seed of the generator.
    pub seed: u64,
    /// Original documents.
    pub originals: usize,
    /// Words per original document (about).
    pub words: usize,
    /// Near copies per original, drawn from 0..=this.
    pub max_near_copies: usize,
    /// Fraction of word positions edited in a near copy.
    pub edit_rate: f64,
    /// Probability that an original also gets an exact copy (after whitespace and case
    /// changes, which normalisation removes).
    pub exact_copy_rate: f64,
    /// Malformed or unusable records to mix in.
    pub bad_records: usize,
    /// Records that repeat an earlier id.
    pub repeated_ids: usize,
}

impl Default for CorpusSpec {
    fn default() -> Self {
        CorpusSpec {
            seed: 7,
            originals: 300,
            words: 120,
            max_near_copies: 3,
            edit_rate: 0.03,
            exact_copy_rate: 0.2,
            bad_records: 10,
            repeated_ids: 5,
        }
    }
}

/// One generated line of JSONL and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedRecord {
    /// The JSONL line (without newline).
    pub line: String,
    /// The id, when the record has one.
    pub id: Option<String>,
    /// What the record is.
    pub kind: RecordKind,
}

/// What a generated record is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// An original document.
    Original,
    /// An exact copy (up to case and whitespace) of the original with this id.
    ExactCopy(String),
    /// A near copy of the original with this id.
    NearCopy(String),
    /// A malformed or unusable record.
    Bad,
    /// A record repeating the id of an earlier record.
    RepeatedId,
}

/// Generates a corpus; records are shuffled so copies come before or after originals.
pub fn generate(spec: &CorpusSpec) -> Vec<GeneratedRecord> {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let english = vocabulary(&mut rng, 2000, Script::Latin);
    let chinese = vocabulary(&mut rng, 2000, Script::Han);
    let mut records = Vec::new();
    for i in 0..spec.originals {
        let id = format!("doc-{i:05}");
        let script = match i % 3 {
            0 => Mixture::English,
            1 => Mixture::Chinese,
            _ => Mixture::Mixed,
        };
        let words: Vec<&str> = (0..spec.words + (rng.next_u32() as usize % 40))
            .map(|_| pick_word(&mut rng, script, &english, &chinese))
            .collect();
        let text = render(&words, script);
        records.push(GeneratedRecord {
            line: json_line(&id, &text),
            id: Some(id.clone()),
            kind: RecordKind::Original,
        });
        if chance(&mut rng, spec.exact_copy_rate) {
            let copy_id = format!("{id}-exact");
            let text = format!("  {}\n", text.to_uppercase().replace(' ', "   "));
            records.push(GeneratedRecord {
                line: json_line(&copy_id, &text),
                id: Some(copy_id),
                kind: RecordKind::ExactCopy(id.clone()),
            });
        }
        let copies = rng.next_u32() as usize % (spec.max_near_copies + 1);
        let mut previous = words.clone();
        for c in 0..copies {
            // Half the copies edit the previous copy, so clusters form chains as well as
            // stars, and some members are never compared with the original.
            let mut edited =
                if rng.next_u32().is_multiple_of(2) { previous.clone() } else { words.clone() };
            let edits = ((edited.len() as f64 * spec.edit_rate).ceil() as usize).max(1);
            for _ in 0..edits {
                let at = rng.next_u32() as usize % edited.len();
                match rng.next_u32() % 3 {
                    0 => edited[at] = pick_word(&mut rng, script, &english, &chinese),
                    1 => edited.insert(at, pick_word(&mut rng, script, &english, &chinese)),
                    _ if edited.len() > 2 => {
                        edited.remove(at);
                    }
                    _ => {}
                }
            }
            let copy_id = format!("{id}-near{c}");
            let text = render(&edited, script);
            records.push(GeneratedRecord {
                line: json_line(&copy_id, &text),
                id: Some(copy_id.clone()),
                kind: RecordKind::NearCopy(id.clone()),
            });
            if chance(&mut rng, spec.exact_copy_rate) {
                // An exact copy of a near copy: its verification goes through its text's
                // representative.
                let exact_id = format!("{copy_id}-exact");
                records.push(GeneratedRecord {
                    line: json_line(&exact_id, &format!("{text}\n")),
                    id: Some(exact_id),
                    kind: RecordKind::ExactCopy(copy_id),
                });
            }
            previous = edited;
        }
    }
    shuffle(&mut rng, &mut records);
    for b in 0..spec.bad_records {
        // Every other bad record takes the id of an original, so an id is sometimes first
        // claimed by a rejected record.
        let id = match records.iter().filter(|x| x.kind == RecordKind::Original).nth(b * 7) {
            Some(original) if b % 2 == 1 => original.id.clone().expect("originals have ids"),
            _ => format!("bad-{b}"),
        };
        let line = match b % 5 {
            0 => "{\"id\": \"broken".to_string(),
            1 => format!("{{\"id\": \"{id}\"}}"),
            2 => format!("{{\"id\": \"{id}\", \"text\": 42}}"),
            3 => format!("{{\"id\": \"{id}\", \"text\": \"  \"}}"),
            _ => format!("{{\"id\": \"{id}\", \"text\": \"<p></p>\"}}"),
        };
        let at = rng.next_u32() as usize % (records.len() + 1);
        records.insert(at, GeneratedRecord { line, id: None, kind: RecordKind::Bad });
    }
    for r in 0..spec.repeated_ids.min(records.len()) {
        let original = records.iter().filter(|x| x.kind == RecordKind::Original).nth(r).cloned();
        let Some(original) = original else { break };
        let id = original.id.expect("originals have ids");
        let line = json_line(&id, &format!("an unrelated text that reuses the id {id} number {r}"));
        records.push(GeneratedRecord { line, id: Some(id), kind: RecordKind::RepeatedId });
    }
    records
}

/// Writes records as a JSONL file.
///
/// # Panics
/// If the file cannot be written (tests only).
pub fn write_jsonl(path: &Path, records: &[GeneratedRecord]) {
    let mut out = String::new();
    for r in records {
        out.push_str(&r.line);
        out.push('\n');
    }
    std::fs::write(path, out).expect("write test corpus");
}

#[derive(Clone, Copy)]
enum Script {
    Latin,
    Han,
}

#[derive(Clone, Copy)]
enum Mixture {
    English,
    Chinese,
    Mixed,
}

fn vocabulary(rng: &mut ChaCha8Rng, n: usize, script: Script) -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ka", "lo", "mi", "ten", "ra", "su", "ven", "do", "pre", "ti", "an", "qu", "el", "or",
        "bis", "nu", "ha", "zen", "po", "li", "mar", "ost", "ie", "gra",
    ];
    (0..n)
        .map(|_| match script {
            Script::Latin => {
                let parts = 1 + rng.next_u32() as usize % 3;
                (0..parts).map(|_| SYLLABLES[rng.next_u32() as usize % SYLLABLES.len()]).collect()
            }
            Script::Han => {
                let chars = 1 + rng.next_u32() as usize % 3;
                // Common ideographs (U+4E00..U+6FFF), so jieba sees real characters.
                (0..chars)
                    .filter_map(|_| char::from_u32(0x4E00 + rng.next_u32() % 0x2200))
                    .collect()
            }
        })
        .collect()
}

fn pick_word<'a>(
    rng: &mut ChaCha8Rng,
    script: Mixture,
    english: &'a [String],
    chinese: &'a [String],
) -> &'a str {
    let han = match script {
        Mixture::English => false,
        Mixture::Chinese => true,
        Mixture::Mixed => rng.next_u32().is_multiple_of(2),
    };
    let pool = if han { chinese } else { english };
    &pool[rng.next_u32() as usize % pool.len()]
}

fn render(words: &[&str], script: Mixture) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            match script {
                Mixture::Chinese if i % 12 == 0 => out.push('，'),
                Mixture::Chinese => {}
                _ if i % 15 == 0 => out.push_str(". "),
                _ => out.push(' '),
            }
        }
        out.push_str(w);
    }
    out
}

fn json_line(id: &str, text: &str) -> String {
    let mut line = String::from("{\"id\": ");
    push_json_string(&mut line, id);
    line.push_str(", \"text\": ");
    push_json_string(&mut line, text);
    line.push_str(", \"source\": \"testkit\"}");
    line
}

fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
}

fn shuffle<T>(rng: &mut ChaCha8Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.next_u64() as usize % (i + 1);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_planted() {
        let spec = CorpusSpec { originals: 50, ..CorpusSpec::default() };
        let a = generate(&spec);
        assert_eq!(a, generate(&spec));
        let count = |f: fn(&RecordKind) -> bool| a.iter().filter(|r| f(&r.kind)).count();
        assert_eq!(count(|k| *k == RecordKind::Original), 50);
        assert_eq!(count(|k| *k == RecordKind::Bad), spec.bad_records);
        assert_eq!(count(|k| *k == RecordKind::RepeatedId), spec.repeated_ids);
        assert!(count(|k| matches!(k, RecordKind::NearCopy(_))) > 10);
        assert!(count(|k| matches!(k, RecordKind::ExactCopy(_))) > 2);
    }
}
