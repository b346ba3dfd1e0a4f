#!/usr/bin/env bash
# alternate.sh REV ROW [N]: one figure of this tree beside the same figure of commit REV, in
# alternated runs (REV's, this tree's, REV's, ...; N of each, 5 by default), so that both see
# the same machine load. ROW is a row of make bench's table (decrypt-1k, stream, or any key
# IDVAULT_LOAD_ONLY takes: BenchmarkHTTPLoad) or records (BenchmarkRecords1MDecryptAndAudit,
# which needs PostgreSQL as its package's tests do). REV's tree is extracted (git archive) in a
# temporary directory, removed at the end; each test binary runs in its own tree, whose idvault
# binary the records benchmark builds. Prints one line per run: its turn, the load average at
# its start and the benchmark's figures (take the medians).
#
#   app/loadgen/alternate.sh 56aac23 decrypt-1k
set -euo pipefail
if [ $# -lt 2 ]; then
	sed -n '2,11p' "$0" | cut -c3-
	exit 2
fi
rev=$1 row=$2 n=${3:-5}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
before=$work/before
trap 'rm -rf "$work"' EXIT
mkdir "$before"
git -C "$root" archive "$rev" | tar -x -C "$before"

case $row in
records)
	bench=BenchmarkRecords1MDecryptAndAudit
	args=(-test.bench '^BenchmarkRecords1MDecryptAndAudit$' -test.benchtime 1x -test.timeout 30m)
	keep='^Benchmark'
	;;
*)
	bench=BenchmarkHTTPLoad
	args=(-test.bench '^BenchmarkHTTPLoad$' -test.timeout 10m)
	keep='^\| exit|^\| `'
	export IDVAULT_LOAD_ONLY=$row
	unset IDVAULT_BENCH_PAGE # a partial table is never written
	;;
esac
# The package holding the benchmark, in each tree (it may have moved between the two).
pkgof() { dirname "$(cd "$1" && grep -rl --include='*_test.go' "^func $bench(" app exit | head -n1)"; }
pkg_before=$(pkgof "$before")
pkg_after=$(pkgof "$root")
(cd "$before" && go test -c -o "$work/before.test" "./$pkg_before")
(cd "$root" && go test -c -o "$work/after.test" "./$pkg_after")

for i in $(seq "$n"); do
	for turn in before after; do
		tree=$root pkg=$pkg_after
		if [ "$turn" = before ]; then tree=$before pkg=$pkg_before; fi
		load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
		line=$(cd "$tree/$pkg" && "$work/$turn.test" -test.run '^$' "${args[@]}" | grep -E "$keep" || true)
		echo "$i $turn load=$load $line"
	done
done
