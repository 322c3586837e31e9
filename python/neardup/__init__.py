"""neardup from Python: the ``neardup`` command this wheel installed, and a thin wrapper that
runs it.

    import neardup
    summary = neardup.dedup(["corpus/"], "out/", threshold=0.8, workers=8)
    summary["counts"]["kept"]

The job runs in its own process (the Rust command), so it holds no Python lock and a
failure cannot take the interpreter with it. Read the outputs with pyarrow, Polars or
DuckDB: ``out/documents/*.parquet`` and ``out/pairs/*.parquet``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

__all__ = ["NeardupError", "binary", "dedup", "run"]

PathLike = Union[str, "os.PathLike[str]"]


class NeardupError(RuntimeError):
    """The command failed: ``returncode`` 1 for a failed job, 2 for a usage or job-file
    error; ``stderr`` holds what it printed."""

    def __init__(self, returncode: int, args: Sequence[str], stderr: str):
        self.returncode = returncode
        self.command = list(args)
        self.stderr = stderr
        lines = [line for line in stderr.splitlines() if line.strip()]
        detail = "\n".join(lines[-20:]) or "(nothing printed)"
        super().__init__(f"neardup exited with {returncode}:\n{detail}")


def binary() -> str:
    """The path of the ``neardup`` command this package was installed with."""
    name = "neardup.exe" if os.name == "nt" else "neardup"
    places = [sysconfig.get_path("scripts")]
    try:
        places.append(sysconfig.get_path("scripts", f"{os.name}_user"))  # pip install --user
    except KeyError:
        pass
    places.append(str(Path(sys.executable).parent))
    for place in places:
        path = Path(place) / name
        if path.is_file():
            return str(path)
    found = shutil.which(name)  # installed with pip --target or --prefix, on PATH
    if found:
        return found
    raise FileNotFoundError(f"the neardup command is not installed beside {sys.executable}")


def run(args: Sequence[str], *, check: bool = True, capture_stderr: bool = True) -> subprocess.CompletedProcess:
    """Runs ``neardup ARGS...``, e.g. ``run(["eval", "--truth", "t.json", "--run", "out"])``.
    Raises NeardupError when it fails and ``check`` is true."""
    command = [binary(), *[os.fspath(a) for a in args]]
    done = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture_stderr else None,
        encoding="utf-8",
        errors="replace",
    )
    if check and done.returncode != 0:
        raise NeardupError(done.returncode, command, done.stderr or "")
    return done


def _flags(settings: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    for name, value in settings.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            # The flag once per value: `--set a=1 --set b=2` (a flag takes one value each time).
            for v in value:
                flags += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            flags += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return flags


def dedup(
    inputs: Union[PathLike, Iterable[PathLike]], output: PathLike, **settings: Any
) -> dict:
    """Runs ``neardup dedup`` on ``inputs`` (paths or addresses, files or folders) into
    ``output`` and returns its ``summary.json`` as a dict.

    Every keyword is the command's flag of that name, underscores for dashes:
    ``job="jobs/cc-wet-english.toml"``, ``method="simhash"``, ``threshold=0.7``,
    ``workers=8``, ``memory_budget="4G"``, ``write_kept="kept/"``, ``index="index/"``.
    True gives a bare flag, None and False leave it out, a list repeats the flag for each
    value (``set=["features.ngram_chars=3", "boilerplate.enabled=false"]``). What the
    command warns about (a flag the method ignores, say) goes to ``sys.stderr`` as it
    would on a terminal. Raises NeardupError (with the command's message and exit code)
    when the job fails."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    paths = [os.fspath(p) for p in inputs]
    if not paths:
        raise ValueError("no inputs")
    settings.setdefault("quiet", True)
    settings["json"] = True
    done = run(["dedup", "--input", *paths, "--output", os.fspath(output), *_flags(settings)])
    if done.stderr:
        sys.stderr.write(done.stderr)
    # The command prints summary.json as written, also for an output in object storage.
    return json.loads(done.stdout)
