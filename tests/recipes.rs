//! The README's recipes for sharded sweeps: the polars and DuckDB merges
//! run over a real folder of shards and agree with `merge`; the Slurm
//! script passes `bash -n`; the Kubernetes manifest parses and asks for as
//! many shards as it has completions. The Python parts need `duckdb`,
//! `polars` and `pyyaml` (in `$SMITH_CALIBRATE_PYTHON`, else `python3`) and
//! say that they skipped when those are missing.
#![cfg(feature = "full")]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::column_f64;
use smith_calibrate::synth::{self, CorpusSpec, SizeSpec};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn ok(o: Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {err}{}",
        String::from_utf8_lossy(&o.stdout)
    );
    err
}

/// A Python with the recipes' packages, or why there is none.
/// Where `SMITH_CALIBRATE_PYTHON` is set (CI sets it), a Python without the
/// packages is a failure, not a skip.
fn python() -> Result<String, String> {
    let named = std::env::var("SMITH_CALIBRATE_PYTHON").ok();
    let python = named.clone().unwrap_or_else(|| "python3".into());
    let found = python_with_packages(python);
    if let (Some(named), Err(why)) = (&named, &found) {
        panic!("SMITH_CALIBRATE_PYTHON={named} is set but unusable: {why}");
    }
    found
}

fn python_with_packages(python: String) -> Result<String, String> {
    match Command::new(&python)
        .args(["-c", "import duckdb, polars, yaml"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(python),
        Ok(o) => Err(format!(
            "{python} lacks duckdb, polars or pyyaml ({}); pip install duckdb polars pyyaml, or set SMITH_CALIBRATE_PYTHON",
            String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")
        )),
        Err(e) => Err(format!("{python}: {e}")),
    }
}

#[test]
fn the_slurm_script_passes_bash_n() {
    let script = repo("deploy/slurm/sweep-array.sbatch");
    ok(
        Command::new("bash")
            .arg("-n")
            .arg(&script)
            .output()
            .unwrap(),
        "bash -n",
    );
    let text = fs::read_to_string(&script).unwrap();
    assert!(text.contains("#SBATCH --array=0-99") && text.contains("--shard auto --resume"));
}

#[test]
fn the_guide_shows_the_recipes_that_are_tested() {
    let readme = fs::read_to_string(repo("docs/guide.md")).unwrap();
    for file in [
        "deploy/merge/merge_polars.py",
        "deploy/merge/merge_duckdb.sql",
    ] {
        let text = fs::read_to_string(repo(file)).unwrap();
        assert!(
            readme.contains(&text),
            "docs/guide.md does not show {file} as it is"
        );
    }
}

#[test]
fn polars_and_duckdb_merge_the_shards_as_merge_does() {
    let python = match python() {
        Ok(p) => p,
        Err(why) => {
            eprintln!("skipping: {why}");
            return;
        }
    };
    let check = r#"
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
spec = job["spec"]
assert job["kind"] == "Job" and spec["completionMode"] == "Indexed", job
pod = spec["template"]["spec"]
assert pod["restartPolicy"] == "Never"
c = pod["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert env["SMITH_CALIBRATE_SHARDS"] == str(spec["completions"]), (env, spec["completions"])
assert c["command"][:2] == ["smith-calibrate", "sweep"] and "auto" in c["command"] and "--resume" in c["command"]
print("manifest ok")
"#;
    let o = Command::new(&python)
        .args(["-c", check])
        .arg(repo("deploy/kubernetes/indexed-job.yaml"))
        .output()
        .unwrap();
    ok(o, "the Kubernetes manifest");

    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    let spec = CorpusSpec {
        seed: 4,
        sessions: 12,
        shape: None,
        size: SizeSpec::Range(20_000, 100_000),
    };
    for i in 0..spec.sessions {
        synth::write_session(&corpus, &spec.session(i)).unwrap();
    }
    let out = tmp.path().join("out");
    for k in 1..=3 {
        ok(
            crate::common::bin()
                .arg("sweep")
                .arg(&corpus)
                .arg("--out")
                .arg(&out)
                .args(["--shard", &format!("{k}/3"), "--compact-at", "0.6,0.8"])
                .args(["--max-tokens", "30000", "--jobs", "1", "--json"])
                .output()
                .unwrap(),
            "sweep --shard",
        );
    }
    ok(
        crate::common::bin()
            .arg("merge")
            .arg(&out)
            .output()
            .unwrap(),
        "merge",
    );
    ok(
        Command::new(&python)
            .arg(repo("deploy/merge/merge_polars.py"))
            .arg(&out)
            .output()
            .unwrap(),
        "the polars recipe",
    );
    let duck = "import duckdb, sys; duckdb.sql(open(sys.argv[1]).read())";
    ok(
        Command::new(&python)
            .args(["-c", duck])
            .arg(repo("deploy/merge/merge_duckdb.sql"))
            .current_dir(&out)
            .output()
            .unwrap(),
        "the DuckDB recipe",
    );

    let ours = crate::common::read_csv(&out.join("configs.csv"));
    for file in ["configs-polars.csv", "configs-duckdb.csv"] {
        let theirs = crate::common::read_csv(&out.join(file));
        assert_eq!(theirs.height(), ours.height(), "{file}");
        for name in [
            "config",
            "sessions",
            "tokens_sent",
            "results_mangled",
            "needed_again",
            "peak_tokens",
        ] {
            assert_eq!(
                column_f64(&theirs, name),
                column_f64(&ours, name),
                "{file}: {name}"
            );
        }
        for (a, b) in column_f64(&theirs, "price")
            .iter()
            .zip(column_f64(&ours, "price"))
        {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{file}: price {a} vs {b}"
            );
        }
    }
    // The rows in the same order as merge's sessions.csv.
    let script =
        "import polars as pl, sys; [print(p) for p in pl.read_parquet(sys.argv[1])['path']]";
    let ours: Vec<String> = crate::common::read_csv(&out.join("sessions.csv"))
        .column("path")
        .unwrap()
        .str()
        .unwrap()
        .into_iter()
        .map(|p| p.unwrap().to_string())
        .collect();
    for file in ["sessions-polars.parquet", "sessions-duckdb.parquet"] {
        let o = Command::new(&python)
            .args(["-c", script])
            .arg(out.join(file))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let theirs: Vec<&str> = text.lines().collect();
        assert_eq!(theirs, ours, "{file}");
    }
}
