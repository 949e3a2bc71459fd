#!/usr/bin/env bash
# memory.sh measures metricleak's peak memory on real modules, for
# EVALUATION.md, in the two ways it is run:
#
#	standalone  metricleak -test=false module/...   (one process)
#	vet         go vet -vettool=metricleak module/... (one process a package)
#
# Like evaluate.sh it is not part of CI, uses a scratch module per module (see
# scratch_module in lib.sh), and runs one measurement at a time. GNU time
# gives each process's peak resident set size (RSS). Under go vet a small
# wrapper, passed as the vet tool, runs metricleak under GNU time and logs
# each process's peak RSS, wall time and package; go vet runs the tool on
# every package the patterns need, dependencies included (for their facts),
# up to GOMAXPROCS at once.
#
# Results go to $OUT (a new temporary directory unless set):
#
#	memory.tsv          one line per module and mode: module, version,
#	                    analyzer commit, mode, exit status (metricleak's
#	                    standalone; go vet's, 1 when there are reports,
#	                    under go vet), processes, peak RSS of one process
#	                    (MiB), where: the package of that process (vet) or
#	                    the peak by the end of loading and the most heap
#	                    still live after a garbage collection (standalone,
#	                    both MiB; the rest of the peak is garbage not yet
#	                    collected, which GOMEMLIMIT trades for time), wall
#	                    seconds of the whole run, and the most RSS that
#	                    processes running at the same time can have held
#	                    together (MiB; each at its own peak, an upper bound)
#	MODULE@VERSION.vet.tsv  every vet tool process: RSS KiB, seconds, start
#	                    and end (Unix seconds), package, "facts" when go vet
#	                    ran it only for a dependency's facts
#	MODULE@VERSION.heap  standalone heap profile at exit (-memprofile); its
#	                    alloc_space says which passes allocate:
#	                    go tool pprof -top -cum -sample_index=alloc_space
#	MODULE@VERSION.rss  standalone RSS (KiB) sampled twice a second, by time
#	                    of day, beside MODULE@VERSION.debug (-debug=v)
#
#	eval/memory.sh                                  # the modules below
#	MODES=vet eval/memory.sh github.com/coredns/coredns@v1.15.0
#
# MODES (default "standalone vet") picks the modes. EVAL_WORK keeps the
# scratch modules and the built analyzer between runs, as in evaluate.sh.
set -euo pipefail
# OUT and EVAL_WORK are taken from where the script is called.
[ -z "${OUT:-}" ] || OUT=$(realpath -m "$OUT")
[ -z "${EVAL_WORK:-}" ] || EVAL_WORK=$(realpath -m "$EVAL_WORK")
cd "$(dirname "$0")/.."
. eval/lib.sh

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	targets=(
		github.com/coredns/coredns@v1.15.0
		github.com/cortexproject/cortex@v1.21.1
	)
fi
modes=${MODES:-standalone vet}

start_run

# The vet tool wrapper. go vet calls it with -flags and -V=full to learn
# about the tool, and then once a package with the path of a JSON
# configuration file naming the package.
cat >"$work/vettool" <<EOF
#!/usr/bin/env bash
cfg=\${!#}
# go vet keys its cache of results on the tool's ID: a new ID each run makes
# it run the tool on every package again, while compiled packages stay
# cached.
if [ "\$1" = -V=full ]; then
	"$work/metricleak" -V=full | sed "s/buildID=.*/&-\$VETRUN/"
	exit
fi
pkg=- facts=
case \$cfg in
*.cfg)
	pkg=\$(python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); print(c["ImportPath"]); print("facts" if c.get("VetxOnly") else "")' "\$cfg")
	facts=\$(echo "\$pkg" | sed -n 2p)
	pkg=\$(echo "\$pkg" | sed -n 1p)
	;;
esac
start=\$(date +%s.%N)
status=0
/usr/bin/time -f '%M %e' -o "\$VETLOG.\$\$" "$work/metricleak" "\$@" || status=\$?
end=\$(date +%s.%N)
read -r kib secs < <(tail -n 1 "\$VETLOG.\$\$")
rm -f "\$VETLOG.\$\$"
printf '%s\t%s\t%s\t%s\t%s\t%s\n' "\$kib" "\$secs" "\$start" "\$end" "\$pkg" "\$facts" >>"\$VETLOG"
exit \$status
EOF
chmod +x "$work/vettool"

