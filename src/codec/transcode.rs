//! Lossless PTQ1_0 ↔ PQ2_0 transcoding: the same 128 trits and the same f16 scale bits,
//! repacked. PTQ1_0 → PQ2_0 always succeeds (every base-3 byte decodes to trits; non-canonical
//! bytes come back canonical on the return trip). PQ2_0 → PTQ1_0 fails on code 3 (+2d is not
//! a trit) and says where.

use super::{pq2, ptq1, Codec};
use crate::error::{Error, ErrorClass, Result};

/// One PTQ1_0 block as PQ2_0 (trit t becomes code t; scale bits copied).
pub fn ptq1_to_pq2_block(block: &ptq1::Block) -> [u8; pq2::PQ2_0_BYTES] {
    pq2::encode_block::<128, { pq2::PQ2_0_BYTES }>(&ptq1::trits(block), ptq1::scale_bits(block))
}

/// One PQ2_0 block as PTQ1_0, or the index of the first element holding code 3.
pub fn pq2_to_ptq1_block(
    block: &[u8; pq2::PQ2_0_BYTES],
) -> std::result::Result<ptq1::Block, usize> {
    let codes: [u8; 128] = pq2::codes(block);
    if let Some(j) = codes.iter().position(|&c| c == 3) {
        return Err(j);
    }
    Ok(ptq1::encode_block(&codes, pq2::scale_bits(block)))
}

/// Transcodes a run of whole PTQ1_0 blocks into `out` (the same number of PQ2_0 blocks).
pub fn ptq1_to_pq2_into(bytes: &[u8], out: &mut [u8]) -> Result<()> {
    let n = Codec::Ptq1_0.blocks_in(bytes.len())?;
    check_out(Codec::Pq2_0, n, out.len())?;
    let (srcs, _) = bytes.as_chunks::<{ ptq1::BLOCK_BYTES }>();
    let (dsts, _) = out.as_chunks_mut::<{ pq2::PQ2_0_BYTES }>();
    for (src, dst) in srcs.iter().zip(dsts) {
        *dst = ptq1_to_pq2_block(src);
    }
    Ok(())
}

/// Transcodes a run of whole PQ2_0 blocks into `out` (the same number of PTQ1_0 blocks).
/// A code 3 anywhere is an error naming the block, element and byte offset in `bytes`.
pub fn pq2_to_ptq1_into(bytes: &[u8], out: &mut [u8]) -> Result<()> {
    pq2_to_ptq1_into_at(bytes, out, 0)
}

