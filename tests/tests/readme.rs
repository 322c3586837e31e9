//! The README and the pages of `docs/` as a newcomer meets them: the README is at most
//! 400 lines; every relative link in `README.md` and `docs/*.md` names a file that exists,
//! and a heading with that GitHub slug where it names an anchor of a Markdown file; and
//! every `neardup` subcommand and flag written in their shell and text code blocks is one
//! the CLI accepts (checked against its clap definition, so no binary is run).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use neardup_cli::Cli;
use neardup_e2e::repo;

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

/// A line of a page: its number (from 1), its text, and the info string of the fenced
/// code block it is in (`None` outside code blocks; fence lines themselves are skipped).
struct Line<'a> {
    number: usize,
    text: &'a str,
    block: Option<&'a str>,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut block: Option<&str> = None;
    for (i, text) in text.lines().enumerate() {
        let trimmed = text.trim_start();
        if trimmed.starts_with("```") {
            block = match block {
                Some(_) => None,
                None => Some(trimmed.trim_start_matches('`').trim()),
            };
            continue;
        }
        out.push(Line { number: i + 1, text, block });
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

/// The `neardup` command lines of a page's shell and text code blocks, with the number of
/// the line each starts on, as the words after `neardup` (or after `cargo run ... --`).
fn command_lines(text: &str) -> Vec<(usize, Vec<String>)> {
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
        let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
        for &word in words {
            if shell && word.starts_with('#') {
                break;
            }
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
                out.push((line.number, segment[start..].iter().map(|w| w.to_string()).collect()));
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
        for (number, words) in command_lines(&read(&page)) {
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

#[test]
fn the_checks_find_what_they_look_for() {
    assert_eq!(slug("Incremental runs: `--index`"), "incremental-runs---index");
    assert_eq!(slug("Measuring it yourself: `neardup eval`"), "measuring-it-yourself-neardup-eval");
    assert_eq!(link_targets("see [a](docs/x.md#y) and `[b](c)`"), ["docs/x.md#y"]);
    let text = "```sh\nneardup dedup -i a \\\n  --write-kept k # --not-this\n```\n";
    let found = command_lines(text);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, 2);
    assert_eq!(found[0].1, ["dedup", "-i", "a", "--write-kept", "k"]);
    assert_eq!(flag("[--method"), Some("--method"));
    assert_eq!(flag("--threshold=0.8"), Some("--threshold"));
    assert_eq!(flag("-"), None);
    let mut cli = Cli::command();
    cli.build();
    let dedup = cli.find_subcommand("dedup").unwrap();
    assert!(accepts(dedup, "--input") && accepts(dedup, "--log") && !accepts(dedup, "--nope"));
}
