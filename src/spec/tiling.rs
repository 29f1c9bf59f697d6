//! The head tiling of the value-head axis, as the model profiles describe it. It lives in `spec`
//! (profiles return it) so that `spec` does not depend on `perm`, which uses it for gathers.

/// Head-axis shape of a tiled→grouped permutation: `tile * group` heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadTiling {
    /// 3 for Bonsai (value heads per key head).
    pub tile: usize,
    /// 16 for Bonsai (key heads).
    pub group: usize,
}

impl HeadTiling {
    /// Bonsai's value heads: 3 tiles of 16 key heads.
    pub const BONSAI: HeadTiling = HeadTiling { tile: 3, group: 16 };

    /// The number of heads, `tile * group`.
    pub fn heads(self) -> usize {
        self.tile * self.group
    }

    /// `perm48(i) = (i % tile) * group + i / tile`: target head `g*tile + t` ← source head `t*group + g`.
    pub fn gather(self, i: usize) -> usize {
        (i % self.tile) * self.group + i / self.tile
    }

    /// The inverse (a scatter written as a gather): `inverse(gather(i)) == i`.
    pub fn inverse(self, j: usize) -> usize {
        (j % self.group) * self.tile + j / self.group
    }

    /// The full head permutation as an index list.
    pub fn head_order(self) -> Vec<usize> {
        (0..self.heads()).map(|i| self.gather(i)).collect()
    }
}
