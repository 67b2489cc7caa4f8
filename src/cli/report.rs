//! `jouleplan report`: the plan written as a self-contained folder (charts, front, page).

use super::plan::{QueryArgs, SAMPLE_MAX, SpaceArgs, resolve};
use super::sources::SourceArgs;
use crate::calibrate::validate;
use crate::report::Exporter;
use crate::report::csv::Csv;
use crate::report::json::Json;
use crate::report::measured::{MeasuredRun, drawable};
use crate::report::{html, plot};
use crate::search::plan::Plan;
use crate::search::sample::sample;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// `jouleplan report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub query: QueryArgs,
    /// Folder for index.html, pareto.svg, pareto.png, breakdown.svg, node-law.svg, front.json,
    /// front.csv.
    #[arg(short, long, visible_alias = "output", value_name = "DIR")]
    pub out: PathBuf,
    /// Measured runs to show beside the predictions: a CSV as `fit --measured` and
    /// `validate --measured` read (nodes,cores,freq_hz,gpus,time_s[,energy_j|gpu_energy_j]
    /// [,ranks][,energy_scope][,gpu_clock_mhz]); the Pareto chart marks those whose energy has the plan's scope.
    #[arg(long, value_name = "RUNS.csv")]
    pub measured: Option<PathBuf>,
    /// Write into an --out folder that holds files other than a previous report's: the
    /// report's files are replaced one by one and the others kept. Without it such a folder is
    /// refused; a new or empty folder, or a previous report, is replaced whole.
    #[arg(long)]
    pub force: bool,
}

/// Measured runs against the model's predictions, for the page, by configuration (nodes,
/// cores, frequency, GPUs) whatever the file's order.
fn measured_runs(
    model: &crate::model::Model<'_>,
    rows: &[crate::calibrate::runs::Measured],
) -> anyhow::Result<Vec<MeasuredRun>> {
    let mut compared = validate::compare(model, rows)?;
    compared.sort_by(validate::by_configuration);
    Ok(compared
        .into_iter()
        .map(|c| MeasuredRun {
            config: c.measured.config,
            ranks: c.measured.ranks,
            runs: c.measured.runs.count,
            time_s: c.measured.time_s,
            energy: c.measured.energy,
            predicted_time_s: c.time_s,
            predicted_energy_j: c.energy_j,
            not_predicted: c.not_predicted,
        })
        .collect())
}

/// The files of a report folder, in the order they are written.
const REPORT_FILES: [&str; 7] = [
    "pareto.svg",
    "breakdown.svg",
    "node-law.svg",
    "front.json",
    "front.csv",
    "index.html",
    "pareto.png",
];

/// Refuses an `--out` folder that holds anything but a previous report (the report's files,
/// its `index.html` a jouleplan page, and jouleplan's temporaries): a folder of the user's
/// (`report -o .`, `-o ~/results`) would have had its `index.html` and `front.csv` replaced.
/// A folder entry at a report file's name is left to the writer, which names it.
/// Refuses, before the plan and its charts are made, an `--out` that can hold no report: a
/// file (exit 2, under the flag) or a symbolic link (exit 1, as every output link is).
fn a_folder_to_write(dir: &std::path::Path) -> anyhow::Result<()> {
    let Ok(m) = std::fs::symlink_metadata(dir) else {
        return Ok(());
    };
    if m.file_type().is_symlink() {
        anyhow::bail!(
            "{0}: cannot write: {0} is a symbolic link: jouleplan writes only into folders it \
             can see are folders (remove the link); nothing was written",
            dir.display()
        );
    }
    if !m.is_dir() {
        return Err(crate::error::InputError::Argument {
            flag: "--out".into(),
            expected: "a folder for the report's files (new, or one a report wrote): this is a \
                       file; choose another --out, or remove it; nothing was written"
                .into(),
            got: dir.display().to_string(),
        }
        .into());
    }
    Ok(())
}

fn not_the_users_folder(dir: &std::path::Path) -> crate::error::InputResult<()> {
    let is_dir = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
    let Some(entries) = is_dir.then(|| std::fs::read_dir(dir).ok()).flatten() else {
        return Ok(());
    };
    let mut foreign: Vec<String> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let plain = e.file_type().is_ok_and(|t| t.is_file());
        let ours = REPORT_FILES.contains(&name.as_str());
        if ours && !plain {
            return Ok(());
        }
        if !(plain && (ours || name.ends_with(crate::atomic_write::TMP_SUFFIX))) {
            foreign.push(format!("`{name}`"));
        }
    }
    let page = dir.join("index.html");
    if page.exists() && !is_a_report_page(&page) {
        foreign.push("`index.html` (a page no jouleplan report wrote)".into());
    }
    foreign.sort();
    let what = match foreign.first() {
        None => return Ok(()),
        Some(first) if foreign.len() > 1 => format!("{first} and {} more", foreign.len() - 1),
        Some(first) => first.clone(),
    };
    Err(crate::error::InputError::Argument {
        flag: "--out".into(),
        expected: format!(
            "a new or empty folder, or one a previous `jouleplan report` wrote (its files \
             alone): {} holds {what}, which the report would have overwritten or mixed with \
             its own; choose another --out, or pass --force to replace the report's files one \
             by one and keep the others; nothing was written",
            dir.display()
        ),
        got: dir.display().to_string(),
    })
}

