//! Any bytes as one transcript line, and as a whole transcript: the reader
//! must never panic, must account for every non-blank line (used or
//! skipped), and whatever it parses must serialise back to a line that
//! parses to the same message.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use smith_calibrate::transcript::parse::parse_line;
use smith_calibrate::transcript::reader::read_from;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        if let Ok(message) = parse_line(line) {
            let again = parse_line(&message.to_json()).expect("a written message parses");
            assert_eq!(again.bytes(), message.bytes());
            assert_eq!(again.content.len(), message.content.len());
        }
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
