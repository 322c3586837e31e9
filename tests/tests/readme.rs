//! The README and the pages of `docs/` as a newcomer meets them: the README is at most
//! 400 lines; every relative link in `README.md` and `docs/*.md` names a file that exists,
//! and a heading with that GitHub slug where it names an anchor of a Markdown file; every
//! `neardup` subcommand and flag written in their shell and text code blocks is one the
//! CLI accepts (checked against its clap definition); and the `neardup` commands of their
//! shell code blocks run.
//!
//! The commands run in-process (the quick start's `cargo run ... --` as the `neardup`
//! command it runs), those of one code block in order in one temporary working
//! directory, so a command reads what the ones before it wrote; each must succeed. Paths
//! under `data-samples/` are the repository's samples; the example inputs
//! `crawl/2026-47/` and `crawl/2026-48/` are made from them (`EXAMPLE_INPUTS`), and `ID_A`
//! and `ID_B` become the ids of a near pair of the `--run` folder. Commands needing what
//! the test machine lacks are not run, by the rules of `NOT_RUN`: object storage and HTTP
//! inputs (`s3://`, `gs://`, `az://`, `http(s)://`), distributed runs (`--hostfile`,
//! `--processes`) and the command of a line that installs the wheel (`pip`). Other
//! programs in the blocks (cargo, pip, maturin, docker, `bash` scripts, curl) are not run
//! either: CI runs the quick start's and the tests' (`.ci/run`), and the rest build,
//! install or measure. At least `MIN_COMMANDS_RUN` commands must run.
//!
//! One word per meaning: "cluster" is a group of near-duplicate documents, and several
//! `neardup` processes run together are a "distributed run". The repository's prose,
//! comments and tests never call the latter a cluster (`WRONG_WORDING`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use neardup_cli::Cli;
use neardup_e2e::{neardup, repo};

const MAX_README_LINES: usize = 400;

/// `README.md` and the Markdown pages of `docs/`, as paths relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(repo()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

fn read(page: &Path) -> String {
    let path = repo().join(page);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A line of a page: its number (from 1), its text, the info string of the fenced code
/// block it is in (`None` outside code blocks; fence lines themselves are skipped) and the
/// number of that block's opening fence line (0 outside code blocks).
struct Line<'a> {
    number: usize,
    text: &'a str,
    block: Option<&'a str>,
    fence: usize,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut block: Option<&str> = None;
    let mut fence = 0;
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        if trimmed.starts_with("```") {
            block = match block {
                Some(_) => None,
                None => Some(trimmed.trim_start_matches('`').trim()),
            };
            fence = if block.is_some() { i + 1 } else { 0 };
            continue;
        }
        out.push(Line { number: i + 1, text, block, fence });
    }
    out
}

/// The GitHub slug of a heading: lower case, without punctuation but `-` and `_`, spaces
/// as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown page's headings (a repeated slug gets `-1`, `-2`, ...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for line in lines(text) {
        if line.block.is_some() {
            continue;
        }
        let Some(heading) = line.text.strip_prefix('#') else { continue };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links `](target)` on a line outside code spans.
fn link_targets(line: &str) -> Vec<String> {
    // Code spans hold examples, not links.
    let mut plain = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(part);
        }
        plain.push(' ');
    }
    let mut targets = Vec::new();
    let mut rest = plain.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find([')', ' ']).unwrap_or(rest.len());
        targets.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    targets
}

#[test]
fn readme_is_at_most_400_lines() {
    let n = read(Path::new("README.md")).lines().count();
    assert!(n <= MAX_README_LINES, "README.md: {n} lines, more than {MAX_README_LINES}");
}

