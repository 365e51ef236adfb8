//! Ctrl-C and SIGTERM during an engine run (`tpcc run`, `compare`): the
//! first signal asks the run to stop (the TPC-C driver ends its measured
//! window, the terminals finish the transaction in hand, the database is
//! closed cleanly and the partial summary printed); a second one quits at
//! once, as a crash the next open recovers from. The process then exits
//! with 128 + the signal number, as a shell reports a command it stopped.
//!
//! signal-hook's `flag` handlers only store into atomics (async-signal
//! safe); everything else happens on the run's own threads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

struct Interrupt {
    /// Set by the first SIGINT or SIGTERM.
    requested: Arc<AtomicBool>,
    /// The number of the last signal received (0: none).
    signal: Arc<AtomicUsize>,
}

static INTERRUPT: OnceLock<Interrupt> = OnceLock::new();

/// Installs the handlers (once per process); returns the flag the driver
/// polls.
pub fn install() -> Result<Arc<AtomicBool>, String> {
    if let Some(i) = INTERRUPT.get() {
        return Ok(Arc::clone(&i.requested));
    }
    let requested = Arc::new(AtomicBool::new(false));
    let signal = Arc::new(AtomicUsize::new(0));
    for sig in [SIGINT, SIGTERM] {
        let err = |e: std::io::Error| format!("cannot install a handler for signal {sig}: {e}");
        // Registered first, so it sees the flag as the previous signal left
        // it: the second signal exits, the first only sets the flag.
        flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&requested)).map_err(err)?;
        flag::register_usize(sig, Arc::clone(&signal), sig as usize).map_err(err)?;
        flag::register(sig, Arc::clone(&requested)).map_err(err)?;
    }
    let flag = Arc::clone(&requested);
    // A concurrent install lost the race: its handlers set its own flags,
    // which nobody reads; ours are the ones kept.
    let _ = INTERRUPT.set(Interrupt { requested, signal });
    Ok(flag)
}

/// True once a signal asked the run to stop.
pub fn requested() -> bool {
    INTERRUPT.get().is_some_and(|i| i.requested.load(Ordering::Relaxed))
}

/// The exit code for a run a signal stopped: 128 + the signal number.
pub fn exit_code() -> Option<u8> {
    let i = INTERRUPT.get()?;
    if !i.requested.load(Ordering::Relaxed) {
        return None;
    }
    u8::try_from(128 + i.signal.load(Ordering::Relaxed)).ok()
}
