//! A real hybrid workload for `jouleplan profile`: an explicit 2-D heat-equation stencil
//! (5-point Jacobi) on an N x N grid, rows split over `OMP_NUM_THREADS` threads of a pool
//! created once and kept for the whole run (as an OpenMP runtime does: its workers wait
//! between parallel regions instead of being spawned anew); with the `mpi` feature, rows are
//! also split over MPI ranks with a halo exchange every iteration (the messages mpiP counts).
//!
//! Until 2026-11-22 it spawned its threads anew every iteration, which on a 16-core node made
//! 1024 x 1024 slower at 16 threads than at 8 (`tests/data/fixtures/cpu-16core` keeps those
//! recordings as a test of a model that must explain overhead).
//!
//! ```text
//! cargo build --release --example heat
//! jouleplan profile --cores 1,2 --iterations 200 -- target/release/examples/heat 1024 200
//! ```
//! Arguments: grid size N (default 1024), iterations (default 200). It prints the checksum of
//! the final grid on stdout, so a wrong result is visible.

use rayon::prelude::*;
use std::env;

#[cfg(feature = "mpi")]
use mpi::traits::*;

fn threads() -> usize {
    env::var("OMP_NUM_THREADS")
        .ok()
        .and_then(|v| v.split(',').next()?.trim().parse().ok())
        .filter(|&t| t > 0)
        .unwrap_or(1)
}

fn arg(i: usize, default: usize) -> usize {
    match env::args().nth(i) {
        None => default,
        Some(s) => match s.parse() {
            Ok(v) if v > 0 => v,
            _ => {
                eprintln!("heat: argument {i} must be a positive integer, got {s:?}");
                std::process::exit(2);
            }
        },
    }
}

/// One Jacobi sweep over `rows` interior rows of `cur` (which has one halo row above and below),
/// split into `t` equal blocks of rows run on the pool's `t` threads (a static schedule).
fn sweep(pool: &rayon::ThreadPool, cur: &[f64], next: &mut [f64], n: usize, rows: usize, t: usize) {
    let chunk = rows.div_ceil(t).max(1);
    // next holds rows 1..=rows of the padded grid.
    pool.install(|| {
        next[n..(rows + 1) * n]
            .par_chunks_mut(chunk * n)
            .enumerate()
            .with_max_len(1)
            .for_each(|(k, out)| {
                let first = 1 + k * chunk;
                for (r, row) in out.chunks_mut(n).enumerate() {
                    let i = first + r;
                    for j in 1..n - 1 {
                        row[j] = 0.25
                            * (cur[(i - 1) * n + j]
                                + cur[(i + 1) * n + j]
                                + cur[i * n + j - 1]
                                + cur[i * n + j + 1]);
                    }
                    row[0] = cur[i * n];
                    row[n - 1] = cur[i * n + n - 1];
                }
            });
    });
}

fn main() {
    let n = arg(1, 1024).max(3);
    let iters = arg(2, 200);
    let t = threads();
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(t).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("heat: cannot start {t} threads: {e}");
            std::process::exit(1);
        }
    };

    #[cfg(feature = "mpi")]
    let universe = match mpi::initialize() {
        Some(u) => u,
        None => {
            eprintln!("heat: MPI could not be initialised");
            std::process::exit(1);
        }
    };
    #[cfg(feature = "mpi")]
    let (rank, size) = {
        let w = universe.world();
        (w.rank() as usize, w.size() as usize)
    };
    #[cfg(not(feature = "mpi"))]
    let (rank, size) = (0usize, 1usize);

    // Rows of the global grid owned by this rank (interior rows 1..n-1 split evenly).
    let interior = n - 2;
    let lo = 1 + interior * rank / size;
    let hi = 1 + interior * (rank + 1) / size;
    let rows = hi - lo;
    // Padded local grid: halo row, `rows` rows, halo row. Hot top edge of the global grid.
    let mut cur = vec![0.0f64; (rows + 2) * n];
    if lo == 1 {
        cur[..n].fill(100.0);
    }
    let mut next = cur.clone();
    for _ in 0..iters {
        #[cfg(feature = "mpi")]
        {
            use mpi::point_to_point as p2p;
            let w = universe.world();
            let (top, rest) = cur.split_at_mut(n);
            let (mid, bottom) = rest.split_at_mut(rows * n);
            if rank > 0 {
                let up = w.process_at_rank(rank as i32 - 1);
                p2p::send_receive_into(&mid[..n], &up, top, &up);
            }
            if rank + 1 < size {
                let down = w.process_at_rank(rank as i32 + 1);
                p2p::send_receive_into(&mid[(rows - 1) * n..], &down, bottom, &down);
            }
        }
        sweep(&pool, &cur, &mut next, n, rows, t);
        std::mem::swap(&mut cur, &mut next);
        // Keep the boundary rows fixed.
        if lo == 1 {
            cur[..n].fill(100.0);
        }
    }
    let local: f64 = cur[n..(rows + 1) * n].iter().sum();
    #[cfg(feature = "mpi")]
    let total = {
        let mut total = 0.0;
        universe.world().all_reduce_into(
            &local,
            &mut total,
            mpi::collective::SystemOperation::sum(),
        );
        total
    };
    #[cfg(not(feature = "mpi"))]
    let total = local;
    if rank == 0 {
        println!(
            "heat: {n}x{n}, {iters} iterations, {size} ranks x {t} threads, checksum {total:.6e}"
        );
    }
}
