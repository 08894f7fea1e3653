#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# big_frames.sh - stacks through a frame larger than 256 KiB with the
# default call graph.  A CFA offset from rsp over 262,136 bytes did not fit
# CFI_KIND_RSP's field, so its row was a stop ("unsupported" in the
# summary): rustc 1.95's create_and_enter_global_ctxt keeps 540,128 bytes
# on the stack, under every stack of a compilation, and 49 of 291 walks of
# one `rustc -O` stopped there.  CFI_KIND_RSP_FAR (bpf/cfi_row.h) holds
# frames up to 768 KiB.
#
# Workload: nofp_deep -b -n 8 (tests/workloads/nofp_deep.c; no frame
# pointers): main -> big_frame (600,016-byte CFA offset) -> deep_down x 8
# -> deep_leaf, for 1.5 CPU seconds at 999 Hz.  Of its deep_leaf samples,
# >= 99% must have the whole path main;big_frame;deep_down x 8;deep_leaf
# below __libc_start_call_main (here 100%; before CFI_KIND_RSP_FAR 0%:
# every walk stopped at big_frame), and the summary may count at most 1%
# of the walks "unsupported".  perf record --call-graph dwarf on the same
# work is printed beside: its 8 KiB copy cannot reach main past the frame.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_deep" ] || fail "no $WL/nofp_deep (make B=$BPFPROF_BUILD)"
grep -q 'rsp+600016' < <(readelf --debug-dump=frames-interp "$WL/nofp_deep") ||
	fail "big_frame's CFA offset is not 600,016 bytes: the test would prove nothing"

"$BPFPROF" -F 999 --format folded -o "$TMP/big.folded" -- "$WL/nofp_deep" -b -n 8 -s 1.5 \
	2> "$TMP/big.err" || { cat "$TMP/big.err"; fail "bpfprof -- nofp_deep -b failed"; }
line=$(grep 'user stack walks:' "$TMP/big.err") || fail "no walk summary: $(cat "$TMP/big.err")"
echo "$line"
read -r full all < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count --comm nofp_deep \
	--among 'deep_leaf$' "$TMP/big.folded" \
	'(^|;)__libc_start_call_main;main;big_frame;(deep_down;){8}deep_leaf$')
[ "$all" -ge 800 ] || fail "only $all deep_leaf samples (expected >= 800)"
[ $((full * 100)) -ge $((all * 99)) ] ||
	fail "$full of $all deep_leaf samples have the whole path through big_frame, under 99%"
walks=$(echo "$line" | sed -n 's/.*user stack walks: \([0-9]*\);.*/\1/p')
unsup=$(echo "$line" | sed -n 's/.* unsupported \([0-9]*\).*/\1/p')
[ $((${unsup:-0} * 100)) -le "$walks" ] || fail "${unsup} of $walks walks unsupported: $line"

perf_line="perf: not run"
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	"$WL/nofp_deep" -b -n 8 -s 1.5 > /dev/null 2>&1; then
	perf_folded "$TMP/perf.data" > "$TMP/perf.folded"
	read -r pfull pall < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count \
		--among 'deep_leaf$' "$TMP/perf.folded" '(^|;)main;big_frame;(deep_down;){8}deep_leaf$')
	perf_line="perf --call-graph dwarf: $pfull of $pall deep_leaf samples reach main"
fi
ok "$full of $all deep_leaf samples have the whole path through the 600 KB frame; ${unsup:-0} of $walks walks unsupported; $perf_line"
