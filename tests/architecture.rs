//! The stages depend only downward (docs/ARCHITECTURE.md): every `crate::STAGE`
//! path in a stage's code names a stage below it, and no two files import each other, directly
//! or around a circle (within a stage, between stages, or among the top-level files). Comments
//! and test modules are not imports and are skipped.

use std::collections::BTreeSet;
use std::path::Path;

const STAGES: [&str; 10] = [
    "artefact",
    "numeric",
    "metrics",
    "model",
    "calibrate",
    "measure",
    "search",
    "report",
    "campaign",
    "cli",
];

/// The stages a stage may use.
fn allowed(stage: &str) -> &'static [&'static str] {
    const BELOW_MODEL: [&str; 4] = ["artefact", "numeric", "metrics", "model"];
    match stage {
        "artefact" | "numeric" | "metrics" => &[],
        "model" => &["artefact", "numeric", "metrics"],
        "calibrate" | "measure" => &BELOW_MODEL,
        "search" => &["artefact", "numeric", "metrics", "model", "calibrate"],
        "report" => &[
            "artefact",
            "numeric",
            "metrics",
            "model",
            "calibrate",
            "search",
        ],
        "campaign" => &[
            "artefact",
            "numeric",
            "metrics",
            "model",
            "calibrate",
            "measure",
            "search",
        ],
        _ => &STAGES,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The stages a file's code (not its comments) names as `crate::STAGE`.
fn used(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if STAGES.contains(&name.as_str()) {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn every_stage_imports_only_the_stages_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for stage in STAGES {
        let mut files = Vec::new();
        rust_files(&src.join(stage), &mut files);
        assert!(!files.is_empty(), "src/{stage} has no files");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for u in used(&text) {
                if u != stage && !allowed(stage).contains(&u.as_str()) {
                    wrong.push(format!("{} uses crate::{u}", f.display()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports running up the stages:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_an_import_and_skips_a_comment() {
    let text =
        "use crate::measure::record;\n//! see crate::calibrate::x\nlet a = 1; // crate::report\n";
    assert_eq!(used(text), BTreeSet::from(["measure".to_string()]));
}

/// The most lines a function outside tests may have (docs/ARCHITECTURE.md, "Functions").
const MAX_FN_LINES: usize = 80;

/// `(first line, name, lines)` of every function in `text` before its `#[cfg(test)]` module:
/// from the line that opens it to the line at its indentation that closes it.
fn functions(text: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    let mut i = 0;
    while i < end {
        let line = lines[i];
        let t = line.trim_start();
        let indent = &line[..line.len() - t.len()];
        let sig = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .find_map(|p| t.strip_prefix(p));
        let Some(rest) = sig else {
            i += 1;
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // A declaration without a body (a trait's) ends in `;` before any `{`.
        let opens = lines[i..end]
            .iter()
            .map(|l| l.trim_end())
            .find(|l| l.ends_with('{') || l.ends_with(';'));
        if opens.is_none_or(|l| l.ends_with(';')) {
            i += 1;
            continue;
        }
        let close = format!("{indent}}}");
        let Some(len) = lines[i..end].iter().position(|l| l.trim_end() == close) else {
            i += 1;
            continue;
        };
        out.push((i + 1, name, len + 1));
        i += len + 1;
    }
    out
}

#[test]
fn no_function_outside_tests_is_longer_than_a_screen() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, name, n) in functions(&text) {
            if n > MAX_FN_LINES {
                long.push(format!("{}:{line} {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_checker_counts_a_function_to_its_closing_brace() {
    let text = "trait T {\n    fn t(&self);\n}\nfn a() {\n    let x = 1;\n}\n\npub fn b(\n    y: u32,\n) -> u32 {\n    y\n}\n#[cfg(test)]\nfn c() {\n}\n";
    assert_eq!(
        functions(text),
        vec![(4, "a".to_string(), 3), (8, "b".to_string(), 5)]
    );
}

/// A module of the library (`lib`) or of the binary (`bin`: `main.rs` and `cli/`), as the
/// path of names from its crate's root.
type Module = (&'static str, Vec<String>);

/// Every source file under `src` and the module it is.
fn modules(src: &Path) -> Vec<(std::path::PathBuf, Module)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(src).unwrap().with_extension("");
            let mut names: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if names
                .last()
                .is_some_and(|n| n == "mod" || n == "lib" || n == "main")
            {
                names.pop();
            }
            let krate = match rel == Path::new("main") || names.first().is_some_and(|n| n == "cli")
            {
                true => "bin",
                false => "lib",
            };
            (f, (krate, names))
        })
        .collect()
}

/// The code of a file before its test module, without comments, `use` groups joined on one
/// line each.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        if line.trim() == "#[cfg(test)]" {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push(
            if line.trim_end().ends_with(';') || line.trim_end().ends_with('}') {
                '\n'
            } else {
                ' '
            },
        );
    }
    out
}

/// Every path a `use` item names, its brace groups expanded (`a::{b, c::d}` gives `a::b` and
/// `a::c::d`); `self` in a group names the group's own path.
fn expand(path: &str) -> Vec<String> {
    let path = path.trim();
    let Some(open) = path.find('{') else {
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let (head, rest) = path.split_at(open);
    let inner = &rest[1..rest.rfind('}').unwrap_or(rest.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| expand(&format!("{head}{}", p.trim())))
        .map(|p| p.trim_end_matches("::self").to_string())
        .collect()
}

/// The paths a file's code names: every `use` item, expanded, and every `crate::`,
/// `super::` and `jouleplan::` path elsewhere.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for stmt in code.split(['\n', ';']) {
        let t = stmt.trim();
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub(super) "))
            .unwrap_or(t);
        let t = t.strip_prefix("pub ").unwrap_or(t);
        if let Some(u) = t.strip_prefix("use ") {
            out.extend(
                expand(u)
                    .into_iter()
                    .map(|p| p.split(" as ").next().unwrap_or("").trim().to_string()),
            );
            continue;
        }
        for root in ["crate::", "super::", "jouleplan::"] {
            for (i, _) in t.match_indices(root) {
                let before = t[..i].chars().last();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let p: String = t[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                out.push(p.trim_end_matches(':').to_string());
            }
        }
    }
    out
}

/// The module a path names from `from`, in names from its crate's root; `None` for another
/// crate's (`std`, `serde`).
fn resolve(path: &str, from: &Module, file_is_dir: bool, known: &[Module]) -> Option<Module> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let (krate, here) = (from.0, &from.1);
    // The module `super` starts from: a `mod.rs` is its folder's module.
    let own: Vec<String> = here.clone();
    let (base, rest): (Module, &[&str]) = match segs.first().copied()? {
        "crate" => ((krate, Vec::new()), &segs[1..]),
        "jouleplan" => (("lib", Vec::new()), &segs[1..]),
        "self" => ((krate, own), &segs[1..]),
        "super" => {
            let mut up = own;
            let mut i = 0;
            while segs.get(i) == Some(&"super") {
                up.pop();
                i += 1;
            }
            ((krate, up), &segs[i..])
        }
        first => {
            // A path relative to this module: a child module of it (`mod.rs`), else another crate.
            let mut child = here.clone();
            child.push(first.to_string());
            if !file_is_dir || !known.iter().any(|m| m.0 == krate && m.1 == child) {
                return None;
            }
            ((krate, here.clone()), &segs[..])
        }
    };
    let mut m = base;
    for s in rest {
        m.1.push(s.to_string());
    }
    // The binary's `crate::model` is the library's (main.rs: `use jouleplan::{model, ...}`).
    if m.0 == "bin" && m.1.first().is_some_and(|n| n != "cli") {
        m.0 = "lib";
    }
    // The longest prefix that is a file's module.
    while !known.contains(&m) {
        m.1.pop()?;
    }
    Some(m)
}

/// The paths a module's code names through its child modules without `use`
/// (`plan::run_plan(..)` in a `mod.rs`), as `self::` paths.
fn child_paths(code: &str, module: &Module, known: &[Module]) -> Vec<String> {
    let children = known.iter().filter(|m| {
        m.0 == module.0 && m.1.len() == module.1.len() + 1 && m.1.starts_with(&module.1)
    });
    let mut out = Vec::new();
    for child in children {
        let name = format!("{}::", child.1.last().unwrap());
        for (i, _) in code.match_indices(&name) {
            let before = code[..i].chars().last();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                out.push(format!("self::{name}"));
            }
        }
    }
    out
}

/// Whether `m` is a file directly inside the folder of module `of` (a `mod.rs` uses its own
/// files as the folder's face: declaring, re-exporting and calling them is not an import that
/// can close a circle; their imports of it are).
fn is_child(m: &Module, of: &Module) -> bool {
    m.0 == of.0 && m.1.len() == of.1.len() + 1 && m.1.starts_with(&of.1)
}

/// Every file's imports of other files: `(file, the files it imports)`, by index; a folder's
/// `mod.rs` does not import its own files ([`is_child`]).
fn import_graph(files: &[(String, Module, String)]) -> Vec<BTreeSet<usize>> {
    let known: Vec<Module> = files.iter().map(|f| f.1.clone()).collect();
    files
        .iter()
        .enumerate()
        .map(|(i, (name, module, text))| {
            let is_dir =
                name.ends_with("mod.rs") || name.ends_with("lib.rs") || name.ends_with("main.rs");
            let code = code(text);
            let mut named = paths(&code);
            if is_dir {
                named.extend(child_paths(&code, module, &known));
            }
            named
                .iter()
                .filter_map(|p| resolve(p, module, is_dir, &known))
                .filter_map(|m| known.iter().position(|k| *k == m))
                .filter(|&j| j != i && !(is_dir && is_child(&known[j], module)))
                .collect()
        })
        .collect()
}

/// The circles of a graph: its strongly connected parts of more than one node (Tarjan).
fn circles(graph: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct T<'a> {
        g: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T<'_>, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.g[v].iter() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut part = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                part.push(w);
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                part.sort_unstable();
                t.out.push(part);
            }
        }
    }
    let n = graph.len();
    let mut t = T {
        g: graph,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_two_files_import_each_other_directly_or_around_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files: Vec<(String, Module, String)> = modules(&src)
        .into_iter()
        .map(|(f, m)| {
            let name = f.strip_prefix(&src).unwrap().display().to_string();
            (name, m, std::fs::read_to_string(&f).unwrap())
        })
        .collect();
    let graph = import_graph(&files);
    let found: Vec<String> = circles(&graph)
        .iter()
        .map(|c| {
            let names: Vec<&str> = c.iter().map(|&i| files[i].0.as_str()).collect();
            names.join(" <-> ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other:\n{}",
        found.join("\n")
    );
    // The checker sees the imports it must: the campaign uses the fit and the plan.
    let at = |n: &str| files.iter().position(|f| f.0 == n).unwrap();
    assert!(graph[at("campaign/evaluate.rs")].contains(&at("calibrate/fit.rs")));
    assert!(graph[at("cli/campaign.rs")].contains(&at("campaign/replay.rs")));
}

#[test]
fn the_circle_checker_finds_a_circle_through_use_groups_and_super_paths() {
    let lib = |names: &[&str]| ("lib", names.iter().map(|s| s.to_string()).collect());
    let files =
        vec![
        ("a/mod.rs".to_string(), lib(&["a"]), "pub mod x;\npub use x::Thing;\n".to_string()),
        (
            "a/x.rs".to_string(),
            lib(&["a", "x"]),
            "use crate::{b::{self, y::Y}, units};\n".to_string(),
        ),
        (
            "b/y.rs".to_string(),
            lib(&["b", "y"]),
            "// use crate::a;\nfn f() { super::super::a::x::g(); }\n#[cfg(test)]\nuse crate::z;\n"
                .to_string(),
        ),
        ("b/mod.rs".to_string(), lib(&["b"]), String::new()),
        ("z.rs".to_string(), lib(&["z"]), "use std::path::Path;\n".to_string()),
    ];
    let graph = import_graph(&files);
    assert!(
        graph[0].is_empty(),
        "a mod.rs re-exporting its own file is its face"
    );
    assert_eq!(graph[1], BTreeSet::from([2, 3]), "a group, `self` in it");
    assert_eq!(
        graph[2],
        BTreeSet::from([1]),
        "super::super; no comment, no test import"
    );
    assert_eq!(circles(&graph), vec![vec![1, 2]]);
}
