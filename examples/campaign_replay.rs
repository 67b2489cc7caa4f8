//! A recorded measurement campaign replayed through the library alone: no command line, no
//! files written. The recorded runs are taken count by count; at each step the runs so far
//! are fitted (`calibrate::fit`) and planned over 1-16 nodes (`search::planner`) in memory, and
//! the campaign's rules say the next count to measure, or why to stop.
//!
//! ```sh
//! cargo run --release --example campaign_replay -- RUNS.csv [MACHINE.toml] [CORES]
//! ```
//!
//! `RUNS.csv` is a measured CSV (`nodes,cores,freq_hz,gpus,time_s[,energy_j]...`), such as
//! one Ice Lake code's runs made from the public fixtures; the machine file defaults to
//! `tests/data/machines/icelake-8360y.toml`; `CORES` keeps the runs at that many cores a node.

use jouleplan::calibrate::fit::MachineDoc;
use jouleplan::campaign::decide::Next;
use jouleplan::campaign::replay::{Filter, Recorded};
use jouleplan::campaign::{Campaign, Quiet, Settings};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(csv) = args.first().map(PathBuf::from) else {
        anyhow::bail!("usage: campaign_replay RUNS.csv [MACHINE.toml] [CORES]");
    };
    let machine = args.get(1).map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/machines/icelake-8360y.toml")
    });
    let cores: Option<Vec<u32>> = args.get(2).map(|c| c.parse()).transpose()?.map(|c| vec![c]);
    let doc = MachineDoc::new(&machine, std::fs::read_to_string(&machine)?)?;
    let filter = Filter {
        cores: cores.clone(),
        freqs_hz: None,
    };
    let recorded = Recorded::read(&csv, &filter)?;
    let program = csv
        .file_stem()
        .map_or("program".into(), |s| s.to_string_lossy().into_owned());
    let max = doc.machine.max_nodes.min(16);
    let mut settings = Settings::new(max, &program, PathBuf::from(format!("{program}-runs.csv")));
    settings.cores = cores;
    let mut campaign = Campaign::new(doc, settings, recorded)?;
    for n in campaign.start() {
        campaign.measure(n, "start".into(), (0, None), &mut Quiet)?;
    }
    loop {
        let evaluated = campaign.evaluate().map_err(anyhow::Error::msg)?;
        let counts: Vec<u32> = {
            let mut c: Vec<u32> = campaign.runs().iter().map(|t| t.row.nodes).collect();
            c.dedup();
            c
        };
        let law = evaluated
            .fitted
            .profile()
            .node_law
            .as_ref()
            .map_or("none".into(), |l| l.law().describe());
        print!("measured {counts:?}: node law {law}");
        if let Some(r) = evaluated.plan.recommendation() {
            let p = &r.prediction;
            print!(
                "; recommended {} nodes x {} cores, {:.0} s",
                p.config.nodes, p.config.cores, p.time.0
            );
            if !p.time_only {
                print!(", {:.3} MJ", p.energy.0 / 1e6);
            }
        }
        println!();
        match campaign.next(&evaluated).0 {
            Next::Measure(n, why) => {
                println!("  next: {n} nodes ({why})");
                if campaign.measure(n, why, (0, None), &mut Quiet)?.is_none() {
                    println!("stop: no run on {n} nodes could be had");
                    return Ok(());
                }
            }
            Next::Stop(why) => {
                println!("stop: {why}");
                return Ok(());
            }
        }
    }
}
