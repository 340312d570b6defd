//! The process's CPU time, which benchmark reports divide work by.

use std::time::Duration;

/// User and system CPU time of this process so far (zero if the kernel will not say).
pub fn cpu_times() -> (Duration, Duration) {
    // SAFETY: `usage` is a valid, writable rusage for the duration of the call; a zeroed
    // rusage is a valid value of the type.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(usage.ru_utime), tv(usage.ru_stime))
}
