//! What a person who installs the binary expects beside it: `--version`
//! naming the smith revision, shell completions and man pages generated
//! from the same clap definitions as the parser.

use std::collections::BTreeSet;

use crate::common::{bin, ok};

/// Every subcommand, as `smith-calibrate --help` lists them.
pub(crate) fn subcommands() -> BTreeSet<String> {
    let help = ok(bin().arg("--help").output().unwrap());
    let list = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help has a Commands section");
    let names: BTreeSet<String> = list
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A name starts its line after two spaces; wrapped help is indented further.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 9, "{names:?}");
    names
}

#[test]
fn version_names_the_smith_revision_the_engine_ports_and_every_engine() {
    let v = ok(bin().arg("--version").output().unwrap());
    use smith_calibrate::engine::EngineVersion;
    assert_eq!(EngineVersion::RELEASED, EngineVersion::V04);
    assert_eq!(
        v,
        format!(
            "smith-calibrate {} (engine: smith context.cr @ {} = --engine {}, the default; --engine {} = smith after #118)\n",
            env!("CARGO_PKG_VERSION"),
            smith_calibrate::engine::constants::SMITH_REVISION,
            EngineVersion::V04,
            EngineVersion::Next,
        )
    );
}

#[test]
fn completions_for_bash_zsh_and_fish_name_every_subcommand() {
    let subs = subcommands();
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(bin().args(["completions", shell]).output().unwrap());
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for sub in &subs {
            assert!(script.contains(sub.as_str()), "{shell} script lacks {sub}");
        }
        // Flags of a subcommand are completed too, not just the names.
        assert!(script.contains("compact-at"), "{shell}: no --compact-at");
    }
    let bad = bin().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_pages_cover_every_subcommand() {
    let subs = subcommands();
    let page = ok(bin().arg("man").output().unwrap());
    assert!(
        page.starts_with(".ie \\n(.g .ds Aq"),
        "not roff: {:.60}",
        page
    );
    assert!(page.contains(".TH smith-calibrate 1"));
    for sub in &subs {
        assert!(
            page.contains(&format!(
                "smith\\-calibrate\\-{}(1)",
                sub.replace('-', "\\-")
            )),
            "top page does not list {sub}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["man", "--out"])
        .arg(dir.path().join("man1"))
        .output()
        .unwrap();
    ok(o);
    let written: BTreeSet<String> = std::fs::read_dir(dir.path().join("man1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for sub in &subs {
        let name = format!("smith-calibrate-{sub}.1");
        assert!(written.contains(&name), "no {name} in {written:?}");
        let body = std::fs::read_to_string(dir.path().join("man1").join(&name)).unwrap();
        assert!(body.contains(".SH SYNOPSIS"), "{name} has no synopsis");
    }
    assert!(written.contains("smith-calibrate.1"));
    assert!(written.contains("smith-calibrate-sweep.1"));
}

/// The binary keeps the hardening a Linux executable is linked with by
/// default: position independent (so its own code is loaded at a random
/// address), a non-executable stack, and relocations made read-only before
/// `main` (full RELRO). Read from the ELF headers of the binary the tests
/// run.
#[cfg(all(
    target_os = "linux",
    target_pointer_width = "64",
    target_endian = "little"
))]
#[test]
fn the_binary_is_a_hardened_position_independent_executable() {
    const ET_DYN: u16 = 3;
    const PT_DYNAMIC: u32 = 2;
    const PT_INTERP: u32 = 3;
    const PT_GNU_STACK: u32 = 0x6474_e551;
    const PT_GNU_RELRO: u32 = 0x6474_e552;
    const PF_X: u32 = 1;
    const DT_FLAGS: u64 = 30;
    const DF_BIND_NOW: u64 = 0x8;
    const DT_FLAGS_1: u64 = 0x6fff_fffb;
    const DF_1_NOW: u64 = 0x1;
    const DF_1_PIE: u64 = 0x0800_0000;

    let path = env!("CARGO_BIN_EXE_smith-calibrate");
    let elf = std::fs::read(path).unwrap();
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap());
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    assert_eq!(&elf[..4], b"\x7fELF", "{path}: not an ELF file");
    assert_eq!(elf[4], 2, "{path}: not a 64-bit ELF file");
    assert_eq!(
        u16_at(16),
        ET_DYN,
        "{path}: e_type {} is not ET_DYN: the executable is linked at a fixed address",
        u16_at(16)
    );
    let (phoff, phentsize, phnum) = (u64_at(0x20) as usize, u16_at(0x36) as usize, u16_at(0x38));
    let headers: Vec<(u32, u32, usize, usize)> = (0..phnum as usize)
        .map(|i| {
            let h = phoff + i * phentsize;
            (
                u32_at(h),
                u32_at(h + 4),
                u64_at(h + 8) as usize,
                u64_at(h + 32) as usize,
            )
        })
        .collect();
    let has = |t: u32| headers.iter().any(|h| h.0 == t);
    assert!(
        has(PT_INTERP),
        "{path}: no interpreter: a library, not an executable"
    );
    assert!(has(PT_GNU_RELRO), "{path}: no RELRO segment");
    let stack = headers.iter().find(|h| h.0 == PT_GNU_STACK);
    assert!(
        stack.is_some_and(|h| h.1 & PF_X == 0),
        "{path}: the stack is executable"
    );
    let &(_, _, offset, size) = headers
        .iter()
        .find(|h| h.0 == PT_DYNAMIC)
        .expect("a dynamic section");
    let (mut flags, mut flags_1) = (0, 0);
    for entry in (offset..offset + size).step_by(16) {
        match u64_at(entry) {
            DT_FLAGS => flags = u64_at(entry + 8),
            DT_FLAGS_1 => flags_1 = u64_at(entry + 8),
            _ => {}
        }
    }
    assert!(
        flags_1 & DF_1_PIE != 0,
        "{path}: DT_FLAGS_1 {flags_1:#x} does not say PIE"
    );
    assert!(
        flags & DF_BIND_NOW != 0 || flags_1 & DF_1_NOW != 0,
        "{path}: symbols are bound lazily: RELRO is partial"
    );
}
