//! `summary.json`: what was swept (paths, sessions, grid, prices, baseline)
//! and what came out best, and `verdict.json`: the decision on it;
//! pretty-printed for people and scripts alike.

use std::io::Write;

use anyhow::{bail, Result};

use super::{Export, Exporter};

/// The JSON summary.
pub(crate) struct Json;

impl Exporter for Json {
    fn files(&self) -> &'static [&'static str] {
        &["summary.json", super::VERDICT_FILE]
    }

    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()> {
        let value = match name {
            "summary.json" => &export.summary,
            super::VERDICT_FILE => &export.verdict,
            _ => bail!("the JSON format writes only summary.json and verdict.json, not {name}"),
        };
        serde_json::to_writer_pretty(&mut *out, value)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}
