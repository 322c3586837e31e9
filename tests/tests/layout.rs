//! The layout rules of `ARCHITECTURE.md`, checked on the source: no file under
//! `crates/*/src` longer than 650 lines before its test module (generated files start with
//! `// @generated`), no production function longer than 120 lines (test modules and files
//! of tests aside), every multi-module crate's `lib.rs` at most 300 lines, no import loop
//! between the files of a crate, and no name taken through the crate root, or through the
//! `mod.rs` of a folder it is not in, by a module of the crate when another module
//! defines it. No production function takes more than six parameters (`self` counted).
//! `neardup-job` has at most ten top-level modules, each of its folders' `mod.rs` says on a
//! `May use:` line which top-level modules its files may use, and they use no other.
//!
//! An import is a `use crate::...` or `use super::...` item, or a `crate::a::b::` path in
//! code, resolved to the file of the module it names; a name taken from a `lib.rs` or
//! `mod.rs` that only re-exports it is followed to the file that defines it. `mod`
//! declarations and the re-exports of `lib.rs` and `mod.rs` are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 650;
const MAX_LIB_LINES: usize = 300;
const MAX_FN_LINES: usize = 120;
const MAX_PARAMS: usize = 6;
const MAX_JOB_MODULES: usize = 10;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file under `crates/*/src` that is not generated, with its text.
fn written_sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for src in crates() {
        rust_files(&src, &mut files);
    }
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            (file, text)
        })
        .filter(|(_, text)| !text.starts_with("// @generated"))
        .collect()
}

fn crates() -> Vec<PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The code of a file before its test module, without comments.
fn code(path: &Path) -> String {
    code_of(&std::fs::read_to_string(path).unwrap())
}

/// Where a file's tests start: its first `#[cfg(test)]` item that is not the declaration
/// of a module in a file of its own (`#[cfg(test)] mod testing;` in a `mod.rs`, whose
/// re-exports and other declarations follow it).
fn tests_start(text: &str) -> usize {
    let mut at = 0;
    while let Some(i) = text[at..].find("\n#[cfg(test)]\n") {
        let start = at + i;
        let next = text[start + "\n#[cfg(test)]\n".len()..].lines().next().unwrap_or("");
        let declared = next.trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        if !(declared.starts_with("mod ") && declared.trim_end().ends_with(';')) {
            return start;
        }
        at = start + 1;
    }
    text.len()
}

/// The code of a file's text before its test module, without comments.
fn code_of(text: &str) -> String {
    let end = tests_start(text);
    blank_literals(&text[..end])
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` with the insides of its string and character literals blanked (every character
/// but a newline becomes a space), so that a `}` or `//` in a literal (a page's script, a
/// URL) is not read as code; comments are kept as they are.
fn blank_literals(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // A line comment runs to the end of its line.
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(chars[i]);
                i += 1;
            }
            continue;
        }
        // A raw string: r"...", r#"..."#, br"...", with as many hashes to close it.
        let word_start = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        let raw_at = if c == 'r' && word_start {
            Some(i + 1)
        } else if c == 'b' && chars.get(i + 1) == Some(&'r') && word_start {
            Some(i + 2)
        } else {
            None
        };
        if let Some(at) = raw_at {
            let hashes = chars[at..].iter().take_while(|&&h| h == '#').count();
            if chars.get(at + hashes) == Some(&'"') {
                let open = at + hashes + 1;
                out.extend(&chars[i..open]);
                let mut j = open;
                while j < chars.len()
                    && !(chars[j] == '"'
                        && chars[j + 1..].iter().take(hashes).filter(|&&h| h == '#').count()
                            == hashes)
                {
                    out.push(blank(chars[j]));
                    j += 1;
                }
                let close = (j + 1 + hashes).min(chars.len());
                out.extend(&chars[j.min(chars.len())..close]);
                i = close;
                continue;
            }
        }
        if c == '"' {
            out.push('"');
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\' && j + 1 < chars.len() {
                    out.push(' ');
                    out.push(blank(chars[j + 1]));
                    j += 2;
                    continue;
                }
                out.push(blank(chars[j]));
                j += 1;
            }
            out.push('"');
            i = j + 1;
            continue;
        }
        // A character literal ('}', '\'', '\\'), not a lifetime ('a).
        if c == '\'' {
            let len = match (chars.get(i + 1), chars.get(i + 2), chars.get(i + 3)) {
                (Some('\\'), Some(_), Some('\'')) => Some(4),
                (Some(_), Some('\''), _) => Some(3),
                _ => None,
            };
            if let Some(len) = len {
                out.push('\'');
                out.extend(std::iter::repeat_n(' ', len - 2));
                out.push('\'');
                i += len;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The module path of a file of a crate (`[]` for `lib.rs`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> =
        rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if matches!(parts.last().map(String::as_str), Some("lib" | "mod" | "main")) {
        parts.pop();
    }
    parts
}

/// Expands a use tree (`a::{b, c::{d as e}}`) into its paths, each with the name it
/// makes visible (`e` for `a::c::d as e`).
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    let marked = tree.split_whitespace().collect::<Vec<_>>().join(" ").replace(" as ", "@");
    let tree: String = marked.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match tree.find('{') {
        None => {
            let (path, alias) = tree.split_once('@').unwrap_or((tree, ""));
            let mut full = prefix.clone();
            full.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
            let visible = if alias.is_empty() {
                full.last().cloned().unwrap_or_default()
            } else {
                alias.to_string()
            };
            out.push((full, visible));
        }
        Some(open) => {
            let head: Vec<String> =
                tree[..open].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
            let inner = &tree[open + 1..tree.rfind('}').unwrap()];
            let len = prefix.len();
            prefix.extend(head);
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !inner[start..i].is_empty() {
                            expand_into(&inner[start..i], prefix, out);
                        }
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].is_empty() {
                expand_into(&inner[start..], prefix, out);
            }
            prefix.truncate(len);
        }
    }
}

