#!/usr/bin/env bash
# Siteset evaluation: neardup's defaults on a labelled crawl of many small sites, with
# cross-site notices, injected promotions, short pages (poems, briefs, court openings) and
# HTML given as JSON Lines. bench/make_siteset.py builds it (see its docstring for every
# kind, mechanism and hard negative). This script runs MinHash and SimHash at their
# defaults on pages.jsonl, pages.warc.gz and pages-html.jsonl (SITESET_INPUTS overrides the
# list, e.g. "pages.jsonl pages.wet.gz pages-minified.jsonl"), scores every run with
# `neardup eval`, and prints one table: pair precision, recall and F1; recall of the pairs
# with an English page and with a Chinese page; documents removed, and those removed for a
# document the truth says differs (with their share of the removals); hard-negative pairs
# joined; then recall by kind and by mechanism (and wrong removals by mechanism) for Chinese
# and English pages, the hard negatives joined by kind, and the verified pairs the truth
# rejects, counted by their pages' genres, hosts and shared mechanisms. SITESET_EXPLAIN=1
# also writes runs/NAME.explained.txt for the first run: each such pair as `neardup explain`
# decides it, and the lines each page kept.
#
#   bash bench/siteset.sh [SEED] [MIX]        defaults: seed 1, mix mixed (mixed or zh)
#
# DESIGN draws (defaults may be chosen on them): seeds 1 and 2 with mixed, seed 1 with zh.
# HELD-OUT draws (defaults are reported on them, never tuned on them): seeds 11, 12 and 13
# with mixed, seeds 11 and 12 with zh. Other seeds are further draws of the generator.
#
# The set goes to target/siteset-MIX-SEED, the runs and their eval JSON to its runs/ folder.
# It reads research-only text from ../shared/data-samples: never ship or commit the set. Not
# part of the test run; a draw and its six runs take about a minute on 2 cores.
# SITESET_NO_BUILD=1 uses the built binary as it is; NEARDUP=path uses another binary (and
# builds nothing). The binary is $CARGO_TARGET_DIR/release/neardup, or
# target/release/neardup when CARGO_TARGET_DIR is unset.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-1}
mix=${2:-mixed}
case $seed in *[!0-9]* | '') echo "SEED must be a number" >&2; exit 2 ;; esac
case $mix in mixed | zh) ;; *) echo "usage: bash bench/siteset.sh [SEED] [mixed|zh]" >&2; exit 2 ;; esac
case "$mix:$seed" in
  mixed:1 | mixed:2 | zh:1) role=DESIGN ;;
  mixed:11 | mixed:12 | mixed:13 | zh:11 | zh:12) role="HELD OUT" ;;
  *) role="another draw" ;;
esac
dir=target/siteset-$mix-$seed
mkdir -p "$dir"
python3 bench/make_siteset.py --mix "$mix" --seed "$seed" --out "$dir" > "$dir.stats.json"
if [ -n "${NEARDUP:-}" ]; then
  bin=$NEARDUP
else
  [ "${SITESET_NO_BUILD:-}" = 1 ] || cargo build --release -q -p neardup-cli
  bin=${CARGO_TARGET_DIR:-target}/release/neardup
fi
inputs=${SITESET_INPUTS:-pages.jsonl pages.warc.gz pages-html.jsonl}
runs=$dir/runs
rm -rf "$runs"
mkdir -p "$runs"

# Negatives split by kind, and one truth file per mechanism tag whose `g` is lang:tag for
# the pages with the tag and lang:- for the rest (a page has several tags; eval groups by
# one string).
python3 - "$dir" "$runs" <<'PY'
import json, sys
from collections import defaultdict
d, runs = sys.argv[1:]
by = defaultdict(list)
for line in open(f"{d}/negatives.jsonl", encoding="utf-8"):
    if line.strip():
        by[json.loads(line)["kind"]].append(line)
for kind, lines in sorted(by.items()):
    open(f"{runs}/neg.{kind}.jsonl", "w", encoding="utf-8").writelines(lines)
truth = [json.loads(line) for line in open(f"{d}/truth.json", encoding="utf-8") if line.strip()]
for tag in ("promo", "notice", "lone-article", "short", "small-host", "box-line", "header-line", "none"):
    with open(f"{runs}/tag.{tag}.json", "w", encoding="utf-8") as out:
        for t in truth:
            has = tag in t["mechanisms"].split("+")
            out.write(json.dumps({"id": t["id"], "truth": t["truth"], "g": f"{t['lang']}:{tag if has else '-'}"}) + "\n")
PY

