//! The measurement campaign (`profile --nodes auto`, MODEL.md 6d), a stage above `measure`,
//! `calibrate` and `search`: it takes runs from a [`RunSource`] (a recording,
//! [`replay::Recorded`]; or the program launched, [`launch::Launch`]), fits and plans them in
//! memory each step ([`evaluate::evaluate`]), and decides the next count by rules
//! ([`decide`]) until nothing can change the recommendation ([`run::Campaign`]).
//!
//! ```no_run
//! use jouleplan::calibrate::fit::MachineDoc;
//! use jouleplan::campaign::replay::{Filter, Recorded};
//! use jouleplan::campaign::{Campaign, Quiet, Settings};
//! # fn main() -> anyhow::Result<()> {
//! let file = std::path::Path::new("icelake.toml");
//! let machine = MachineDoc::new(file, std::fs::read_to_string(file)?)?;
//! let recorded = Recorded::read("weather.csv".as_ref(), &Filter::default())?;
//! let settings = Settings::new(16, "weather", "weather-runs.csv".into());
//! let outcome = Campaign::new(machine, settings, recorded)?.run(&mut Quiet)?;
//! println!("{}: {:?}", outcome.stopped, outcome.recommendation);
//! # Ok(())
//! # }
//! ```

pub mod decide;
pub mod evaluate;
pub mod forecast;
pub mod launch;
pub mod objective;
pub mod order;
pub mod replay;
pub mod report;
pub mod run;
pub mod settings;
pub mod source;
pub mod step;

pub use run::{Campaign, Observer, Outcome, Quiet};
pub use settings::Settings;
pub use source::{Ahead, RunSource, Spend, Stopped, Taken};
