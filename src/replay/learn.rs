//! A compactor under a learned ratio: the ratio in force at each request
//! comes from [`crate::engine::learn::schedule`], and each request is
//! compacted and charged under it.

use std::sync::Arc;

use crate::engine::{Admitted, Budget, Compaction, Compactor};
use crate::estimate::Measure;
use crate::transcript::Message;

/// `inner` with the ratio of each request taken from `ratios` (the last one
/// holds past its end). Its [`Compactor::budget`] is `inner`'s, whose ratio
/// is where learning starts.
pub(crate) struct Learned<'a> {
    inner: Inner<'a>,
    ratios: Vec<f64>,
}

enum Inner<'a> {
    Borrowed(&'a dyn Compactor),
    Owned(Box<dyn Compactor + 'a>),
}

impl<'a> Learned<'a> {
    pub(crate) fn new(inner: &'a dyn Compactor, ratios: Vec<f64>) -> Learned<'a> {
        Learned {
            inner: Inner::Borrowed(inner),
            ratios,
        }
    }

    /// [`Learned::new`] owning its compactor.
    pub(crate) fn owning(inner: Box<dyn Compactor + 'a>, ratios: Vec<f64>) -> Learned<'a> {
        Learned {
            inner: Inner::Owned(inner),
            ratios,
        }
    }

    fn inner(&self) -> &dyn Compactor {
        match &self.inner {
            Inner::Borrowed(c) => *c,
            Inner::Owned(c) => c.as_ref(),
        }
    }

    /// The ratio in force at `request`.
    pub(crate) fn ratio(&self, request: usize) -> f64 {
        self.ratios
            .get(request)
            .or(self.ratios.last())
            .copied()
            .unwrap_or(self.inner().budget().ratio)
    }
}

impl Compactor for Learned<'_> {
    fn name(&self) -> &str {
        self.inner().name()
    }

    fn budget(&self) -> &Budget {
        self.inner().budget()
    }

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        self.compact_request(0, messages, bytes)
    }

    fn compact_request(&self, request: usize, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let ratio = self.ratio(request);
        if ratio == self.inner().budget().ratio {
            return self.inner().compact_request(request, messages, bytes);
        }
        self.inner()
            .at_ratio(ratio)
            .compact_request(request, messages, bytes)
    }

    fn ratio_at(&self, request: usize) -> Option<f64> {
        Some(self.ratio(request))
    }

    fn admit(&self, message: &Arc<Message>) -> Admitted {
        self.inner().admit(message)
    }

    fn measure(&self) -> &Measure {
        self.inner().measure()
    }

    fn at_ratio(&self, ratio: f64) -> Box<dyn Compactor + '_> {
        self.inner().at_ratio(ratio)
    }
}
