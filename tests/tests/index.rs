//! The index commands from the command line: runs add generations, `index compact` merges
//! them without changing a later run's decisions, and `index forget` takes documents out.

use std::path::PathBuf;
use std::process::ExitCode;

use neardup_cli::Outcome;
use neardup_e2e::{dedup, exit_code, neardup, render_documents, repo, summary};
use neardup_io::{Decision, read_documents};

#[test]
fn compacting_between_runs_changes_no_decision() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |name: &str| {
        let out = dir.path().join(name);
        dedup(&input, &out, &["--index", index.to_str().unwrap(), "--run-name", name]).unwrap();
        out
    };
    let index_cmd = |args: &[&str]| {
        let mut all = vec!["index", args[0], "--index", index.to_str().unwrap()];
        all.extend_from_slice(&args[1..]);
        neardup(&all)
    };
    let first = run("r1");
    // The same input again: every accepted document is a copy of one the first run
    // indexed, including one too short to sign (indexed by its content).
    let second = run("r2");
    let docs = read_documents(&second.join("documents")).unwrap();
    let accepted: Vec<_> = docs.iter().filter(|d| d.decision != Decision::Reject).collect();
    assert!(!accepted.is_empty());
    assert!(accepted.iter().all(|d| d.decision == Decision::Remove), "all copies of r1");
    assert!(accepted.iter().all(|d| d.duplicate_of_run.as_deref() == Some("r1")));
    assert!(accepted.iter().any(|d| d.id.as_deref() == Some("short")));

    assert!(matches!(index_cmd(&["compact"]).unwrap(), Outcome::Index));
    assert!(matches!(index_cmd(&["show"]).unwrap(), Outcome::Index));
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    assert_eq!((manifest.generations.len(), manifest.segments().len()), (2, 1));
    let third = run("r3");
    assert_eq!(render_documents(&third), render_documents(&second));

    // Forgetting every document the first run kept lets their copies in again.
    let kept: Vec<String> = read_documents(&first.join("documents"))
        .unwrap()
        .into_iter()
        .filter(|d| d.decision == Decision::Keep)
        .filter_map(|d| d.id)
        .collect();
    let ids = dir.path().join("ids.txt");
    std::fs::write(&ids, kept.join("\n")).unwrap();
    index_cmd(&["forget", "--ids", ids.to_str().unwrap()]).unwrap();
    let fourth = run("r4");
    assert_eq!(render_documents(&fourth), render_documents(&first));
}

#[test]
fn index_commands_name_a_folder_without_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let ids = dir.path().join("ids.txt");
    std::fs::write(&ids, "a\n").unwrap();
    for command in [&["show"][..], &["compact"], &["forget", "--ids", ids.to_str().unwrap()]] {
        let args = [&["index"][..], command, &["--index", path]].concat();
        let e = neardup(&args).unwrap_err();
        let message = format!("{e:#}");
        // The same usage error (exit 2) from every command.
        assert!(message.contains(path) && message.contains("no index in"), "{args:?}: {message}");
        assert_eq!(exit_code(&args), ExitCode::from(2), "{args:?}");
    }
}

/// A job file's `index.dir` is used like `--index`, which overrides it; `--run-name` needs
/// one of them.
#[test]
fn a_job_file_names_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let from_file = dir.path().join("from-file");
    let job = dir.path().join("weekly.toml");
    std::fs::write(&job, format!("[index]\ndir = {:?}\n", from_file.to_str().unwrap())).unwrap();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["--job", job.to_str().unwrap()];
        args.extend_from_slice(extra);
        dedup(&input, &dir.path().join(out), &args)
    };
    run("w1", &["--run-name", "w1"]).unwrap();
    let manifest = neardup_io::index::Manifest::load(&from_file).unwrap().unwrap();
    assert_eq!(manifest.generations[0].run, "w1");

    let flag = dir.path().join("from-flag");
    run("w2", &["--index", flag.to_str().unwrap()]).unwrap();
    let manifest = neardup_io::index::Manifest::load(&flag).unwrap().unwrap();
    assert_eq!(manifest.generations[0].run, "w2", "the output folder's name");
    assert_eq!(
        neardup_io::index::Manifest::load(&from_file).unwrap().unwrap().generations.len(),
        1
    );

    let e = dedup(&input, &dir.path().join("w3"), &["--run-name", "w3"]).unwrap_err();
    assert!(format!("{e:#}").contains("--run-name"), "{e:#}");
}

