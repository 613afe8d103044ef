#!/usr/bin/env bash
# ab-bench.sh: compare a benchmark between a git revision and the working tree
# by alternating the two builds, so that both see the same machine noise.
#
#   scripts/ab-bench.sh REV PKG BENCH [ROUNDS] [METRIC]
#   scripts/ab-bench.sh HEAD~3 ./sim 'Replay/kube-default/nodes=100$' 10 pods/s
#
# It builds PKG's test binary at REV (in a temporary worktree) and from the
# working tree, runs BENCH with -benchtime $BENCHTIME (default 3x, enough
# for a replay; give microbenchmarks 1s) and -cpu $CPU (default 1) ROUNDS times each,
# alternating, and prints the best and the median of METRIC (default ns/op;
# any unit the benchmark reports) for each. On a shared VM single runs vary
# by 10-20%; medians of alternating runs are what the docs report.
set -euo pipefail
rev=${1:?revision} pkg=${2:?package} bench=${3:?benchmark regexp}
rounds=${4:-10} metric=${5:-ns/op} benchtime=${BENCHTIME:-3x} cpu=${CPU:-1}
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$root" worktree add --detach "$tmp/base" "$rev" >/dev/null 2>&1
(cd "$tmp/base" && go test -c -o "$tmp/a.test" "$pkg")
(cd "$root" && go test -c -o "$tmp/b.test" "$pkg")
for _ in $(seq "$rounds"); do
	for v in a b; do
		"$tmp/$v.test" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" -test.cpu "$cpu" |
			awk -v m="$metric" -v v="$v" '{for (i = 2; i <= NF; i++) if ($i == m) print v, $(i-1)}'
	done
done | sort -k1,1 -k2,2g | awk -v rev="$rev" -v m="$metric" '
	{ v[$1, ++n[$1]] = $2 }
	END {
		for (k = 0; k < 2; k++) {
			s = k ? "b" : "a"; c = n[s]
			if (!c) continue
			best = (m == "ns/op") ? v[s, 1] : v[s, c]
			printf "%-12s best %s  median %s %s  (%d runs)\n", (k ? "working tree" : rev), best, v[s, int((c + 1) / 2)], m, c
		}
	}'