/// The `use` items of some code, as (is it `pub use`, the tree after `use`).
fn use_items(code: &str) -> Vec<(bool, String)> {
    split_uses(code).0
}

/// The `use` items of some code, and the code without them.
fn split_uses(code: &str) -> (Vec<(bool, String)>, String) {
    let mut items = Vec::new();
    let mut other = String::new();
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let lead = rest[line_start..i].trim();
        let is_item = lead.is_empty() || lead == "pub" || lead.starts_with("pub(");
        let after = &rest[i + 4..];
        let Some(end) = after.find(';') else { break };
        if is_item {
            items.push((!lead.is_empty(), after[..end].to_string()));
            other.push_str(&rest[..line_start]);
        } else {
            other.push_str(&rest[..i + 4 + end]);
        }
        rest = &after[end..];
    }
    other.push_str(rest);
    (items, other)
}

/// The module path (from the crate root) of a `crate::`, `super::` or `self::` path
/// written in `module`; `None` for a path of another crate or a local name.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base = module.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some("self") => rest = &rest[1..],
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

struct Crate {
    /// Files by module path.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// For `lib.rs` and `mod.rs` modules: re-exported names and the module they come from.
    reexports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        for p in &paths {
            if p.file_name().is_some_and(|n| n == "main.rs") {
                continue;
            }
            files.insert(module_of(src, p), p.clone());
        }
        let mut reexports = BTreeMap::new();
        for (module, path) in &files {
            let name = path.file_name().unwrap();
            if name != "lib.rs" && name != "mod.rs" {
                continue;
            }
            let mut map = BTreeMap::new();
            for (public, tree) in use_items(&code(path)) {
                if !public {
                    continue;
                }
                for (full, visible) in expand(&tree) {
                    let mut from = module.clone();
                    let mut segments = full.as_slice();
                    match segments.first().map(String::as_str) {
                        Some("crate") => {
                            from.clear();
                            segments = &segments[1..];
                        }
                        Some("super") => {
                            from.pop();
                            segments = &segments[1..];
                        }
                        Some("self") => segments = &segments[1..],
                        _ => {}
                    }
                    let Some((last, head)) = segments.split_last() else { continue };
                    from.extend(head.iter().cloned());
                    // The visible name leads to the original one in the source module.
                    from.push(last.clone());
                    map.insert(visible, from);
                }
            }
            reexports.insert(module.clone(), map);
        }
        Crate { files, reexports }
    }

    /// The file a path (relative to the crate root) names, following re-exports.
    fn resolve(&self, path: &[String]) -> Option<Vec<String>> {
        let mut best = None;
        for n in (0..=path.len()).rev() {
            if self.files.contains_key(&path[..n]) {
                best = Some(n);
                break;
            }
        }
        let n = best?;
        let module = path[..n].to_vec();
        if let (Some(map), Some(name)) = (self.reexports.get(&module), path.get(n))
            && let Some(from) = map.get(name)
            && from[..from.len() - 1] != module[..]
        {
            let mut next = from.clone();
            next.extend(path[n + 1..].iter().cloned());
            return self.resolve(&next).or(Some(module));
        }
        Some(module)
    }

    /// The modules each file imports from.
    fn imports(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut graph = BTreeMap::new();
        for (module, path) in &self.files {
            let code = code(path);
            let hub = path.file_name().is_some_and(|n| n == "lib.rs" || n == "mod.rs");
            let mut targets = BTreeSet::new();
            let mut add = |full: Vec<String>| {
                // Another crate, std, or a local name: not a file of this crate.
                let Some(base) = absolute(module, &full) else { return };
                if let Some(target) = self.resolve(&base)
                    && target != *module
                {
                    targets.insert(target);
                }
            };
            let (uses, code) = split_uses(&code);
            for (public, tree) in uses {
                if hub && public {
                    continue; // a re-export
                }
                for (full, _) in expand(&tree) {
                    add(full);
                }
            }
            // Paths written in code: `crate::a::b::name`.
            let mut rest = code.as_str();
            while let Some(i) = rest.find("crate::") {
                let tail = &rest[i..];
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(tail.len());
                let path: Vec<String> =
                    tail[..end].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
                add(path);
                rest = &tail[end.max(1)..];
            }
            graph.insert(module.clone(), targets);
        }
        graph
    }
}

