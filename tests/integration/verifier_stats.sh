#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# BPFPROF_DEBUG=stats prints the kernel verifier's statistics of each BPF
# program as it loads (user/kernel/sampler.c): one line per program of
# profile.bpf.c with the instructions the verifier processed and its time,
# the numbers docs/PERFORMANCE.md's "Verifier cost of the BPF program"
# follows, then the program's size as loaded and as the kernel keeps it
# after its rewrites (dead code removed, look-ups inlined).  Checked on
# `-- /bin/true`, in auto and fp mode: every program has its line with
# positive counts; the run still writes its profile; without the variable
# there is no such line.
. "$(dirname "$0")/../lib/common.sh"
need_root

# processed NAME ERRFILE: the instructions on NAME's line, empty if none
processed() {
	sed -n "s/^bpfprof: verifier: $1: processed \([0-9]*\) insns .*verification time [0-9]* usec; .*\$/\1/p" "$2"
}

# sizes NAME ERRFILE: "LOADED XLATED", the instructions given to the kernel
# and those it kept after its rewrites, on NAME's line
sizes() {
	sed -n "s/^bpfprof: verifier: $1: .*; \([0-9]*\) insns loaded, \([0-9]*\) after the verifier's rewrites\$/\1 \2/p" "$2"
}

for mode in auto fp; do
	BPFPROF_DEBUG=stats "$BPFPROF" -q --call-graph "$mode" -o "$TMP/$mode.prof" \
		-- /bin/true 2> "$TMP/$mode.err" || { cat "$TMP/$mode.err"; fail "$mode: bpfprof failed"; }
	cat "$TMP/$mode.err"
	[ -s "$TMP/$mode.prof" ] || fail "$mode: no profile written"
	for prog in on_sample on_fork on_exec on_rename on_exit; do
		n=$(processed "$prog" "$TMP/$mode.err")
		[ -n "$n" ] && [ "$n" -gt 0 ] || fail "$mode: no verifier statistics line for $prog"
		read -r loaded xlated <<< "$(sizes "$prog" "$TMP/$mode.err")"
		[ -n "$loaded" ] && [ "$loaded" -gt 0 ] && [ -n "$xlated" ] && [ "$xlated" -gt 0 ] ||
			fail "$mode: no program sizes on $prog's line"
	done
	ok "$mode: on_sample verified in $(processed on_sample "$TMP/$mode.err") instructions"
done

"$BPFPROF" -q -o "$TMP/plain.prof" -- /bin/true 2> "$TMP/plain.err" ||
	{ cat "$TMP/plain.err"; fail "bpfprof failed without BPFPROF_DEBUG"; }
grep -q 'bpfprof: verifier:' "$TMP/plain.err" && fail "verifier statistics printed without BPFPROF_DEBUG=stats"
ok "no statistics without BPFPROF_DEBUG=stats"
