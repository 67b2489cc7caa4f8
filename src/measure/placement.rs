//! Where a run's ranks go (MODEL.md 6c a). The runs on one node, the baseline, run on the node
//! jouleplan runs on (no launcher, or `mpirun` for several ranks), so that its counters, RAPL,
//! NVML and rusage see them. Runs on `n > 1` nodes are a Slurm job step over `n` nodes of the
//! allocation (`srun --nodes`), or `mpirun` over the first `n` hosts of a hostfile.
//! The launcher's words keep placeholders until a point fills them: `{nodes}`, `{ranks}` (all
//! ranks of the run), `{ranks_per_node}`, `{threads}` (per rank), `{khz}` and `{hostfile}` (the
//! point's own hostfile, its first `n` hosts).

use crate::error::InputError;
use std::path::{Path, PathBuf};

/// Where the runs of a sweep are placed.
#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    /// This node only: no launcher, or one that spreads over this node.
    Local,
    /// Job steps of the Slurm allocation the sweep runs in, which has this many nodes.
    Slurm {
        /// Nodes of the allocation (`SLURM_JOB_NUM_NODES`), when Slurm said.
        nodes: Option<u32>,
        /// The allocation's node jouleplan runs on (`SLURMD_NODENAME`); `None` outside its
        /// nodes (salloc on a login node).
        on_node: Option<String>,
    },
    /// The hosts of a hostfile, in its order (each once).
    Hosts {
        /// The hostfile as given.
        file: PathBuf,
        /// Its hosts.
        hosts: Vec<String>,
    },
}

/// The default launcher of Slurm steps: `n` nodes, the ranks spread evenly, one core per
/// thread; `--overlap` lets the step start inside a step that runs jouleplan itself.
const SRUN: [&str; 8] = [
    "srun",
    "--overlap",
    "--nodes={nodes}",
    "--ntasks={ranks}",
    "--ntasks-per-node={ranks_per_node}",
    "--cpus-per-task={threads}",
    "--cpu-bind=cores",
    "--export=ALL",
];

/// What `mpirun` passes on to every rank.
const MPIRUN_ENV: [&str; 8] = [
    "--bind-to",
    "none",
    "-x",
    "OMP_NUM_THREADS",
    "-x",
    "OMP_PLACES",
    "-x",
    "OMP_PROC_BIND",
];

