"""reports.py reads what metricleak -json printed and counts it.

    python3 reports.py OUT.json OUT.stderr PREFIX

It writes PREFIX.txt, the reports as metricleak prints them without -json
("file.go:line:col: message", each related position on a line of its own
starting with a tab), and PREFIX.funcs, each report's file:line and the
top-level function it is in (a report in a closure belongs to the function
around it: the nearest "func" at the start of a line before it). Paths are
cut to what follows the module cache directory, module@version/file.go.

It prints one line: reports, related positions, suggested fixes, functions
with reports, and errors (packages that did not load or analyses that
failed, from the JSON and from the "file.go:line:col:" lines on standard
error).
"""

import json
import re
import sys

FUNC = re.compile(r"^func\s*(\([^)]*\))?\s*([A-Za-z_][A-Za-z0-9_]*)")
RECV_TYPE = re.compile(r"(\*?)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?\s*\)$")
POSN = re.compile(r"^(.*\.go):(\d+):(\d+)$")
ERROR_LINE = re.compile(r"^\S.*\.go:\d+:\d+: ")

_lines = {}


def source(path):
    if path not in _lines:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                _lines[path] = f.read().split("\n")
        except OSError:
            _lines[path] = []
    return _lines[path]


def enclosing(path, line):
    lines = source(path)
    for i in range(min(line, len(lines)) - 1, -1, -1):
        m = FUNC.match(lines[i])
        if m:
            name = m.group(2)
            if m.group(1):
                r = RECV_TYPE.search(m.group(1))
                if r:
                    t = r.group(2)
                    name = ("(*%s)" % t if r.group(1) else t) + "." + name
            return name
    return "?"


def short(path):
    i = path.find("/pkg/mod/")
    return path[i + len("/pkg/mod/"):] if i >= 0 else path


def main():
    out_json, out_stderr, prefix = sys.argv[1:4]
    try:
        with open(out_json, encoding="utf-8") as f:
            tree = json.load(f)
    except (OSError, ValueError):
        tree = {}
    diags, errors = [], 0
    for analyses in tree.values():
        for name, result in analyses.items():
            if isinstance(result, dict) and "error" in result:
                errors += 1
            elif name == "metricleak":
                diags.extend(result)
    try:
        with open(out_stderr, encoding="utf-8", errors="replace") as f:
            errors += sum(1 for line in f if ERROR_LINE.match(line))
    except OSError:
        pass

    def where(d):
        m = POSN.match(d["posn"])
        return (m.group(1), int(m.group(2))) if m else (d["posn"], 0)

    diags.sort(key=where)
    related = fixes = 0
    functions = set()
    with open(prefix + ".txt", "w", encoding="utf-8") as txt, \
            open(prefix + ".funcs", "w", encoding="utf-8") as funcs:
        for d in diags:
            path, line = where(d)
            fn = enclosing(path, line)
            functions.add((path, fn))
            print("%s: %s" % (short(d["posn"]), d["message"]), file=txt)
            for r in d.get("related") or []:
                print("\t%s: %s" % (short(r["posn"]), r["message"]), file=txt)
            print("%s:%d\t%s" % (short(path), line, fn), file=funcs)
            related += len(d.get("related") or [])
            fixes += len(d.get("suggested_fixes") or [])
    print(len(diags), related, fixes, len(functions), errors)


if __name__ == "__main__":
    main()
