//! Hints that bring memory into the CPU's caches before a dependent chain of loads needs it.
//!
//! A cached get is a chain of lookups (index entry, block, cell index, cell), each waiting on a
//! miss of its own. Within one step the addresses are often known together (every line of a
//! small cell index, a cell's head and its tail): asking for them at once lets the misses
//! overlap. A prefetch never faults and changes no value any load returns, so a wrong guess
//! costs one line of cache and nothing else.

/// Bytes per cache line on the CPUs cairn runs on.
pub(crate) const LINE: usize = 64;

/// Asks for the cache line holding `bytes[at]`; nothing when `at` is past the end.
#[inline(always)]
pub(crate) fn line(bytes: &[u8], at: usize) {
    if let Some(b) = bytes.get(at..) {
        hint(b);
    }
}

/// Asks for the first line of `bytes`, and the next one when `bytes` reaches into it.
#[inline(always)]
pub(crate) fn two_lines(bytes: &[u8]) {
    hint(bytes);
    if bytes.len() > LINE {
        hint(&bytes[LINE..]);
    }
}

/// Asks for every line of `bytes` when it spans at most `max_lines`; otherwise for the
/// lines a binary search over `n` entries of `entry` bytes from `start` probes first (the
/// top `levels` of its implicit tree), which every search of `bytes` goes through.
#[inline]
pub(crate) fn search_lines(bytes: &[u8], max_lines: usize, start: usize, n: usize, entry: usize) {
    if bytes.len() <= max_lines * LINE {
        for at in (0..bytes.len()).step_by(LINE) {
            hint(&bytes[at..]);
        }
        return;
    }
    hint(bytes);
    // Probes of the first levels: the middle, then the quarters, the eighths...
    let mut step = n;
    while step > 1 && (n / step) < max_lines {
        let half = step / 2;
        let mut i = half;
        while i < n {
            line(bytes, start + i * entry);
            i += step;
        }
        step = half;
    }
}

#[inline(always)]
fn hint(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64's baseline, so the instruction exists; a prefetch
        // never faults and reads nothing into the program, whatever the address (`bytes`
        // is a live slice here anyway).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr() as *const i8) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_accept_any_position_including_past_the_end() {
        let b = vec![7u8; 5000];
        line(&b, 0);
        line(&b, 4999);
        line(&b, 5000);
        line(&b, usize::MAX);
        two_lines(&b);
        two_lines(&b[..10]);
        two_lines(&[]);
        search_lines(&b, 32, 6, 400, 12);
        search_lines(&b[..100], 32, 6, 8, 12);
        search_lines(&[], 32, 0, 0, 12);
        // Hints change nothing.
        assert!(b.iter().all(|&x| x == 7));
    }
}
