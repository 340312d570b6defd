//! HBase's single-dash long options (`-major`, `-compactOnce`), which clap cannot spell: the
//! command line is rewritten to their `--` forms before clap reads it.

use std::ffi::OsString;

/// `(subcommand, HBase's spelling, cairn's)`.
const SINGLE_DASH: &[(&str, &str, &str)] = &[
    ("compact", "-major", "--major"),
    ("compact", "-compactOnce", "--compactOnce"),
    ("compact", "-mapred", "--mapred"),
];

/// `args` (the program name first) with HBase's single-dash long options of the subcommand
/// given in `--` form; everything else, and everything after a `--`, unchanged.
pub fn long_forms(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    let Some(sub) = args.get(1).and_then(|s| s.to_str()).map(str::to_string) else {
        return args;
    };
    for a in args.iter_mut().skip(2) {
        if a == "--" {
            break;
        }
        if let Some((_, _, long)) = SINGLE_DASH
            .iter()
            .find(|(s, hbase, _)| *s == sub && a == hbase)
        {
            *a = OsString::from(long);
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(args: &[&str]) -> Vec<String> {
        long_forms(args.iter().map(OsString::from))
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect()
    }

    #[test]
    fn compaction_tool_spellings_become_long_options() {
        assert_eq!(
            rewrite(&["cairn", "compact", "-major", "-compactOnce", "-mapred", "d"]),
            [
                "cairn",
                "compact",
                "--major",
                "--compactOnce",
                "--mapred",
                "d"
            ]
        );
        // Other subcommands, and anything after `--`, are left alone.
        assert_eq!(
            rewrite(&["cairn", "hfile", "-major"]),
            ["cairn", "hfile", "-major"]
        );
        assert_eq!(
            rewrite(&["cairn", "compact", "--", "-major"]),
            ["cairn", "compact", "--", "-major"]
        );
        assert_eq!(rewrite(&["cairn"]), ["cairn"]);
    }
}
