//! Hadoop's variable expansion (`Configuration.substituteVars`): the left-most `${var}` (a
//! name without `}`, `$` or spaces) is replaced, again and again, by a Java system property,
//! an environment variable (`env.NAME`, `env.NAME:-default` when unset or empty,
//! `env.NAME-default` when unset) or another property; an unbound name stops expansion there;
//! a value that would contain its own reference stops it and gives the raw value (a loop);
//! more than [`MAX_SUBSTITUTIONS`] replacements is an error.

/// Hadoop's `MAX_SUBST`.
pub const MAX_SUBSTITUTIONS: usize = 20;

/// The byte range of the name in the left-most `${name}` of `s`, as Hadoop's
/// `findSubVariable` finds it.
fn find_variable(s: &str) -> Option<(usize, usize)> {
    let b = s.as_bytes();
    let mut from = 1;
    while let Some(rel) = s.get(from..).and_then(|t| t.find('{')) {
        let brace = from + rel;
        // The smallest expression, "${c}", needs two more bytes after the brace.
        if brace + 2 >= b.len() {
            return None;
        }
        if b[brace - 1] != b'$' {
            from = brace + 1;
            continue;
        }
        let start = brace + 1;
        let mut i = start;
        loop {
            match b.get(i) {
                None => return None,
                Some(b'}') if i > start => return Some((start, i)),
                Some(b'}' | b' ' | b'$') => {
                    from = i + 1;
                    break;
                }
                Some(_) => i += 1,
            }
        }
    }
    None
}

/// Java system properties a configuration file may name, as this process sees them.
fn system_property(name: &str) -> Option<String> {
    match name {
        // Java takes both from the password database entry of the process's user.
        "user.name" => passwd_entry()
            .map(|(name, _)| name)
            .or_else(|| std::env::var("USER").ok()),
        "user.home" => passwd_entry()
            .map(|(_, home)| home)
            .or_else(|| std::env::var("HOME").ok()),
        "user.dir" => std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string()),
        // Java's default on Linux, whatever TMPDIR says.
        "java.io.tmpdir" => Some("/tmp".to_string()),
        "file.separator" => Some("/".to_string()),
        "path.separator" => Some(":".to_string()),
        "line.separator" => Some("\n".to_string()),
        _ => None,
    }
}

/// The name and home directory of this process's real user in `/etc/passwd`, as Java's
/// `user.name` and `user.home` read them (Linux: the uid from `/proc/self/status`).
fn passwd_entry() -> Option<(String, String)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 6 && f[2] == uid).then(|| (f[0].to_string(), f[5].to_string()))
    })
}

/// `env.NAME`, `env.NAME:-default`, `env.NAME-default` (the text after `env.`), read as
/// Hadoop reads it: the first `:-` or `-` ends the name; a lone `:` is part of it.
fn environment(spec: &str) -> Option<String> {
    let get = |n: &str| std::env::var(n).ok();
    let b = spec.as_bytes();
    for i in 0..b.len() {
        if b[i] == b':' && b.get(i + 1) == Some(&b'-') {
            let default = &spec[i + 2..];
            return Some(
                get(&spec[..i])
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| default.into()),
            );
        }
        if b[i] == b'-' {
            let default = &spec[i + 1..];
            return Some(get(&spec[..i]).unwrap_or_else(|| default.into()));
        }
    }
    get(spec)
}