#[test]
fn relative_links_hold() {
    let mut broken = Vec::new();
    // The anchors of each linked Markdown page, read once.
    let mut anchors_of: std::collections::BTreeMap<PathBuf, BTreeSet<String>> =
        std::collections::BTreeMap::new();
    for page in pages() {
        let text = read(&page);
        let dir = page.parent().unwrap_or(Path::new(""));
        for line in lines(&text) {
            if line.block.is_some() {
                continue;
            }
            for target in link_targets(line.text) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((path, anchor)) => (path, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let file = if path.is_empty() { page.clone() } else { dir.join(path) };
                let where_ = format!("{}:{}: link ({target})", page.display(), line.number);
                if !repo().join(&file).exists() {
                    broken.push(format!("{where_}: no file {}", file.display()));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                let markdown = file.extension().is_some_and(|e| e == "md");
                if markdown
                    && !anchors_of
                        .entry(file.clone())
                        .or_insert_with(|| anchors(&read(&file)))
                        .contains(anchor)
                {
                    broken.push(format!("{where_}: no heading #{anchor} in {}", file.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A `neardup` command in a code block of a page.
struct CommandLine {
    /// The number of the opening fence line of its code block: the commands of a block
    /// share it.
    fence: usize,
    /// Whether the block is a shell block (`sh`, `bash`, ...), rather than text.
    shell: bool,
    /// The number of the line it starts on.
    number: usize,
    /// Every word of that line, continuation lines joined, other commands of it included
    /// and its comment left out.
    line: Vec<String>,
    /// The words after `neardup` (or after `cargo run ... --`).
    words: Vec<String>,
}

/// The `neardup` command lines of a page's shell and text code blocks.
fn command_lines(text: &str) -> Vec<CommandLine> {
    let mut out = Vec::new();
    let all = lines(text);
    let mut i = 0;
    while i < all.len() {
        let line = &all[i];
        i += 1;
        let Some(block) = line.block else { continue };
        let shell = matches!(block, "sh" | "bash" | "shell" | "console");
        if !shell && block != "text" {
            continue;
        }
        // A shell line continues after a trailing backslash; a synopsis line in a text
        // block continues on the indented lines after it.
        let mut joined = line.text.trim_end().to_string();
        while i < all.len() && all[i].block == Some(block) {
            let next = all[i].text;
            if shell && joined.ends_with('\\') {
                joined.pop();
            } else if !(!shell && next.starts_with(' ') && !next.trim().is_empty()) {
                break;
            }
            joined.push(' ');
            joined.push_str(next.trim());
            i += 1;
        }
        let words: Vec<&str> = joined.split_whitespace().collect();
        let words = if !shell {
            // Text blocks hold output as well: only lines that are a command.
            match words.first() {
                Some(&"neardup") => &words[..],
                Some(&"$") if words.get(1) == Some(&"neardup") => &words[1..],
                _ => continue,
            }
        } else {
            &words[..]
        };
        // Shell: each command of a pipeline or a list, without comments.
        let words = match words.iter().position(|w| shell && w.starts_with('#')) {
            Some(comment) => &words[..comment],
            None => words,
        };
        let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
        for &word in words {
            if shell && matches!(word, "|" | "||" | "&&" | ";") {
                segments.push(Vec::new());
            } else {
                segments.last_mut().unwrap().push(word);
            }
        }
        for segment in segments {
            let start = if let Some(at) = segment.iter().position(|w| *w == "neardup") {
                Some(at + 1)
            } else if segment.starts_with(&["cargo", "run"]) && segment.contains(&"neardup-cli") {
                segment.iter().position(|w| *w == "--").map(|at| at + 1)
            } else {
                None
            };
            if let Some(start) = start {
                out.push(CommandLine {
                    fence: line.fence,
                    shell,
                    number: line.number,
                    line: words.iter().map(|w| w.to_string()).collect(),
                    words: segment[start..].iter().map(|w| w.to_string()).collect(),
                });
            }
        }
    }
    out
}

/// The flag a word names (`--by`, `-i`), without its value or brackets; `None` for other
/// words.
fn flag(word: &str) -> Option<&str> {
    let word = word.trim_start_matches(['[', '(']).trim_end_matches([']', ')', ',']);
    let word = word.split('=').next().unwrap();
    let name = word.strip_prefix("--").or_else(|| word.strip_prefix('-'))?;
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    ok.then_some(word)
}

fn accepts(command: &clap::Command, flag: &str) -> bool {
    command.get_arguments().any(|arg| match flag.strip_prefix("--") {
        Some(long) => {
            arg.get_long() == Some(long) || arg.get_all_aliases().is_some_and(|a| a.contains(&long))
        }
        None => {
            let mut chars = flag.trim_start_matches('-').chars();
            let (Some(short), None) = (chars.next(), chars.next()) else { return false };
            arg.get_short() == Some(short)
                || arg.get_all_short_aliases().is_some_and(|a| a.contains(&short))
        }
    })
}

#[test]
fn commands_and_flags_are_accepted_by_the_cli() {
    let mut cli = Cli::command();
    cli.build();
    let mut wrong = Vec::new();
    for page in pages() {
        for CommandLine { number, words, .. } in command_lines(&read(&page)) {
            let where_ = format!("{}:{number}: neardup {}", page.display(), words.join(" "));
            // Subcommands, as deep as the words name them.
            let mut command = &cli;
            let mut rest = words.as_slice();
            while let Some(word) = rest.first() {
                if word.starts_with('-') || command.get_subcommands().next().is_none() {
                    break;
                }
                match command.find_subcommand(word) {
                    Some(sub) => command = sub,
                    None => {
                        wrong.push(format!("{where_}: no subcommand {word:?}"));
                        break;
                    }
                }
                rest = &rest[1..];
            }
            for word in rest {
                if let Some(flag) = flag(word)
                    && !accepts(command, flag)
                {
                    let name = command.get_name();
                    wrong.push(format!("{where_}: `{name}` has no flag {flag}"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "commands the CLI does not accept:\n{}", wrong.join("\n"));
}

/// Rules for the shell commands that are not run, each a word (or the value after a
/// word's `=`) that starts with the needle, and why: they need what the test does not have.
const NOT_RUN: [(&str, &str); 8] = [
    ("s3://", "object storage"),
    ("gs://", "object storage"),
    ("az://", "object storage"),
    ("http://", "an HTTP server"),
    ("https://", "an HTTP server"),
    ("--hostfile", "a distributed run of several processes"),
    ("--processes", "a distributed run of several processes"),
    ("pip", "the command a wheel installs"),
];

/// Inputs the pages name as examples, which the test makes in the working directory from
/// the samples, so the commands reading them run: the incremental example's two weeks of
/// WET files are a crawl, then a recrawl of it with one page more.
const EXAMPLE_INPUTS: [(&str, &[&str]); 2] = [
    ("crawl/2026-47/", &["data-samples/crawlset/pages.wet.gz"]),
    (
        "crawl/2026-48/",
        &["data-samples/crawlset/pages.wet.gz", "data-samples/warc/cc_whirlwind.warc.wet.gz"],
    ),
];

/// The fewest commands the pages' shell blocks must run (the 18 they hold today), so the
/// test cannot pass by running none.
const MIN_COMMANDS_RUN: usize = 18;

/// Why a command of the pages is not run, or `None` when it is.
fn not_run(command: &CommandLine) -> Option<&'static str> {
    NOT_RUN.iter().find_map(|(needle, why)| {
        let hit = command.line.iter().any(|word| {
            let value = word.split_once('=').map_or(word.as_str(), |(_, value)| value);
            word.starts_with(needle) || value.starts_with(needle)
        });
        hit.then_some(*why)
    })
}

/// The arguments to run a command with in the working directory `dir`: `data-samples/`
/// paths resolved against the repository, and the placeholders `ID_A` and `ID_B` replaced
/// by the ids of the first near pair of the `--run` folder, in id order.
fn arguments(words: &[String], dir: &Path) -> Result<Vec<String>, String> {
    let mut args = Vec::new();
    for word in words {
        if word == "data-samples" || word.starts_with("data-samples/") {
            args.push(repo().join(word).to_str().expect("UTF-8 path").to_string());
        } else if word == "ID_A" || word == "ID_B" {
            let run = words.iter().position(|w| w == "--run").and_then(|at| words.get(at + 1));
            let run = run.ok_or(format!("{word} without a --run folder to take it from"))?;
            let mut near: Vec<_> = neardup_io::read_pairs(&dir.join(run).join("pairs"))
                .map_err(|e| format!("{word}: cannot read the pairs of {run}: {e}"))?
                .into_iter()
                .filter(|p| p.kind.as_str() == "near")
                .map(|p| (p.id_a, p.id_b))
                .collect();
            near.sort();
            let (a, b) =
                near.into_iter().next().ok_or(format!("{word}: {run} has no near pair"))?;
            args.push(if word == "ID_A" { a } else { b });
        } else {
            args.push(word.clone());
        }
    }
    Ok(args)
}

/// Makes the example inputs that `words` name in `dir`, unless there already.
fn make_example_inputs(words: &[String], dir: &Path) {
    for (folder, samples) in EXAMPLE_INPUTS {
        let folder = dir.join(folder);
        if !words.iter().any(|w| dir.join(w) == folder) || folder.exists() {
            continue;
        }
        std::fs::create_dir_all(&folder).unwrap();
        for sample in samples {
            let name = Path::new(sample).file_name().unwrap();
            std::fs::copy(repo().join(sample), folder.join(name)).unwrap();
        }
    }
}

/// Enters a working directory for the commands and restores the process's when dropped.
/// The working directory is the process's: the other tests of this file name every path
/// from the repository's, so none of them reads it.
struct WorkingDirectory(PathBuf);

impl WorkingDirectory {
    fn enter(dir: &Path) -> Self {
        let before = std::env::current_dir().unwrap();
        std::env::set_current_dir(dir).unwrap();
        WorkingDirectory(before)
    }
}

impl Drop for WorkingDirectory {
    fn drop(&mut self) {
        std::env::set_current_dir(&self.0).unwrap();
    }
}

#[test]
fn shell_commands_run() {
    let mut ran = Vec::new();
    let mut skipped = Vec::new();
    let mut failed = Vec::new();
    for page in pages() {
        let commands: Vec<_> =
            command_lines(&read(&page)).into_iter().filter(|c| c.shell).collect();
        for block in commands.chunk_by(|a, b| a.fence == b.fence) {
            // The commands of a block run in order in one working directory: later ones
            // read what earlier ones wrote.
            let dir = tempfile::tempdir().unwrap();
            let _in_dir = WorkingDirectory::enter(dir.path());
            for command in block {
                let where_ = format!(
                    "{}:{}: neardup {}",
                    page.display(),
                    command.number,
                    command.words.join(" ")
                );
                if let Some(why) = not_run(command) {
                    skipped.push(format!("{where_}  ({why})"));
                    continue;
                }
                make_example_inputs(&command.words, dir.path());
                let result = arguments(&command.words, dir.path()).and_then(|args| {
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    neardup(&args).map_err(|e| format!("{e:#}"))
                });
                match result {
                    Ok(_) => ran.push(where_),
                    Err(e) => {
                        failed.push(format!("{where_}\n    {e}"));
                        break;
                    }
                }
            }
        }
    }
    assert!(failed.is_empty(), "commands of the pages that fail:\n{}", failed.join("\n"));
    println!("ran:\n  {}\nnot run:\n  {}", ran.join("\n  "), skipped.join("\n  "));
    assert!(
        ran.len() >= MIN_COMMANDS_RUN,
        "ran {} commands, fewer than {MIN_COMMANDS_RUN}:\n{}",
        ran.len(),
        ran.join("\n")
    );
}

/// Phrases that call a distributed run (several `neardup` processes connected over the
/// network) a cluster, a word this repository keeps for groups of near-duplicate
/// documents; matched case-insensitively. The check skips these lines of this file.
const WRONG_WORDING: [&str; 18] = [
    "cluster run",
    "cluster mode",
    "cluster process",
    "processes of a cluster",
    "process of a cluster",
    "processes of the cluster",
    "process of the cluster",
    "a cluster's process",
    "in a cluster,",
    "in a cluster:",
    "in a cluster each",
    "cluster of processes",
    "cluster of timely",
    "timely cluster",
    "on a cluster",
    "sizing a cluster",
    "cluster.md",
    "tests/cluster.rs",
];

/// Where the wording check reads, from the repository: these files, and the text files
/// under these folders and under every crate's `src/` and `tests/`.
const WORDING_ROOTS: [&str; 11] = [
    "README.md",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "docs",
    "deploy",
    "bench",
    "tests/tests",
    "tests/src",
    "python",
    "jobs",
    ".ci",
];

/// Folders the wording check never enters: build outputs, samples and expected outputs,
/// whose text is data.
const WORDING_SKIPPED: [&str; 4] = ["target", "data-samples", "golden", "fixtures"];

/// The phrases of `WRONG_WORDING` in `line`.
fn wrong_wording(line: &str) -> Vec<&'static str> {
    let line = line.to_lowercase();
    WRONG_WORDING.iter().copied().filter(|phrase| line.contains(phrase)).collect()
}

/// The files under `path` (itself, when a file), relative to the repository, in order,
/// without the skipped folders.
fn files_under(path: &Path, out: &mut Vec<PathBuf>) {
    let full = repo().join(path);
    if full.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(&full) else { return };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if WORDING_SKIPPED.iter().any(|skipped| name == *skipped) {
            continue;
        }
        files_under(&path.join(name), out);
    }
}

#[test]
fn a_distributed_run_is_never_called_a_cluster() {
    let mut roots: Vec<PathBuf> = WORDING_ROOTS.iter().map(PathBuf::from).collect();
    let mut crates: Vec<_> = std::fs::read_dir(repo().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    crates.sort();
    for name in crates {
        roots.push(Path::new("crates").join(&name).join("src"));
        roots.push(Path::new("crates").join(&name).join("tests"));
    }
    let mut files = Vec::new();
    for root in &roots {
        files_under(root, &mut files);
    }
    let this_file = Path::new("tests/tests/readme.rs");
    let mut found = Vec::new();
    let mut read = 0;
    for file in &files {
        // Binary files (an image) are not text to read.
        let Ok(text) = std::fs::read_to_string(repo().join(file)) else { continue };
        read += 1;
        let mut in_list = false;
        for (i, line) in text.lines().enumerate() {
            // This file's phrase list names the phrases it looks for.
            if file == this_file {
                if line.starts_with("const WRONG_WORDING") {
                    in_list = true;
                }
                if in_list {
                    in_list = line != "];";
                    continue;
                }
            }
            for phrase in wrong_wording(line) {
                found.push(format!("{}:{}: {phrase:?}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(read >= 100, "read only {read} files: the roots moved? {roots:?}");
    assert!(
        found.is_empty(),
        "a distributed run (several processes) called a cluster, a word kept for groups of \
         near duplicates; say \"distributed run\", or name the machines:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(slug("Incremental runs: `--index`"), "incremental-runs---index");
    assert_eq!(slug("Measuring it yourself: `neardup eval`"), "measuring-it-yourself-neardup-eval");
    assert_eq!(link_targets("see [a](docs/x.md#y) and `[b](c)`"), ["docs/x.md#y"]);
    let text = "```sh\nneardup dedup -i a \\\n  --write-kept k # --not-this\n```\n";
    let found = command_lines(text);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].fence, found[0].number, found[0].shell), (1, 2, true));
    assert_eq!(found[0].words, ["dedup", "-i", "a", "--write-kept", "k"]);
    assert_eq!(flag("[--method"), Some("--method"));
    assert_eq!(flag("--threshold=0.8"), Some("--threshold"));
    assert_eq!(flag("-"), None);
    let mut cli = Cli::command();
    cli.build();
    let dedup = cli.find_subcommand("dedup").unwrap();
    assert!(accepts(dedup, "--input") && accepts(dedup, "--log") && !accepts(dedup, "--nope"));
    // Built from parts, so that the check of this file does not find them here.
    let run = format!("In a {}, process 0 writes the summary", "cluster");
    assert_eq!(wrong_wording(&run).len(), 1, "{run}");
    assert_eq!(wrong_wording(&format!("the {}.md page", "CLUSTER")).len(), 1);
    assert!(wrong_wording("a cluster member never verified against its kept document").is_empty());
    assert!(wrong_wording("the processes of a distributed run; the largest cluster").is_empty());
    let mut files = Vec::new();
    files_under(Path::new("tests"), &mut files);
    assert!(files.contains(&PathBuf::from("tests/tests/readme.rs")));
    assert!(!files.iter().any(|f| f.starts_with("tests/golden")), "{files:?}");
    assert!(!files.iter().any(|f| f.starts_with("tests/fixtures")), "{files:?}");
}
