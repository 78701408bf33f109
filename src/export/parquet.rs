//! `sessions.parquet` and `configs.parquet`: the tables with their types, for
//! polars, pandas, DuckDB and the report.

use std::io::Write;

use anyhow::Result;
use polars::prelude::{ParquetCompression, ParquetWriter};

use super::{table_for, Export, Exporter};

/// The Parquet format.
pub(crate) struct Parquet;

impl Exporter for Parquet {
    fn files(&self) -> &'static [&'static str] {
        &["sessions.parquet", "configs.parquet"]
    }

    fn write(&self, name: &str, export: &Export, out: &mut dyn Write) -> Result<()> {
        let mut frame = table_for(name, export)?.clone();
        ParquetWriter::new(out)
            .with_compression(ParquetCompression::Snappy)
            .finish(&mut frame)?;
        Ok(())
    }
}
