"""compare.py tells whether two runs of eval/evaluate.sh gave the same
reports.

    python3 eval/compare.py DIR1 DIR2

For each MODULE@VERSION.json in both directories it compares what
metricleak -json printed, package by package: every report with its
position, message, related positions and suggested fixes (their edits
included), and every error. Module cache paths are cut to what follows the
module cache directory, so that runs from two machines compare. It prints a
line for each module, "same" or the reports only one run has, and exits
with status 1 if any module differs or is missing from one run.
"""

import json
import os
import sys


def short(s):
    i = s.find("/pkg/mod/")
    return s[i + len("/pkg/mod/"):] if i >= 0 else s


def canon(v):
    """canon returns v with module cache paths cut, as a hashable value."""
    if isinstance(v, dict):
        return tuple(sorted((k, canon(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(canon(x) for x in v)
    if isinstance(v, str):
        return short(v)
    return v


def reports(path):
    """reports returns the set of (package, analyzer, item) of a run."""
    with open(path, encoding="utf-8") as f:
        tree = json.load(f)
    out = set()
    for pkg, analyses in tree.items():
        for name, result in analyses.items():
            if isinstance(result, list):
                for d in result:
                    out.add((pkg, name, canon(d)))
            else:
                out.add((pkg, name, canon(result)))
    return out


def main():
    a, b = sys.argv[1:3]
    names = sorted(n for n in set(os.listdir(a)) | set(os.listdir(b)) if n.endswith(".json"))
    differ = False
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print("%s: only in %s" % (n[:-5], a if os.path.exists(pa) else b))
            differ = True
            continue
        ra, rb = reports(pa), reports(pb)
        if ra == rb:
            print("%s: same, %d reports" % (n[:-5], len(ra)))
            continue
        differ = True
        print("%s: %d only in the first, %d only in the second" % (n[:-5], len(ra - rb), len(rb - ra)))
        for tag, only in (("-", ra - rb), ("+", rb - ra)):
            for pkg, _, d in sorted(only, key=str)[:10]:
                print("  %s %s %s" % (tag, pkg, str(d)[:300]))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
