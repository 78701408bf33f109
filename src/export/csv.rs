//! `sessions.csv` and `configs.csv`: the tables for spreadsheets and shell
//! tools. A header row; missing values are empty fields.

use std::io::Write;

use anyhow::Result;
use polars::prelude::{CsvWriter, SerWriter};

use super::{table_for, Export, Exporter};

/// The CSV format.
pub(crate) struct Csv;

impl Exporter for Csv {
    fn files(&self) -> &'static [&'static str] {
        &["sessions.csv", "configs.csv"]
    }

    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()> {
        let mut frame = table_for(name, export)?.clone();
        CsvWriter::new(out)
            .include_header(true)
            .finish(&mut frame)?;
        Ok(())
    }
}
