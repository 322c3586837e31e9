#!/usr/bin/env python3
"""The arithmetic of docs/scaling.md: time, memory, network and disk for a crawl of PAGES
pages on machines of CORES cores, from per-unit costs measured by the bench scripts.

    python3 bench/scaling_model.py [--pages 3e9] [--text-bytes 1340] [--candidates 1.0]
                                   [--cores 32] [--link-gbit 10] [--machines 16 64 256]

The measured inputs are constants below, each with the run it comes from; re-measure them
(and this file's output in docs/scaling.md) when the code changes a figure.
Not part of the test run.
"""

import argparse

# From `BUDGETS=2G bash bench/linear.sh 1 10000000` (2 workers, AVX-512 machine,
# 2026-11-26, build f5906a2): 10 M documents, 13.4 GB of JSON Lines, 1,340 bytes a document.
# Stage seconds times 2 workers, divided by what the stage handles.
MEASURED_TEXT_BYTES = 1340
READ_AND_SIGN_US_PER_DOC = 68.8 * 2 / 10e6 * 1e6  # grows with the text
IDS_AND_EXACT_US_PER_DOC = 5.2 * 2 / 10e6 * 1e6
BUCKETS_US_PER_DOC = 17.6 * 2 / 10e6 * 1e6  # 16 bucket records a document
VERIFY_US_PER_CANDIDATE = 31.1 * 2 / 32.26e6 * 1e6  # unique candidate pairs
CLUSTER_US_PER_PAIR = 6.3 * 2 / 4.13e6 * 1e6  # verified and exact pairs
WRITING_US_PER_DOC = 4.9 * 2 / 10e6 * 1e6
PAIRS_PER_DOC = 4.13e6 / 10e6
# Spilled bytes a document when the budget is far below the data: 17,377 MiB for the same
# 10 M documents at 2G with build 984910c (2026-11-26, on an Intel host of the CI kind;
# spilled bytes do not depend on the machine's speed), since the store writes each
# signature once (21,981 MiB with f5906a2).
SPILL_BYTES_PER_DOC = 17377 * 2**20 / 10e6

# From a 2-process run of the 1 M real documents on loopback (`summary.json`
# `exchanged_bytes`, 2026-11-26): 704 MiB crossed between the processes. With two, half of
# what is routed by key crosses, so twice that is routed in all.
ROUTED_BYTES_PER_DOC = 2 * 704 * 2**20 / 1e6

# From bench/scale.sh (2026-11-26): two processes of one worker take 1.05 to 1.10 times two
# workers of one process (serialising what crosses). Taken as 1.1 at two processes, where
# half the records cross, and growing with the share that crosses.
CROSSING_OVERHEAD_AT_HALF = 0.1
# Two workers do 1.74 to 1.84 times the work of one (bench/scale.sh): 0.9 per core.
CORE_EFFICIENCY = 0.9
# What every process needs whatever its budget (docs/configuration.md, Memory).
FIXED_MEMORY_BYTES = 220e6


def model(pages, text_bytes, candidates, cores, link_gbit, machines):
    read = READ_AND_SIGN_US_PER_DOC * text_bytes / MEASURED_TEXT_BYTES
    per_doc_us = (
        read
        + IDS_AND_EXACT_US_PER_DOC
        + BUCKETS_US_PER_DOC
        + VERIFY_US_PER_CANDIDATE * candidates
        + CLUSTER_US_PER_PAIR * PAIRS_PER_DOC
        + WRITING_US_PER_DOC
    )
    core_hours = pages * per_doc_us / 1e6 / 3600
    crossing = (machines - 1) / machines
    overhead = 1 + CROSSING_OVERHEAD_AT_HALF * crossing / 0.5
    compute_s = core_hours * 3600 * overhead / (machines * cores * CORE_EFFICIENCY)
    routed = pages * ROUTED_BYTES_PER_DOC
    sent_per_machine = routed * crossing / machines
    network_s = sent_per_machine / (link_gbit * 1e9 / 8)
    text_per_machine = pages * text_bytes / machines
    spill_per_machine = pages * SPILL_BYTES_PER_DOC / machines
    return {
        "per_doc_us": per_doc_us,
        "core_hours": core_hours,
        "compute_min": compute_s / 60,
        "network_min": network_s / 60,
        "sent_gb": sent_per_machine / 1e9,
        "text_gb": text_per_machine / 1e9,
        "spill_gb": spill_per_machine / 1e9,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=float, default=3e9)
    ap.add_argument("--text-bytes", type=float, default=MEASURED_TEXT_BYTES,
                    help="text a page carries (WET, JSON Lines), bytes")
    ap.add_argument("--candidates", type=float, default=1.0,
                    help="unique candidate pairs a page (0.73 at 1 M real documents, 3.2 at 10 M)")
    ap.add_argument("--cores", type=int, default=32)
    ap.add_argument("--link-gbit", type=float, default=10)
    ap.add_argument("--machines", type=int, nargs="+", default=[16, 64, 256])
    a = ap.parse_args()
    first = model(a.pages, a.text_bytes, a.candidates, a.cores, a.link_gbit, 1)
    print(f"{a.pages:.3g} pages of {a.text_bytes:.0f} bytes ({a.pages * a.text_bytes / 1e12:.1f} TB of text), "
          f"{a.candidates} candidates a page: {first['per_doc_us']:.1f} µs of CPU a page, "
          f"{first['core_hours']:.0f} core-hours")
    print(f"{'machines':>8} {'compute min':>11} {'network min':>11} {'sent GB/machine':>15} "
          f"{'text GB/machine':>15} {'spill GB/machine':>16}")
    for m in a.machines:
        r = model(a.pages, a.text_bytes, a.candidates, a.cores, a.link_gbit, m)
        print(f"{m:>8} {r['compute_min']:>11.1f} {r['network_min']:>11.1f} {r['sent_gb']:>15.0f} "
              f"{r['text_gb']:>15.0f} {r['spill_gb']:>16.0f}")


if __name__ == "__main__":
    main()