# A run's name: its method and its input's form.
form() {
  case $1 in
    pages.jsonl) echo jsonl ;; pages.warc.gz) echo warc ;; pages.wet.gz) echo wet ;;
    pages-html.jsonl) echo html ;; pages-minified.jsonl) echo minified ;;
    *) echo "unknown input $1" >&2; exit 2 ;;
  esac
}
names=()
for method in minhash simhash; do
  for input in $inputs; do
    name=$method-$(form "$input")
    names+=("$name")
    run=$runs/$name
    "$bin" dedup -i "$dir/$input" -o "$run" --method "$method" -q
    for by in lang group_kind; do
      "$bin" eval --truth "$dir/truth.json" --run "$run" --by "$by" --show 0 --json > "$run.by-$by.json"
    done
    "$bin" eval --truth "$dir/truth.json" --run "$run" --show 100000 --json > "$run.fp.json"
    for tag in "$runs"/tag.*.json; do
      t=${tag##*/tag.}
      "$bin" eval --truth "$tag" --run "$run" --by g --show 0 --json > "$run.tag-${t%.json}.json"
    done
    "$bin" eval --truth-pairs "$dir/negatives.jsonl" --run "$run" --show 0 --json > "$run.neg.json"
    for neg in "$runs"/neg.*.jsonl; do
      k=${neg##*/neg.}
      "$bin" eval --truth-pairs "$neg" --run "$run" --show 0 --json > "$run.neg-${k%.jsonl}.json"
    done
  done
done

# SITESET_EXPLAIN=1: every verified pair the truth rejects in the first run (MinHash on the
# first input), with the decisions `neardup explain` gives and the lines each page kept.
if [ "${SITESET_EXPLAIN:-}" = 1 ]; then
  python3 - "$bin" "$dir" "$runs/${names[0]}" "$(echo $inputs | cut -d' ' -f1)" > "$runs/${names[0]}.explained.txt" <<'PY'
import json, subprocess, sys
binary, d, run, first = sys.argv[1:]
truth = {t["id"]: t for t in map(json.loads, open(f"{d}/truth.json", encoding="utf-8"))}
texts = {t["id"]: t["text"] for t in map(json.loads, open(f"{d}/pages.jsonl", encoding="utf-8"))}
if first != "pages.jsonl" and first.endswith(".jsonl"):
    texts = {t["id"]: t["text"] for t in map(json.loads, open(f"{d}/{first}", encoding="utf-8"))}
for f in json.load(open(f"{run}.fp.json"))["false_positive_pairs"]:
    ids = [f["id_a"], f["id_b"]]
    said = subprocess.run([binary, "explain", "--run", run, *ids], capture_output=True, text=True).stdout
    j = json.loads(subprocess.run([binary, "explain", "--run", run, *ids, "--json"], capture_output=True, text=True).stdout)
    print(f"== {f['similarity']:.3f} {f['kind']}: " + " | ".join(
        f"{i} {truth[i]['kind']}/{truth[i]['genre']} {truth[i]['truth']} @{truth[i]['host']}({truth[i]['host_pages']}) [{truth[i]['mechanisms']}]" for i in ids))
    for line in said.split("\n")[:2]:
        print("  ", line)
    m = j["method"]
    print(f"   estimate {m.get('estimate')}, containment {m.get('containment')}, passed by {m.get('measure')}")
    for side, i in enumerate(ids):
        left = list(j["left_out"][side])
        kept = []
        for line in texts[i].split("\n"):
            if line in left:
                left.remove(line)
            else:
                kept.append(line)
        print(f"   kept by {i}: " + " / ".join(k[:70] + ("..." if len(k) > 70 else "") for k in kept))
PY
fi

python3 - "$dir" "$role" "${names[@]}" <<'PY'
import json, sys
from collections import Counter
from pathlib import Path

d, role, names = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
runs = d / "runs"
st = json.loads((d.parent / (d.name + ".stats.json")).read_text(encoding="utf-8"))
TAGS = ("promo", "notice", "lone-article", "short", "small-host", "box-line", "header-line", "none")

def load(name, what):
    return json.loads((runs / f"{name}.{what}.json").read_text(encoding="utf-8"))

def num(v, w=6):
    return f"{'-':>{w}}" if v is None else f"{v:>{w}.3f}"

def lines_in(p):
    return sum(1 for line in open(p, encoding="utf-8") if line.strip())

def group(report, g):
    return next((x for x in report["by_group"] if x["group"] == g), None)

truth = {t["id"]: t for t in map(json.loads, open(d / "truth.json", encoding="utf-8"))}
langs = [l for l in ("zh", "en") if l in st["langs"]]
print(f"siteset {d.name} ({role} draw): {st['pages']} pages on {st['hosts']} hosts (pages per host {st['host_pages']}), "
      f"{st['in_clusters']} in clusters of 2+; languages {st['langs']}")
print(f"{st['hosts_with_notice']} hosts show a notice, {st['promo_pages']} pages a promotion; "
      f"hard-negative pairs {sum(st['negatives'].values())}")
n_neg = lines_in(d / "negatives.jsonl")
print(f"\n{'run':<17} {'true':>5} {'pred':>5} {'P':>6} {'R':>6} {'F1':>6} {'R en':>6} {'R zh':>6} "
      f"{'removed':>7} {'wrong':>5} {'share':>6} {'neg joined':>10}")
for n in names:
    r, neg = load(n, "by-lang"), load(n, "neg")
    en, zh = group(r, "en"), group(r, "zh")
    share = r["removed_wrongly"] / r["removed"] if r["removed"] else 0
    print(f"{n:<17} {r['true_pairs']:>5} {r['predicted_pairs']:>5} {num(r['precision'])} {num(r['recall'])} {num(r['f1'])} "
          f"{num(en and en['recall'])} {num(zh and zh['recall'])} {r['removed']:>7} {r['removed_wrongly']:>5} {share:>6.1%} "
          f"{neg['false_positive_count']:>4}/{n_neg - neg['missing_from_run']:<5}")

W = max(9, max(len(n) for n in names))

def table(title, rows, cell):
    print(f"\n{title}")
    print(f"{'':<22} {'docs':>5} {'true':>5} " + " ".join(f"{n:>{W}}" for n in names))
    for label, docs, true, vals in rows:
        print(f"{label:<22} {docs:>5} {true:>5} " + " ".join(f"{cell(v):>{W}}" for v in vals))

rec = lambda g: num(g and g["recall"], W)
rem = lambda g: "-" if not g else f"{g['removed_wrongly']}/{g['removed']}"
for lang in langs:
    rows = []
    for g in load(names[0], "by-group_kind")["by_group"]:
        if g["group"].startswith(lang + ":") and g["true_pairs"]:
            rows.append((g["group"][3:], g["documents"], g["true_pairs"], [group(load(n, "by-group_kind"), g["group"]) for n in names]))
    table(f"recall by kind, {lang} (true pairs with a page of the kind)", rows, rec)
for lang in langs:
    rows = []
    for tag in TAGS:
        g = group(load(names[0], f"tag-{tag}"), f"{lang}:{tag}")
        if g:
            rows.append((tag, g["documents"], g["true_pairs"], [group(load(n, f"tag-{tag}"), f"{lang}:{tag}") for n in names]))
    table(f"recall by mechanism, {lang} (true pairs with a page of the mechanism)", rows, rec)
    table(f"removed for a document the truth says differs / removed, by mechanism, {lang}", rows, rem)

print(f"\nhard negatives joined / labelled pairs, by kind")
print(f"{'':<22} " + " ".join(f"{n:>{W}}" for n in names))
for p in sorted(runs.glob("neg.*.jsonl")):
    k = p.name[len("neg."):-len(".jsonl")]
    cells = [f"{load(n, 'neg-' + k)['false_positive_count']}/{lines_in(p) - load(n, 'neg-' + k)['missing_from_run']}" for n in names]
    print(f"{k:<22} " + " ".join(f"{c:>{W}}" for c in cells))

print("\nverified pairs the truth rejects, by their pages' genres, hosts and mechanisms (first run's pairs listed below)")
for n in names:
    fps = load(n, "fp")["false_positive_pairs"]
    c = Counter()
    for f in fps:
        a, b = truth[f["id_a"]], truth[f["id_b"]]
        where = "same host" if a["host"] == b["host"] else "two hosts"
        tags = sorted(set(a["mechanisms"].split("+")) & set(b["mechanisms"].split("+")))
        c[(f"{a['genre']}-{b['genre']}" if a["genre"] <= b["genre"] else f"{b['genre']}-{a['genre']}", where,
           a["kind"] if a["kind"] == b["kind"] and a["kind"].startswith("court-") else "", "+".join(tags) or "none")] += 1
    print(f"  {n}: {len(fps)} pairs" + "".join(f"\n    {v:>5}  {g} on {w}{' (' + k + ')' if k else ''}, shared tags {t}"
                                             for (g, w, k, t), v in c.most_common(12)))
for f in load(names[0], "fp")["false_positive_pairs"][:40]:
    a, b = truth[f["id_a"]], truth[f["id_b"]]
    print(f"  {f['similarity']:.3f} {f['kind']:<5} {f['id_a']} {a['kind']}/{a['genre']}@{a['host']}({a['host_pages']}) [{a['mechanisms']}]")
    print(f"  {'':11} {f['id_b']} {b['kind']}/{b['genre']}@{b['host']}({b['host_pages']}) [{b['mechanisms']}]")
PY
