#!/usr/bin/env bash
# evaluate.sh runs metricleak over real modules, for EVALUATION.md. It is not
# part of CI: it downloads each module and its dependencies through the Go
# module proxy into the module cache, as ordinary dependencies of a scratch
# module made in a temporary directory (see scratch_module in lib.sh), and
# analyses the module's own packages, not their tests:
#
#	metricleak -json -test=false $METRICLEAK_FLAGS module/...
#
# It runs metricleak with -json, so that its reports, their related
# positions and suggested fixes, and the packages that failed are told
# apart, and eval/reports.py turns that into text and counts. Modules run one
# at a time. Results go to $OUT (a new temporary directory unless set):
#
#	summary.tsv       one line per module: module, version, analyzer commit,
#	                  status, reports, related positions, suggested fixes,
#	                  functions with reports, errors, wall seconds, peak RSS
#	                  in MiB; lines starting with # say which analyzer, Go
#	                  and flags made it
#	MODULE@VERSION.txt  the reports as metricleak prints them without -json,
#	                  with module cache paths cut to module@version/file.go
#	MODULE@VERSION.funcs  each report's file:line and the function it is in
#	MODULE@VERSION.stderr  what metricleak wrote to standard error
#	MODULE@VERSION.json  what metricleak -json printed, to compare two runs
#	                  (eval/compare.py)
#
# The status is metricleak's exit status where it is not 0 (2 is a panic:
# no output for the module), and otherwise what it would be without -json:
# 1 if a package did not load or an analysis failed, 3 if there are
# reports, 0 if not.
#
#	eval/evaluate.sh                                     # every module below
#	eval/evaluate.sh sigs.k8s.io/controller-runtime@v0.25.3
#	OUT=results-after METRICLEAK_FLAGS=-commands eval/evaluate.sh
#
# Set EVAL_WORK to keep the scratch modules and the built analyzer between
# runs (memory.sh takes it too).
set -euo pipefail
# OUT and EVAL_WORK are taken from where the script is called.
[ -z "${OUT:-}" ] || OUT=$(realpath -m "$OUT")
[ -z "${EVAL_WORK:-}" ] || EVAL_WORK=$(realpath -m "$EVAL_WORK")
cd "$(dirname "$0")/.."
. eval/lib.sh

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(
		github.com/prometheus/client_golang@v1.25.0
		sigs.k8s.io/controller-runtime@v0.25.3
		github.com/prometheus/alertmanager@v0.35.0
		github.com/grafana/dskit@v0.0.0-20260703122047-de1ec7541c44
		github.com/thanos-io/thanos@v0.42.4
		github.com/prometheus/prometheus@v0.316.0
		github.com/prometheus/node_exporter@v1.12.1
		github.com/prometheus/pushgateway@v1.11.5
		k8s.io/kube-state-metrics/v2@v2.19.1
		go.etcd.io/etcd/server/v3@v3.7.4
		github.com/caddyserver/caddy/v2@v2.11.9
		github.com/coredns/coredns@v1.15.0
		github.com/cortexproject/cortex@v1.21.1
	)
fi

start_run
flags=${METRICLEAK_FLAGS:-}

summary=$out/summary.tsv
start_table "$summary" "metricleak $commit, $(go version | cut -d' ' -f3), flags: -test=false $flags" \
	module version analyzer status reports related fixes functions errors seconds peak_mib

for target in "${targets[@]}"; do
	mod=${target%@*}
	version=${target#*@}
	name=$(echo "$mod" | tr / _)
	dir="$work/$name@$version"
	echo "=== $(date +%T) $target: setting up" >&2
	scratch_module "$dir" "$mod" "$version"
	echo "=== $(date +%T) $target: analysing" >&2
	status=0
	# shellcheck disable=SC2086 # flags are words
	(cd "$dir" && /usr/bin/time -f '%e %M' -o "$dir/time" \
		"$work/metricleak" -json -test=false $flags "$mod/...") \
		>"$dir/out.json" 2>"$dir/stderr" || status=$?
	# GNU time writes "Command exited with non-zero status N" first.
	read -r seconds kib < <(tail -n 1 "$dir/time")
	read -r reports related fixes functions errors < <(
		python3 eval/reports.py "$dir/out.json" "$dir/stderr" "$out/$name@$version")
	sed "s|^.*/pkg/mod/||" "$dir/stderr" >"$out/$name@$version.stderr"
	cp "$dir/out.json" "$out/$name@$version.json"
	if [ "$status" -eq 0 ]; then
		if [ "$errors" -gt 0 ]; then
			status=1
		elif [ "$reports" -gt 0 ]; then
			status=3
		fi
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mod" "$version" "$commit" \
		"$status" "$reports" "$related" "$fixes" "$functions" "$errors" "$seconds" "$((kib / 1024))" >>"$summary"
	tail -n 1 "$summary" >&2
done
echo "results in $out" >&2