table=$out/memory.tsv
start_table "$table" "metricleak $commit, $(go version | cut -d' ' -f3), GOMAXPROCS ${GOMAXPROCS:-$(nproc)}" \
	module version analyzer mode status processes peak_mib peak_where seconds concurrent_mib

for target in "${targets[@]}"; do
	mod=${target%@*}
	version=${target#*@}
	name=$(echo "$mod" | tr / _)
	dir="$work/$name@$version"
	echo "=== $target: setting up" >&2
	scratch_module "$dir" "$mod" "$version"
	for mode in $modes; do
		echo "=== $target: $mode" >&2
		status=0
		case $mode in
		standalone)
			# -debug=v logs, with the time of day, when loading starts
			# and when the analysis graph is built (loading has ended);
			# RSS is sampled twice a second beside it. gctrace logs each
			# garbage collection, with the heap left live after it.
			(cd "$dir" && GODEBUG=gctrace=1 exec /usr/bin/time -f '%M %e' -o "$dir/mem.time" \
				"$work/metricleak" -test=false -debug=v \
				-memprofile="$out/$name@$version.heap" "$mod/...") \
				>"$dir/mem.out" 2>"$out/$name@$version.debug" &
			timepid=$!
			sleep 0.2
			pid=$(pgrep -P "$timepid" || true)
			: >"$out/$name@$version.rss"
			while [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; do
				printf '%s\t%s\n' "$(date +%H:%M:%S.%N)" \
					"$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null)" \
					>>"$out/$name@$version.rss"
				sleep 0.5
			done
			wait "$timepid" || status=$?
			read -r kib secs < <(tail -n 1 "$dir/mem.time")
			loaded=$(awk '/building graph/ {print $1}' "$out/$name@$version.debug")
			# The most RSS sampled by the time loading ended.
			loadpeak=$(awk -F'\t' -v t="$loaded" '$1 <= t && $2 > m {m = $2} END {print int(m / 1024)}' \
				"$out/$name@$version.rss")
			# gctrace's "A->B->C MB" (MiB): C is the heap live after the collection.
			# A run that ends before its first collection has none: 0.
			live=$({ grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$out/$name@$version.debug" || true; } |
				awk -F'->' '{split($3, c, " "); if (c[1] + 0 > m) m = c[1] + 0} END {print m + 0}')
			row="1\t$((kib / 1024))\tloading: $loadpeak, live: $live\t$secs\t$((kib / 1024))"
			;;
		vet)
			log="$out/$name@$version.vet.tsv"
			: >"$log"
			# go vet checks tests too: its scratch module also requires
			# what the module's tests import. The packages and their tests
			# are compiled first, with go vet's own checks, so that the
			# measured run is the vet tool's alone.
			vdir="$dir.vet"
			if [ ! -f "$vdir/go.mod" ]; then
				scratch_module "$vdir" "$mod" "$version"
				(cd "$vdir" && go get -t "$mod/...@$version" >>setup.log 2>&1) || true
			fi
			(cd "$vdir" && go vet "$mod/..." >/dev/null 2>&1) || true
			(cd "$vdir" && VETRUN=$(date +%s%N) VETLOG=$log /usr/bin/time -f '%M %e' -o "$vdir/vet.time" \
				go vet -vettool="$work/vettool" "$mod/...") >"$vdir/vet.out" 2>&1 || status=$?
			read -r _ secs < <(tail -n 1 "$vdir/vet.time")
			row=$(python3 - "$log" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    kib, secs, start, end, pkg, facts = line.rstrip("\n").split("\t")
    rows.append((int(kib), float(start), float(end), pkg))
peak = max(rows)
# The most RSS held at once: at each start, add the peaks of the processes
# running then.
concurrent = max(sum(k for k, s, e, _ in rows if s <= t < e) for _, t, _, _ in rows)
print("%d\t%d\t%s" % (len(rows), peak[0] // 1024, peak[3]), end="")
print("\t%d" % (concurrent // 1024))
PY
)
			row=$(echo "$row" | awk -F'\t' -v s="$secs" 'BEGIN{OFS="\t"} {print $1, $2, $3, s, $4}')
			;;
		*)
			echo "unknown mode $mode" >&2
			exit 2
			;;
		esac
		printf "%s\t%s\t%s\t%s\t%s\t$row\n" "$mod" "$version" "$commit" "$mode" "$status" >>"$table"
		tail -n 1 "$table" >&2
	done
done
echo "results in $out" >&2
