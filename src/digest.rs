//! Content digests shared by the corpus, the kernel cases and reports.

use sha2::{Digest, Sha256};

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of `bytes` (a digest or a prefix of one), two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_writes_two_lower_case_digits_per_byte() {
        assert_eq!(super::hex(&[0x00, 0x0a, 0xab, 0xff]), "000aabff");
        // No bytes: no digits (not a panic, not "0").
        assert_eq!(super::hex(&[]), "");
    }

    #[test]
    fn empty_input_has_the_published_digest() {
        // FIPS 180-4 / every sha256 implementation: sha256("") =
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
