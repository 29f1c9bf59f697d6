//! Checks of the deep targets (also run by the root crate's regression replay):
//! the codec fast paths against the scalar references, and the packer on mutated nano GGUFs.

use ninfer_ternary::codec::Codec;
use ninfer_ternary::ninfer::Artifact;
use ninfer_ternary::pack::{pack_bytes, unpack, PackOptions};
use std::sync::OnceLock;

/// `data[0]` picks a codec; the rest (whole blocks only) is decoded by the fast path and the
/// reference, which must agree bit for bit (a NaN equals a NaN). Stats and validation must
/// not panic; PTQ1_0/TQ1_0 canonical blocks re-encode to themselves.
pub fn check_codec(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let c = Codec::ALL[sel as usize % Codec::ALL.len()];
    let n = rest.len() / c.block_bytes() * c.block_bytes();
    let bytes = &rest[..n];
    let elems = n / c.block_bytes() * c.block_elems();
    let (mut fast, mut slow) = (vec![0f32; elems], vec![0f32; elems]);
    c.decode(bytes, &mut fast).expect("whole blocks decode");
    c.decode_reference(bytes, &mut slow)
        .expect("whole blocks decode");
    for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{}: element {i}: fast {a:?} ({:#010x}) vs reference {b:?} ({:#010x})",
            c.name(),
            a.to_bits(),
            b.to_bits()
        );
    }
    let _ = c.validate(bytes);
    let _ = c.stats(bytes);
    // Wrong lengths are errors, never panics.
    if !rest.is_empty() && rest.len() % c.block_bytes() != 0 {
        assert!(c.decode(rest, &mut vec![0f32; elems]).is_err());
    }
    if c == Codec::Ptq1_0 {
        use ninfer_ternary::codec::ptq1;
        for blk in bytes.chunks_exact(ptq1::BLOCK_BYTES) {
            let b: &ptq1::Block = blk.try_into().expect("exact chunk");
            if ptq1::is_canonical_block(b) {
                assert_eq!(&ptq1::encode_block(&ptq1::trits(b), ptq1::scale_bits(b)), b);
            }
        }
    }
}

/// The class `validate` refuses a codec input with, if any (for spec-rule coverage).
pub fn codec_error(data: &[u8]) -> Option<ninfer_ternary::Error> {
    let (&sel, rest) = data.split_first()?;
    let c = Codec::ALL[sel as usize % Codec::ALL.len()];
    let n = rest.len() / c.block_bytes() * c.block_bytes();
    c.validate(&rest[..n]).err()
}

/// The edited micro GGUF of a `pack_nano` input (see [`check_pack`]).
fn edited_micro(data: &[u8]) -> Option<Vec<u8>> {
    let (&sel, edits) = data.split_first()?;
    let mut gguf = micro().ggufs[sel as usize % 2].clone();
    for e in edits.chunks_exact(5).take(16) {
        let at = u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize % gguf.len();
        gguf[at] ^= e[4];
    }
    Some(gguf)
}

/// The error the packer refuses a `pack_nano` input with, if any (for spec-rule coverage).
pub fn pack_error(data: &[u8]) -> Option<ninfer_ternary::Error> {
    let gguf = edited_micro(data)?;
    pack_bytes(&gguf, &micro().template, &PackOptions::default()).err()
}

struct Micro {
    ggufs: [Vec<u8>; 2],
    template: Vec<u8>,
}

fn micro() -> &'static Micro {
    static M: OnceLock<Micro> = OnceLock::new();
    M.get_or_init(|| {
        use crate::nano::{model_of, template_of};
        use ninfer_ternary::codec::TernaryType;
        Micro {
            ggufs: [
                model_of("bonsai-micro", TernaryType::Pq2_0, 0),
                model_of("bonsai-micro", TernaryType::Ptq1_0, 0),
            ],
            template: template_of("bonsai-micro"),
        }
    })
}

/// `data[0]` picks the PQ2_0 or PTQ1_0 micro GGUF; the rest is a list of (u32 LE offset, byte)
/// edits XORed into it. Packing must fail cleanly (an error with a class), or produce an
/// artifact that re-opens, whose ternary tensors rebuild byte-identical to the (edited) source,
/// and that passes the verifier's gates (no dumps) against that source.
pub fn check_pack(data: &[u8]) {
    let Some(gguf) = edited_micro(data) else {
        return;
    };
    let m = micro();
    let art = match pack_bytes(&gguf, &m.template, &PackOptions::default()) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.detail().is_empty(), "error without detail: {e:?}");
            return;
        }
    };
    let a = Artifact::parse(&art).expect("a packed artifact re-opens");
    let g = ninfer_ternary::gguf::parse(&gguf, ninfer_ternary::gguf::Mode::Strict)
        .expect("pack parsed it");
    let proof = unpack::prove(&g, &a).expect("unpack of a fresh artifact");
    assert!(
        proof.iter().all(|r| r.identical),
        "a packed artifact does not rebuild its source"
    );
    let opts = ninfer_ternary::verify::Options {
        template: Some(&m.template),
        sweep: true,
        dump: None,
        oracle_dump: None,
        oracle_object: None,
        profile: None,
        dump_format: None,
        minimal: false,
    };
    // Edits can make the source implausible (e.g. a NaN scale): then payload_order may fail
    // legitimately. Every structural gate must pass.
    let r =
        ninfer_ternary::verify::verify("artifact", &art, "gguf", &gguf, opts).expect("verify runs");
    for f in &r.findings {
        if f.status == ninfer_ternary::verify::Verdict::Fail {
            assert_eq!(
                f.step, "payload_order",
                "gate {} failed on a freshly packed artifact: {}",
                f.step, f.detail
            );
        }
    }
}
