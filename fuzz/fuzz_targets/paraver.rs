//! Paraver traces (`metrics FILE.prv`): arbitrary bytes as a trace, with the first byte choosing
//! the options (critical path, fixed or adaptive windows). A run or an error; never a panic,
//! an allocation sized by the header, or a non-finite elapsed time.
#![no_main]
use jouleplan::metrics::paraver::{Options, analyse_reader};
use jouleplan::units::Seconds;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, trace)) = data.split_first() else {
        return;
    };
    let opts = Options {
        eager_limit: u64::from(sel & 0x0f) * 4096,
        window: (sel & 0x10 != 0).then_some(Seconds(1e-6 * f64::from(sel & 0x0f).max(1.0))),
        adaptive: (sel & 0x20 != 0).then_some(2),
        no_critical_path: sel & 0x40 != 0,
    };
    if let Ok(run) = analyse_reader(Path::new("t.prv"), Box::new(trace), &opts) {
        assert!(run.elapsed_s.is_finite() && run.elapsed_s >= 0.0);
        if let Some(h) = &run.host {
            assert!(h.parallel_efficiency.is_finite(), "{h:?}");
        }
    }
});
