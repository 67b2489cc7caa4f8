//! The GPU clock set through NVML application clocks: the thin real side of
//! [`ClockSetter`] (`nvmlDeviceGetApplicationsClock`, `nvmlDeviceGetSupportedGraphicsClocks`,
//! `nvmlDeviceSetApplicationsClocks`), and whether this process may set them. The logic around
//! it (which clock when, what to restore) is [`super::gpu_clock_set`]'s.

use super::gpu_clock_set::ClockSetter;
use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Api, Clock};

/// NVML, loaded once for the sweep.
pub struct NvmlClocks {
    nvml: Nvml,
}

impl NvmlClocks {
    /// Loads NVML, or says why it cannot be.
    pub fn load() -> Result<NvmlClocks, String> {
        Nvml::init()
            .map(|nvml| NvmlClocks { nvml })
            .map_err(|e| format!("NVML could not be loaded: {e}"))
    }

    fn device(&self, gpu: u32) -> Result<nvml_wrapper::Device<'_>, String> {
        self.nvml
            .device_by_index(gpu)
            .map_err(|e| format!("GPU {gpu}: {e}"))
    }
}

/// Whether this process may set the application clocks of `gpus`: `Ok` as root (the GPUs
/// must be there), or where NVML says the API is not restricted (`nvidia-smi -acp
/// UNRESTRICTED`); else why not. Some GPUs cannot say whether it is restricted (an H200 with
/// driver 580 answers "not supported"): there only root may set them, as NVML documents it.
pub fn may_set(gpus: &[u32]) -> Result<(), String> {
    let n = NvmlClocks::load()?;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for &g in gpus {
        let d = n.device(g)?;
        if root {
            continue;
        }
        match d.is_api_restricted(Api::ApplicationClocks) {
            Ok(false) => {}
            Ok(true) => {
                return Err(format!(
                    "GPU {g} lets only root set application clocks, and jouleplan does not run \
                     as root"
                ));
            }
            Err(e) => {
                return Err(format!(
                    "GPU {g} does not say whether users may set application clocks ({e}), and \
                     jouleplan does not run as root"
                ));
            }
        }
    }
    Ok(())
}

impl ClockSetter for NvmlClocks {
    fn applications_clocks(&mut self, gpu: u32) -> Result<(u32, u32), String> {
        let d = self.device(gpu)?;
        let read = |c: Clock, what: &str| {
            d.applications_clock(c)
                .map_err(|e| format!("GPU {gpu}: application {what} clock: {e}"))
        };
        Ok((
            read(Clock::Memory, "memory")?,
            read(Clock::Graphics, "graphics")?,
        ))
    }

    fn supported_graphics(&mut self, gpu: u32, memory: u32) -> Result<Vec<u32>, String> {
        self.device(gpu)?
            .supported_graphics_clocks(memory)
            .map_err(|e| format!("GPU {gpu}: supported graphics clocks at {memory} MHz: {e}"))
    }

    fn set(&mut self, gpu: u32, memory: u32, graphics: u32) -> Result<(), String> {
        self.device(gpu)?
            .set_applications_clocks(memory, graphics)
            .map_err(|e| e.to_string())
    }
}
