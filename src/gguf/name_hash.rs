//! The hasher of the reader's name indexes (metadata keys, tensor names). Names are hashed with
//! std's randomly keyed SipHash, except that a long name (a hostile file may hold a 1 GiB key)
//! is first condensed to its SHA-256 digest and length: the digest runs in the `sha2` crate's
//! optimized block function, where SipHash over a gigabyte costs ~15 s in an unoptimized build.
//! Collisions stay as hard to force as before (SipHash keys are secret; SHA-256 collisions are
//! not known), so a file cannot crowd one bucket. Only the hash changes: the maps still compare
//! the names themselves on a hash match, so a collision costs one extra comparison and can never
//! make two different names equal.

use sha2::{Digest, Sha256};
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

/// Names longer than this are hashed through their SHA-256 digest.
const LONG: usize = 4096;

/// Builds [`NameHasher`]s (one random SipHash key per map, as `RandomState`).
#[derive(Clone, Default)]
pub struct NameHash(RandomState);

impl BuildHasher for NameHash {
    type Hasher = NameHasher;
    fn build_hasher(&self) -> NameHasher {
        NameHasher(self.0.build_hasher())
    }
}

/// SipHash of short input, SipHash of (SHA-256 digest, length) of long input.
pub struct NameHasher(DefaultHasher);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() > LONG {
            self.0.write(&Sha256::digest(bytes));
            self.0.write_usize(bytes.len());
        } else {
            self.0.write(bytes);
        }
    }
    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// A name -> record index map of the reader.
pub type NameMap<'a> = HashMap<&'a str, usize, NameHash>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_short_names_are_found_and_distinguished() {
        let long_a = "a".repeat(LONG + 1);
        let mut long_b = long_a.clone();
        long_b.replace_range(LONG / 2..LONG / 2 + 1, "b");
        let mut m = NameMap::default();
        for (i, k) in ["x", "y", long_a.as_str(), long_b.as_str()]
            .iter()
            .enumerate()
        {
            assert!(m.insert(k, i).is_none(), "{i}");
        }
        assert_eq!(m.get("x"), Some(&0));
        assert_eq!(m.get(long_a.as_str()), Some(&2));
        assert_eq!(m.get(long_b.as_str()), Some(&3));
        assert_eq!(m.get(&long_a[..LONG]), None);
        // The same name hashes alike through one builder, long or short.
        let b = NameHash::default();
        for k in ["x", long_a.as_str()] {
            assert_eq!(b.hash_one(k), b.hash_one(k.to_string().as_str()));
        }
        assert_ne!(b.hash_one(long_a.as_str()), b.hash_one(long_b.as_str()));
    }
}
