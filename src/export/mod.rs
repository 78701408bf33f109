//! Writing a sweep's results to files, one file per format (as hyperfine's
//! `export/`): each format is one small type behind [`Exporter`], so a new
//! format is a new file and one line in [`EXPORTERS`].
//!
//! Every file is written atomically (see [`crate::output`]).

pub(crate) mod columns;
pub(crate) mod csv;
pub(crate) mod json;
pub(crate) mod parquet;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use polars::prelude::DataFrame;

pub(crate) use columns::{Columns, Values};

/// What a sweep writes: its two tables and its summary.
#[derive(Clone, Debug)]
pub struct Export {
    /// One row per session and config.
    pub sessions: DataFrame,
    /// One row per config.
    pub(crate) configs: DataFrame,
    /// What was swept and what came out best (`summary.json`).
    pub(crate) summary: serde_json::Value,
    /// The verdict on the configs (`verdict.json`): the one decision the
    /// sweep's table, `recommend` and the report show.
    pub(crate) verdict: serde_json::Value,
}

/// The file the verdict is written to beside the tables, and read from by
/// the report.
pub(crate) const VERDICT_FILE: &str = "verdict.json";

impl Export {
    /// The table a file stem names: `sessions` or `configs`.
    pub(crate) fn table(&self, stem: &str) -> Option<&DataFrame> {
        match stem {
            "sessions" => Some(&self.sessions),
            "configs" => Some(&self.configs),
            _ => None,
        }
    }
}

/// One output format.
pub(crate) trait Exporter: Sync {
    /// The files this format writes, by name.
    fn files(&self) -> &'static [&'static str];
    /// Writes the file `name` (one of [`Exporter::files`]) to `out`.
    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()>;
}

/// Every format `--out` writes.
pub(crate) const EXPORTERS: [&dyn Exporter; 3] = [&parquet::Parquet, &csv::Csv, &json::Json];

/// The table a table file such as `sessions.csv` holds.
pub(crate) fn table_for<'a>(name: &str, export: &'a Export) -> Result<&'a DataFrame> {
    let stem = name.split('.').next().unwrap_or(name);
    export
        .table(stem)
        .with_context(|| format!("no table for {name}"))
}

/// Writes every format's files into `dir` (created if missing), each
/// atomically, and returns their paths.
pub fn write_all(dir: &Path, export: &Export) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("{}: cannot create the output directory", dir.display()))?;
    let mut written = Vec::new();
    for exporter in EXPORTERS {
        for name in exporter.files() {
            let path = dir.join(name);
            // The exporter's error whole: a full disk under a table writer's
            // own error is still recognised as one.
            crate::output::write_atomic_with(&path, |out| exporter.write(name, export, out))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every format writing every one of its files onto a full disk
    /// (`/dev/full`, where every write fails with `ENOSPC`) through the
    /// atomic write, as `--out` does: whichever writer failed (polars'
    /// Parquet and CSV writers, serde_json), the error says the disk is
    /// full and the previous file stays.
    #[test]
    fn a_full_disk_is_recognised_through_every_writer() {
        let mut table = Columns::new();
        table.push("n", Values::Int((0..50_000).collect()));
        table.push(
            "s",
            Values::Str((0..50_000).map(|i| format!("row {i}")).collect()),
        );
        let frame = table.to_frame().unwrap();
        let export = Export {
            sessions: frame.clone(),
            configs: frame,
            summary: serde_json::json!({"rows": vec![1; 50_000]}),
            verdict: serde_json::json!({"sentence": "Keep"}),
        };
        let dir = tempfile::tempdir().unwrap();
        for exporter in EXPORTERS {
            for name in exporter.files() {
                let path = dir.path().join(name);
                std::fs::write(&path, "previous").unwrap();
                let Some(err) = crate::output::write_onto_a_full_disk(&path, |out| {
                    exporter.write(name, &export, out)
                }) else {
                    return;
                };
                let msg = format!("{err:#}");
                assert!(
                    msg.starts_with(&format!("{}: the disk is full;", path.display())),
                    "{msg}"
                );
                assert_eq!(std::fs::read(&path).unwrap(), b"previous");
            }
        }
    }
}
