"""funcs.py names the top-level Go function around each metricleak report.

It reads plain-text metricleak output on standard input: lines
"file.go:line:col: message" (indented lines, related positions, are
skipped). With "list" it prints "file:line<TAB>function" for each report;
with "count" it prints how many distinct functions the reports are in. A
report in a closure belongs to the function around it. The function is the
nearest "func" declaration at the start of a line before the report.
"""

import re
import sys

REPORT = re.compile(r"^(\S.*?\.go):(\d+):\d+: ")
FUNC = re.compile(r"^func\s*(\([^)]*\))?\s*([A-Za-z_][A-Za-z0-9_]*)")
RECV_TYPE = re.compile(r"(\*?)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?\s*\)$")

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


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "list"
    seen = set()
    for text in sys.stdin:
        m = REPORT.match(text)
        if not m:
            continue
        path, line = m.group(1), int(m.group(2))
        fn = enclosing(path, line)
        seen.add((path, fn))
        if mode == "list":
            print("%s:%d\t%s" % (path, line, fn))
    if mode == "count":
        print(len(seen))


if __name__ == "__main__":
    main()
