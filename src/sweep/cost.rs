//! The sweep prices what the replay measured with the cost model of
//! [`crate::cost`]; this path stays for the code and tests that name it.

pub use crate::cost::{Cost, Prices, TOKENS_PER_PRICE_UNIT};