/// A run name is one run: running it again into the same output replaces its generation
/// (a scheduler's retry), while a name taken by another output, or by a run that later runs
/// were deduplicated against, is refused.
#[test]
fn a_run_name_is_one_run_that_a_retry_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let input = repo().join("tests/fixtures/mixed.jsonl");
    let run = |out: &str, name: &str| {
        dedup(
            &input,
            &dir.path().join(out),
            &["--index", index.to_str().unwrap(), "--run-name", name],
        )
    };
    run("o1", "w1").unwrap();
    let first = render_documents(&dir.path().join("o1"));
    let folders = || {
        let mut names: Vec<String> = std::fs::read_dir(&index)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("gen-"))
            .collect();
        names.sort();
        names
    };
    let before = folders();
    // The same run again: not a copy of itself, and still one generation.
    run("o1", "w1").unwrap();
    assert_eq!(render_documents(&dir.path().join("o1")), first, "not matched against itself");
    let manifest = neardup_io::index::Manifest::load(&index).unwrap().unwrap();
    assert_eq!(manifest.generations.len(), 1);
    assert_eq!((manifest.generations[0].number, manifest.generations[0].run.as_str()), (1, "w1"));
    assert_eq!(folders().len(), 1, "the replaced folder is gone");
    assert_ne!(folders(), before, "a new folder, so the committed one stayed until the commit");

    let e = format!("{:#}", run("elsewhere", "w1").unwrap_err());
    assert!(e.contains("run \"w1\" is already in the index") && e.contains("o1"), "{e}");
    run("o2", "w2").unwrap();
    let e = format!("{:#}", run("o1", "w1").unwrap_err());
    assert!(e.contains("later runs were deduplicated against it"), "{e}");
}

/// Text of `sentences` sentences of made-up words, different for each `seed`.
fn article(seed: u64, sentences: usize) -> Vec<String> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut word = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let n = 2 + (state >> 60) as usize % 3;
        (0..n)
            .map(|i| {
                let pick = (state >> (12 * i + 3)) as usize;
                format!("{}{}", &"bdfgklmnprstvz"[pick % 14..][..1], &"aeiou"[pick / 14 % 5..][..1])
            })
            .collect::<String>()
    };
    (0..sentences)
        .map(|_| {
            let words: Vec<String> = (0..12).map(|_| word()).collect();
            format!("{}.", words.join(" "))
        })
        .collect()
}