/// A loop in `graph`, as the files around it.
fn find_loop(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(node.clone(), 1);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    return Some(stack[at..].to_vec());
                }
                0 => {
                    if let Some(found) = visit(next, graph, state, stack) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0
            && let Some(found) = visit(node, graph, &mut state, &mut Vec::new())
        {
            return Some(found);
        }
    }
    None
}

#[test]
fn no_source_file_is_longer_than_650_lines_before_its_tests() {
    let mut long = Vec::new();
    for (file, text) in written_sources() {
        let lines = text[..tests_start(&text)].lines().count();
        if lines > MAX_FILE_LINES {
            long.push(format!("{} ({lines} lines)", file.display()));
        }
    }
    assert!(long.is_empty(), "longer than {MAX_FILE_LINES} lines before the tests: {long:#?}");
}

#[test]
fn a_crate_root_is_a_table_of_contents() {
    for src in crates() {
        let lib = src.join("lib.rs");
        let before_tests = code(&lib);
        let modules =
            before_tests.matches("\nmod ").count() + before_tests.matches("\npub mod ").count();
        let lines = std::fs::read_to_string(&lib).unwrap().lines().count();
        if modules > 0 {
            assert!(lines <= MAX_LIB_LINES, "{} has {lines} lines", lib.display());
        }
    }
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    for src in crates() {
        let krate = Crate::read(&src);
        let graph = krate.imports();
        if let Some(found) = find_loop(&graph) {
            let files: Vec<String> =
                found.iter().map(|m| krate.files[m].display().to_string()).collect();
            panic!("an import loop: {}", files.join(" -> "));
        }
    }
}

#[test]
fn the_loop_check_sees_loops_and_follows_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("ops")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod ops;\npub use a::Thing;\n").unwrap();
    std::fs::write(src.join("ops/mod.rs"), "mod b;\nmod c;\npub use b::{B, helper as h};\n")
        .unwrap();
    std::fs::write(src.join("ops/b.rs"), "use super::c::C;\npub struct B;\n").unwrap();
    std::fs::write(src.join("ops/c.rs"), "pub struct C;\nfn f() { crate::a::go(); }\n").unwrap();
    std::fs::write(src.join("a.rs"), "use crate::ops::{B, h};\npub struct Thing;\n").unwrap();
    let krate = Crate::read(src);
    let graph = krate.imports();
    let module = |s: &str| s.split('/').filter(|p| !p.is_empty()).map(String::from).collect();
    assert_eq!(graph[&module("a")], [module("ops/b")].into());
    assert_eq!(graph[&module("ops/b")], [module("ops/c")].into());
    assert_eq!(graph[&module("")], BTreeSet::new(), "re-exports are not imports");
    let found = find_loop(&graph).expect("a -> ops/b -> ops/c -> a");
    assert_eq!(found.len(), 3);
    std::fs::write(src.join("ops/c.rs"), "pub struct C;\n").unwrap();
    assert_eq!(find_loop(&Crate::read(src).imports()), None);
    let path = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        expand("a::{b, c::{d as e, f}}"),
        vec![
            (path("a::b"), "b".to_string()),
            (path("a::c::d"), "e".to_string()),
            (path("a::c::f"), "f".to_string()),
        ]
    );
}

