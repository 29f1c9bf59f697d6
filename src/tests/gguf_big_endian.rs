//! Real big-endian GGUF files (feature `gguf:big-endian`, PROTOCOL.md §4.2): every field and
//! tensor element swapped. The reference reads them through `gguf::swap_byte_order`; the
//! observation must equal the little-endian twin's except `data_sha256`.

use crate::corpus::families::gguf::big_endian_twin;
use crate::corpus::observe::observe_gguf;
use crate::gguf::{self, ByteOrder, GgufWriter, Mode};
use crate::ErrorClass;

#[test]
fn swapping_twice_is_the_identity_and_every_field_moved() {
    for ver in [2, 3] {
        let le = big_endian_twin(ver).unwrap();
        let be = gguf::swap_byte_order(&le, ByteOrder::Little).unwrap();
        assert_ne!(be, le);
        assert_eq!(&be[..4], b"GGUF");
        assert_eq!(u32::from_be_bytes(be[4..8].try_into().unwrap()), ver);
        assert!(gguf::is_big_endian(&be) && !gguf::is_big_endian(&le));
        assert_eq!(gguf::swap_byte_order(&be, ByteOrder::Big).unwrap(), le);
    }
}

#[test]
fn the_big_endian_observation_is_the_twins_except_the_raw_data_digest() {
    let le = big_endian_twin(3).unwrap();
    let be = gguf::swap_byte_order(&le, ByteOrder::Little).unwrap();
    let a = observe_gguf(&le, Mode::Strict, None).unwrap();
    let mut b = observe_gguf(&be, Mode::Strict, None).unwrap();
    let ta = a["tensors"].as_array().unwrap();
    let tb = b["tensors"].as_array_mut().unwrap();
    assert_eq!(ta.len(), 4);
    for (x, y) in ta.iter().zip(tb.iter_mut()) {
        // Every tensor here has multi-byte fields, so its bytes differ.
        assert_ne!(x["data_sha256"], y["data_sha256"], "{}", x["name"]);
        assert_eq!(x["values_sha256"], y["values_sha256"], "{}", x["name"]);
        y["data_sha256"] = x["data_sha256"].clone();
    }
    assert_eq!(a, b);
}

#[test]
fn the_container_parser_itself_still_refuses_big_endian() {
    let be = gguf::swap_byte_order(&big_endian_twin(3).unwrap(), ByteOrder::Little).unwrap();
    let e = gguf::parse(&be, Mode::Strict).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufBigEndian);
}

#[test]
fn types_without_a_big_endian_form_are_refused() {
    let spec = crate::spec::get();
    let mut w = GgufWriter::new();
    w.kv("general.architecture", "be");
    w.tensor_as("t", &[256], spec.ggml_type_named("TQ2_0").unwrap())
        .unwrap();
    let le = w.to_bytes(&[&[0u8; 66]]).unwrap();
    let e = gguf::swap_byte_order(&le, ByteOrder::Little).unwrap_err();
    assert_eq!(e.class(), ErrorClass::GgufBigEndian);
    assert!(e.to_string().contains("TQ2_0"), "{e}");
}

#[test]
fn every_prefix_and_byte_flip_of_a_big_endian_file_is_a_clean_result() {
    let be = gguf::swap_byte_order(&big_endian_twin(3).unwrap(), ByteOrder::Little).unwrap();
    for n in 0..be.len() {
        let _ = gguf::swap_byte_order(&be[..n], ByteOrder::Big);
        let _ = observe_gguf(&be[..n], Mode::Strict, None);
    }
    for i in (0..be.len()).step_by(3) {
        let mut b = be.clone();
        b[i] ^= 0xa5;
        let _ = observe_gguf(&b, Mode::Strict, None);
    }
}
