//! The label that tells every config of a sweep apart. It lives with
//! [`Config`] rather than with the sweep's grid because the policies name
//! their setups with it too, and the policies come before the sweep in the
//! data flow.

use super::Config;

impl Config {
    /// [`Config::label`], with the fractions written in full when two
    /// decimals would round them (`0.825/0.5` rather than `0.83/0.50`), so
    /// that no two configs of a grid share a label.
    pub fn exact_label(&self) -> String {
        let exact = |v: f64| format!("{v:.2}").parse::<f64>() == Ok(v);
        let standard = self.label();
        if exact(self.compact_at) && exact(self.compact_to) {
            return standard;
        }
        // Config::label starts with "<max> <at>/<to> "; swap that field.
        match standard.split_once(' ') {
            Some((max, rest)) => {
                let tail = rest.split_once(' ').map_or("", |(_, t)| t);
                format!("{max} {}/{} {tail}", self.compact_at, self.compact_to)
            }
            None => standard,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_are_written_in_full_only_when_two_decimals_would_round_them() {
        let mut c = Config::default();
        assert_eq!(c.exact_label(), c.label());
        c.compact_at = 0.825;
        c.compact_to = 0.5;
        assert_eq!(c.exact_label(), "120k 0.825/0.5 cap512 w3");
        assert_eq!(c.label(), "120k 0.82/0.50 cap512 w3");
    }
}
