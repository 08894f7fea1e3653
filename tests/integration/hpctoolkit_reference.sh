#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# hpctoolkit_reference.sh - the HPCToolkit database reader (tests/tools/hpcdb.c,
# built as $BPFPROF_BUILD/tools/hpcdb) against every real HPCToolkit-written
# database in shared/reference/hpctoolkit/: each must be read and checked
# without error, and the top functions of the summary profile must equal
# those of the sum over the thread profiles.  Also checks that the reader is
# not a no-op: --strict rejects hpcprof's unlisted ctxIds, and a truncated
# copy is rejected.  hpcdb's flat-view module times give hpcprof's kernel
# module (loops-perf) exclusive = inclusive.
. "$(dirname "$0")/../lib/common.sh"

HPCDB=$BPFPROF_BUILD/tools/hpcdb
[ -x "$HPCDB" ] || fail "$HPCDB not built (make B=... \$B/tools/hpcdb)"
TOP=$(git -C "$BPFPROF_SRC" rev-parse --show-toplevel 2>/dev/null) || TOP=$BPFPROF_SRC
REF=$TOP/../shared/reference/hpctoolkit
[ -d "$REF" ] || fail "no reference databases at $REF"

# "name excl%" (one decimal) of one block of hpcdb's output
block() {			# output, block title
	printf '%s\n' "$1" | awk -v t="$2" '
		index($0, t) == 1 { f = 1; next }
		/^top / { f = 0 }
		f && $1 != "excl%" { n = $1; $1 = $2 = $3 = $4 = ""; sub(/^ +/, "");
				     printf "%.1f %s\n", n, $0 }'
}

n=0
for d in "$REF"/*/; do
	[ -f "$d/meta.db" ] || continue
	name=$(basename "$d")
	out=$("$HPCDB" --top 15 "$d" 2>&1) || fail "$name rejected: $out"
	summary=$(block "$out" "top functions (summary)")
	threads=$(block "$out" "top functions (sum over threads)")
	[ -n "$summary" ] || fail "$name: no top functions"
	[ "$summary" = "$threads" ] ||
		fail "$name: summary and sum over threads differ:"$'\n'"$summary"$'\n---\n'"$threads"
	ok "$name read, top function: $(printf '%s\n' "$summary" | head -n 1)"
	n=$((n + 1))
done
[ "$n" -ge 8 ] || fail "only $n reference databases found in $REF"

# hpcviewer's flat view as hpcdb computes it: hpcprof's kernel frames
# (function -> function) give the kernel module exclusive = inclusive
out=$("$HPCDB" --modules "$REF/hpctoolkit-loops-perf" 2>&1) || fail "loops-perf: $out"
read -r kex kin < <(printf '%s\n' "$out" | awk '$1 == "module" && $4 ~ /vmlinux/ { print $2, $3 }')
[ -n "${kin:-}" ] || fail "loops-perf: no vmlinux module in: $out"
awk -v e="$kex" -v i="$kin" 'BEGIN { d = e - i; if (d < 0) d = -d; exit !(i > 0 && d <= 1e-9 * i) }' ||
	fail "loops-perf: vmlinux exclusive $kex, inclusive $kin"
ok "loops-perf: vmlinux exclusive $kex = inclusive $kin in the flat view"

# strict mode: hpcprof elides instruction contexts that keep values
out=$("$HPCDB" --strict "$REF/hpctoolkit-small" 2>&1) && fail "--strict accepted elided ctxIds"
case $out in *"not in meta.db"*) ok "--strict rejects unlisted ctxIds" ;;
	*) fail "--strict: unexpected message: $out" ;; esac

# a damaged copy is rejected
cp -r "$REF/hpctoolkit-small" "$TMP/small"
chmod -R u+w "$TMP/small"
truncate -s 1000 "$TMP/small/profile.db"
out=$("$HPCDB" "$TMP/small" 2>&1) && fail "truncated profile.db accepted"
ok "truncated profile.db rejected: $out"
echo "$n reference databases read"