fn pages<S: AsRef<str>>(path: &std::path::Path, pages: &[(S, S, String)]) {
    let lines: Vec<String> = pages
        .iter()
        .map(|(id, url, text)| {
            let (id, url) = (id.as_ref(), url.as_ref());
            serde_json::json!({"id": id, "url": url, "text": text}).to_string()
        })
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// Writes `rows` (id, URL, text) as JSON Lines named `name` in `dir`; returns its path.
fn write_pages(dir: &std::path::Path, name: &str, rows: &[(String, String, String)]) -> PathBuf {
    let path = dir.join(name);
    pages(&path, rows);
    path
}

/// The run's one pair, which must be `ids` verified by containment (at least the default's).
fn only_containment_pair(run: &std::path::Path, ids: (&str, &str)) -> neardup_io::PairRow {
    let mut pairs = neardup_io::read_pairs(&run.join("pairs")).unwrap();
    assert_eq!(pairs.len(), 1, "{pairs:?}");
    let p = pairs.remove(0);
    assert_eq!((p.id_a.as_str(), p.id_b.as_str()), ids);
    assert_eq!(p.measure, Some(neardup_core::Measure::Containment), "{p:?}");
    assert!(p.containment.unwrap() >= neardup_job::WEB_CONTAINMENT, "{p:?}");
    p
}

/// A teaser holding the first 65% of an article (Jaccard about 0.65, all of it inside the
/// article) is a copy of the article by containment, which web pages have by default:
/// within a run and against the index of an earlier run alike. Without URLs (plain text)
/// or with `minhash.containment = 0` it is not, and an index made with containment refuses
/// a run without it, naming the setting.
#[test]
fn containment_finds_a_teaser_within_a_run_and_against_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let full = article(1, 40);
    let teaser = full[..26].join(" ");
    let other = article(2, 40).join(" ");
    let first = dir.path().join("first.jsonl");
    let second = dir.path().join("second.jsonl");
    pages(
        &first,
        &[
            ("article", "https://news.example.com/a/1", full.join(" ")),
            ("other", "https://news.example.com/a/2", other),
        ],
    );
    pages(&second, &[("teaser", "https://blog.example.org/p/9", teaser.clone())]);
    let both = dir.path().join("both.jsonl");
    std::fs::write(
        &both,
        std::fs::read_to_string(&first).unwrap() + &std::fs::read_to_string(&second).unwrap(),
    )
    .unwrap();

    // Within a run: one pair, verified by containment, below the Jaccard threshold.
    let run = dir.path().join("within");
    dedup(&both, &run, &[]).unwrap();
    let p = only_containment_pair(&run, ("article", "teaser"));
    assert!(p.similarity < 0.8, "{p:?}");

    // Against the index: the teaser is removed as a copy of the earlier run's article.
    let index = dir.path().join("index");
    let indexed = |input: &std::path::Path, name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["--index", index.to_str().unwrap(), "--run-name", name];
        args.extend_from_slice(extra);
        dedup(input, &out, &args).map(|_| out)
    };
    indexed(&first, "r1", &[]).unwrap();
    let r2 = indexed(&second, "r2", &[]).unwrap();
    let docs = read_documents(&r2.join("documents")).unwrap();
    assert_eq!(docs[0].decision, Decision::Remove, "{docs:?}");
    assert_eq!(docs[0].duplicate_of.as_deref(), Some("article"));
    assert_eq!(docs[0].duplicate_of_run.as_deref(), Some("r1"));

    // The index holds runs with containment on: a run without it is refused.
    let off = dir.path().join("off.toml");
    std::fs::write(&off, "[minhash]\ncontainment = 0\n").unwrap();
    let refused = indexed(&second, "r3", &["--job", off.to_str().unwrap()]).unwrap_err();
    assert!(format!("{refused:#}").contains("minhash.containment"), "{refused:#}");

    // Without containment, the teaser stays: off by setting, and off for plain text.
    for (name, extra) in [("off", vec!["--job", off.to_str().unwrap()]), ("plain", vec![])] {
        let input = if name == "plain" {
            let plain = dir.path().join("plain.jsonl");
            let text = std::fs::read_to_string(&both).unwrap().replace("\"url\"", "\"link\"");
            std::fs::write(&plain, text).unwrap();
            plain
        } else {
            both.clone()
        };
        let out = dir.path().join(name);
        dedup(&input, &out, &extra).unwrap();
        let pairs = neardup_io::read_pairs(&out.join("pairs")).unwrap();
        assert!(pairs.is_empty(), "{name}: {pairs:?}");
    }
}

/// An index keeps the containment share it recorded: a run that leaves it unset takes the
/// index's (batches decide alike when the default changes), a share set in the job file
/// replaces it for the runs after it, and each run records the share it used.
#[test]
fn an_index_keeps_its_containment_share_until_a_run_sets_another() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pages.jsonl");
    pages(&input, &[("a", "https://news.example.com/a/1", article(1, 30).join(" "))]);
    let index = dir.path().join("index");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["--index", index.to_str().unwrap(), "--run-name", name];
        args.extend_from_slice(extra);
        dedup(&input, &out, &args).unwrap();
        summary(&out)["config"]["minhash"]["containment"].as_f64().unwrap()
    };
    let default = neardup_job::WEB_CONTAINMENT;
    assert_eq!(run("made", &["--set", "minhash.containment=0.9"]), 0.9);
    assert_eq!(run("unset", &[]), 0.9, "the index's share, not the default");
    assert_eq!(run("set", &["--set", &format!("minhash.containment={default}")]), default);
    assert_eq!(run("unset-after", &[]), default, "the share the last run set");
}

