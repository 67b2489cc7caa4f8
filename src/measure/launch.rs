//! Starting the measured program: `fork`, bind to the chosen cores, wait for the go-ahead, then
//! `exec`. Counters are opened on the child between the two (so `enable_on_exec` starts them at
//! the program's first instruction), and the child leads its own process group so a timeout or
//! Ctrl-C stops the whole tree. The tail of its stderr is kept for the record.

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Process group of the run in progress (0 when none), for the signal handler.
pub static CURRENT_PGID: AtomicI32 = AtomicI32::new(0);

/// The signal that stopped the sweep (SIGINT, SIGTERM or SIGHUP; 0 while none came).
pub static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// How long a stopped program gets between SIGTERM and SIGKILL unless `profile --grace` says
/// otherwise: shorter than Slurm's default `KillWait` (30 s), so jouleplan saves its runs
/// before Slurm kills it.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(10);

/// The handler of SIGINT, SIGTERM and SIGHUP (async-signal-safe: atomics and `kill`): the
/// first asks the run's process group to stop (SIGTERM), a second kills it (SIGKILL).
extern "C" fn on_stop(sig: libc::c_int) {
    let first = STOP_SIGNAL
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok();
    let pg = CURRENT_PGID.load(Ordering::SeqCst);
    if pg > 0 {
        let how = if first { libc::SIGTERM } else { libc::SIGKILL };
        // SAFETY: signals the measured program's own process group.
        unsafe { libc::kill(-pg, how) };
    }
}

/// A stop signal's name as users know it.
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "Ctrl-C, SIGINT",
        libc::SIGTERM => "SIGTERM: scancel or the job's time limit",
        libc::SIGHUP => "SIGHUP: the terminal closed",
        _ => "stopped",
    }
}

/// Installs [`on_stop`] for SIGINT, SIGTERM (Slurm's `scancel` and time limit) and SIGHUP.
pub fn install_stop_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the handler only touches atomics and calls kill(2).
            unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
        }
    });
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Program and arguments (`argv[0]` is looked up in `PATH`).
    pub argv: Vec<String>,
    /// Environment variables set on top of jouleplan's own.
    pub env: Vec<(String, String)>,
    /// Logical CPUs the child is bound to (empty: not bound).
    pub cpus: Vec<usize>,
    /// Let the child's stdout through to ours and echo its stderr (which is still kept);
    /// otherwise its stdout goes to /dev/null.
    pub show_output: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Exit {
    /// Exit status, when it exited.
    pub code: Option<i32>,
    /// Signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Whether jouleplan stopped it at the time limit.
    pub timed_out: bool,
    /// Wall time from release to exit, seconds.
    pub wall_s: f64,
    /// User + system CPU time of the child and its waited-for descendants (rusage), seconds.
    pub rusage_cpu_s: f64,
    /// The last lines of its stderr.
    pub stderr_tail: String,
}

impl Exit {
    /// Whether the run succeeded.
    pub fn ok(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }

    /// One line saying how it failed.
    pub fn failure(&self) -> String {
        if self.timed_out {
            "stopped at the time limit".into()
        } else if let Some(s) = self.signal {
            format!("killed by signal {s}")
        } else {
            format!("exit status {}", self.code.unwrap_or(-1))
        }
    }
}

/// A child that exists but has not called `exec` yet.
pub struct Paused {
    /// Its pid (and process group).
    pub pid: i32,
    go: Option<OwnedFd>,
    err: Option<OwnedFd>,
    echo: bool,
}

fn cstr(s: &str) -> std::io::Result<CString> {
    CString::new(s).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{s:?} holds a NUL byte"),
        )
    })
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both are fresh descriptors we own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The program's arguments and its whole environment (jouleplan's, with the spec's on top) as
/// C strings.
fn c_strings(spec: &Spec) -> std::io::Result<(Vec<CString>, Vec<CString>)> {
    let argv: Vec<CString> = spec
        .argv
        .iter()
        .map(|a| cstr(a))
        .collect::<Result<_, _>>()?;
    let mut envs: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !spec.env.iter().any(|(k2, _)| k2 == k))
        .collect();
    envs.extend(spec.env.iter().cloned());
    let envp: Vec<CString> = envs
        .iter()
        .map(|(k, v)| cstr(&format!("{k}={v}")))
        .collect::<Result<_, _>>()?;
    Ok((argv, envp))
}

