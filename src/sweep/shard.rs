//! Which sessions one of N sweep processes takes: `--shard K/N`.
//!
//! Every process lists the same sessions in the same order and keeps those
//! whose key hashes into its shard, so N processes on N machines cover the
//! corpus exactly once with no coordination between them. The hash is
//! 64-bit FNV-1a (offset basis 0xcbf29ce484222325, prime 0x100000001b3) of
//! the key's UTF-8 bytes, taken modulo N: a fixed, published function, the
//! same on every machine, architecture and Rust version (std's hasher is
//! seeded per process and would scatter the sessions differently each run).
//!
//! The key is the transcript's path relative to the PATH argument it was
//! found under, with `/` between components (`proj-a/s1/transcript.jsonl`),
//! so the corpus can be mounted anywhere. When PATH names the session
//! itself (its directory or its transcript), the key is the session
//! directory's name and the file name (`s1/transcript.jsonl`).

use std::fmt;
use std::path::{Component, Path};

/// One shard of a sweep: `index` in `1..=count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub(crate) index: u32,
    pub(crate) count: u32,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The environment variable giving the shard count to `--shard auto` under
/// a Kubernetes Indexed Job, which sets only the index
/// (`JOB_COMPLETION_INDEX`); set it to the Job's `completions`.
pub(crate) const COUNT_VAR: &str = "SMITH_CALIBRATE_SHARDS";

/// What `--shard` accepts, for help and errors.
pub(crate) const SYNTAX: &str = "K/N (1 <= K <= N), auto, or auto/N";

/// Why a `--shard` value or the scheduler's environment gives no shard: a
/// job script can tell a typo in the flag from a job that was not started
/// as an array, and the scheduler's case from the flag's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// The value is none of [`SYNTAX`].
    #[error("{0:?}: give {SYNTAX}, e.g. 3/8")]
    Syntax(String),
    /// A count or a variable (`N`, `SLURM_ARRAY_TASK_ID`…) that is no
    /// whole number.
    #[error("{name}={text:?} is not a whole number")]
    NotANumber { name: String, text: String },
    /// `K` outside `1..=N`.
    #[error("shard {index}/{count}: K must be between 1 and N (shards are numbered from 1)")]
    OutOfRange { index: u32, count: u32 },
    /// `auto` in a Slurm array that does not give the count.
    #[error("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; give the count as --shard auto/N")]
    SlurmNoCount,
    /// `auto` in a Slurm array whose task id is below its first task's.
    #[error("--shard auto: SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}")]
    SlurmBelowMin { id: u32, min: u32 },
    /// `auto` in a Slurm array with a step, which would leave shards out.
    #[error(
        "--shard auto: the Slurm array runs tasks {min}-{max} but the count is {count}; use a contiguous array without a step (--array=0-{})",
        .count.saturating_sub(1)
    )]
    SlurmStepped { min: u32, max: u32, count: u32 },
    /// `auto` in a Kubernetes Indexed Job that does not give the count.
    #[error("--shard auto: JOB_COMPLETION_INDEX is set but not the shard count; set {COUNT_VAR} to the Job's completions, or give --shard auto/N")]
    IndexedJobNoCount,
    /// `auto` with neither scheduler's variables set.
    #[error("--shard auto: neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --shard K/N")]
    NoScheduler,
    /// The shard the scheduler's variables give is out of range: `Slurm`
    /// or `JOB_COMPLETION_INDEX=K`, and the error.
    #[error("--shard auto ({0}): {1}")]
    Scheduler(String, Box<ShardError>),
}

