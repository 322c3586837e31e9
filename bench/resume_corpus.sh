# Sourced by bench/resume.sh and bench/sign_tasks.sh: sets `bin` (NEARDUP, else this tree's
# release build, built now) and `work` (target/bench/resume-DOCS-FILES), whose `in/` holds
# the real corpus of $docs documents (bench/make_real_corpus.py) split into $files JSON
# Lines files, made once.
bin=${NEARDUP:-target/release/neardup}
[ -n "${NEARDUP:-}" ] || cargo build --release -q -p neardup-cli
corpus=target/bench/real-$docs.jsonl
[ -f "$corpus" ] || python3 bench/make_real_corpus.py --docs "$docs" --out "$corpus" > /dev/null
work=target/bench/resume-$docs-$files
if [ ! -d "$work/in" ]; then
  mkdir -p "$work/in"
  split -n "l/$files" -d -a 3 --additional-suffix=.jsonl "$corpus" "$work/in/part-"
fi
