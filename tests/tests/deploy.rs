//! The launch helpers in deploy/ produce what timely expects.

use std::process::Command;

use neardup_e2e::repo;

fn run(args: &[&str]) -> String {
    let out =
        Command::new("sh").arg(repo().join("deploy/hostfile.sh")).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hostfiles_list_one_address_per_process_in_order() {
    assert_eq!(
        run(&["kubernetes", "neardup-run", "neardup", "3"]),
        "neardup-run-0.neardup:2101\nneardup-run-1.neardup:2101\nneardup-run-2.neardup:2101\n"
    );
    assert_eq!(run(&["hosts", "7000", "node-a", "node-b"]), "node-a:7000\nnode-b:7000\n");
}

#[test]
fn the_slurm_script_is_valid_bash() {
    let status = Command::new("bash")
        .arg("-n")
        .arg(repo().join("deploy/slurm/neardup.sbatch"))
        .status()
        .unwrap();
    assert!(status.success());
}
