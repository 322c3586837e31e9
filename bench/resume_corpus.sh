# Sourced by bench/resume.sh and bench/sign_tasks.sh: sets `bin` (NEARDUP, else this tree's
# release build, built now) and `work` (target/bench/resume-DOCS-FILES), whose `in/` holds
# the real corpus of $docs documents (bench/make_real_corpus.py) split into $files JSON
# Lines files, made once; with WEB=1, `work` is target/bench/resume-web-DOCS and `in/` the
# web archive bench/warc.sh reads (and `files` its count).
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
if [ -n "${WEB:-}" ]; then
  # Web pages: bench/warc.sh's gzipped WARC files of the benchmark corpus (FILES unused).
  corpus=target/bench/corpus-$docs.jsonl
  warc=target/bench/warc-$docs
  [ -f "$corpus" ] || python3 bench/make_corpus.py --docs "$docs" --out "$corpus"
  [ -d "$warc" ] && [ -f "$warc.truth.jsonl" ] || python3 bench/make_warc.py --corpus "$corpus" --out "$warc"
  work=target/bench/resume-web-$docs
  mkdir -p "$work"
  ln -sfn "$(realpath "$warc")" "$work/in"
  files=$(find -L "$work/in" -name '*.warc.gz' | wc -l)
else
  corpus=target/bench/real-$docs.jsonl
  [ -f "$corpus" ] || python3 bench/make_real_corpus.py --docs "$docs" --out "$corpus" > /dev/null
  work=target/bench/resume-$docs-$files
  if [ ! -d "$work/in" ]; then
    mkdir -p "$work/in"
    split -n "l/$files" -d -a 3 --additional-suffix=.jsonl "$corpus" "$work/in/part-"
  fi
fi