/// `expr` expanded, `lookup` giving other properties' raw values. `Err` past
/// [`MAX_SUBSTITUTIONS`].
pub(crate) fn substitute<'a>(
    expr: &str,
    lookup: impl Fn(&str) -> Option<&'a str>,
) -> Result<String, ()> {
    let mut eval = expr.to_string();
    for _ in 0..MAX_SUBSTITUTIONS {
        let Some((start, end)) = find_variable(&eval) else {
            return Ok(eval);
        };
        let var = &eval[start..end];
        let value = match var.strip_prefix("env.").filter(|v| !v.is_empty()) {
            Some(spec) => environment(spec),
            None => system_property(var),
        }
        .or_else(|| lookup(var).map(str::to_string));
        let Some(value) = value else {
            // Unbound: the rest stays as it is.
            return Ok(eval);
        };
        let reference = &eval[start - 2..end + 1];
        if value.contains(reference) {
            // A loop: the value as written.
            return Ok(expr.to_string());
        }
        eval = format!("{}{}{}", &eval[..start - 2], value, &eval[end + 1..]);
    }
    Err(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn props(name: &str) -> Option<&'static str> {
        match name {
            "a" => Some("A"),
            "ab" => Some("${a}${a}"),
            "loop" => Some("x${loop}"),
            "deep0" => Some("end"),
            "deep1" => Some("${deep0}"),
            "deep2" => Some("${deep1}"),
            _ if name.starts_with("deep") => {
                let n: usize = name[4..].parse().ok()?;
                Some(Box::leak(format!("${{deep{}}}", n - 1).into_boxed_str()))
            }
            _ => None,
        }
    }

    fn sub(s: &str) -> Result<String, ()> {
        substitute(s, props)
    }

    #[test]
    fn names_are_found_as_hadoop_finds_them() {
        assert_eq!(find_variable("${a}"), Some((2, 3)));
        assert_eq!(find_variable("x${ab}y"), Some((3, 5)));
        assert_eq!(find_variable("${}"), None);
        assert_eq!(find_variable("${a b}${c}"), Some((8, 9)));
        assert_eq!(find_variable("{a}"), None);
        assert_eq!(find_variable("$${a}"), Some((3, 4)));
        assert_eq!(find_variable("${${a}}"), Some((4, 5)));
        assert_eq!(find_variable("${a"), None);
    }

    #[test]
    fn expansion_follows_properties_and_stops_where_hadoop_stops() {
        assert_eq!(sub("x${a}y${ab}").unwrap(), "xAyAA");
        assert_eq!(sub("${unbound}/${a}").unwrap(), "${unbound}/${a}");
        assert_eq!(sub("${a}/${unbound}").unwrap(), "A/${unbound}");
        assert_eq!(sub("${loop}").unwrap(), "${loop}");
        assert_eq!(sub("${deep18}").unwrap(), "end");
        assert!(sub("${deep19}").is_err());
        assert_eq!(sub("no vars $ { }").unwrap(), "no vars $ { }");
    }

    #[test]
    fn system_properties_and_the_environment() {
        std::env::set_var("CAIRN_CONF_TEST_SET", "v");
        std::env::set_var("CAIRN_CONF_TEST_EMPTY", "");
        std::env::remove_var("CAIRN_CONF_TEST_UNSET");
        assert_eq!(sub("${env.CAIRN_CONF_TEST_SET}").unwrap(), "v");
        assert_eq!(sub("${env.CAIRN_CONF_TEST_UNSET:-d}").unwrap(), "d");
        assert_eq!(sub("${env.CAIRN_CONF_TEST_EMPTY:-d}").unwrap(), "d");
        assert_eq!(sub("${env.CAIRN_CONF_TEST_EMPTY-d}").unwrap(), "");
        assert_eq!(sub("${env.CAIRN_CONF_TEST_UNSET-d}").unwrap(), "d");
        assert_eq!(
            sub("${env.CAIRN_CONF_TEST_UNSET}").unwrap(),
            "${env.CAIRN_CONF_TEST_UNSET}"
        );
        assert_eq!(sub("${java.io.tmpdir}/hbase").unwrap(), "/tmp/hbase");
    }

    proptest! {
        #[test]
        fn expansion_never_panics(s in "[a-z${} :-]{0,40}") {
            let _ = sub(&s);
        }

        #[test]
        fn text_without_a_variable_is_unchanged(s in "[^$]{0,40}") {
            prop_assert_eq!(sub(&s).unwrap(), s);
        }
    }
}