/// Whether `file` is a module only tests compile: its declaration in its parent
/// (`mod.rs`, `lib.rs` or `name.rs` beside its folder) follows `#[cfg(test)]`.
fn is_test_file(file: &Path) -> bool {
    let name = file.file_stem().unwrap().to_string_lossy().to_string();
    let (name, dir) = if name == "mod" {
        let dir = file.parent().unwrap();
        (dir.file_name().unwrap().to_string_lossy().to_string(), dir.parent().unwrap())
    } else {
        (name, file.parent().unwrap())
    };
    let mut parents = vec![dir.join("mod.rs"), dir.join("lib.rs")];
    parents
        .extend(dir.file_name().map(|d| dir.with_file_name(format!("{}.rs", d.to_string_lossy()))));
    parents.iter().filter_map(|p| std::fs::read_to_string(p).ok()).any(|text| {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.windows(2).any(|w| {
            w[0] == "#[cfg(test)]"
                && w[1].trim_start_matches("pub(crate) ").trim_start_matches("pub ")
                    == format!("mod {name};")
        })
    })
}

/// The functions of some code (formatted by rustfmt) longer than `max` lines, as (name,
/// first line, lines). A function runs from its `fn` line to the line that closes its
/// body: the first `}` at the indentation of the `fn` line after the line that opens it.
fn long_functions(code: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let signature = trimmed
            .split_once("fn ")
            .filter(|(head, _)| {
                head.split_whitespace().all(|w| {
                    w == "pub" || w.starts_with("pub(") || ["const", "async", "unsafe"].contains(&w)
                })
            })
            .map(|(_, rest)| rest);
        let Some(rest) = signature else {
            i += 1;
            continue;
        };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The line that ends the signature: `{` opens a body, `;` declares one without.
        let Some(open) = (i..lines.len()).find(|&j| {
            let l = lines[j].trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            break;
        };
        if !lines[open].trim_end().ends_with('{') {
            i = open + 1;
            continue;
        }
        let close = (open + 1..lines.len()).find(|&j| {
            let l = lines[j];
            l.len() - l.trim_start().len() == indent && l.trim_start().starts_with('}')
        });
        let Some(close) = close else { break };
        let length = close - i + 1;
        if length > max {
            long.push((name, i + 1, length));
        }
        // Functions nested in this one are measured too.
        i = open + 1;
    }
    long
}

/// What `find` finds in the production code of every source file (test modules and files
/// of tests aside), as `file:line name (count unit)`.
fn in_production_code(
    find: impl Fn(&str) -> Vec<(String, usize, usize)>,
    unit: &str,
) -> Vec<String> {
    let mut found = Vec::new();
    for (file, text) in written_sources().into_iter().filter(|(file, _)| !is_test_file(file)) {
        for (name, line, count) in find(&code_of(&text)) {
            found.push(format!("{}:{line} {name} ({count} {unit})", file.display()));
        }
    }
    found
}

#[test]
fn no_production_function_is_longer_than_120_lines() {
    let long = in_production_code(|code| long_functions(code, MAX_FN_LINES), "lines");
    assert!(long.is_empty(), "functions longer than {MAX_FN_LINES} lines: {long:#?}");
}

#[test]
fn the_function_check_measures_bodies() {
    let code = "\
pub(crate) fn short() {
    body();
}

impl Thing {
    pub fn long<T>(
        x: T,
    ) -> T
    where
        T: Copy,
    {
        let a = 1;
        let b = 2;
        x
    }

    fn declared(&self);
    fn inline(&self) { }
}

