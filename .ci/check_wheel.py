"""The wheel as a Python user meets it: run by the Python of the fresh virtual environment
that holds the wheel alone (no other package), from the repository root.

    target/wheel-venv/bin/python .ci/check_wheel.py
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import neardup

poems = Path("data-samples/zh-tang-poems")
# The command the wheel installed beside this interpreter.
assert Path(neardup.binary()).parent == Path(sys.executable).parent, neardup.binary()
with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "out"
    summary = neardup.dedup(poems, out, workers=2, threshold=0.8, keep="longest")
    assert summary == json.loads((out / "summary.json").read_text()), "dedup returns summary.json"
    assert summary["counts"]["records"] == 5000 and summary["workers"] == 2, summary["counts"]
    assert summary["config"]["decision"]["keep"] == "longest", summary["config"]["decision"]
    # A list of inputs, and a bare flag.
    again = neardup.dedup([poems], Path(tmp) / "again", quiet=True)
    assert again["counts"] == summary["counts"], (again["counts"], summary["counts"])
    # A list repeats its flag: two job-file keys set at once; a flag the method ignores is
    # warned about on stderr, as the command does.
    checked = subprocess.run(
        [
            sys.executable,
            "-c",
            "import neardup, sys; s = neardup.dedup(sys.argv[1], sys.argv[2], method='simhash', "
            "threshold=0.7, set=['features.ngram_chars=3', 'boilerplate.enabled=false']); "
            "print(s['config']['features']['ngram_chars'], s['config']['boilerplate']['enabled'])",
            str(poems),
            str(Path(tmp) / "set"),
        ],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and checked.stdout.split() == ["3", "False"], checked
    assert "--threshold is ignored" in checked.stderr, checked.stderr
    # A usage error raises, with the command's exit code and message.
    try:
        neardup.dedup(poems, Path(tmp) / "bad", method="nonsense")
    except neardup.NeardupError as e:
        assert e.returncode == 2 and "nonsense" in str(e), (e.returncode, str(e))
    else:
        raise AssertionError("a bad flag did not raise")
    # python -m neardup is the command, with its exit codes.
    version = subprocess.run([sys.executable, "-m", "neardup", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("neardup "), version
    missing = subprocess.run(
        [sys.executable, "-m", "neardup", "index", "show", "--index", f"{tmp}/none"], capture_output=True
    )
    assert missing.returncode == 2, missing
print(f"ok: neardup.dedup on {summary['counts']['records']} poems, kept {summary['counts']['kept']}")
