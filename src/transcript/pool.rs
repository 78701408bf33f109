//! Texts read more than once, kept once.
//!
//! A session reads the same file again, runs the same command again, and
//! each result is a line of its own in the transcript. Read from the
//! pool, every later copy of a long text shares the first one's bytes:
//! the record holds it once, and whatever is computed from a text can be
//! computed once for all its copies (the loss measure's index tokenizes
//! each text once). How much a record repeats: benches/README.md.
//!
//! Sharing is invisible to what reads the record: texts are immutable, and
//! nothing tells two blocks apart by the address of their text.

use std::sync::Mutex;

use foldhash::HashMap;

use super::model::Text;

/// Texts shorter than this are not looked up: finding an earlier equal
/// one would cost about what it saves. Not a sensitive choice, anywhere
/// from 64 to 1,024 costs the same (benches/README.md).
pub(crate) const SHARED_TEXT_MIN_BYTES: usize = 256;

/// What a long text is looked up by: its length and three of its words
/// (at the start, the middle and the end). Texts that agree there are
/// then compared whole.
pub(crate) type Sample = (usize, [u64; 3]);

/// The [`Sample`] of a text of at least [`SHARED_TEXT_MIN_BYTES`], `None`
/// for a shorter one.
pub(crate) fn sample(text: &[u8]) -> Option<Sample> {
    let n = text.len();
    if n < SHARED_TEXT_MIN_BYTES {
        return None;
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&text[at..at + 8]);
        u64::from_le_bytes(w)
    };
    Some((n, [word(0), word(n / 2), word(n - 8)]))
}

/// Whether two texts are the same: the same bytes at the same place, or
/// the same bytes.
pub(crate) fn same_text(a: &[u8], b: &[u8]) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

/// The long texts read so far, shared by the threads reading one
/// transcript.
#[derive(Debug, Default)]
pub(crate) struct TextPool {
    seen: Mutex<HashMap<Sample, Vec<Text>>>,
}

impl TextPool {
    /// `bytes` as a text: an earlier equal one if the pool has it, else a
    /// new one, kept for later (short texts are never looked up).
    pub(crate) fn text(&self, bytes: &[u8]) -> Text {
        let Some(key) = sample(bytes) else {
            return Text::from(bytes);
        };
        // Compared outside the lock: another thread may add the same text
        // meanwhile, and then the two copies are not shared, which costs
        // memory, never a wrong text.
        let candidates = self.lock().get(&key).cloned().unwrap_or_default();
        if let Some(t) = candidates.iter().find(|t| same_text(t, bytes)) {
            return t.clone();
        }
        let text = Text::from(bytes);
        self.lock().entry(key).or_default().push(text.clone());
        text
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Sample, Vec<Text>>> {
        // A thread that panicked holding the lock left the map whole.
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn long_texts_are_shared_and_short_ones_are_not() {
        let pool = TextPool::default();
        let long = vec![b'x'; 1000];
        let a = pool.text(&long);
        let b = pool.text(&long.clone());
        assert!(Arc::ptr_eq(&a, &b));
        // Same length and the same sampled words, different elsewhere.
        let mut lookalike = long.clone();
        lookalike[100] = b'y';
        let c = pool.text(&lookalike);
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(&*c, &lookalike[..]);
        assert!(Arc::ptr_eq(&c, &pool.text(&lookalike)));
        let short = vec![b'z'; SHARED_TEXT_MIN_BYTES - 1];
        assert!(!Arc::ptr_eq(&pool.text(&short), &pool.text(&short)));
        assert_eq!(sample(&short), None);
    }
}