/// Whether `page` starts as the page `report` writes (its title `jouleplan: ...`).
fn is_a_report_page(page: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(page)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .is_ok_and(|_| String::from_utf8_lossy(&head).contains("<title>jouleplan: "))
}

/// Runs `report`: writes the report folder and says on standard error what it wrote (the
/// folder is the result: nothing goes to standard output).
pub fn run_report(args: &ReportArgs, _out: &mut dyn Write) -> anyhow::Result<Plan> {
    // The folder is swapped in whole: an input at the name of one of its files would be lost.
    let mut inputs = args.source.files();
    inputs.extend(args.measured.iter().map(|p| ("--measured", p.as_path())));
    let files: Vec<_> = REPORT_FILES.iter().map(|n| args.out.join(n)).collect();
    let outputs: Vec<_> = files.iter().map(|f| ("--out", f.as_path())).collect();
    super::outputs::not_inputs(&inputs, &outputs)?;
    a_folder_to_write(&args.out)?;
    if !args.force {
        not_the_users_folder(&args.out)?;
    }
    let inp = resolve(&args.source, &args.space, &args.query)?;
    // The runs are read and checked as `validate` checks them before the search, so a bad file
    // costs nothing.
    let rows = match &args.measured {
        Some(path) => {
            let (machine, profile) = (&inp.inputs.machine, &inp.inputs.profile);
            let mut rows = crate::calibrate::runs::read_csv_file(path)?;
            if let Some(note) = validate::check_gpu_clocks(path, machine, &mut rows)? {
                super::say::note(&note);
            }
            validate::check_memory_clock((path, &rows), machine, Some(profile))?;
            rows
        }
        None => Vec::new(),
    };
    let crate::search::planner::Planned { model, plan, .. } =
        crate::search::planner::plan(&inp.inputs, &inp.space, &inp.request)?;
    let runs = measured_runs(&model, &rows)?;
    let marks = drawable(&runs, plan.energy_scope);
    let sample = sample(&model, &plan.space, SAMPLE_MAX)?;
    let pareto = plot::pareto_svg(&plan, &sample, &marks).map_err(anyhow::Error::msg)?;
    let breakdown = plot::breakdown_svg(&plan).map_err(anyhow::Error::msg)?;
    let node_law = super::node_chart::report_chart(&model, &plan, args.measured.as_deref())?;
    let dir = &args.out;
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", parent.display()))?;
    }
    let _lock = super::outputs::lock_folder("--out", dir.as_path())?;
    let mut json = Vec::new();
    Json.plan(&plan, &mut json)?;
    let mut csv = Vec::new();
    Csv.plan(&plan, &mut csv)?;
    let file = args.measured.as_ref().map(|p| p.display().to_string());
    let html = html::index_html(
        &plan,
        (&inp.inputs.machine, &inp.inputs.profile),
        &sample,
        (&breakdown, &node_law),
        file.as_deref().map(|f| (f, &runs[..])),
        crate::report::gpu_clock::axis(&model, &plan).as_ref(),
    );
    let png = plot::pareto_png(&plan, &sample, &marks)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.join("pareto.png").display()))?;
    let contents: [&[u8]; 7] = [
        pareto.as_bytes(),
        breakdown.as_bytes(),
        node_law.as_bytes(),
        &json,
        &csv,
        html.as_bytes(),
        &png,
    ];
    let files: Vec<(&str, &[u8])> = REPORT_FILES.into_iter().zip(contents).collect();
    // Built beside the folder and swapped in: a kill leaves the old report or the new one.
    let how = crate::atomic_write::write_folder(dir, &files)?;
    if how == crate::atomic_write::Written::FileByFile {
        super::say::note(&format!(
            "{} holds other files (--force): the report's files were replaced one by one, the \
             others kept",
            dir.display()
        ));
    }
    for (name, _) in files {
        super::say::progress(&format!("wrote {}", dir.join(name).display()));
    }
    Ok(plan)
}
