//! The stages depend only downward (issue 27, docs/ARCHITECTURE.md): every `crate::STAGE`
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
