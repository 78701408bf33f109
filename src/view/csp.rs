//! The Content-Security-Policy of every HTML page the tool writes (the
//! sweep report, the session page): nothing may be loaded from anywhere,
//! and the only script and style that may run or apply are the page's own
//! inline ones, named by the SHA-256 of their text. A tag smuggled in
//! through a transcript (a session name, a path, a tool's output) can then
//! neither run nor load anything, and the page is the same bytes for the
//! same input, run after run (a nonce would differ each time).

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// `'sha256-…'`: the source expression allowing the inline script or style
/// whose text, exactly as it stands between its tags, is `text`.
pub fn hash_source(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The policy of a page whose inline scripts are `scripts` and inline
/// styles `styles` (their texts); with no script, none may run.
pub(crate) fn policy(scripts: &[&str], styles: &[&str]) -> String {
    let sources = |texts: &[&str]| -> String {
        if texts.is_empty() {
            "'none'".to_string()
        } else {
            texts
                .iter()
                .map(|t| hash_source(t))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    format!(
        "default-src 'none'; script-src {}; style-src {}; img-src 'none'; font-src 'none'; connect-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'",
        sources(scripts),
        sources(styles)
    )
}

/// The `<meta>` element carrying [`policy`], for the top of `<head>`
/// (before any script or style it allows).
pub(crate) fn meta(scripts: &[&str], styles: &[&str]) -> String {
    format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
        policy(scripts, styles)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_the_base64_of_the_texts_sha256() {
        // SHA-256 of the empty string and of "abc" (FIPS 180-2's example).
        assert_eq!(
            hash_source(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
        assert_eq!(
            hash_source("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
    }

    #[test]
    fn the_policy_allows_nothing_but_the_hashed_texts() {
        let p = policy(&["alert(1)"], &["p{}"]);
        assert!(p.starts_with("default-src 'none';"), "{p}");
        assert!(
            p.contains(&format!("script-src {};", hash_source("alert(1)"))),
            "{p}"
        );
        assert!(
            p.contains(&format!("style-src {};", hash_source("p{}"))),
            "{p}"
        );
        for loose in ["unsafe", "nonce", "*", "http", "data:", "self"] {
            assert!(!p.contains(loose), "{loose} in {p}");
        }
        assert!(policy(&[], &["p{}"]).contains("script-src 'none';"));
        assert_eq!(policy(&["a"], &["b"]), policy(&["a"], &["b"]));
    }
}
