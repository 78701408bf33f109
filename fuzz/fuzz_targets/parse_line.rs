//! Any bytes as one transcript line, and as a whole transcript: the reader
//! must never panic, must account for every non-blank line (used or
//! skipped), and whatever it parses must serialise back to a line that
//! parses to the same message and is written again byte for byte.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use smith_calibrate::transcript::parse::parse_line;
use smith_calibrate::transcript::reader::read_from;

fuzz_target!(|data: &[u8]| {
    // Lines are bytes, as smith's are: broken UTF-8 inside a string is read.
    if let Ok(message) = parse_line(data) {
        let line = message.to_json_bytes();
        let again = parse_line(&line).expect("a written message parses");
        assert_eq!(again, message);
        assert_eq!(again.to_json_bytes(), line, "written again, the same bytes");
    }
    let t = read_from(data, Path::new("fuzz.jsonl")).expect("reading from memory cannot fail");
    let non_blank = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count();
    // A BOM alone on the first line is blank once stripped.
    assert!(t.messages.len() + t.log.skipped.len() <= non_blank);
    assert!(t.messages.len() + t.log.skipped.len() + 1 >= non_blank);
});
