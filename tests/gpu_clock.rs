//! The GPU core clock as an axis (MODEL.md section 6e): the machine file's `gpu_clocks_mhz`,
//! measured rows at several clocks, the clock law `fit` makes of them, and plans across it.
//! Clock lists here are illustrative (chosen by the test) unless read from the public fixtures.

mod common;

use common::{jouleplan, write};
use std::path::{Path, PathBuf};

/// The bundled H100 machine with `extra` added to its `[machine]` section.
fn h100_with(d: &Path, extra: &str) -> PathBuf {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("models/h100-gpu.toml"))
            .unwrap();
    let text = text.replacen("[machine]\n", &format!("[machine]\n{extra}\n"), 1);
    write(d, "m.toml", &text)
}

#[test]
fn machine_check_shows_the_gpu_clock_list() {
    let d = tempfile::tempdir().unwrap();
    let m = h100_with(
        d.path(),
        "gpu_clocks_mhz = [345, 990, 1980]\ngpu_memory_clock_mhz = 2619",
    );
    let (code, out, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("GPU clocks: 3 from 345 to 1980 MHz (memory 2619 MHz)"),
        "{out}"
    );
    let (code, out, err) = jouleplan(&["machine", "check", m.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["gpu_clocks_mhz"],
        serde_json::json!([345.0, 990.0, 1980.0])
    );
}

#[test]
fn machine_without_a_clock_list_says_it_has_no_clock_axis() {
    let d = tempfile::tempdir().unwrap();
    let m = h100_with(d.path(), "");
    let (code, out, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("GPU clocks: not given (no GPU clock axis"),
        "{out}"
    );
}

#[test]
fn bad_gpu_clock_lists_are_refused_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    for (list, key, says) in [
        (
            "[345, 990, 990, 1980]",
            "machine.gpu_clocks_mhz[2]",
            "duplicate",
        ),
        ("[1980, 990]", "machine.gpu_clocks_mhz[1]", "descending"),
        (
            "[345, 990.5]",
            "machine.gpu_clocks_mhz[1]",
            "whole number of MHz",
        ),
        ("[0.9, 1.4]", "machine.gpu_clocks_mhz[0]", "looks like GHz"),
        ("[-5, 990]", "machine.gpu_clocks_mhz[0]", "-5"),
        ("[]", "machine.gpu_clocks_mhz", "a list of 0"),
        ("\"990\"", "machine.gpu_clocks_mhz", "ascending"),
    ] {
        let m = h100_with(d.path(), &format!("gpu_clocks_mhz = {list}"));
        let (code, _, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
        assert_eq!(code, 2, "{list}: {err}");
        assert!(err.contains(key) && err.contains(says), "{list}: {err}");
    }
}

#[test]
fn a_clock_list_on_a_machine_without_gpus_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let m = write(
        d.path(),
        "m.toml",
        "[machine]\nname = \"c\"\nnodes = 1\ncores_per_node = 4\nfrequencies_ghz = [2.0]\n\
         gpu_clocks_mhz = [990, 1980]\n",
    );
    let (code, _, err) = jouleplan(&["machine", "check", m.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("machine.gpu_clocks_mhz") && err.contains("gpus_per_node"),
        "{err}"
    );
}