/// Forks the child, paused before `exec`.
pub fn spawn_paused(spec: &Spec) -> std::io::Result<Paused> {
    use std::os::fd::AsRawFd;
    if spec.argv.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no command to run",
        ));
    }
    // Everything the child needs is built before fork: after it, only async-signal-safe calls.
    let (argv, envp) = c_strings(spec)?;
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|c| c.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in &spec.cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let bind = !spec.cpus.is_empty();
    let show = spec.show_output;
    let devnull = cstr("/dev/null")?;
    let (go_r, go_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child calls only async-signal-safe functions before exec or _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        unsafe {
            // Its copies of the parent's pipe ends closed, a child whose parent dies before
            // the go-ahead reads EOF and exits instead of waiting forever; and the program
            // dies with the thread that started it (a SIGKILLed profile leaves nothing).
            libc::close(go_w.as_raw_fd());
            libc::close(err_r.as_raw_fd());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(125);
            }
            libc::setpgid(0, 0);
            if bind {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            let null = libc::open(devnull.as_ptr(), libc::O_RDWR);
            if null >= 0 {
                libc::dup2(null, 0);
                if !show {
                    libc::dup2(null, 1);
                }
            }
            libc::dup2(err_w.as_raw_fd(), 2);
            let mut b = 0u8;
            let n = libc::read(go_r.as_raw_fd(), (&mut b as *mut u8).cast(), 1);
            if n != 1 {
                libc::_exit(125);
            }
            libc::execvpe(argv_p[0], argv_p.as_ptr(), envp_p.as_ptr());
            let msg = b"jouleplan: exec failed: the command was not found or is not executable\n";
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(127);
        }
    }
    drop(go_r);
    drop(err_w);
    Ok(Paused {
        pid,
        go: Some(go_w),
        err: Some(err_r),
        echo: show,
    })
}

/// Reads the program's stderr to its end on a thread of its own (echoing it when asked),
/// keeping the last 8-16 KiB; the tail arrives on the returned channel.
fn read_tail(err: Option<std::fs::File>, echo: bool) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 8192];
        if let Some(mut err) = err {
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if echo {
                    use std::io::Write;
                    let _ = std::io::stderr().write_all(&buf[..n]);
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > 16384 {
                    tail.drain(..tail.len() - 8192);
                }
            }
        }
        let _ = tx.send(tail);
    });
    rx
}

impl Paused {
    /// Lets the child `exec`, then waits for it (up to `limit`), keeping its stderr tail. Once
    /// a stop signal came, the program's group gets `grace` between SIGTERM and SIGKILL.
    pub fn release_and_wait(
        mut self,
        limit: Option<Duration>,
        grace: Duration,
    ) -> std::io::Result<Exit> {
        use std::os::fd::AsRawFd;
        CURRENT_PGID.store(self.pid, Ordering::SeqCst);
        let rx = read_tail(self.err.take().map(std::fs::File::from), self.echo);
        let start = Instant::now();
        if let Some(go) = self.go.take() {
            let b = [1u8];
            // SAFETY: writing one byte from a live buffer to our pipe.
            unsafe { libc::write(go.as_raw_fd(), b.as_ptr().cast(), 1) };
        }
        let mut status = 0;
        // SAFETY: rusage is plain data filled by wait4.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let mut timed_out = false;
        let mut stopped_at: Option<Instant> = None;
        loop {
            let r = unsafe { libc::wait4(self.pid, &mut status, libc::WNOHANG, &mut ru) };
            if r == self.pid {
                break;
            }
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            if STOP_SIGNAL.load(Ordering::SeqCst) != 0 {
                let at = *stopped_at.get_or_insert_with(Instant::now);
                if at.elapsed() > grace {
                    // SAFETY: signals the child's own process group.
                    unsafe { libc::kill(-self.pid, libc::SIGKILL) };
                }
            }
            if !timed_out && limit.is_some_and(|l| start.elapsed() > l) {
                timed_out = true;
                // SAFETY: signals the child's own process group.
                unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let wall_s = start.elapsed().as_secs_f64();
        CURRENT_PGID.store(0, Ordering::SeqCst);
        // Leftover members of the group (daemonised helpers) must not outlive the run.
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        // A process that left the group (setsid) may hold stderr open: the run does not wait
        // for it beyond a moment after the program's exit, and says so.
        let tail = rx.recv_timeout(Duration::from_secs(2)).unwrap_or_else(|_| {
            b"jouleplan: a process the program started outside its group still holds its \
              stderr; not waited for"
                .to_vec()
        });
        let text = String::from_utf8_lossy(&tail);
        let lines: Vec<&str> = text.lines().collect();
        let stderr_tail = lines[lines.len().saturating_sub(20)..].join("\n");
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Ok(Exit {
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            timed_out,
            wall_s,
            rusage_cpu_s: tv(ru.ru_utime) + tv(ru.ru_stime),
            stderr_tail,
        })
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        // Dropped without release (a backend failed): the child reads EOF and exits 125.
        if self.go.is_some() {
            self.go = None;
            let mut status = 0;
            // SAFETY: reaps our own child.
            unsafe { libc::waitpid(self.pid, &mut status, 0) };
        }
    }
}
