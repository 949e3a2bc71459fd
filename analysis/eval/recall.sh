#!/usr/bin/env bash
# recall.sh checks that metricleak finds leaks that projects really fixed,
# for EVALUATION.md. Each row below is a fix of the bug in a module the Go
# module proxy serves: a function that registered metrics and then returned
# an error without undoing them. For the tagged release just before the fix
# and the one just after, it makes a scratch module that requires the
# module at that release (see scratch_module in lib.sh), runs
#
#	metricleak -json -test=false module/package
#
# on the package of the fixed function, and counts the reports in that
# function (eval/reports.py names the function of each report) and in the
# whole package. A row passes when both releases were analysed without
# errors, the release before the fix has a report in the function and the
# release after has none. Like evaluate.sh it is not
# part of CI and runs one analysis at a time.
#
# Results go to $OUT (a new temporary directory unless set):
#
#	recall.tsv          one line per row: module, package, function,
#	                    release before, reports in the function and in the
#	                    package there, release after, the same there, and
#	                    pass or FAIL; lines starting with # say which
#	                    analyzer and Go made it
#	MODULE@VERSION.txt  the package's reports, as in evaluate.sh
#	MODULE@VERSION.funcs  each report's file:line and its function
#
#	eval/recall.sh              # every row
#	eval/recall.sh thanos       # the rows whose module contains "thanos"
#
# It exits with status 1 if a row fails. EVAL_WORK keeps the scratch
# modules and the built analyzer between runs, as in evaluate.sh.
set -euo pipefail
# OUT and EVAL_WORK are taken from where the script is called.
[ -z "${OUT:-}" ] || OUT=$(realpath -m "$OUT")
[ -z "${EVAL_WORK:-}" ] || EVAL_WORK=$(realpath -m "$EVAL_WORK")
cd "$(dirname "$0")/.."
. eval/lib.sh

# module, package in the module, function as eval/reports.py names it,
# release before the fix, release after it.
rows=(
	"github.com/prometheus/prometheus tsdb NewHead v0.47.2 v0.48.0"
	"github.com/prometheus/prometheus tsdb open v0.313.0 v0.314.0"
	"github.com/thanos-io/thanos pkg/receive (*MultiTSDB).startTSDB v0.41.0 v0.42.0"
)

start_run

table=$out/recall.tsv
start_table "$table" "metricleak $commit, $(go version | cut -d' ' -f3)" \
	module package function before in_function in_package after in_function in_package result

# count MODULE VERSION PACKAGE FUNCTION prints the reports in the function
# and in the package, at that release, or "error" twice when the package
# did not load, its analysis failed or metricleak exited abnormally (the
# row then fails: no report is no evidence when nothing was analysed).
count() {
	local mod=$1 version=$2 pkg=$3 fn=$4 name dir status=0 errors
	name=$(echo "$mod" | tr / _)
	dir="$work/$name@$version"
	echo "=== $mod@$version: setting up" >&2
	scratch_module "$dir" "$mod" "$version"
	echo "=== $mod@$version: analysing $pkg" >&2
	(cd "$dir" && "$work/metricleak" -json -test=false "$mod/$pkg") >"$dir/recall.json" 2>"$dir/recall.stderr" || status=$?
	errors=$(python3 eval/reports.py "$dir/recall.json" "$dir/recall.stderr" "$out/$name@$version" | awk '{print $5}')
	if [ "$status" -ne 0 ] && [ "$status" -ne 3 ] || [ "${errors:-1}" != 0 ]; then
		echo "=== $mod@$version: metricleak exited $status with ${errors:-unknown} errors; see $dir/recall.stderr" >&2
		printf 'error\terror'
		return
	fi
	printf '%s\t%s' "$(awk -F'\t' -v f="$fn" '$2 == f' "$out/$name@$version.funcs" | wc -l)" \
		"$(wc -l <"$out/$name@$version.funcs")"
}

failed=0
for row in "${rows[@]}"; do
	read -r mod pkg fn before after <<<"$row"
	[ $# -eq 0 ] || [[ $mod == *"$1"* ]] || continue
	b=$(count "$mod" "$before" "$pkg" "$fn")
	a=$(count "$mod" "$after" "$pkg" "$fn")
	result=pass
	if [[ $b == error* || $a == error* ]] || [ "${b%%$'\t'*}" -eq 0 ] || [ "${a%%$'\t'*}" -ne 0 ]; then
		result=FAIL
		failed=1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mod" "$pkg" "$fn" "$before" "$b" "$after" "$a" "$result" >>"$table"
	tail -n 1 "$table" >&2
done
echo "results in $out" >&2
exit "$failed"