/// The containment floor for web pages is 0.4, a teaser of two fifths of its article, while
/// the bands stay chosen for 0.6 (24 x 4): a teaser of about half the article (Jaccard
/// about 0.5 to 0.6) is a copy by containment, its last third (Jaccard about 0.35) is not.
#[test]
fn a_teaser_of_half_its_article_is_a_copy_under_the_bands_of_0_6() {
    let dir = tempfile::tempdir().unwrap();
    let full = article(3, 40);
    let input = dir.path().join("pages.jsonl");
    pages(
        &input,
        &[
            ("article", "https://news.example.com/a/1", full.join(" ")),
            ("half", "https://blog.example.org/p/1", full[..21].join(" ")),
            ("part", "https://blog.example.org/p/2", full[26..].join(" ")),
        ],
    );
    let out = dir.path().join("out");
    dedup(&input, &out, &[]).unwrap();
    let p = only_containment_pair(&out, ("article", "half"));
    assert!((0.5..0.6).contains(&p.similarity), "{p:?}");
    let s = summary(&out);
    assert_eq!(
        (s["resolved"]["bands"].as_u64(), s["resolved"]["rows"].as_u64()),
        (Some(24), Some(4))
    );
    assert_eq!(
        s["config"]["minhash"]["containment_min_jaccard"].as_f64(),
        Some(0.4),
        "{}",
        s["config"]
    );
}

/// The signature of every document a generation of the index in `index` holds, by id.
fn indexed_signatures(index: &std::path::Path, generation: u32) -> Vec<(String, Vec<u8>)> {
    let manifest = neardup_io::index::Manifest::load(index).unwrap().unwrap();
    let g = manifest.generation(generation).unwrap();
    let mut out = Vec::new();
    for part in 0..g.doc_parts {
        neardup_io::index::for_each_docs_batch(&index.join(&g.folder), part, |rows| {
            let of_generation = rows.into_iter().filter(|r| r.generation == generation);
            out.extend(of_generation.map(|r| (r.id, r.signature)));
            Ok(())
        })
        .unwrap();
    }
    out.sort();
    out
}

