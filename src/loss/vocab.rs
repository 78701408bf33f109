//! The tokens some assistant message uses, each with a dense id: the one
//! table every other token of the record is looked up in (about one
//! lookup per 50 bytes of record, three in four of them found).
//!
//! A general hash map spends most of such a lookup hashing the token's
//! bytes one word at a time; here a token (six bytes or more) is hashed
//! from its first and last eight bytes and its length, in a few
//! instructions, and a slot holds a tag of the hash beside the id, so that
//! a probe reads a token's bytes only when the tags agree (and then
//! compares them a word at a time). Tokens that share their ends
//! and length share a hash, which costs a comparison, never a wrong
//! answer.

/// Token ids by their bytes.
#[derive(Debug, Default)]
pub(crate) struct Vocab {
    /// The tokens back to back, in id order.
    bytes: Vec<u8>,
    /// Per id: where its token starts and ends in `bytes`.
    spans: Vec<(u32, u32)>,
    /// Open addressing, probed one slot on at a time: the tag (the hash's
    /// bits that do not choose the slot) in the high half, `id + 1` in the
    /// low half; 0 for an empty slot. Its length is a power of two, at
    /// least twice the number of tokens.
    slots: Vec<u64>,
}

impl Vocab {
    /// The number of tokens.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The id of `token`, if it has one.
    #[inline]
    pub(crate) fn get(&self, token: &[u8]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let (mut slot, tag) = self.place(token);
        let mask = self.slots.len() - 1;
        loop {
            let held = self.slots[slot];
            if held == 0 {
                return None;
            }
            let id = (held as u32).wrapping_sub(1);
            if (held >> 32) as u32 == tag && same(self.token(id), token) {
                return Some(id);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The id of `token`, given the next one if it has none yet.
    pub(crate) fn intern(&mut self, token: &[u8]) -> u32 {
        if let Some(id) = self.get(token) {
            return id;
        }
        if 2 * (self.len() + 1) > self.slots.len() {
            self.grow();
        }
        let id = self.len() as u32;
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(token);
        self.spans.push((start, self.bytes.len() as u32));
        let (slot, tag) = self.place(token);
        self.put(slot, tag, id);
        id
    }

    /// The token with id `id`.
    #[inline]
    fn token(&self, id: u32) -> &[u8] {
        let (start, end) = self.spans[id as usize];
        &self.bytes[start as usize..end as usize]
    }

    /// The first slot to probe for `token`, and its tag.
    #[inline]
    fn place(&self, token: &[u8]) -> (usize, u32) {
        let h = hash(token);
        let bits = self.slots.len().trailing_zeros();
        // The top bits choose the slot (they are the best mixed by the
        // multiplication); the tag is taken from the bits below them.
        let slot = (h >> (64 - bits)) as usize;
        (slot, (h >> 16) as u32)
    }

    /// Puts `id` with its tag in the first empty slot from `slot` on.
    fn put(&mut self, mut slot: usize, tag: u32, id: u32) {
        let mask = self.slots.len() - 1;
        while self.slots[slot] != 0 {
            slot = (slot + 1) & mask;
        }
        self.slots[slot] = (u64::from(tag) << 32) | u64::from(id + 1);
    }

    /// Doubles the slots (at least 64) and puts every token back.
    fn grow(&mut self) {
        let n = (2 * self.slots.len()).max(64);
        self.slots = vec![0; n];
        for id in 0..self.len() as u32 {
            let (slot, tag) = self.place(self.token(id));
            self.put(slot, tag, id);
        }
    }
}

/// Whether two tokens are equal: most are 6 to 16 bytes, compared as two
/// overlapping words rather than through a call to `memcmp`.
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if !(8..=16).contains(&n) {
        return a == b;
    }
    let word = |s: &[u8], at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8)
}

/// A token's hash from its first and last eight bytes (overlapping in a
/// token shorter than 16; zero-padded in one shorter than 8) and its
/// length.
#[inline]
fn hash(token: &[u8]) -> u64 {
    let n = token.len();
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let (head, tail) = if n >= 8 {
        (word(&token[..8]), word(&token[n - 8..]))
    } else {
        let w = word(token);
        (w, w)
    };
    let mixed = (head ^ tail.rotate_left(29) ^ (n as u64).rotate_left(53))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    mixed ^ (mixed >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_in_first_use_order_and_found_again() {
        let mut v = Vocab::default();
        let tokens: Vec<Vec<u8>> = (0..5000u32)
            .map(|i| format!("tok_{i:07}").into_bytes())
            .collect();
        for (i, t) in tokens.iter().enumerate() {
            assert_eq!(v.intern(t), i as u32);
        }
        for (i, t) in tokens.iter().enumerate() {
            assert_eq!(v.intern(t), i as u32);
            assert_eq!(v.get(t), Some(i as u32));
        }
        assert_eq!(v.len(), 5000);
        assert_eq!(v.get(b"tok_9999999"), None);
        assert_eq!(Vocab::default().get(b"anything"), None);
    }

    #[test]
    fn tokens_with_the_same_ends_and_length_are_told_apart() {
        // Same first and last eight bytes and length: the same hash.
        let a = b"abcdefgh_1_12345678".to_vec();
        let b = b"abcdefgh_2_12345678".to_vec();
        assert_eq!(hash(&a), hash(&b));
        let mut v = Vocab::default();
        assert_eq!(v.intern(&a), 0);
        assert_eq!(v.get(&b), None);
        assert_eq!(v.intern(&b), 1);
        assert_eq!((v.get(&a), v.get(&b)), (Some(0), Some(1)));
        // Short tokens, padded: not equal to a longer one with the same
        // leading bytes.
        assert_eq!(v.intern(b"abcdef"), 2);
        assert_eq!(v.get(b"abcdef\0"), None);
    }

    #[test]
    fn same_agrees_with_slice_equality() {
        let base: Vec<u8> = (b'a'..=b'z').collect();
        for n in 0..26 {
            for at in 0..n {
                let a = &base[..n];
                let mut b = a.to_vec();
                assert!(same(a, &b));
                b[at] = b'_';
                assert!(!same(a, &b), "{n} {at}");
                assert!(!same(a, &base[..n + 1]));
            }
        }
    }
}