fn own(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// The launcher words of the runs on one node when the user gave none: `mpirun` on this node
/// for several ranks, nothing for one process.
pub fn local_words(ranks_per_node: u32) -> Vec<String> {
    if ranks_per_node <= 1 {
        return Vec::new();
    }
    let mut words = own(&["mpirun", "-np", "{ranks}", "--oversubscribe"]);
    words.extend(own(&MPIRUN_ENV));
    words
}

/// The launcher words of the runs on more than one node when the user gave none: `srun`
/// steps inside a Slurm job, `mpirun` over a hostfile; empty when they cannot be placed
/// (see [`check`]).
pub fn default_words(place: &Placement) -> Vec<String> {
    let mut words = match place {
        Placement::Slurm { .. } => own(&SRUN),
        Placement::Hosts { .. } => own(&[
            "mpirun",
            "-np",
            "{ranks}",
            "--hostfile",
            "{hostfile}",
            "--map-by",
            "ppr:{ranks_per_node}:node",
        ]),
        Placement::Local => return Vec::new(),
    };
    if words[0] == "mpirun" {
        words.extend(own(&MPIRUN_ENV));
    }
    words
}

/// The launcher words of the runs on one node when each is a Slurm step (the GPU clock set by
/// `srun --gpu-freq`): a step of one node, on the node jouleplan runs on, where NVML and RAPL
/// see it. Refused outside an allocation's node (salloc on a login node) or with a hostfile.
pub fn step_here_words(place: &Placement) -> Result<Vec<String>, InputError> {
    match place {
        Placement::Slurm {
            on_node: Some(node),
            ..
        } => {
            let mut words = default_words(place);
            words.insert(1, format!("--nodelist={node}"));
            Ok(words)
        }
        Placement::Slurm { on_node: None, .. } => Err(InputError::Mismatch(
            "the GPU clock is set by Slurm steps (srun --gpu-freq), whose GPU energy jouleplan reads on the node it runs on, but it runs outside the allocation's nodes (no SLURMD_NODENAME: salloc on a login node); inside salloc start it with `srun -N 1 -n 1 --overlap jouleplan profile ...`, or submit it with sbatch"
                .into(),
        )),
        _ => Err(InputError::Mismatch(
            "the GPU clock is set by Slurm steps (srun --gpu-freq), which --hostfile runs are not: drop --hostfile inside the allocation"
                .into(),
        )),
    }
}

/// Checks that the runs on more than one node can be placed: the allocation or the hostfile
/// has enough nodes, and a launcher of the user's says how to spread (`{nodes}` or
/// `{hostfile}`).
pub fn check(
    place: &Placement,
    words: &[String],
    max_nodes: u32,
    custom: bool,
) -> Result<(), InputError> {
    let uses = |p: &str| words.iter().any(|w| w.contains(p));
    if uses("{hostfile}") && !matches!(place, Placement::Hosts { .. }) {
        return Err(InputError::Argument {
            flag: "--launcher".into(),
            expected: "a {hostfile} placeholder only with --hostfile FILE".into(),
            got: words.join(" "),
        });
    }
    if max_nodes <= 1 {
        return Ok(());
    }
    if custom && !uses("{nodes}") && !uses("{hostfile}") {
        return Err(InputError::Argument {
            flag: "--launcher".into(),
            expected: format!(
                "a launcher that spreads the ranks over the nodes of each point: --nodes asks \
                 for up to {max_nodes}, so give {{nodes}} (srun --nodes={{nodes}}) or \
                 {{hostfile}} with --hostfile"
            ),
            got: words.join(" "),
        });
    }
    match place {
        Placement::Local => Err(InputError::Argument {
            flag: "--nodes".into(),
            expected: "runs on one node, unless jouleplan runs inside a Slurm allocation \
                       (sbatch -N N: one srun step per run) or is given --hostfile FILE \
                       (mpirun over its first hosts)"
                .into(),
            got: format!("up to {max_nodes} nodes"),
        }),
        Placement::Slurm { on_node: None, .. } if !custom => Err(InputError::Argument {
            flag: "--nodes".into(),
            expected: "jouleplan on a node of the Slurm allocation, where the one-node runs are \
                       measured (SLURMD_NODENAME is unset: salloc runs it on the login node): \
                       submit it with sbatch -N N, or start it with srun -N 1 -n 1 inside the \
                       allocation"
                .into(),
            got: format!("up to {max_nodes} nodes"),
        }),
        Placement::Slurm {
            nodes: Some(have), ..
        } if *have < max_nodes => Err(InputError::Argument {
            flag: "--nodes".into(),
            expected: format!(
                "at most the {have} nodes of this Slurm allocation (SLURM_JOB_NUM_NODES); \
                 allocate {max_nodes}: submit it with sbatch -N {max_nodes}, or inside salloc -N \
                 {max_nodes} start it with srun -N 1 -n 1 (jouleplan must run on a node of the \
                 allocation)"
            ),
            got: max_nodes.to_string(),
        }),
        Placement::Hosts { file, hosts } if (hosts.len() as u64) < u64::from(max_nodes) => {
            Err(InputError::Argument {
                flag: "--nodes".into(),
                expected: format!("at most the {} hosts of {}", hosts.len(), file.display()),
                got: max_nodes.to_string(),
            })
        }
        _ => Ok(()),
    }
}

/// The hosts of an Open MPI or MPICH hostfile: the first word of each line, without comments
/// and blank lines, each host once in its first place.
pub fn read_hostfile(path: &Path) -> Result<Vec<String>, InputError> {
    let text = crate::input::read_table(path)?;
    let mut hosts: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(host) = line.split_whitespace().next() else {
            continue;
        };
        // MPICH's `host:slots`.
        let host = host.split(':').next().unwrap_or(host);
        if !hosts.iter().any(|h| h == host) {
            hosts.push(host.to_string());
        }
    }
    if hosts.is_empty() {
        return Err(InputError::Key {
            file: path.to_path_buf(),
            key: "hosts".into(),
            expected: "one host a line (node01 slots=64)".into(),
            got: "no host".into(),
        });
    }
    Ok(hosts)
}