impl Shard {
    /// Parses `--shard`: `K/N`; `auto` (the index and count from Slurm's
    /// array variables, or the index from `JOB_COMPLETION_INDEX` and the
    /// count from [`COUNT_VAR`]); `auto/N` (the index from either, the count
    /// given). `env` looks a variable up (the process environment, or a
    /// table in tests).
    pub(crate) fn parse(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let text = text.trim();
        let (first, count) = match text.split_once('/') {
            Some((k, n)) => (k.trim(), Some(n.trim())),
            None => (text, None),
        };
        let count = match count {
            Some(n) => Some(number("N", n)?),
            None => None,
        };
        if first == "auto" {
            return Shard::from_env(count, env);
        }
        let (Ok(index), Some(count)) = (first.parse::<u32>(), count) else {
            return Err(ShardError::Syntax(text.to_string()));
        };
        Shard::new(index, count)
    }

    /// A shard, checked: `1 <= index <= count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    fn from_env(
        count: Option<u32>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let var = |name: &str| -> Result<Option<u32>, ShardError> {
            match env(name) {
                None => Ok(None),
                Some(v) => number(name, &v).map(Some),
            }
        };
        if let Some(id) = var("SLURM_ARRAY_TASK_ID")? {
            // Arrays may start anywhere (--array=0-99 or 1-100): the shard is
            // the task's position from the first task. Steps (--array=0-99:2)
            // leave gaps that would lose shards, so the span must equal the
            // count.
            let min = var("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let tasks = var("SLURM_ARRAY_TASK_COUNT")?;
            let max = var("SLURM_ARRAY_TASK_MAX")?;
            let n = match (count, tasks) {
                (Some(n), _) | (None, Some(n)) => n,
                (None, None) => return Err(ShardError::SlurmNoCount),
            };
            if id < min {
                return Err(ShardError::SlurmBelowMin { id, min });
            }
            if let Some(max) = max {
                if max >= min && max - min + 1 != n {
                    return Err(ShardError::SlurmStepped { min, max, count: n });
                }
            }
            return Shard::new(id - min + 1, n)
                .map_err(|e| ShardError::Scheduler("Slurm".into(), Box::new(e)));
        }
        if let Some(index) = var("JOB_COMPLETION_INDEX")? {
            let n = match (count, var(COUNT_VAR)?) {
                (Some(n), _) | (None, Some(n)) => n,
                (None, None) => return Err(ShardError::IndexedJobNoCount),
            };
            return Shard::new(index.saturating_add(1), n).map_err(|e| {
                ShardError::Scheduler(format!("JOB_COMPLETION_INDEX={index}"), Box::new(e))
            });
        }
        Err(ShardError::NoScheduler)
    }

    /// Whether the session with key `key` (see [`key`]) is in this shard.
    pub fn takes(&self, key: &str) -> bool {
        of(key, self.count) == self.index
    }
}

/// The shard (1-based) of `key` among `count`.
pub(crate) fn of(key: &str, count: u32) -> u32 {
    (fnv1a64(key.as_bytes()) % u64::from(count.max(1))) as u32 + 1
}

fn number(name: &str, text: &str) -> Result<u32, ShardError> {
    text.trim()
        .parse::<u32>()
        .map_err(|_| ShardError::NotANumber {
            name: name.to_string(),
            text: text.to_string(),
        })
}

