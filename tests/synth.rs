//! `synth` on the command line (the generator itself is tested in
//! `src/synth/generator_tests.rs`).

#[test]
fn synth_command_prints_a_line_per_session_and_the_totals() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus");
    let o = crate::common::bin()
        .args([
            "synth",
            "--seed",
            "9",
            "--sessions",
            "3",
            "--min-mb",
            "0.02",
            "--max-mb",
            "0.1",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(lines[..3]
        .iter()
        .all(|l| l.starts_with("session-") && l.contains(" MB") && l.contains("messages")));
    assert!(
        lines[3].starts_with("3 sessions, ")
            && lines[3].contains(" MB, ")
            && lines[3].contains(" messages"),
        "{}",
        lines[3]
    );
    assert!(o.stdout.is_empty());

    let bad = crate::common::bin()
        .args(["synth", "--seed", "1", "--sessions", "0", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
