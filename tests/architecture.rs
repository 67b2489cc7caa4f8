//! The stages depend only downward (docs/ARCHITECTURE.md): every `crate::STAGE`
//! path in a stage's code names a stage below it. Comments are not imports and are skipped.

use std::collections::BTreeSet;
use std::path::Path;

const STAGES: [&str; 9] = [
    "artefact",
    "numeric",
    "metrics",
    "model",
    "calibrate",
    "search",
    "measure",
    "report",
    "cli",
];

/// The stages a stage may use.
fn allowed(stage: &str) -> &'static [&'static str] {
    match stage {
        "artefact" | "numeric" | "metrics" => &[],
        "model" => &["artefact", "numeric", "metrics"],
        "calibrate" | "search" | "measure" => &["artefact", "numeric", "metrics", "model"],
        "report" => &["artefact", "numeric", "metrics", "model", "search"],
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