/// 64-bit FNV-1a.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The shard key of `transcript`, found under the argument `spec`: see the
/// module's documentation.
pub fn key(spec: &Path, transcript: &Path) -> String {
    let relative = if spec.is_dir() {
        transcript.strip_prefix(spec).ok()
    } else {
        None
    };
    let parts: Vec<String> = match relative {
        Some(rel) if rel.components().count() > 1 => rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect(),
        _ => {
            let mut tail: Vec<String> = transcript
                .components()
                .rev()
                .filter_map(|c| match c {
                    Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                    _ => None,
                })
                .take(2)
                .collect();
            tail.reverse();
            tail
        }
    };
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x85944171f73967e8);
    }

    #[test]
    fn explicit_shards_parse_and_bad_ones_say_why() {
        let none = env(&[]);
        assert_eq!(Shard::parse("3/8", &none), Ok(Shard { index: 3, count: 8 }));
        let out_of_range = |index, count| ShardError::OutOfRange { index, count };
        let syntax = |text: &str| ShardError::Syntax(text.to_string());
        for (bad, why) in [
            ("0/4", out_of_range(0, 4)),
            ("5/4", out_of_range(5, 4)),
            ("1/0", out_of_range(1, 0)),
            ("x/4", syntax("x/4")),
            ("3", syntax("3")),
            (
                "1/x",
                ShardError::NotANumber {
                    name: "N".into(),
                    text: "x".into(),
                },
            ),
        ] {
            let err = Shard::parse(bad, &none).unwrap_err();
            assert_eq!(err, why, "{bad}");
            let err = err.to_string();
            assert!(
                !err.is_empty()
                    && (err.contains("K/N")
                        || err.contains("between 1 and N")
                        || err.contains("whole number")),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn slurm_arrays_count_from_their_first_task() {
        let zero = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::parse("auto", &zero),
            Ok(Shard { index: 1, count: 4 })
        );
        let one = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(Shard::parse("auto", &one), Ok(Shard { index: 4, count: 4 }));
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        let err = Shard::parse("auto", &stepped).unwrap_err();
        assert_eq!(
            err,
            ShardError::SlurmStepped {
                min: 0,
                max: 6,
                count: 4
            }
        );
        let err = err.to_string();
        assert!(err.contains("contiguous"), "{err}");
    }

    #[test]
    fn indexed_jobs_need_a_count() {
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        let err = Shard::parse("auto", &k8s).unwrap_err();
        assert_eq!(err, ShardError::IndexedJobNoCount);
        let err = err.to_string();
        assert!(err.contains(COUNT_VAR) && err.contains("auto/N"), "{err}");
        assert_eq!(
            Shard::parse("auto/5", &k8s),
            Ok(Shard { index: 1, count: 5 })
        );
        let with = env(&[("JOB_COMPLETION_INDEX", "4"), (COUNT_VAR, "5")]);
        assert_eq!(
            Shard::parse("auto", &with),
            Ok(Shard { index: 5, count: 5 })
        );
        let over = env(&[("JOB_COMPLETION_INDEX", "5"), (COUNT_VAR, "5")]);
        assert_eq!(
            Shard::parse("auto", &over),
            Err(ShardError::Scheduler(
                "JOB_COMPLETION_INDEX=5".into(),
                Box::new(ShardError::OutOfRange { index: 6, count: 5 })
            ))
        );
        assert_eq!(
            Shard::parse("auto", &over).unwrap_err().to_string(),
            "--shard auto (JOB_COMPLETION_INDEX=5): shard 6/5: K must be between 1 and N (shards are numbered from 1)"
        );
        let err = Shard::parse("auto", &env(&[])).unwrap_err();
        assert_eq!(err, ShardError::NoScheduler);
        let err = err.to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID") && err.contains("JOB_COMPLETION_INDEX"),
            "{err}"
        );
    }

    #[test]
    fn every_key_lands_in_exactly_one_shard() {
        let keys: Vec<String> = (0..500)
            .map(|i| format!("p{}/s{i}/transcript.jsonl", i % 7))
            .collect();
        let n = 4;
        let mut counts = [0usize; 4];
        for k in &keys {
            let owners: Vec<u32> = (1..=n)
                .filter(|&i| Shard { index: i, count: n }.takes(k))
                .collect();
            assert_eq!(owners.len(), 1, "{k}");
            counts[owners[0] as usize - 1] += 1;
        }
        assert!(counts.iter().all(|&c| c > 80), "{counts:?}");
    }

    #[test]
    fn keys_are_relative_to_the_argument() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("proj").join("s1");
        std::fs::create_dir_all(&s).unwrap();
        let t = s.join("transcript.jsonl");
        std::fs::write(&t, "").unwrap();
        assert_eq!(key(dir.path(), &t), "proj/s1/transcript.jsonl");
        assert_eq!(key(&s, &t), "s1/transcript.jsonl");
        assert_eq!(key(&t, &t), "s1/transcript.jsonl");
    }
}
