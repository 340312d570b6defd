//! A user's groups as Hadoop's default group mapping (`ShellBasedUnixGroupsMapping`, which
//! runs `id -gn USER; id -Gn USER`) finds them: the operating system's groups of the account
//! with that name — its primary group and every group listing it — or none when there is no
//! such account. Looked up through the C library's name service, as `id` does, and kept for
//! `hadoop.security.groups.cache.secs` (300 s), as Hadoop's `Groups` cache keeps them.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Hadoop's `hadoop.security.groups.cache.secs` default.
pub const DEFAULT_CACHE: Duration = Duration::from_secs(300);

/// Users whose groups are remembered at most; past that the cache starts over (names come
/// from clients, so the cache must not grow with them).
const MAX_CACHED: usize = 4096;

/// A user's groups and when they were looked up.
type Remembered = (Instant, Arc<[String]>);

/// Group look-ups, remembered for a while.
pub struct Groups {
    ttl: Duration,
    cache: Mutex<HashMap<String, Remembered>>,
}

impl Groups {
    /// Look-ups remembered for `ttl` (zero: never remembered).
    pub fn new(ttl: Duration) -> Groups {
        Groups {
            ttl,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The groups of the account `user`, primary group first; empty when there is none.
    pub fn of(&self, user: &str) -> Arc<[String]> {
        if let Some((at, groups)) = self.cache.lock().get(user) {
            if at.elapsed() < self.ttl {
                return groups.clone();
            }
        }
        let groups: Arc<[String]> = os_groups(user).into();
        if !self.ttl.is_zero() {
            let mut cache = self.cache.lock();
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
            cache.insert(user.to_string(), (Instant::now(), groups.clone()));
        }
        groups
    }
}

/// Buffer for one passwd or group entry; grown when the C library says it is too small.
const ENTRY_BUFFER: usize = 4096;
/// The largest entry buffer tried (a group with very many members).
const MAX_ENTRY_BUFFER: usize = 1 << 20;

/// The primary group id of the account `user`, if there is one.
fn primary_gid(user: &CStr) -> Option<libc::gid_t> {
    let mut size = ENTRY_BUFFER;
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: an all-zero passwd is a valid value to be filled in.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `user` is NUL-terminated; `pwd`, `buf` (of `size` bytes) and `found` live
        // for the call, which writes only within them.
        let rc = unsafe {
            libc::getpwnam_r(
                user.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr().cast(),
                size,
                &mut found,
            )
        };
        if rc == libc::ERANGE && size < MAX_ENTRY_BUFFER {
            size *= 2;
            continue;
        }
        return (rc == 0 && !found.is_null()).then_some(pwd.pw_gid);
    }
}

/// The name of group `gid` (its number when it has no name, as `id -Gn` prints it).
fn group_name(gid: libc::gid_t) -> String {
    let mut size = ENTRY_BUFFER;
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: an all-zero group is a valid value to be filled in.
        let mut grp: libc::group = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::group = std::ptr::null_mut();
        // SAFETY: `grp`, `buf` (of `size` bytes) and `found` live for the call, which writes
        // only within them.
        let rc =
            unsafe { libc::getgrgid_r(gid, &mut grp, buf.as_mut_ptr().cast(), size, &mut found) };
        if rc == libc::ERANGE && size < MAX_ENTRY_BUFFER {
            size *= 2;
            continue;
        }
        if rc == 0 && !found.is_null() && !grp.gr_name.is_null() {
            // SAFETY: on success `gr_name` points at a NUL-terminated string inside `buf`,
            // which is still alive here.
            return unsafe { CStr::from_ptr(grp.gr_name) }
                .to_string_lossy()
                .into_owned();
        }
        return gid.to_string();
    }
}

/// The groups of the account `user` from the operating system, primary first.
pub fn os_groups(user: &str) -> Vec<String> {
    let Ok(name) = CString::new(user) else {
        return Vec::new();
    };
    let Some(primary) = primary_gid(&name) else {
        return Vec::new();
    };
    let mut n: libc::c_int = 64;
    let gids = loop {
        let mut gids = vec![0 as libc::gid_t; n as usize];
        let asked = n;
        // SAFETY: `name` is NUL-terminated; `gids` has room for `n` ids, which the call
        // writes at most, and it sets `n` to the number it found.
        let rc = unsafe { libc::getgrouplist(name.as_ptr(), primary, gids.as_mut_ptr(), &mut n) };
        if rc >= 0 {
            gids.truncate(n.max(0) as usize);
            break gids;
        }
        // Too small: `n` now says how many there are (glibc), or grow it ourselves.
        n = n.max(asked.saturating_mul(2));
        if n > 1 << 16 {
            return vec![group_name(primary)];
        }
    };
    let mut out = vec![group_name(primary)];
    for g in gids {
        if g != primary {
            let name = group_name(g);
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The name of the account the server runs as (HBase counts it among the superusers).
pub fn current_user() -> Option<String> {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut size = ENTRY_BUFFER;
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: an all-zero passwd is a valid value to be filled in.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pwd`, `buf` (of `size` bytes) and `found` live for the call, which
        // writes only within them.
        let rc =
            unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr().cast(), size, &mut found) };
        if rc == libc::ERANGE && size < MAX_ENTRY_BUFFER {
            size *= 2;
            continue;
        }
        if rc == 0 && !found.is_null() && !pwd.pw_name.is_null() {
            // SAFETY: on success `pw_name` points at a NUL-terminated string in `buf`.
            return Some(
                unsafe { CStr::from_ptr(pwd.pw_name) }
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        return None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// What `id` says, the reference Hadoop's shell mapping reads.
    fn id(args: &[&str]) -> Option<Vec<String>> {
        let out = Command::new("id").args(args).output().ok()?;
        out.status.success().then(|| {
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
    }

    #[test]
    fn groups_are_what_id_reports() {
        let me = current_user().expect("the server's user has a name");
        assert_eq!(Some(vec![me.clone()]), id(&["-un"]));
        for user in [me.as_str(), "root", "nobody", "daemon"] {
            let Some(mut want) = id(&["-Gn", user]) else {
                continue;
            };
            let primary = id(&["-gn", user]).unwrap();
            let mut got = os_groups(user);
            assert_eq!(got[0], primary[0], "{user}: the primary group first");
            got.sort();
            want.sort();
            assert_eq!(got, want, "{user}");
        }
        assert!(os_groups("no-such-user-for-cairn-tests").is_empty());
        assert!(os_groups("nul\0inside").is_empty());
    }

    #[test]
    fn look_ups_are_remembered_for_the_ttl() {
        let me = current_user().unwrap();
        let g = Groups::new(Duration::from_secs(60));
        let a = g.of(&me);
        assert!(Arc::ptr_eq(&a, &g.of(&me)), "served from the cache");
        let none = Groups::new(Duration::ZERO);
        assert!(!Arc::ptr_eq(&none.of(&me), &none.of(&me)));
    }
}