fn outer() {
    fn inner() {
        one();
        two();
    }
    inner();
}
";
    let found = |max| long_functions(code, max);
    let names = |max| found(max).into_iter().map(|(n, _, _)| n).collect::<Vec<_>>();
    assert_eq!(names(3), vec!["long", "outer", "inner"]);
    assert_eq!(found(3)[0], ("long".to_string(), 6, 10));
    assert_eq!(names(6), vec!["long", "outer"]);
    assert!(names(10).is_empty());
    // A literal's braces are not code: a page's script inside a function ends nothing.
    let page = "fn page() -> String {\n    let s = r#\"\n});\n}\n\"#;\n    s.into()\n}\n";
    assert_eq!(long_functions(&code_of(page), 3), vec![("page".to_string(), 1, 7)]);
    let quoted = "fn q() {\n    let a = '}';\n    let b = \"}\\\"\n}\";\n    done();\n}\n";
    assert_eq!(long_functions(&code_of(quoted), 3), vec![("q".to_string(), 1, 6)]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ops")).unwrap();
    std::fs::write(
        dir.path().join("ops/mod.rs"),
        "mod a;\n#[cfg(test)]\npub(crate) mod helpers;\n",
    )
    .unwrap();
    assert!(is_test_file(&dir.path().join("ops/helpers.rs")));
    assert!(!is_test_file(&dir.path().join("ops/a.rs")));
}

#[test]
fn modules_import_from_the_module_that_defines_a_name() {
    let mut upward = Vec::new();
    for src in crates() {
        let krate = Crate::read(&src);
        let Some(root) = krate.reexports.get(&Vec::new()) else { continue };
        // Names re-exported from a module (not defined in lib.rs itself).
        let reexported: BTreeMap<String, Vec<String>> = root
            .iter()
            .filter(|(_, from)| from.len() > 1)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (module, path) in &krate.files {
            if module.is_empty() {
                continue;
            }
            for name in through_a_hub(&code(path), module, &[], &reexported) {
                upward.push(format!("{}: crate::{name}", path.display()));
            }
        }
    }
    assert!(upward.is_empty(), "names taken through the crate root: {upward:#?}");
}

