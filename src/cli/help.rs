//! `--help` for people, not for the parser: the commands grouped by who runs them (reader
//! authors, packer maintainers, kernel authors, security), each command with examples that run
//! on files the suite generates itself, and the exit codes. Applied to the derived
//! `clap::Command` at start-up ([`decorate`]), so the argument definitions stay where they are.

/// (audience heading, commands in the order they are listed).
pub(crate) const GROUPS: &[(&str, &[&str])] = &[
    (
        "Reader authors (prove a GGUF/.ninfer loader decodes exactly)",
        &[
            "check-reader",
            "reader-adapter",
            "corpus",
            "inspect",
            "decode",
        ],
    ),
    (
        "Packer maintainers (GGUF -> .ninfer, and the proof it is right)",
        &[
            "synth",
            "synth-template",
            "pack",
            "unpack",
            "verify",
            "mutate",
            "diff",
            "dump-reference",
            "transcode",
            "demo",
        ],
    ),
    (
        "Kernel authors (CUDA kernels against the spec)",
        &["check-kernel"],
    ),
    (
        "Security and tooling (hostile inputs, spec tables, oracles, benchmarks)",
        &["spec", "oracle-gguf", "bench-decode"],
    ),
];

/// Examples per command (each runs on generated files; `B=target/release/ninfer-ternary`).
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    ("check-reader", "  $B check-reader --adapter 'python3 my_reader.py' --capabilities caps.json\n  $B check-reader --adapter ./reader --filter 'codec/*pq2_0*' --json report.json\n  $B check-reader --list-features                     # the feature vocabulary for capabilities\nExit 0: every declared case passed; 1: a case failed; 2: usage/corpus/adapter error."),
    ("reader-adapter", "  $B reader-adapter conformance/codec/y_pq2_0_code3.bin < request.json\n  $B reader-adapter --persistent                      # JSON lines on stdin (PROTOCOL.md 4.6)"),
    ("corpus", "  $B corpus generate -o conformance --check          # byte-identical to the checked-in corpus\n  $B corpus generate -o /tmp/corpus"),
    ("inspect", "  $B inspect nano.gguf --mode spec\n  $B inspect nano.ninfer --json -                      # typed JSON on stdout\n  $B inspect nano.gguf --json report.json [--force]"),
    ("decode", "  $B decode nano.gguf blk.0.attn_qkv.weight -o qkv.npy\n  $B decode nano.ninfer text/layers/0/gdn/value_z --rows 0:8 -o vz.npy"),
    ("synth", "  $B synth --profile bonsai-nano --format ptq1_0 --seed 1 -o nano.gguf\n  $B synth --profile bonsai-2-27b --layers 0,3 -o reduced.gguf"),
    ("synth-template", "  $B synth-template --profile bonsai-nano -o template.ninfer"),
    ("pack", "  $B pack --gguf nano.gguf --check                   # pre-flight only\n  $B pack --gguf nano.gguf --template template.ninfer -o nano.ninfer"),
    ("unpack", "  $B unpack nano.ninfer --gguf nano.gguf            # exit 1 if any tensor differs"),
    ("verify", "  $B verify nano.ninfer --gguf nano.gguf --template template.ninfer --sweep\n  $B verify nano.ninfer --gguf nano.gguf --json report.json --verbose\n  $B verify m.ninfer --gguf reduced.gguf --minimal      # a pack --minimal artifact (skips named)\nExit 0: every gate passed; 1: a gate failed; 2: the inputs could not be judged."),
    ("mutate", "  $B mutate nano.ninfer --kind perm48-on-rows -o broken.ninfer\n  $B verify broken.ninfer --gguf nano.gguf            # must fail row_order"),
    ("diff", "  $B diff golden.ninfer new.ninfer                    # where two artifacts differ, per object\n  $B diff a.gguf b.gguf --json -\nExit 0: identical; 1: they differ; 2: the inputs could not be compared."),
    ("dump-reference", "  $B dump-reference nano.ninfer -o dumps\n  $B dump-reference nano.ninfer --format engine -o edump"),
    ("transcode", "  $B transcode nano.gguf --to pq2_0 -o nano-pq2.gguf\n  $B transcode legacy.gguf --retag-42 -o retagged.gguf"),
    ("demo", "  $B demo --dir out/demo                              # synth, pack, unpack proof, verify + a mutant"),
    ("check-kernel", "  $B check-kernel --builtin --tier host               # every shipped kernel\n  $B check-kernel --source k.cu --class mul_mat_vec --format pq2_0 --entry my_kernel\n  $B check-kernel --source k.cu --abi k.abi.json --precision bf16-in+bf16-out --json -\nExit 0: all cases pass; 1: a case failed (or no compile/entry/signature); 2: usage or tier unavailable (SKIPPED)."),
    ("spec", "  $B spec geometry                                    # a spec table as Markdown\n  $B spec --check                                     # generated regions of spec/*.md up to date"),
    ("oracle-gguf", "  $B oracle-gguf -o oracle.gguf                       # the fixture scripts/oracle_gguf_py.py decodes"),
    ("bench-decode", "  $B bench-decode                                     # single-thread decode rate and copy bandwidth"),
];