/// SimHash on web pages runs with an index at one run's defaults (TF-IDF at distance 7,
/// its block tables chosen for an index and recorded in it): a batch's pages are weighed
/// by the document frequencies of every batch so far plus its own, so the last of three
/// batches signs its pages exactly as one run over all three does, and the batches remove
/// what the one run removes. (Each page is on a host of its own: no template to learn.)
#[test]
fn simhash_with_an_index_weighs_by_every_batch_as_one_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(String, String, String)> = (0..24u64)
        .map(|i| (format!("a{i}"), format!("https://site{i}.example/a"), article(i, 14).join(" ")))
        .collect();
    // Copies of the first eight articles, a sentence dropped, on other hosts: the third
    // batch, against originals of the first.
    for i in 0..8u64 {
        let mut copy = article(i, 14);
        copy.remove(5);
        all.push((format!("c{i}"), format!("https://mirror{i}.example/c"), copy.join(" ")));
    }
    let write = |name: &str, rows: &[(String, String, String)]| write_pages(dir.path(), name, rows);
    let whole = write("all.jsonl", &all);
    let batches = [
        write("b1.jsonl", &all[..12]),
        write("b2.jsonl", &all[12..24]),
        write("b3.jsonl", &all[24..]),
    ];
    let run = |input: &std::path::Path, index: &str, name: &str| {
        let out = dir.path().join(name);
        let index = dir.path().join(index);
        let args = ["--method", "simhash", "--index", index.to_str().unwrap(), "--run-name", name];
        dedup(input, &out, &args).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        out
    };
    let one = run(&whole, "one", "all");
    let outs: Vec<_> = batches
        .iter()
        .enumerate()
        .map(|(i, b)| run(b, "batches", &format!("b{}", i + 1)))
        .collect();
    for out in outs.iter().chain([&one]) {
        let config = &summary(out)["config"]["simhash"];
        assert_eq!(
            (config["weighting"].as_str(), config["max_distance"].as_u64()),
            (Some("tf_idf"), Some(7)),
            "{config}"
        );
    }
    let manifest = neardup_io::index::Manifest::load(&dir.path().join("batches")).unwrap().unwrap();
    let blocks = manifest.settings["simhash.blocks"].parse::<u32>().unwrap();
    let chosen = neardup_core::BlockLayout::choose(7, neardup_job::INDEX_LAYOUT_DOCUMENTS).unwrap();
    assert_eq!(blocks, chosen.blocks());
    assert!(
        dir.path()
            .join("batches")
            .join(&manifest.generations[2].folder)
            .join(neardup_io::index::FREQUENCIES_FILE)
            .is_file()
    );

    // The third batch's signatures are the one run's.
    let last = indexed_signatures(&dir.path().join("batches"), 3);
    let whole_signatures = indexed_signatures(&dir.path().join("one"), 1);
    assert!(!last.is_empty());
    for (id, signature) in &last {
        let in_one = whole_signatures.iter().find(|(i, _)| i == id).map(|(_, s)| s);
        assert_eq!(in_one, Some(signature), "{id}");
    }
    let removed = |out: &std::path::Path| -> Vec<(String, String)> {
        read_documents(&out.join("documents"))
            .unwrap()
            .into_iter()
            .filter(|d| d.decision == Decision::Remove)
            .map(|d| (d.id.unwrap(), d.duplicate_of.unwrap()))
            .collect()
    };
    let mut by_batches: Vec<_> = outs.iter().flat_map(|o| removed(o)).collect();
    by_batches.sort();
    let mut by_one = removed(&one);
    by_one.sort();
    assert_eq!(by_batches, by_one);
    assert!(by_one.len() >= 6, "{by_one:?}");

    // Compaction keeps the sum of the merged generations' frequencies, which match one
    // run's.
    let index = dir.path().join("batches");
    let frequencies = |index: &std::path::Path| {
        let manifest = neardup_io::index::Manifest::load(index).unwrap().unwrap();
        let dirs: Vec<_> = manifest.segments().iter().map(|s| index.join(&s.folder)).collect();
        neardup_io::index::read_frequencies(dirs.iter().map(|d| d.as_path())).unwrap().unwrap()
    };
    let before = frequencies(&index);
    assert_eq!(before, frequencies(&dir.path().join("one")));
    neardup(&["index", "compact", "--index", index.to_str().unwrap()]).unwrap();
    assert_eq!(neardup_io::index::Manifest::load(&index).unwrap().unwrap().segments().len(), 1);
    assert_eq!(frequencies(&index), before);
}

/// A page of `host`: navigation and footer lines on every page of the host, a box of
/// related stories (`headlines`, each a few sentences), then `text`.
fn templated_page(host: &str, headlines: &[usize], text: &[String]) -> String {
    let mut lines = vec![
        format!("Home | World | Business | Technology | Science | Sport | {host}"),
        "Sign in to follow the stories you care about and get them in your inbox".to_string(),
    ];
    for &h in headlines {
        lines.push(format!("Related: {}", article(1000 + h as u64, 1).join(" ")));
    }
    lines.extend(text.iter().cloned());
    lines.push(format!("Copyright 2026 {host}. All rights reserved. Terms, privacy and cookies."));
    lines.join("\n")
}

