#!/usr/bin/env bash
# ci.sh checks the golangci-lint module plugin end to end, on a machine with
# only Go: everything it needs comes from the Go module proxy.
#
# It builds golangci-lint with the plugin, as `golangci-lint custom` would
# from the .custom-gcl.yml in the package documentation but without cloning
# golangci-lint's repository: a scratch module holding testdata/customgcl's
# main package, requiring golangci-lint and replacing the analysis module
# with this checkout. It runs that binary on the module in testdata/fixture
# with the fixture's .golangci.yml, and checks the report against the
# fixture's want comments: one report at the line of each, with a message
# that its regular expression matches, nothing else, and exit status 1, which
# golangci-lint gives when it finds issues. It also checks that a setting
# the analyzer has no flag for stops golangci-lint with an error naming it,
# and that the analysis module does not require golangci-lint itself.
#
#	gclplugin/ci.sh    # from the analysis module
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
analysis=$(dirname "$here")
gcl=v2.15.0

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail=0
mismatch() { echo "MISMATCH: $*"; fail=1; }

echo "--- the analysis module does not require golangci-lint"
if (cd "$analysis" && go list -m all) | grep -q '^github.com/golangci/golangci-lint'; then
	mismatch "golangci-lint is in the analysis module's requirements"
fi

echo "--- build golangci-lint $gcl with the metricleak plugin"
mkdir "$work/build"
cp "$here/testdata/customgcl/main.go" "$work/build/"
cat >"$work/build/go.mod" <<EOF
module custom-gcl

go 1.26.0

require (
	github.com/golangci/golangci-lint/v2 $gcl
	github.com/promscope/promscope/analysis v0.0.0
)

replace github.com/promscope/promscope/analysis => $analysis
EOF
(
	cd "$work/build"
	go build -mod=mod -o "$work/custom-gcl" \
		-ldflags "-s -w -X main.version=$gcl-custom-gcl-metricleak -X main.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" .
)
"$work/custom-gcl" version

# lint runs the custom binary on the copy of the fixture with the given
# configuration, leaving its output in $work/out and $work/err and its exit
# status in $status.
lint() {
	status=0
	(cd "$work/fixture" && GOLANGCI_LINT_CACHE="$work/lint-cache" "$work/custom-gcl" run \
		--config "$1" --show-stats=false --output.text.path=stdout \
		--output.text.print-issued-lines=false --output.text.colors=false ./...) \
		>"$work/out" 2>"$work/err" || status=$?
}

echo "--- run it on testdata/fixture"
cp -R "$here/testdata/fixture" "$work/fixture"
lint "$work/fixture/.golangci.yml"
cat "$work/out" "$work/err"

# The want comments, a line each: "file:line", a tab, the regular expression.
# shellcheck disable=SC2016 # the backquotes are the want comments', not the shell's
(cd "$work/fixture" && { grep -rn --include='*.go' '// want `' . || true; } |
	sed -n 's|^\./\([^:]*\):\([0-9]*\):.*// want `\(.*\)`$|\1:\2\t\3|p') >"$work/wants"
declare -A want=() seen=()
while IFS=$'\t' read -r pos re; do
	want[$pos]=$re
done <"$work/wants"
[ ${#want[@]} -gt 0 ] || mismatch "no want comments in testdata/fixture"

# A report reads "file:line:column: message (metricleak)".
report='^([^:]+):([0-9]+):([0-9]+:)? (.*) \(metricleak\)$'
while IFS= read -r line; do
	if ! [[ $line =~ $report ]]; then
		mismatch "unexpected output: $line"
		continue
	fi
	pos=${BASH_REMATCH[1]}:${BASH_REMATCH[2]} msg=${BASH_REMATCH[4]}
	if [ -z "${want[$pos]+set}" ]; then
		mismatch "unexpected report at $pos: $msg"
	elif ! [[ $msg =~ ${want[$pos]} ]]; then
		mismatch "report at $pos: $msg"$'\n'"  want a match for: ${want[$pos]}"
	elif [ -n "${seen[$pos]+set}" ]; then
		mismatch "second report at $pos: $msg"
	fi
	seen[$pos]=1
done <"$work/out"
for pos in "${!want[@]}"; do
	[ -n "${seen[$pos]+set}" ] || mismatch "no report at $pos, want a match for: ${want[$pos]}"
done
[ "$status" -eq 1 ] || mismatch "exit status $status, want 1 (issues found)"
[ ! -s "$work/err" ] || mismatch "golangci-lint wrote to its standard error"

echo "--- a setting metricleak has no flag for"
lint "$here/testdata/nosuch.golangci.yml"
cat "$work/out" "$work/err"
[ "$status" -eq 3 ] || mismatch "exit status $status, want 3 (failure)"
grep -q 'plugin(metricleak): newPlugin unknown setting "nosuch": ' "$work/err" ||
	mismatch "the error does not name the setting"

if [ "$fail" -ne 0 ]; then
	echo "--- FAIL"
	exit 1
fi
echo "--- ok"
