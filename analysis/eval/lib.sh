# shellcheck shell=bash
# lib.sh holds what the evaluation scripts share; source it, do not run it.
# It needs bash, go, python3 and GNU time (Debian package "time").

# scratch_module DIR MODULE VERSION makes DIR a scratch module that requires
# MODULE at VERSION (a release or a pseudo-version the Go module proxy
# serves) as an ordinary dependency, with the requirements of all its
# packages, and with the module's own replace directives that name another
# module (forks it builds against; a dependency's replaces do not apply).
# Output of the go command goes to DIR/setup.log; if the module cannot be
# had, scratch_module says so and fails.
scratch_module() {
	local dir=$1 mod=$2 version=$3
	mkdir -p "$dir"
	(
		cd "$dir" || exit
		[ -f go.mod ] || go mod init evaluate >setup.log 2>&1
		if ! go get "$mod@$version" >>setup.log 2>&1; then
			echo "scratch_module: go get $mod@$version failed: see $dir/setup.log" >&2
			exit 1
		fi
		go mod edit -json "$(go list -m -f '{{.GoMod}}' "$mod")" |
			python3 -c 'import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"], r["New"]
    if new.get("Version"):
        o = old["Path"] + ("@" + old["Version"] if old.get("Version") else "")
        print("-replace=%s=%s@%s" % (o, new["Path"], new["Version"]))' |
			xargs -r go mod edit
		go get "$mod/...@$version" >>setup.log 2>&1 || true
	)
}

# analyzer_commit prints the last commit that changed the analyzer (its
# packages, command and go.mod), with "+dirty" when they have uncommitted
# changes: commits that change only the evaluation do not change it.
analyzer_commit() {
	local c paths=(metricleak cmd go.mod go.sum)
	c=$(cd "$eval_dir/.." && git log -1 --format=%h -- "${paths[@]}" 2>/dev/null || echo unknown)
	if [ -n "$(cd "$eval_dir/.." && git status --porcelain -- "${paths[@]}" 2>/dev/null)" ]; then
		c="$c+dirty"
	fi
	echo "${c:-unknown}"
}

# start_run sets work to $EVAL_WORK (kept) or to a temporary directory
# removed on exit, and out to $OUT or a new temporary directory; it builds
# metricleak into work and sets commit to analyzer_commit's answer. Call it
# from the analysis module's directory.
start_run() {
	if [ -n "${EVAL_WORK:-}" ]; then
		work=$EVAL_WORK
		mkdir -p "$work"
	else
		work=$(mktemp -d)
		trap 'rm -rf "$work"' EXIT
	fi
	out=${OUT:-$(mktemp -d)}
	mkdir -p "$out"
	go build -o "$work/metricleak" ./cmd/metricleak
	# shellcheck disable=SC2034 # the scripts that call start_run use it
	commit=$(analyzer_commit)
}

# start_table FILE COMMENT COLUMN... writes to FILE, unless it has lines
# already, the header lines of a results table: "# COMMENT" and the
# tab-separated column names after "# ".
start_table() {
	local file=$1 comment=$2
	shift 2
	[ -s "$file" ] && return
	{
		echo "# $comment"
		(IFS=$'\t'; echo "# $*")
	} >"$file"
}

eval_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
