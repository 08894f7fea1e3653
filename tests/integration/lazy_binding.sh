#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# lazy_binding.sh - stacks through glibc's lazy-binding trampoline with the
# default call graph.  _dl_runtime_resolve_xsavec (and its _xsave and
# _fxsave siblings) aligns the stack for xsave and keeps its CFA in rbx,
# so its row was a stop ("unsupported" in the summary) and every walk
# through it ended there: 195 of 11,159 samples of PostgreSQL's backends
# under `pgbench -C`, each of which resolves its symbols again.  Rows now
# say where each frame saved the caller's rbx, the walk carries rbx, and
# CFI_KIND_RBX (bpf/cfi_row.h) follows the trampoline's CFA.
#
# Workload: nofp_lazy (tests/workloads/nofp_lazy.c; no frame pointers,
# linked -z lazy) under LD_BIND_NOT=1, so each of its cbrt() calls goes
# through the resolver: main -> lazy_stage -> _dl_runtime_resolve_* ->
# _dl_fixup -> _dl_lookup_symbol_x -> ..., for 1.5 CPU seconds at 999 Hz.
# Of its samples with a _dl_runtime_resolve frame (most of them: >= 500),
# >= 95% must reach main below it through __libc_start_call_main (here
# 99.5%; before, 0.3%: the walks stopped at the trampoline, "unsupported"
# on 1,277 of 1,512 walks).  The same for --call-graph dwarf, whose
# copies libdwfl unwinds, now given rbx (a 1 s run: 840 of 843; 188 of 874
# before).  Names of ld.so's local functions come from libc6-dbg.  perf
# record --call-graph dwarf on the same work is printed beside: its
# unwinds stopped at the trampoline in most runs here (0 of ~1,000 such
# samples), not in some (1,281 of 1,284).
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/nofp_lazy" ] || fail "no $WL/nofp_lazy (make B=$BPFPROF_BUILD)"

"$BPFPROF" -F 999 --format folded -o "$TMP/lazy.folded" -- \
	env LD_BIND_NOT=1 "$WL/nofp_lazy" -s 1.5 2> "$TMP/lazy.err" ||
	{ cat "$TMP/lazy.err"; fail "bpfprof -- nofp_lazy failed"; }
line=$(grep 'user stack walks:' "$TMP/lazy.err") || fail "no walk summary: $(cat "$TMP/lazy.err")"
echo "$line"
read -r full all < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count --comm nofp_lazy \
	--among '(^|;)_dl_runtime_resolve' "$TMP/lazy.folded" \
	'(^|;)__libc_start_call_main;main;(lazy_stage;)?_dl_runtime_resolve_[a-z]*(;|$)')
[ "$all" -ge 500 ] ||
	fail "only $all samples in the lazy-binding resolver (expected >= 500; libc6-dbg names it)"
[ $((full * 100)) -ge $((all * 95)) ] ||
	fail "$full of $all samples in the resolver reach main below it, under 95%"

# --call-graph dwarf (and young processes' copies): libdwfl, given rbx
"$BPFPROF" -F 999 --call-graph dwarf --format folded -o "$TMP/dwarf.folded" -- \
	env LD_BIND_NOT=1 "$WL/nofp_lazy" -s 1 2> "$TMP/dwarf.err" ||
	{ cat "$TMP/dwarf.err"; fail "bpfprof --call-graph dwarf -- nofp_lazy failed"; }
read -r dfull dall < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count --comm nofp_lazy \
	--among '(^|;)_dl_runtime_resolve' "$TMP/dwarf.folded" \
	'(^|;)__libc_start_call_main;main;(lazy_stage;)?_dl_runtime_resolve_[a-z]*(;|$)')
[ "$dall" -ge 300 ] || fail "--call-graph dwarf: only $dall samples in the resolver (expected >= 300)"
[ $((dfull * 100)) -ge $((dall * 95)) ] ||
	fail "--call-graph dwarf: $dfull of $dall samples in the resolver reach main, under 95%"

perf_line="perf: not run"
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	env LD_BIND_NOT=1 "$WL/nofp_lazy" -s 1.5 > /dev/null 2>&1; then
	perf script --no-inline -i "$TMP/perf.data" -F comm,ip,sym,dso 2> /dev/null |
		python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" from-perf-script > "$TMP/perf.folded"
	read -r pfull pall < <(python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" count \
		--among '(^|;)_dl_runtime_resolve' "$TMP/perf.folded" \
		'(^|;)main;(lazy_stage;)?_dl_runtime_resolve_[a-z]*(;|$)')
	perf_line="perf --call-graph dwarf: $pfull of $pall such samples reach main"
fi
ok "$full of $all samples in the lazy-binding resolver reach main ($dfull of $dall with --call-graph dwarf); $perf_line"
