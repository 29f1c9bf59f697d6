//! The verifier's vocabulary in `spec/gates.json` as types: gate steps, mutation kinds and
//! mutation targets. Each is deserialized from the table, so a typo in the table fails when
//! the table loads (not as a runtime error of an unrelated class), and every `match` on them
//! is exhaustive.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// Every value, in table order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The spelling the tables and the command line use.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// The value spelled `s`, if any.
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<$name> for serde_json::Value {
            fn from(v: $name) -> serde_json::Value {
                serde_json::Value::String(v.as_str().into())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}
pub(crate) use vocabulary;

vocabulary! {
    /// One step of `verify`, in report order (spec/verifier.md#gates).
    GateStep {
        /// Identity and borrowed objects against the template.
        Provenance => "provenance",
        /// The container re-opens and holds every mapped object.
        Inspect => "inspect",
        /// Ternary payloads are row-split planes.
        PayloadOrder => "payload_order",
        /// Row order of the first GDN and attention layers.
        RowOrder => "row_order",
        /// Row order over every layer (`--sweep`).
        RowOrderSweep => "row_order_sweep",
        /// The positional assembly audits.
        Assembly => "assembly",
        /// Sign objects and `prism.hadamard` metadata.
        Signs => "signs",
        /// Dense produced objects recomputed bit for bit.
        DenseValues => "dense_values",
        /// The embedding activation dump.
        Embedding => "embedding",
        /// Kernel dumps against the rotation math.
        EngineOracles => "engine_oracles",
    }
}

vocabulary! {
    /// One defect `mutate` can make (spec/gates.json `mutations`).
    MutationKind {
        /// Rows 0 and 1 swapped.
        SwapTwoRows => "swap-two-rows",
        /// Every row moved down by one.
        RotateRows => "rotate-rows",
        /// The perm48 bug: rows placed by the wrong head permutation.
        Perm48OnRows => "perm48-on-rows",
        /// Row 1 replaced by a copy of row 0.
        DuplicateAndDropRow => "duplicate-and-drop-row",
        /// The payload rewritten as interleaved ggml blocks.
        ScalesAtOffset0 => "scales-at-offset-0",
        /// The template identity's model id changed.
        WrongTemplateIdentity => "wrong-template-identity",
        /// A borrowed object removed.
        MissingBorrowedObject => "missing-borrowed-object",
        /// A layer object removed.
        MissingLayerObject => "missing-layer-object",
        /// One sign negated.
        FlippedSign => "flipped-sign",
        /// Widths stored as prefix sums.
        WrongHadamardWidths => "wrong-hadamard-widths",
        /// The template's weights id kept.
        WrongWeightsId => "wrong-weights-id",
        /// The embedding dump stored row-major.
        DumpRowMajor => "dump-row-major",
        /// Oracle dumps with the signs applied after H.
        DumpSignsAfterRotation => "dump-signs-after-rotation",
        /// Dumps computed with an unnormalized H.
        DumpUnnormalized => "dump-unnormalized",
        /// One dense value moved by one ulp.
        DenseOneUlp => "dense-one-ulp",
    }
}

vocabulary! {
    /// What a mutation breaks: the artifact file, or a dump directory.
    MutationTarget {
        /// A `.ninfer` file.
        Artifact => "artifact",
        /// `DIR/embedding` and `DIR/oracles`.
        Dumps => "dumps",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_spellings_round_trip_and_a_typo_fails_at_load() {
        for s in GateStep::ALL {
            assert_eq!(GateStep::from_name(s.as_str()), Some(*s));
            let json = serde_json::to_string(s).unwrap();
            assert_eq!(serde_json::from_str::<GateStep>(&json).unwrap(), *s);
        }
        for k in MutationKind::ALL {
            assert_eq!(MutationKind::from_name(k.as_str()), Some(*k));
        }
        // Negative control: a misspelled step or kind is a deserialization error, which is what
        // loading spec/gates.json reports.
        assert!(serde_json::from_str::<GateStep>("\"payload-order\"").is_err());
        assert!(serde_json::from_str::<MutationKind>("\"swap_two_rows\"").is_err());
        assert!(serde_json::from_str::<MutationTarget>("\"artefact\"").is_err());
        let typo = r#"{"kind": "swap-two-row", "target": "artifact", "object": null, "doc": "", "must_fail": []}"#;
        let e = serde_json::from_str::<super::super::MutationSpec>(typo).unwrap_err();
        assert!(e.to_string().contains("swap-two-row"), "{e}");
    }

    #[test]
    fn every_kind_and_step_is_in_the_table_and_only_those() {
        let g = super::super::gates();
        let steps: Vec<GateStep> = g.steps.iter().map(|s| s.step).collect();
        assert_eq!(steps, GateStep::ALL);
        let kinds: Vec<MutationKind> = g.mutations.iter().map(|m| m.kind).collect();
        assert_eq!(kinds, MutationKind::ALL);
    }
}
