#!/usr/bin/env bash
# evaluate.sh runs metricleak over real modules, for EVALUATION.md. It is not
# part of CI: it downloads each module and its dependencies through the Go
# module proxy into the module cache, as ordinary dependencies of a scratch
# module made in a temporary directory, and analyses the module's own
# packages (not its tests), printing one report a line. It needs python3 to
# read the module's replace directives.
#
#	eval/evaluate.sh                          # every module below
#	eval/evaluate.sh sigs.k8s.io/controller-runtime@v0.23.1
set -euo pipefail
cd "$(dirname "$0")/.."

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
	)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/metricleak" ./cmd/metricleak

for target in "${targets[@]}"; do
	mod=${target%@*}
	dir="$work/$(echo "$mod" | tr / _)"
	mkdir -p "$dir"
	(
		cd "$dir"
		go mod init evaluate >/dev/null 2>&1
		go get "$target" >/dev/null 2>&1
		# The module's own replace directives (forks it builds against) do
		# not apply to a dependency: copy those that name another module.
		go mod edit -json "$(go list -m -f '{{.GoMod}}' "$mod")" |
			python3 -c 'import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"], r["New"]
    if new.get("Version"):
        o = old["Path"] + ("@" + old["Version"] if old.get("Version") else "")
        print("-replace=%s=%s@%s" % (o, new["Path"], new["Version"]))' |
			xargs -r go mod edit
		go get "$mod/...@${target#*@}" >/dev/null 2>&1 || true
		echo "=== $target"
		# Exit status 3 means reports; anything else but 0 is an error.
		status=0
		"$work/metricleak" -test=false "$mod/..." >"$dir/out" 2>&1 || status=$?
		sed "s|^.*/pkg/mod/||" "$dir/out"
		if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
			echo "metricleak exited with status $status"
		fi
	)
done