/// Shown after the command list of `ninfer-ternary --help`.
fn top_after_help() -> String {
    let mut s = String::from("Commands by audience:\n");
    for (heading, cmds) in GROUPS {
        s.push_str(&format!("  {heading}:\n    {}\n", cmds.join(", ")));
    }
    s.push_str(
        "\nExit codes: 0 success; 1 a check ran and failed (verify, unpack, pack --check,\n\
         check-reader, check-kernel); 2 usage, input, output or environment error. Every error\n\
         line is `error: [class] field at byte N: why`, class from spec/errors.json; with --json\n\
         the report holds the same class (spec/schemas/error-report.schema.json).\n\
         Examples: `ninfer-ternary <command> --help`. Docs: README.md, conformance/PROTOCOL.md, spec/.",
    );
    s
}

/// The derived command with groups (as display order), examples and exit codes added.
pub(crate) fn decorate(mut cmd: clap::Command) -> clap::Command {
    cmd = cmd.after_help(top_after_help());
    let mut order = 0;
    for (_, cmds) in GROUPS {
        for name in *cmds {
            order += 1;
            let ex = EXAMPLES
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, e)| *e)
                .unwrap_or("");
            if cmd.find_subcommand(name).is_some() {
                cmd = cmd.mut_subcommand(*name, |c| {
                    c.display_order(order)
                        .after_help(format!("Examples (B=target/release/ninfer-ternary):\n{ex}"))
                });
            }
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Commands of `cmd` without exactly one group or without examples, and groups naming a
    /// command `cmd` does not have.
    fn problems(cmd: &clap::Command) -> Vec<String> {
        let grouped: Vec<&str> = GROUPS.iter().flat_map(|(_, c)| c.iter().copied()).collect();
        let mut out = Vec::new();
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            if grouped.iter().filter(|g| **g == name).count() != 1 {
                out.push(format!("`{name}` must be in exactly one audience group"));
            }
            if !EXAMPLES
                .iter()
                .any(|(e, t)| *e == name && t.contains("$B "))
            {
                out.push(format!("`{name}` has no example"));
            }
        }
        for g in grouped {
            if cmd.find_subcommand(g).is_none() {
                out.push(format!("group names unknown command `{g}`"));
            }
        }
        out
    }

    #[test]
    fn every_command_has_one_group_and_examples() {
        let cmd = decorate(crate::cli::Cli::command());
        assert_eq!(problems(&cmd), Vec::<String>::new());
        assert!(cmd.get_subcommands().all(|s| s.get_after_help().is_some()));
        // Negative control: a new command nobody grouped, and a grouped command removed.
        let extra = cmd.clone().subcommand(clap::Command::new("new-thing"));
        assert_eq!(problems(&extra).len(), 2, "{:?}", problems(&extra));
        let mut fewer = clap::Command::new("x");
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "verify") {
            fewer = fewer.subcommand(sub.clone());
        }
        assert_eq!(problems(&fewer), ["group names unknown command `verify`"]);
    }

    #[test]
    fn every_enum_option_lists_its_values() {
        let cmd = decorate(crate::cli::Cli::command());
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments() {
                let values = arg.get_possible_values();
                if values.is_empty() || !arg.get_action().takes_values() {
                    continue;
                }
                let mut c = cmd.clone();
                let help = c
                    .find_subcommand_mut(sub.get_name())
                    .map(|s| s.render_long_help().to_string())
                    .unwrap_or_default();
                for v in values.iter().filter(|v| !v.is_hide_set()) {
                    assert!(
                        help.contains(v.get_name()),
                        "{} --{}: value `{}` not in its help",
                        sub.get_name(),
                        arg.get_id(),
                        v.get_name()
                    );
                }
            }
        }
    }
}
