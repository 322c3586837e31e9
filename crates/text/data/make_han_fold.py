#!/usr/bin/env python3
"""Builds han-fold.txt, the table `normalize.han_fold` applies, from OpenCC's dictionaries.

    python3 crates/text/data/make_han_fold.py OPENCC/data/dictionary COMMIT UNIHAN > crates/text/data/han-fold.txt

COMMIT names the OpenCC commit the dictionaries come from, for the table's header. UNIHAN
is a folder with the Unicode Character Database's `Unihan_Variants.txt` and
`Unihan_OtherMappings.txt`, plain or bzip2-compressed (Debian's `unicode-data` package
installs them in /usr/share/unicode).

Each character of the table folds to one simplified character, without context:

1. CJK compatibility ideographs become their unified ideographs
   (`CJK_Compatibility_Ideographs.txt`, as NFKC would).
2. Taiwan and Hong Kong variant forms become OpenCC's standard traditional form:
   `TWVariants.txt` and `HKVariants.txt` map the standard form to the regional ones, and
   are read backwards (the first standard form named wins).
3. Traditional characters become simplified ones (`TSCharacters.txt`, first candidate).

The steps repeat until nothing changes. Then one more step, from Unihan:

4. A variant form that the steps above leave alone becomes the one character of GB 2312
   (`kGB0`, the basic set of simplified characters) that its semantic and Z variants
   (`kSemanticVariant`, `kZVariant`) fold to: 廻 becomes 回, 劒 剑, 碁 棋. A character of
   GB 2312 itself, or one whose variants fold to several, or one another character folds
   to, stays as it is (沈 is a surname as well as a variant of 沉).

The table is idempotent: a folded character folds to itself. Only characters that change are listed, one `from<TAB>to` pair per line in code
point order. Phrase tables (TSPhrases) are left out on purpose: a phrase rule needs context,
and folding must be the same for a character wherever it stands, or a copy and its original
would fold differently where they were cut.
"""

import bz2
import sys
from pathlib import Path


def read(path):
    table = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, values = line.partition("\t")
        values = values.split()
        if len(key) != 1 or not values:
            continue
        table.append((key, values))
    return table


def main():
    folder = Path(sys.argv[1])
    compat = {k: v[0] for k, v in read(folder / "CJK_Compatibility_Ideographs.txt")}
    ts = {k: v[0] for k, v in read(folder / "TSCharacters.txt") if len(v[0]) == 1}
    back = {}
    for name in ("TWVariants.txt", "HKVariants.txt"):
        for standard, variants in read(folder / name):
            for v in variants:
                if len(v) == 1 and v != standard:
                    back.setdefault(v, standard)

    def step(c):
        c = compat.get(c, c)
        standard = back.get(c, c)
        return ts.get(standard, ts.get(c, standard))

    chars = set(compat) | set(ts) | set(back)
    fold = {}
    for c in chars:
        seen = [c]
        x = step(c)
        while x != seen[-1]:
            if x in seen:
                sys.exit(f"folding cycles: {' -> '.join(seen + [x])}")
            seen.append(x)
            x = step(x)
        if x != c:
            fold[c] = x
    unihan = Path(sys.argv[3])
    variant_lines = unihan_lines(unihan, "Unihan_Variants.txt")
    gb0 = {c for c, _ in unihan_field(unihan_lines(unihan, "Unihan_OtherMappings.txt"), {"kGB0"})}
    opencc = len(fold)
    fold.update(unihan_variants(variant_lines, gb0, fold))
    for c, x in fold.items():
        assert fold.get(x, x) == x, (c, x)

    commit = sys.argv[2]
    version = next(
        line.split(":", 1)[1].strip() for line in variant_lines if line.startswith("# Unicode version:")
    )
    print("# Han folding table for normalize.han_fold: traditional and variant characters to")
    print("# simplified ones, one `from<TAB>to` pair per line. Made by make_han_fold.py from OpenCC's")
    print(f"# dictionaries (https://github.com/BYVoid/OpenCC @ {commit}, Apache-2.0) and Unihan")
    print(f"# {version} (Unihan_Variants.txt, Unihan_OtherMappings.txt; the Unicode License):")
    print(f"# {len(fold) - opencc} of the variant forms from Unihan; {len(fold)} characters.")
    for c in sorted(fold):
        print(f"{c}\t{fold[c]}")


def unihan_lines(folder, name):
    plain = folder / name
    if plain.exists():
        return plain.read_text(encoding="utf-8").splitlines()
    with bz2.open(folder / (name + ".bz2"), "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def unihan_field(lines, fields):
    """(character, value) for every line of a Unihan file whose field is in `fields`."""
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] in fields and parts[0].startswith("U+"):
            yield chr(int(parts[0][2:], 16)), parts[2]


def unihan_variants(variant_lines, gb0, fold):
    """Step 4: variant forms to the one GB 2312 character (of `gb0`) their variants fold to."""
    of = {}
    for c, value in unihan_field(variant_lines, {"kSemanticVariant", "kZVariant"}):
        for v in value.split():
            of.setdefault(c, set()).add(chr(int(v.split("<")[0][2:], 16)))
    targets = set(fold.values())
    added = {}
    for c in sorted(of):
        if c in fold or c in gb0 or c in targets:
            continue
        folded = {fold.get(v, v) for v in of[c]} & gb0
        folded.discard(c)
        if len(folded) == 1:
            added[c] = folded.pop()
    return added


if __name__ == "__main__":
    main()