/// [`pq2_to_ptq1_into`] for a run that starts at block `first_block` of a larger one: errors
/// name blocks and byte offsets in the larger run's frame (for chunked conversion).
pub fn pq2_to_ptq1_into_at(bytes: &[u8], out: &mut [u8], first_block: usize) -> Result<()> {
    let n = Codec::Pq2_0.blocks_in(bytes.len())?;
    check_out(Codec::Ptq1_0, n, out.len())?;
    let (srcs, _) = bytes.as_chunks::<{ pq2::PQ2_0_BYTES }>();
    let (dsts, _) = out.as_chunks_mut::<{ ptq1::BLOCK_BYTES }>();
    for (i, (src, dst)) in srcs.iter().zip(dsts).enumerate() {
        match pq2_to_ptq1_block(src) {
            Ok(b) => *dst = b,
            Err(j) => {
                let i = first_block.saturating_add(i);
                let off = (i as u64)
                    .saturating_mul(pq2::PQ2_0_BYTES as u64)
                    .saturating_add(2 + j as u64 / 4);
                return Err(Error::at(
                    ErrorClass::CodecUnsupported,
                    off,
                    format!("block[{i}].qs[{}]", j / 4),
                    format!(
                        "PQ2_0 block {i} element {j} (bits {}..{} of that byte) holds code 3 (+2d), which is not a trit; PTQ1_0 cannot represent it",
                        2 * (j % 4),
                        2 * (j % 4) + 2
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A run of whole PTQ1_0 blocks as PQ2_0, in a new buffer.
pub fn ptq1_to_pq2(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = vec![0u8; Codec::Ptq1_0.blocks_in(bytes.len())? * pq2::PQ2_0_BYTES];
    ptq1_to_pq2_into(bytes, &mut out)?;
    Ok(out)
}

/// A run of whole PQ2_0 blocks as PTQ1_0, in a new buffer (code 3 refused, see
/// [`pq2_to_ptq1_into`]).
pub fn pq2_to_ptq1(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut out = vec![0u8; Codec::Pq2_0.blocks_in(bytes.len())? * ptq1::BLOCK_BYTES];
    pq2_to_ptq1_into(bytes, &mut out)?;
    Ok(out)
}

fn check_out(to: Codec, blocks: usize, len: usize) -> Result<()> {
    let want = blocks.checked_mul(to.block_bytes());
    if want != Some(len) {
        let want = want.map_or("more than usize::MAX".to_string(), |w| w.to_string());
        return Err(Error::new(
            ErrorClass::CodecLength,
            to.name(),
            format!("output holds {len} bytes but {blocks} blocks need {want}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn trits_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(0u8..3, 128)
    }

    proptest! {
        #[test]
        fn ptq1_pq2_ptq1_is_identity_on_canonical_blocks(t in trits_strategy(), d in any::<u16>()) {
            let blk = ptq1::encode_block(&t.clone().try_into().unwrap(), d);
            let pq = ptq1_to_pq2(&blk).unwrap();
            let back = pq2_to_ptq1(&pq).unwrap();
            prop_assert_eq!(&back[..], &blk[..]);
            // Same values, bit for bit.
            let a = Codec::Ptq1_0.decode_to_vec(&blk).unwrap();
            let b = Codec::Pq2_0.decode_to_vec(&pq).unwrap();
            prop_assert_eq!(a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }

        #[test]
        fn any_ptq1_block_transcodes_value_exactly(raw in proptest::collection::vec(any::<u8>(), 28 * 3)) {
            let pq = ptq1_to_pq2(&raw).unwrap();
            let a = Codec::Ptq1_0.decode_to_vec(&raw).unwrap();
            let b = Codec::Pq2_0.decode_to_vec(&pq).unwrap();
            prop_assert_eq!(a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            // The return trip is canonical PTQ1_0 with the same values.
            let back = pq2_to_ptq1(&pq).unwrap();
            for blk in back.chunks_exact(28) {
                prop_assert!(ptq1::is_canonical_block(blk.try_into().unwrap()));
            }
            prop_assert_eq!(Codec::Ptq1_0.decode_to_vec(&back).unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), a.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn code3_is_refused_with_its_place() {
        // Two blocks; the second has code 3 at element 9: byte qs[2] (block byte 4), bits 2..4.
        let mut bytes = vec![0x55u8; 68];
        bytes[34 + 4] = 0x55 | (3 << 2);
        let e = pq2_to_ptq1(&bytes).unwrap_err();
        assert_eq!(e.offset(), Some(34 + 4));
        assert_eq!(e.field(), "block[1].qs[2]");
        assert!(e.detail().contains("element 9"), "{e}");
        assert!(e.detail().contains("code 3"), "{e}");
    }

    #[test]
    fn lengths_are_errors() {
        assert_eq!(
            ptq1_to_pq2(&[0u8; 29]).unwrap_err().class(),
            ErrorClass::CodecLength
        );
        assert_eq!(
            pq2_to_ptq1(&[0u8; 33]).unwrap_err().class(),
            ErrorClass::CodecLength
        );
        assert_eq!(
            ptq1_to_pq2_into(&[0u8; 28], &mut [0u8; 33])
                .unwrap_err()
                .class(),
            ErrorClass::CodecLength
        );
        assert!(ptq1_to_pq2(&[]).unwrap().is_empty());
    }
}
