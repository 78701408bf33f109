//! A table as named columns: the one shape every export format reads.
//!
//! Built column by column from plain vectors, it becomes a polars
//! [`DataFrame`] for the Parquet and CSV files and a list of JSON objects for
//! `--json`, so both show the same columns under the same names.

use polars::prelude::{Column, DataFrame, PolarsResult};
use serde_json::{Map, Number, Value};

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Values {
    Int(Vec<i64>),
    /// Whole numbers that may be missing (null in every format).
    OptInt(Vec<Option<i64>>),
    Float(Vec<f64>),
    /// Floats that may be missing (null in every format).
    OptFloat(Vec<Option<f64>>),
    Bool(Vec<bool>),
    Str(Vec<String>),
}

impl Values {
    /// Number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::OptInt(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::OptFloat(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(v) => v.len(),
        }
    }

    /// Value `i` as JSON; a float that is not finite is null.
    pub(crate) fn json(&self, i: usize) -> Value {
        let float = |f: f64| Number::from_f64(f).map_or(Value::Null, Value::Number);
        match self {
            Values::Int(v) => Value::from(v[i]),
            Values::OptInt(v) => v[i].map_or(Value::Null, Value::from),
            Values::Float(v) => float(v[i]),
            Values::OptFloat(v) => v[i].map_or(Value::Null, float),
            Values::Bool(v) => Value::Bool(v[i]),
            Values::Str(v) => Value::String(v[i].clone()),
        }
    }

    fn column(&self, name: &str) -> Column {
        let name = name.into();
        match self {
            Values::Int(v) => Column::new(name, v),
            Values::OptInt(v) => Column::new(name, v),
            Values::Float(v) => Column::new(name, v),
            Values::OptFloat(v) => Column::new(name, v),
            Values::Bool(v) => Column::new(name, v),
            Values::Str(v) => Column::new(name, v),
        }
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Columns {
    columns: Vec<(String, Values)>,
}

impl Columns {
    /// An empty table.
    pub(crate) fn new() -> Columns {
        Columns::default()
    }

    /// Appends a column. Panics if its length differs from the others' (a
    /// bug in the code building the table, not something input can cause).
    pub(crate) fn push(&mut self, name: impl Into<String>, values: Values) {
        let name = name.into();
        if let Some((first, v)) = self.columns.first() {
            assert_eq!(v.len(), values.len(), "column {name} vs {first}");
        }
        self.columns.push((name, values));
    }

    /// The column named `name`.
    #[cfg(test)]
    pub(crate) fn get(&self, name: &str) -> Option<&Values> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Row `i` as a JSON object, keys in column order.
    pub(crate) fn row_json(&self, i: usize) -> Map<String, Value> {
        self.columns
            .iter()
            .map(|(n, v)| (n.clone(), v.json(i)))
            .collect()
    }

    /// The rows at `order` as a JSON array of objects.
    pub(crate) fn rows_json(&self, order: &[usize]) -> Value {
        Value::Array(
            order
                .iter()
                .map(|&i| Value::Object(self.row_json(i)))
                .collect(),
        )
    }

    /// The table as a polars DataFrame.
    pub(crate) fn to_frame(&self) -> PolarsResult<DataFrame> {
        DataFrame::new(self.columns.iter().map(|(n, v)| v.column(n)).collect())
    }
}
