#!/usr/bin/env python3
"""Builds han-fold.txt, the table `normalize.han_fold` applies, from OpenCC's dictionaries.

    python3 crates/text/data/make_han_fold.py OPENCC/data/dictionary COMMIT > crates/text/data/han-fold.txt

COMMIT names the OpenCC commit the dictionaries come from, for the table's header.

Each character of the table folds to one simplified character, without context:

1. CJK compatibility ideographs become their unified ideographs
   (`CJK_Compatibility_Ideographs.txt`, as NFKC would).
2. Taiwan and Hong Kong variant forms become OpenCC's standard traditional form:
   `TWVariants.txt` and `HKVariants.txt` map the standard form to the regional ones, and
   are read backwards (the first standard form named wins).
3. Traditional characters become simplified ones (`TSCharacters.txt`, first candidate).

The steps repeat until nothing changes, so the table is idempotent: a folded character folds
to itself. Only characters that change are listed, one `from<TAB>to` pair per line in code
point order. Phrase tables (TSPhrases) are left out on purpose: a phrase rule needs context,
and folding must be the same for a character wherever it stands, or a copy and its original
would fold differently where they were cut.
"""

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
    for c, x in fold.items():
        assert fold.get(x, x) == x, (c, x)

    commit = sys.argv[2] if len(sys.argv) > 2 else "an unnamed commit"
    print("# Han folding table for normalize.han_fold: traditional and variant characters to")
    print("# simplified ones, one `from<TAB>to` pair per line. Made by make_han_fold.py from OpenCC's")
    print(f"# dictionaries (https://github.com/BYVoid/OpenCC @ {commit}),")
    print(f"# Apache-2.0; {len(fold)} characters.")
    for c in sorted(fold):
        print(f"{c}\t{fold[c]}")


if __name__ == "__main__":
    main()