/// Writes the hostfile of one point: the first `nodes` hosts, `ranks_per_node` slots each.
pub fn write_point_hostfile(
    dir: &Path,
    hosts: &[String],
    nodes: u32,
    ranks_per_node: u32,
) -> std::io::Result<PathBuf> {
    let path = dir.join("hostfile");
    let text: String = hosts
        .iter()
        .take(nodes as usize)
        .map(|h| format!("{h} slots={ranks_per_node}\n"))
        .collect();
    crate::atomic_write::write_atomic(&path, text.as_bytes(), false)?;
    Ok(path)
}

/// The values a point gives the placeholders.
#[derive(Debug, Clone, Copy)]
pub struct Fill<'a> {
    /// Nodes.
    pub nodes: u32,
    /// Ranks on each node.
    pub ranks_per_node: u32,
    /// Threads per rank.
    pub threads: u32,
    /// Frequency, kHz.
    pub khz: u64,
    /// The point's hostfile, when the sweep has one.
    pub hostfile: Option<&'a Path>,
}

/// The launcher words with the point's values in their placeholders.
pub fn fill(words: &[String], v: Fill<'_>) -> Vec<String> {
    let ranks = u64::from(v.nodes) * u64::from(v.ranks_per_node);
    let hostfile = v
        .hostfile
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    words
        .iter()
        .map(|w| {
            w.replace("{nodes}", &v.nodes.to_string())
                .replace("{ranks_per_node}", &v.ranks_per_node.to_string())
                .replace("{ranks}", &ranks.to_string())
                .replace("{threads}", &v.threads.to_string())
                .replace("{khz}", &v.khz.to_string())
                .replace("{hostfile}", &hostfile)
        })
        .collect()
}

/// The placement of this process: a hostfile when given, else the Slurm allocation it runs
/// in, else this node.
pub fn here(hostfile: Option<&Path>) -> Result<Placement, InputError> {
    if let Some(f) = hostfile {
        return Ok(Placement::Hosts {
            file: f.to_path_buf(),
            hosts: read_hostfile(f)?,
        });
    }
    if std::env::var_os("SLURM_JOB_ID").is_none() {
        return Ok(Placement::Local);
    }
    let nodes = ["SLURM_JOB_NUM_NODES", "SLURM_NNODES"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok());
    let on_node = std::env::var("SLURMD_NODENAME").ok();
    Ok(Placement::Slurm { nodes, on_node })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_the_point_values() {
        let words = default_words(&Placement::Slurm {
            nodes: Some(4),
            on_node: Some("n1".into()),
        });
        let got = fill(
            &words,
            Fill {
                nodes: 4,
                ranks_per_node: 8,
                threads: 2,
                khz: 2_000_000,
                hostfile: None,
            },
        );
        assert_eq!(got[2], "--nodes=4");
        assert_eq!(got[3], "--ntasks=32");
        assert_eq!(got[4], "--ntasks-per-node=8");
        assert_eq!(got[5], "--cpus-per-task=2");
    }

    #[test]
    fn too_few_nodes_or_no_way_to_spread_are_refused() {
        let slurm = Placement::Slurm {
            nodes: Some(2),
            on_node: Some("n1".into()),
        };
        let words = default_words(&slurm);
        let e = check(&slurm, &words, 4, false).unwrap_err().to_string();
        // The way it suggests is one that works: salloc alone runs jouleplan on the login node.
        assert!(e.contains("sbatch -N 4"), "{e}");
        assert!(
            e.contains("inside salloc -N 4 start it with srun -N 1 -n 1"),
            "{e}"
        );
        assert!(check(&Placement::Local, &[], 2, false).is_err());
        let own = vec!["mpiexec".to_string(), "-n".into(), "{ranks}".into()];
        let e = check(&slurm, &own, 2, true).unwrap_err().to_string();
        assert!(e.contains("{nodes}"), "{e}");
        assert!(check(&slurm, &words, 2, false).is_ok());
        let login = Placement::Slurm {
            nodes: Some(2),
            on_node: None,
        };
        let e = check(&login, &words, 2, false).unwrap_err().to_string();
        assert!(e.contains("sbatch"), "{e}");
    }
}
