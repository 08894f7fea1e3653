# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/names.sh - sourced by the tests of the names profiles give
# functions of mangled languages (cxx_names.sh, rust_names.sh), after
# common.sh, with $lib set to tests/lib and exported: leaf shares of folded
# profiles, their allowed distance from a workload's truth, and bpfprof and
# `perf record -g` attached to one process at once.

# leaf_share FOLDED NAME: percent of FOLDED's samples whose innermost user
# frame is NAME exactly.
leaf_share() {
	python3 - "$1" "$2" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["lib"])
from folded_stacks import leaf_counts
agg, total = leaf_counts(sys.argv[1])
print("%.2f" % (100.0 * agg.get(sys.argv[2], 0) / total))
EOF
}
# truth_allowed FOLDED FRACTION: the points a leaf share of FOLDED may
# differ from the truth FRACTION: max(3, 3.5 sigma) for its sample count.
truth_allowed() {
	python3 - "$1" "$2" <<'EOF'
import math, os, sys
sys.path.insert(0, os.environ["lib"])
from folded_stacks import leaf_counts
_, total = leaf_counts(sys.argv[1])
p = float(sys.argv[2])
print("%.2f" % max(3.0, 3.5 * 100 * math.sqrt(p * (1 - p) / total)))
EOF
}
within() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

# attach_both PID SECONDS NAME: bpfprof (folded, 999 Hz) and perf record -g
# attached to PID for SECONDS; $TMP/NAME.folded and $TMP/NAME.perf.folded.
attach_both() {
	local pid=$1 secs=$2 name=$3 bp pr
	"$BPFPROF" -q -F 999 -d "$secs" --format folded -o "$TMP/$name.folded" -p "$pid" \
		2>"$TMP/$name.err" &
	bp=$!
	perf record -q -e cpu-clock -F 999 -g -p "$pid" -o "$TMP/$name.data" -- sleep "$secs" \
		>/dev/null 2>"$TMP/$name.perf.err" &
	pr=$!
	sleep 1
	[ -n "${RELEASE:-}" ] && kill -USR1 "$pid"
	wait $bp || fail "bpfprof on $name failed: $(cat "$TMP/$name.err")"
	wait $pr || fail "perf record on $name failed: $(cat "$TMP/$name.perf.err")"
	perf script -i "$TMP/$name.data" -F comm,ip,sym,dso 2>/dev/null | fs from-perf-script \
		>"$TMP/$name.perf.folded" || fail "perf script of $name failed"
	fs perf-names <"$TMP/$name.folded" >"$TMP/$name.short.folded" || fail "perf-names failed"
}

# perf_shares_agree NAME N WHAT: the leaf shares of $TMP/NAME.short.folded
# (bpfprof, perf's form) against $TMP/NAME.perf.folded (attach_both) for
# the N largest of each, within max(3 points, 3.5 sigma); printed, and a
# failure says WHAT.
perf_shares_agree() {
	local name=$1 n=$2 what=$3
	fs self "$TMP/$name.perf.folded" "$TMP/$name.short.folded" "$n" 3 3.5 >"$TMP/$name.self" ||
		fail "$what: folded_stacks self failed"
	sed 's/^/    perf vs bpfprof: /' "$TMP/$name.self"
	awk '/^worst/ { d = $2; if (d < 0) d = -d; exit !(d <= $3) }' "$TMP/$name.self" ||
		fail "$what: leaf shares differ from perf's: $(grep '^worst' "$TMP/$name.self")"
}
