//! `deploy/slurm/neardup.sbatch` run as written, with `srun` and `scontrol` stood in for by
//! small scripts (one task on this host): it writes its hostfile where the task runs, gives
//! srun and the job the node's CPU count, finds the job file in the folder it was submitted
//! from, runs the command NEARDUP_COMMAND names, passes the extra flags through to
//! `neardup dedup`, and the run completes.
//!
//! `deploy/slurm/neardup-sign.sbatch` run as two array tasks would run it: each signs its
//! share with the job file NEARDUP_JOB names, and the dedup run after them reads nothing.

use std::path::Path;
use std::process::Command;

mod support;
use support::repo;

fn script(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    let status = Command::new("chmod").arg("+x").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn the_slurm_script_runs_the_job_with_its_extra_flags() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // srun: note its own flags, drop them, run the one task as process 0.
    let srun_flags = dir.path().join("srun-flags");
    script(
        &bin.join("srun"),
        &format!(
            "#!/bin/bash\nwhile [[ $1 == --* ]]; do echo \"$1\" >> {}; shift; done\n\
             SLURM_PROCID=0 exec \"$@\"\n",
            srun_flags.display()
        ),
    );
    script(&bin.join("scontrol"), "#!/bin/bash\necho 127.0.0.1\n");
    let neardup = Path::new(env!("CARGO_BIN_EXE_neardup"));
    let list = dir.path().join("list.txt");
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    std::fs::write(&list, format!("{}\n", poems.display())).unwrap();
    let (out, kept, tmp) =
        (dir.path().join("out"), dir.path().join("kept"), dir.path().join("tmp"));
    std::fs::create_dir_all(&tmp).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();

    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let done = Command::new("bash")
        .arg(repo().join("deploy/slurm/neardup.sbatch"))
        .arg(&list)
        .arg(&out)
        .arg("--write-kept")
        .arg(&kept)
        .arg("-q")
        .env("PATH", path)
        .env("SLURM_JOB_NODELIST", "node-[1]")
        .env("SLURM_JOB_ID", "77")
        .env("SLURM_NTASKS", "1")
        // No --cpus-per-task: the script takes the node's CPUs (sbatch --exclusive).
        .env_remove("SLURM_CPUS_PER_TASK")
        .env("SLURM_CPUS_ON_NODE", "2")
        .env_remove("NEARDUP_WORKERS")
        .env("TMPDIR", &tmp)
        .env("NEARDUP_PORT", port.to_string())
        // A command of several words, as for a container runtime.
        .env("NEARDUP_COMMAND", format!("nice -n 1 {}", neardup.display()))
        // The job file of the folder sbatch was run from.
        .env_remove("NEARDUP_JOB")
        .env("SLURM_SUBMIT_DIR", repo())
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(
        std::fs::read_to_string(tmp.join("neardup-hosts-77-0")).unwrap(),
        format!("127.0.0.1:{port}\n")
    );
    assert_eq!(
        std::fs::read_to_string(&srun_flags).unwrap(),
        "--kill-on-bad-exit=1\n--cpus-per-task=2\n"
    );
    assert!(out.join("_SUCCESS").exists() && kept.join("_SUCCESS").exists());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["workers"], 2, "{summary}");
    // jobs/cc-wet-english.toml (min_features 20; the default is 5).
    assert_eq!(summary["config"]["features"]["min_features"], 20, "{summary}");
    assert!(summary["counts"]["records"].as_u64().unwrap() > 1000);
}

#[test]
fn the_slurm_array_signs_every_file_for_the_dedup_run_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let neardup = Path::new(env!("CARGO_BIN_EXE_neardup"));
    // Four files, listed.
    let poems = repo().join("data-samples/zh-tang-poems/poems.jsonl.gz");
    let text =
        std::io::read_to_string(flate2::read::GzDecoder::new(std::fs::File::open(poems).unwrap()))
            .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut list = String::new();
    for f in 0..4 {
        let path = dir.path().join(format!("part-{f}.jsonl"));
        let part: String = lines.iter().skip(f).step_by(4).map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, part).unwrap();
        list.push_str(&format!("{}\n", path.display()));
    }
    let list_path = dir.path().join("list.txt");
    std::fs::write(&list_path, list).unwrap();
    let out = dir.path().join("out");
    let job = repo().join("jobs/default.toml");
    // An array numbered from 1, as `--array=1-2` gives.
    for id in ["1", "2"] {
        let done = Command::new("bash")
            .arg(repo().join("deploy/slurm/neardup-sign.sbatch"))
            .arg(&list_path)
            .arg(&out)
            .arg("-q")
            .env("SLURM_ARRAY_TASK_ID", id)
            .env("SLURM_ARRAY_TASK_MIN", "1")
            .env("SLURM_ARRAY_TASK_COUNT", "2")
            .env("SLURM_CPUS_PER_TASK", "2")
            .env_remove("NEARDUP_WORKERS")
            .env_remove("JOB_COMPLETION_INDEX")
            .env("NEARDUP_JOB", &job)
            .env("NEARDUP_COMMAND", neardup)
            .output()
            .unwrap();
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
    let units = std::fs::read_dir(out.join("_work/units")).unwrap().count();
    assert_eq!(units, 4, "one unit per file");
    let done = Command::new(neardup)
        .args(["dedup", "-q", "-w", "2", "--input-list"])
        .arg(&list_path)
        .arg("--output")
        .arg(&out)
        .arg("--job")
        .arg(&job)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let work = &summary["work_area"];
    assert_eq!(
        (work["units_reused"].as_u64(), work["units_read"].as_u64()),
        (Some(4), Some(0)),
        "{work}"
    );
    assert_eq!(work["signed_tasks"], 2);
}
