//! Writing a sweep's results to files, one file per format (as hyperfine's
//! `export/`): each format is one small type behind [`Exporter`], so a new
//! format is a new file and one line in [`EXPORTERS`].
//!
//! Every file is written atomically (see [`crate::output`]).

pub mod columns;
pub mod csv;
pub mod json;
pub mod parquet;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use polars::prelude::DataFrame;

pub use columns::{Columns, Values};

/// What a sweep writes: its two tables and its summary.
#[derive(Clone, Debug)]
pub struct Export {
    /// One row per session and config.
    pub sessions: DataFrame,
    /// One row per config.
    pub configs: DataFrame,
    /// What was swept and what came out best (`summary.json`).
    pub summary: serde_json::Value,
}

impl Export {
    /// The table a file stem names: `sessions` or `configs`.
    pub fn table(&self, stem: &str) -> Option<&DataFrame> {
        match stem {
            "sessions" => Some(&self.sessions),
            "configs" => Some(&self.configs),
            _ => None,
        }
    }
}

/// One output format.
pub trait Exporter: Sync {
    /// The files this format writes, by name.
    fn files(&self) -> &'static [&'static str];
    /// Writes the file `name` (one of [`Exporter::files`]) to `out`.
    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()>;
}

/// Every format `--out` writes.
pub const EXPORTERS: [&dyn Exporter; 3] = [&parquet::Parquet, &csv::Csv, &json::Json];

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
            crate::output::write_atomic_with(&path, |out| {
                exporter
                    .write(name, export, out)
                    .map_err(|e| io::Error::other(format!("{e:#}")))
            })
            .with_context(|| format!("{}: cannot write", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}