/// The same-site template case: a host whose pages carry a box of related headlines, each
/// on about half of its pages. The first batch has twenty pages of the host, enough to
/// learn the box's lines as template; the second has four, where each headline is on two
/// pages at most, too few to learn from the batch alone. Two different short articles of
/// the second batch under the same four headlines look alike through them unless the run
/// learns from the index's pages of the host too, as one run over both batches does: the
/// second batch then removes nothing, as that one run does not.
#[test]
fn a_batch_learns_its_hosts_templates_from_the_index_as_one_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let host = "news.example-herald.com";
    // Three paragraphs of three sentences: the lines that name a page (half the longest
    // and more), where the box's one-sentence lines do not.
    let text = |seed: u64| -> Vec<String> {
        (0..3).map(|p| article(seed * 10 + p, 3).join(" ")).collect()
    };
    // The box: eighty one-sentence lines, the even or the odd ones of a hundred and sixty.
    let boxed = |parity: usize| -> Vec<usize> { (0..160).filter(|h| h % 2 == parity).collect() };
    let mut first = Vec::new();
    for i in 0..20usize {
        let page = templated_page(host, &boxed(i % 2), &text(100 + i as u64));
        first.push((format!("p{i}"), format!("https://{host}/story/{i}"), page));
    }
    let second: Vec<(String, String, String)> = [("x", 0), ("y", 0), ("z", 1), ("w", 1)]
        .iter()
        .enumerate()
        .map(|(i, (id, parity))| {
            let page = templated_page(host, &boxed(*parity), &text(i as u64));
            (id.to_string(), format!("https://{host}/story/{id}"), page)
        })
        .collect();
    let write = |name: &str, rows: &[(String, String, String)]| write_pages(dir.path(), name, rows);
    let (b1, b2) = (write("b1.jsonl", &first), write("b2.jsonl", &second));
    let both = write("both.jsonl", &[first.clone(), second.clone()].concat());
    let index = dir.path().join("index");
    for method in ["minhash", "simhash"] {
        // Runs with 2 workers use one index, others another.
        let run_with = |input: &std::path::Path, name: &str, indexed: bool, workers: &str| {
            let out = dir.path().join(format!("{method}-{name}-{workers}"));
            let mut args = vec!["--method", method, "-w", workers];
            // The other way runs under a small memory budget too.
            let copy = if workers == "2" { "a" } else { "b" };
            if copy == "b" {
                args.extend(["--memory-budget", "64M"]);
            }
            let index = dir.path().join(format!("index-{method}-{copy}"));
            if indexed {
                args.extend(["--index", index.to_str().unwrap(), "--run-name", name]);
            }
            dedup(input, &out, &args).unwrap_or_else(|e| panic!("{method} {name}: {e:#}"));
            out
        };
        let decisions = |out: &std::path::Path, ids: &[&str]| -> Vec<(String, Decision)> {
            let docs = read_documents(&out.join("documents")).unwrap();
            let of = |id: &str| docs.iter().find(|d| d.id.as_deref() == Some(id)).unwrap().decision;
            ids.iter().map(|id| (id.to_string(), of(id))).collect()
        };
        let run = |input: &std::path::Path, name: &str, indexed: bool| {
            run_with(input, name, indexed, "2")
        };
        let one = run(&both, "one", false);
        run(&b1, "b1", true);
        let batch = run(&b2, "b2", true);
        let ids = ["x", "y", "z", "w"];
        // Alone, the second batch cannot tell the box from content.
        let alone = run(&b2, "alone", false);
        let kept = ids.map(|id| (id.to_string(), Decision::Keep)).to_vec();
        assert_ne!(decisions(&alone, &ids), kept, "{method}: the case needs the index");
        assert_eq!(decisions(&one, &ids), kept, "{method}");
        assert_eq!(decisions(&batch, &ids), kept, "{method}");
        // What the index keeps for learning, and learns, is the same whatever the workers
        // and the memory budget.
        run_with(&b1, "b1", true, "3");
        let other = run_with(&b2, "b2", true, "1");
        assert_eq!(render_documents(&other), render_documents(&batch), "{method}");
    }
    assert!(!index.exists());
}
