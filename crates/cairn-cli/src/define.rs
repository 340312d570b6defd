//! HBase's `-D NAME=VALUE` properties, as every subcommand takes them (Hadoop's
//! `GenericOptionsParser`): split once here, each subcommand deciding what its names mean.

use anyhow::Result;

/// A `-D` argument split at its first `=`: the name trimmed, the value as given (it may hold
/// `=` itself). No `=`, or an empty name, is an error naming the argument.
pub fn split(arg: &str) -> Result<(&str, &str)> {
    Ok(cairn_conf::split_define(arg)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_splits_at_its_first_equals_sign() {
        assert_eq!(split(" a.b = c").unwrap(), ("a.b", " c"));
        assert_eq!(split("k=v=w").unwrap(), ("k", "v=w"));
        assert_eq!(split("k=").unwrap(), ("k", ""));
        let e = split("nonsense").unwrap_err().to_string();
        assert_eq!(e, "-D nonsense: expected NAME=VALUE");
        let e = split(" =v").unwrap_err().to_string();
        assert!(e.contains("the name is empty"), "{e}");
    }
}
