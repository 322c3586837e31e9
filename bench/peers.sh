#!/usr/bin/env bash
# Peer comparison: neardup against datasketch, rensa, gaoya, datatrove and text-dedup on the
# same labelled corpus of real documents. Each tool runs as one whole process, back to back,
# timed by /usr/bin/time (wall seconds, peak RSS); bench/peers.py scores all of them with one
# scorer against the planted truth and prints one table per corpus size (also written as
# Markdown to target/bench/peers-DOCS.md). The work every tool does is described at the top of
# bench/peers.py. Not part of the test run; needs ../shared/data-samples.
#
#   bash bench/peers.sh [DOCS...]        default: 10000 100000
#
# Builds, once, virtual environments under target/ with pinned versions: target/peer-venv
# (Python 3.11: datasketch, rensa, gaoya, NumPy for the corpus, duckdb for scoring),
# target/peer-venv-datatrove (its xxhash pin), target/peer-venv-312 (text-dedup needs Python
# 3.12); then the corpora (bench/make_real_corpus.py) and the release binary. A tool that
# cannot be installed or fails is listed as skipped with the reason; its log is
# target/bench/peers-DOCS/TOOL.log.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then sizes=("$@"); else sizes=(10000 100000); fi

# venv DIR PYTHON PACKAGE...: a virtual environment with these packages, made unless DIR/installed
# already lists the same ones. The pip log is DIR.pip.log.
venv() {
  local dir=$1 python=$2
  shift 2
  [ "$(cat "$dir/installed" 2>/dev/null)" = "$*" ] && return 0
  echo "installing into $dir: $*" >&2
  rm -rf "$dir"
  "$python" -m venv "$dir" &&
    "$dir/bin/pip" install --disable-pip-version-check "$@" > "$dir.pip.log" 2>&1 &&
    echo "$*" > "$dir/installed"
}

# A Python 3.12 interpreter: on the PATH, from pyenv, or fetched by uv (which needs github.com).
python312() {
  local p
  for p in python3.12 "$(pyenv root 2>/dev/null)"/versions/3.12*/bin/python3.12; do
    if "$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2> /dev/null; then
      command -v "$p"
      return 0
    fi
  done
  command -v uv > /dev/null && uv python install 3.12 > /dev/null 2>&1 && uv python find 3.12
}

skip() { printf '%s\tskipped\t%s\n' "$1" "$2" >> "$results"; }


# timed TOOL COMMAND...: runs the command as one process into $out/TOOL and records its wall
# time and peak RSS, or a skip when it fails.
timed() {
  local tool=$1 wall rss_kb
  shift
  echo "running $tool" >&2
  if /usr/bin/time -f '%e %M' -o "$out/$tool.time" "$@" > "$out/$tool.log" 2>&1; then
    read -r wall rss_kb < "$out/$tool.time"
    printf '%s\t%s\t%s\t%s\n' "$tool" "$wall" "$rss_kb" "$out/$tool" >> "$results"
  else
    skip "$tool" "failed (exit status in $out/$tool.time), see $out/$tool.log"
  fi
}

# peer TOOL PYTHON: runs the bench/peers.py runner of TOOL with the PYTHON of its environment.
peer() { timed "$1" "$2" bench/peers.py run "$1" "$corpus" "$out/$1"; }

main_venv=target/peer-venv
venv "$main_venv" python3.11 datasketch==2.0.0 rensa==0.5.0 gaoya==0.2.2 numpy==2.4.6 scipy==1.17.1 \
  xxhash==3.8.2 duckdb==1.4.2
datatrove_ok=true
venv target/peer-venv-datatrove python3.11 "datatrove[io]==0.10.1" xxhash==3.8.2 numpy==2.4.6 \
  regex==2026.11.15 tokenizers==0.23.3 || datatrove_ok=false
text_dedup_skip=""
if ! py312=$(python312); then
  text_dedup_skip="needs Python >= 3.12: none on the PATH or in pyenv, and uv cannot fetch one"
elif ! venv target/peer-venv-312 "$py312" text-dedup==0.4.1 numpy==2.5.5; then
  text_dedup_skip="pip install failed, see target/peer-venv-312.pip.log"
fi
cargo build --release -q -p neardup-cli

run_neardup() { timed "$1" target/release/neardup dedup -i "$corpus" -o "$out/$1" -w 2 -q "${@:2}"; }

for docs in "${sizes[@]}"; do
  corpus=target/bench/real-$docs.jsonl
  out=target/bench/peers-$docs
  results=$out/results.tsv
  [ -f "$corpus" ] || "$main_venv/bin/python" bench/make_real_corpus.py --docs "$docs" --out "$corpus"
  rm -rf "$out"
  mkdir -p "$out"
  : > "$results"

  run_neardup neardup --method minhash
  run_neardup neardup-peer-features --method minhash --job bench/peer-features.toml
  run_neardup neardup-21x6 --method minhash --job bench/bands-21x6.toml
  peer datasketch "$main_venv/bin/python"
  peer rensa "$main_venv/bin/python"
  peer gaoya "$main_venv/bin/python"
  if $datatrove_ok; then
    peer datatrove target/peer-venv-datatrove/bin/python
  else
    skip datatrove "pip install failed, see target/peer-venv-datatrove.pip.log"
  fi
  if [ -z "$text_dedup_skip" ]; then
    peer text-dedup target/peer-venv-312/bin/python
  else
    skip text-dedup "$text_dedup_skip"
  fi
  run_neardup neardup-simhash --method simhash
  run_neardup neardup-simhash-peer-features --method simhash --job bench/peer-features.toml
  peer gaoya-simhash "$main_venv/bin/python"

  "$main_venv/bin/python" bench/peers.py table "$corpus" "$results" "target/bench/peers-$docs.md"
done
