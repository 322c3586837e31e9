//! `decision.removal = "verified"` removes only documents verified against their kept
//! document: exactly the connected-components decisions minus the unverified removals,
//! which stay kept in their cluster, the same with any number of workers.

use neardup_e2e::{dedup, render_documents, repo, summary};
use neardup_io::{Decision, Reason, read_documents};

#[test]
fn verified_removal_keeps_exactly_the_unverified_members() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("data-samples/zh-court-openings");
    let run = |removal: &str, workers: &str| {
        let out = dir.path().join(format!("{removal}-{workers}"));
        // At 0.7 the templated openings chain: two differ in a party or a number, and a
        // third is near each of them (two chains at 0.8, where references keep most apart).
        dedup(&input, &out, &["-w", workers, "--removal", removal, "--threshold", "0.7"]).unwrap();
        out
    };
    let connected = read_documents(&run("connected", "2").join("documents")).unwrap();
    let verified_out = run("verified", "2");
    let verified = read_documents(&verified_out.join("documents")).unwrap();
    assert_eq!(render_documents(&verified_out), render_documents(&run("verified", "1")));
    assert_eq!(connected.len(), verified.len());
    let mut unverified = 0;
    for (c, v) in connected.iter().zip(&verified) {
        assert_eq!((c.doc, &c.cluster, c.cluster_size), (v.doc, &v.cluster, v.cluster_size));
        if c.decision == Decision::Remove && c.verified_with_kept == Some(false) {
            unverified += 1;
            assert_eq!(v.decision, Decision::Keep);
            assert_eq!(v.reason, Some(Reason::UnverifiedInCluster));
            assert_eq!(v.duplicate_of, None);
        } else {
            assert_eq!(c, v);
        }
    }
    assert!(unverified > 10, "the templated openings chain: {unverified}");
    let summary = summary(&verified_out);
    assert_eq!(summary["counts"]["kept_unverified_in_cluster"], unverified);
    assert_eq!(summary["counts"]["removed_not_verified_with_kept"], 0);
}
