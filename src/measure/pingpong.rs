//! MPI ping-pong between two ranks (`jouleplan calibrate network`, `mpi` feature): for each
//! message size, round trips timed with `MPI_Wtime`, repeated; every size is saved to the
//! record as soon as it is measured, so an interrupted sweep keeps what it measured
//! (`--resume` measures only the sizes missing from the record).

use std::path::PathBuf;

pub use crate::artefact::pingpong::{ONE_WAY_RANGE_S, RECORD_FORMAT, Record};

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Largest message, bytes (sizes are 1, 2, 4, ... up to it).
    pub max_bytes: u64,
    /// Repeats per size.
    pub repeats: usize,
    /// Seconds each repeat's round trips aim at.
    pub target_s: f64,
    /// Where each measured size is saved.
    pub record: PathBuf,
    /// Sizes already measured (from `--resume`).
    pub done: Option<Record>,
}

/// The message sizes of a sweep: powers of two from 1 byte, and `max` itself.
pub fn sizes(max: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..63)
        .map(|k| 1u64 << k)
        .take_while(|m| *m <= max)
        .collect();
    if v.last() != Some(&max) && max > 0 {
        v.push(max);
    }
    v
}

#[cfg(feature = "mpi")]
mod run {
    use super::*;
    use crate::artefact::pingpong::SizeSample;
    use mpi::traits::*;

    /// Runs the sweep; rank 0 returns the record, rank 1 `None`. Errors are returned on
    /// every rank (the same inputs fail the same way).
    pub fn run(o: &Options, log: &mut dyn FnMut(&str)) -> anyhow::Result<Option<Record>> {
        let Some(universe) = mpi::initialize() else {
            anyhow::bail!("MPI could not be initialised");
        };
        let world = universe.world();
        if world.size() != 2 {
            anyhow::bail!(
                "the ping-pong needs exactly 2 MPI ranks, this run has {}: start it with \
                 `mpirun -n 2 jouleplan calibrate network ...` (two nodes on a cluster: \
                 `srun -N 2 -n 2 ...` or `mpirun -n 2 --map-by node ...`)",
                world.size()
            );
        }
        let rank = world.rank();
        let peer = world.process_at_rank(1 - rank);
        let hosts = exchange_hosts(&world, rank);
        check_resumed_hosts(&world, rank, o, &hosts)?;
        let mut record = match (&o.done, rank) {
            (Some(r), 0) => r.clone(),
            _ => Record {
                format: RECORD_FORMAT.into(),
                hosts,
                date: crate::units::today_utc(),
                target_s: o.target_s,
                sizes: Vec::new(),
            },
        };
        for m in sizes(o.max_bytes) {
            // Rank 0 decides whether the size is already recorded.
            let mut skip = u8::from(record.sizes.iter().any(|s| s.bytes == m));
            world.process_at_rank(0).broadcast_into(&mut skip);
            if skip == 1 {
                continue;
            }
            let times = one_size(&world, &peer, rank, m, o);
            if rank == 0 {
                record.sizes.push(SizeSample {
                    bytes: m,
                    one_way_s: times,
                });
                record.sizes.sort_by_key(|s| s.bytes);
                record.write(&o.record)?;
                log(&format!(
                    "{m} bytes: {:.3} us one way",
                    record
                        .sizes
                        .iter()
                        .find(|s| s.bytes == m)
                        .map_or(f64::NAN, |s| s.median() * 1e6)
                ));
            }
        }
        Ok((rank == 0).then_some(record))
    }

    /// `--resume` between other hosts than the record's is refused on both ranks (rank 0,
    /// which read the record, decides and says why).
    fn check_resumed_hosts<C: Communicator>(
        world: &C,
        rank: i32,
        o: &Options,
        hosts: &[String],
    ) -> anyhow::Result<()> {
        let why = match (&o.done, rank) {
            (Some(r), 0) => r.check_hosts(&o.record, hosts).err(),
            _ => None,
        };
        let mut refused = u8::from(why.is_some());
        world.process_at_rank(0).broadcast_into(&mut refused);
        if let Some(e) = why {
            return Err(e.into());
        }
        if refused == 1 {
            anyhow::bail!(
                "{}: rank 0 refused to resume it between these hosts (its error says why)",
                o.record.display()
            );
        }
        Ok(())
    }

    /// Each rank's host name, known to rank 0.
    fn exchange_hosts<C: Communicator>(world: &C, rank: i32) -> Vec<String> {
        let mine = mpi::environment::processor_name().unwrap_or_default();
        let mut buf = [0u8; 256];
        let b = mine.as_bytes();
        buf[..b.len().min(256)].copy_from_slice(&b[..b.len().min(256)]);
        if rank == 1 {
            world.process_at_rank(0).send(&buf[..]);
            return Vec::new();
        }
        world.process_at_rank(1).receive_into(&mut buf[..]);
        let other = String::from_utf8_lossy(&buf)
            .trim_end_matches('\0')
            .to_string();
        vec![mine, other]
    }

    /// One size: round trips per repeat chosen from a timed one, then `repeats` timings.
    fn one_size<C: Communicator>(
        world: &C,
        peer: &mpi::topology::Process<'_>,
        rank: i32,
        m: u64,
        o: &Options,
    ) -> Vec<f64> {
        let mut buf = vec![0u8; m as usize];
        let round_trips = |n: u64, buf: &mut [u8]| {
            for _ in 0..n {
                if rank == 0 {
                    peer.send(&buf[..]);
                    peer.receive_into(&mut buf[..]);
                } else {
                    peer.receive_into(&mut buf[..]);
                    peer.send(&buf[..]);
                }
            }
        };
        round_trips(2, &mut buf);
        let t0 = mpi::time();
        round_trips(1, &mut buf);
        let mut n = ((o.target_s / (mpi::time() - t0).max(1e-7)) as u64).clamp(2, 100_000);
        world.process_at_rank(0).broadcast_into(&mut n);
        (0..o.repeats)
            .map(|_| {
                world.barrier();
                let t0 = mpi::time();
                round_trips(n, &mut buf);
                (mpi::time() - t0) / (2.0 * n as f64)
            })
            .collect()
    }
}

#[cfg(feature = "mpi")]
pub use run::run;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_run_from_one_byte_to_the_largest() {
        let s = sizes(16 << 20);
        assert_eq!(s.first(), Some(&1));
        assert_eq!(s.last(), Some(&(16 << 20)));
        assert_eq!(s.len(), 25);
        assert_eq!(sizes(1000).last(), Some(&1000));
    }
}
