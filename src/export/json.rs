//! `summary.json`: what was swept (paths, sessions, grid, prices, baseline)
//! and what came out best, pretty-printed for people and scripts alike.

use std::io::Write;

use anyhow::{bail, Result};

use super::{Export, Exporter};

/// The JSON summary.
pub struct Json;

impl Exporter for Json {
    fn files(&self) -> &'static [&'static str] {
        &["summary.json"]
    }

    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()> {
        if name != "summary.json" {
            bail!("the JSON format writes only summary.json, not {name}");
        }
        serde_json::to_writer_pretty(&mut *out, &export.summary)?;
        out.write_all(b"\n")?;
        Ok(())
    }
}