/// The names that a file of module `module` takes through the `mod.rs` of another folder,
/// `hub` (or through the crate root, when `hub` is empty), which re-exports them from a
/// module inside it (`use crate::hub::Name`, `use super::hub::Name`, `crate::hub::Name` in
/// code), instead of from that module.
fn through_a_hub(
    code: &str,
    module: &[String],
    hub: &[String],
    reexported: &BTreeMap<String, Vec<String>>,
) -> Vec<String> {
    let absolute = |path: &[String]| absolute(module, path);
    let taken = |path: &[String]| {
        let (name, head) = path.split_last()?;
        (head == hub && reexported.contains_key(name)).then(|| name.clone())
    };
    let mut found = Vec::new();
    for (_, tree) in use_items(code) {
        for (path, _) in expand(&tree) {
            found.extend(absolute(&path).as_deref().and_then(taken));
        }
    }
    let (_, rest) = split_uses(code);
    let mut at = 0;
    while let Some(i) = rest[at..].find("crate::") {
        let start = at + i;
        at = start + "crate::".len();
        if start > 0
            && rest[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
        {
            continue;
        }
        let end = rest[start..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .map_or(rest.len(), |e| start + e);
        let path: Vec<String> =
            rest[start..end].split("::").filter(|s| !s.is_empty()).map(String::from).collect();
        // `crate::hub::Name::item`: the name is the segment after the hub.
        for n in 2..=path.len() {
            if let Some(name) = absolute(&path[..n]).as_deref().and_then(taken) {
                found.push(name);
                break;
            }
        }
    }
    found
}

#[test]
fn no_module_takes_a_name_through_another_folders_mod_rs() {
    let mut through = Vec::new();
    for src in crates() {
        let krate = Crate::read(&src);
        for (hub, names) in &krate.reexports {
            // The crate root has its own rule; a folder's mod.rs here.
            if hub.is_empty() {
                continue;
            }
            let reexported: BTreeMap<String, Vec<String>> = names
                .iter()
                .filter(|(_, from)| from.len() > hub.len() + 1 && from.starts_with(hub))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for (module, path) in &krate.files {
                if module.starts_with(hub) {
                    continue;
                }
                for name in through_a_hub(&code(path), module, hub, &reexported) {
                    through.push(format!("{}: {}::{name}", path.display(), hub.join("::")));
                }
            }
        }
    }
    assert!(through.is_empty(), "names taken through a folder's mod.rs: {through:#?}");
}

#[test]
fn the_folder_check_sees_uses_and_paths() {
    let hub = vec!["ops".to_string()];
    let reexported: BTreeMap<String, Vec<String>> =
        [("Env".to_string(), vec!["ops".into(), "env".into(), "Env".into()])].into();
    let module = vec!["driver".to_string()];
    let code = "use crate::ops::{Env, other};\nuse super::ops::Env as E;\nfn f() -> crate::ops::Env { crate::ops::env::Env::new() }\n";
    assert_eq!(through_a_hub(code, &module, &hub, &reexported), vec!["Env", "Env", "Env"]);
    assert!(through_a_hub("use crate::ops::env::Env;\n", &module, &hub, &reexported).is_empty());
}

#[test]
fn the_root_check_sees_uses_and_paths() {
    let reexported: BTreeMap<String, Vec<String>> =
        [("Error".to_string(), vec!["error".to_string(), "Error".to_string()])].into();
    let code =
        "use crate::{Error, other::Thing};\nfn f() -> crate::Error { crate::error::Error::A }\n";
    let module = ["a".to_string()];
    assert_eq!(through_a_hub(code, &module, &[], &reexported), vec!["Error", "Error"]);
    assert!(through_a_hub("use crate::error::Error;\n", &module, &[], &reexported).is_empty());
}

/// The top-level modules a folder's files may use, from the `May use:` line of its
/// `mod.rs` (the names in backticks up to the sentence's full stop); `None` without one.
fn may_use(mod_rs: &str) -> Option<BTreeSet<String>> {
    let doc: Vec<&str> =
        mod_rs.lines().filter_map(|l| l.trim_start().strip_prefix("//!")).map(str::trim).collect();
    let doc = doc.join(" ");
    let rest = &doc[doc.find("May use:")? + "May use:".len()..];
    let sentence = &rest[..rest.find(". ").map_or(rest.len(), |e| e + 1)];
    Some(sentence.split('`').skip(1).step_by(2).map(String::from).collect())
}

#[test]
fn the_job_crate_has_at_most_ten_top_level_modules_and_folders_keep_their_order() {
    let src = workspace().join("crates/job/src");
    let root = code(&src.join("lib.rs"));
    let modules: Vec<&str> = root
        .lines()
        .filter_map(|l| {
            l.trim_start_matches("pub ").trim_start_matches("pub(crate) ").strip_prefix("mod ")
        })
        .collect();
    assert!(
        modules.len() <= MAX_JOB_MODULES,
        "{} top-level modules in neardup-job, at most {MAX_JOB_MODULES}: {modules:?}",
        modules.len()
    );
    let names: BTreeSet<&str> = modules.iter().map(|m| m.trim_end_matches(';')).collect();
    let mut order = BTreeMap::new();
    for module in &names {
        let mod_rs = src.join(module).join("mod.rs");
        if mod_rs.exists() {
            let text = std::fs::read_to_string(&mod_rs).unwrap();
            let allowed = may_use(&text);
            let Some(allowed) = allowed else {
                panic!("{} has no `May use:` line", mod_rs.display())
            };
            for name in &allowed {
                assert!(
                    names.contains(name.as_str()),
                    "{}'s `May use:` names `{name}`, not a top-level module",
                    mod_rs.display()
                );
            }
            order.insert(module.to_string(), allowed);
        }
    }
    if let Some(round) = may_use_loop(&order) {
        panic!("the folders' `May use:` lines are not one-way: {}", round.join(" -> "));
    }
}

/// A round of folders each of whose `May use:` line names the next (the last names the
/// first, repeated at the end), if the lines hold one ([`find_loop`] over them); `None`
/// when they are a one-way order.
fn may_use_loop(order: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = order
        .iter()
        .map(|(folder, uses)| {
            (vec![folder.clone()], uses.iter().map(|u| vec![u.clone()]).collect())
        })
        .collect();
    let mut round: Vec<String> = find_loop(&graph)?.into_iter().flatten().collect();
    round.push(round[0].clone());
    Some(round)
}

#[test]
fn the_order_check_finds_a_round_of_may_use_lines() {
    let lines = |pairs: &[(&str, &[&str])]| -> BTreeMap<String, BTreeSet<String>> {
        pairs
            .iter()
            .map(|(m, uses)| (m.to_string(), uses.iter().map(|u| u.to_string()).collect()))
            .collect()
    };
    let one_way = lines(&[("a", &["b", "c"]), ("b", &["c"]), ("c", &[])]);
    assert_eq!(may_use_loop(&one_way), None);
    let round = lines(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"])]);
    assert_eq!(may_use_loop(&round), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
}

#[test]
fn a_folder_uses_only_what_its_mod_rs_allows() {
    let mut outside = Vec::new();
    for src in crates() {
        let krate = Crate::read(&src);
        let graph = krate.imports();
        for (module, targets) in &graph {
            let Some(folder) = module.first() else { continue };
            let Ok(text) = std::fs::read_to_string(src.join(folder).join("mod.rs")) else {
                continue;
            };
            let Some(allowed) = may_use(&text) else { continue };
            if is_test_file(&krate.files[module]) {
                continue;
            }
            for target in targets {
                let top = target.first().cloned().unwrap_or_default();
                if top != *folder && !allowed.contains(&top) {
                    outside.push(format!(
                        "{} uses {}",
                        krate.files[module].display(),
                        target.join("::")
                    ));
                }
            }
        }
    }
    assert!(outside.is_empty(), "uses outside a folder's `May use:` line: {outside:#?}");
}

#[test]
fn a_test_module_declared_in_a_mod_rs_does_not_hide_what_follows_it() {
    let text = "mod a;\n#[cfg(test)]\npub(crate) mod testing;\npub use a::X;\n#[cfg(test)]\nmod tests {\n}\n";
    let code = code_of(text);
    assert!(code.contains("pub use a::X;"), "{code}");
    assert!(!code.contains("mod tests"), "{code}");
    let helper = "fn a() {}\n#[cfg(test)]\npub(crate) fn by_hand() {}\n";
    assert!(!code_of(helper).contains("by_hand"));
}

#[test]
fn the_order_check_reads_may_use_lines() {
    let text =
        "//! Holds things.\n//!\n//! May use: `error`,\n//! `storage`. Not `passes`.\n\nmod a;\n";
    assert_eq!(may_use(text), Some(["error".to_string(), "storage".to_string()].into()));
    assert_eq!(may_use("//! Holds things.\nmod a;\n"), None);
}

/// The functions of some code (formatted by rustfmt) that take more than `max`
/// parameters, `self` counted, as (name, first line, parameters).
fn many_parameters(code: &str, max: usize) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("fn ") {
        let start = at + i;
        at = start + 3;
        if start > 0 && code[..start].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at..];
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue; // `fn(` in a type
        }
        // Past the generics to the parameters' parenthesis.
        let mut j = at + name.len();
        let bytes = code.as_bytes();
        let mut angle = 0;
        while j < code.len() {
            match bytes[j] {
                b'<' => angle += 1,
                b'>' if bytes[j - 1] != b'-' => angle -= 1,
                b'(' if angle == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let (mut depth, mut params, mut segment) = (0i32, 0, false);
        let mut k = j + 1;
        while k < code.len() {
            let c = bytes[k];
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b'<' => depth += 1,
                b'>' if bytes[k - 1] != b'-' => depth -= 1,
                b')' | b']' | b'}' if depth == 0 => break,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    params += usize::from(segment);
                    segment = false;
                    k += 1;
                    continue;
                }
                _ => {}
            }
            if !c.is_ascii_whitespace() {
                segment = true;
            }
            k += 1;
        }
        params += usize::from(segment);
        if params > max {
            let line = code[..start].matches('\n').count() + 1;
            found.push((name, line, params));
        }
    }
    found
}

#[test]
fn no_production_function_takes_more_than_six_parameters() {
    let many = in_production_code(|code| many_parameters(code, MAX_PARAMS), "parameters");
    assert!(many.is_empty(), "functions of more than {MAX_PARAMS} parameters: {many:#?}");
}

#[test]
fn the_parameter_check_counts_parameters() {
    let code = "\
fn none() {}
pub(crate) fn seven<T: Into<u64>>(
    &self,
    a: T,
    b: impl Fn(u32, u32) -> u32,
    c: Vec<(u8, u8)>,
    d: [u8; 2],
    e: &mut dyn FnMut(&str) -> Result<(), E>,
    f: u8,
) -> u8 {
    let g = |x: u8, y: u8| x + y;
    g(a, f)
}
fn six(a: u8, b: u8, c: u8, d: u8, e: u8, f: u8) {}
type Callback = fn(u8, u8, u8, u8, u8, u8, u8);
";
    assert_eq!(many_parameters(code, 6), vec![("seven".to_string(), 2, 7)]);
    assert_eq!(many_parameters(code, 5).len(), 2);
}
