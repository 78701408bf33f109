//! The generator's only source of randomness: a small PRNG written here so
//! that a seed gives the same corpus, byte for byte, on every machine and
//! with every version of every dependency.
//!
//! xoshiro256** (Blackman and Vigna) seeded through splitmix64. Everything
//! derived from it uses integer arithmetic or IEEE basic operations only
//! (never `ln`/`exp`/`powf`, whose last bits differ between libms), so no
//! platform can draw a different number.

/// The splitmix64 step: a bijection on `u64` with good avalanche. Used to
/// seed [`Rng`] and to turn counters into ids that are unique by
/// construction (distinct inputs give distinct outputs).
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A deterministic pseudo-random stream (xoshiro256**).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A stream fully determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            mix64(x.wrapping_sub(0x9e37_79b9_7f4a_7c15))
        };
        let s = [next(), next(), next(), next()];
        Rng { s }
    }

    /// An independent stream for a named purpose, drawn without disturbing
    /// how far `self` has got beyond one step. Used so that, say, the
    /// content of a file does not depend on how many other files came first.
    pub(crate) fn fork(&mut self, label: u64) -> Rng {
        Rng::new(self.next_u64() ^ mix64(label))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (0 when `n` is 0), without modulo bias worth
    /// mentioning: the 128-bit multiply maps 64 bits onto the range.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi` (`lo` when `hi < lo`).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// Uniform `usize` in `lo..=hi`.
    pub(crate) fn range_usize(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as u64, hi as u64) as usize
    }

    /// Uniform in `[0, 1)` with 53 random bits: exact in IEEE arithmetic.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One item of a non-empty slice, copied.
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// One item of a non-empty slice, borrowed.
    pub(crate) fn pick_ref<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// An index drawn with the given integer weights (all zero: index 0).
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        if total == 0 {
            return 0;
        }
        let mut r = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if r < w as u64 {
                return i;
            }
            r -= w as u64;
        }
        weights.len() - 1
    }

    /// A size spread evenly over the doublings between `lo` and `hi`
    /// (piecewise log-uniform): as many values near 1 KB as near 100 KB,
    /// which is how tool output sizes are spread. Integer arithmetic only.
    pub(crate) fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let lo = lo.max(1);
        if hi <= lo {
            return lo;
        }
        let mut doublings = 0u32;
        while doublings < 63 && (lo << (doublings + 1)) <= hi {
            doublings += 1;
        }
        let d = self.below(doublings as u64 + 1) as u32;
        let start = lo << d;
        let end = (start.saturating_mul(2)).min(hi);
        self.range(start, end)
    }

    /// `n` lower-case hex digits.
    pub(crate) fn hex(&mut self, n: usize) -> String {
        self.digits(n, b"0123456789abcdef")
    }

    /// `n` characters of standard base64 alphabet (no padding): what
    /// signatures and redacted thinking look like.
    pub(crate) fn base64(&mut self, n: usize) -> String {
        self.digits(
            n,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        )
    }

    /// `n` characters of `alphabet` (of a power-of-two length): each draw
    /// gives as many whole characters as its 64 bits hold, low bits first.
    fn digits<const N: usize>(&mut self, n: usize, alphabet: &[u8; N]) -> String {
        let width = N.trailing_zeros();
        let per_draw = (64 / width) as usize;
        let mask = (N - 1) as u64;
        let mut out = String::with_capacity(n);
        let mut bits = 0u64;
        for i in 0..n {
            if i % per_draw == 0 {
                bits = self.next_u64();
            }
            out.push(alphabet[(bits & mask) as usize] as char);
            bits >>= width;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_zero_draws_the_reference_xoshiro256_starstar_stream() {
        // xoshiro256** seeded with splitmix64(0): the published algorithm's
        // numbers. If these change, every committed dataset changes too.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0x99ec_5f36_cb75_f2b4);
        assert_eq!(r.next_u64(), 0xbf6e_1f78_4956_452a);
        assert_eq!(r.next_u64(), 0x1a5f_849d_4933_e6e0);
        assert_eq!(mix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn derived_draws_are_pinned() {
        let mut r = Rng::new(42);
        assert_eq!(r.next_u64(), 0x1578_0b2e_0c2e_c716);
        assert_eq!(r.below(1000), 378);
        assert_eq!(r.log_uniform(100, 100_000), 12_318);
    }

    #[test]
    fn log_uniform_stays_in_range() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let v = r.log_uniform(100, 300_000);
            assert!((100..=300_000).contains(&v), "{v}");
        }
    }

    #[test]
    fn mix64_is_a_bijection_on_small_inputs() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000u64 {
            assert!(seen.insert(mix64(i)));
        }
    }
}
