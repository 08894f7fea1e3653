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

# resolver_paths FOLDED ROOT: "HIT ALL": the samples with a frame of the
# resolver, and of those the ones whose stack has ROOT right below it
# (lazy_stage's calls, or main's own: clock_gettime).
resolver_paths() {
	fs count --comm nofp_lazy --among '(^|;)_dl_runtime_resolve' "$1" \
		"(^|;)$2;(lazy_stage;)?_dl_runtime_resolve_[a-z]*(;|\$)"
}

# profile NAME SECONDS [OPTION...]: bpfprof -F 999 OPTION... on nofp_lazy
# under LD_BIND_NOT=1 into $TMP/NAME.folded (the summary in NAME.err).
profile() {
	local name=$1 sec=$2
	shift 2
	"$BPFPROF" -F 999 "$@" --format folded -o "$TMP/$name.folded" -- \
		env LD_BIND_NOT=1 "$WL/nofp_lazy" -s "$sec" 2> "$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "bpfprof $* -- nofp_lazy failed"; }
}

# expect NAME FULL ALL MIN: at least MIN samples in the resolver, >= 95%
# of them reaching main.
expect() {
	[ "$3" -ge "$4" ] ||
		fail "$1: only $3 samples in the lazy-binding resolver (expected >= $4; libc6-dbg names it)"
	[ $(($2 * 100)) -ge $(($3 * 95)) ] ||
		fail "$1: $2 of $3 samples in the resolver reach main below it, under 95%"
}

profile auto 1.5
grep 'user stack walks:' "$TMP/auto.err" || fail "no walk summary: $(cat "$TMP/auto.err")"
read -r full all < <(resolver_paths "$TMP/auto.folded" '__libc_start_call_main;main')
expect "default" "$full" "$all" 500

# --call-graph dwarf (and young processes' copies): libdwfl, given rbx
profile dwarf 1 --call-graph dwarf
read -r dfull dall < <(resolver_paths "$TMP/dwarf.folded" '__libc_start_call_main;main')
expect "--call-graph dwarf" "$dfull" "$dall" 300

perf_line="perf: not run"
if perf record -q -F 999 --call-graph dwarf -o "$TMP/perf.data" -- \
	env LD_BIND_NOT=1 "$WL/nofp_lazy" -s 1.5 > /dev/null 2>&1; then
	perf_folded "$TMP/perf.data" > "$TMP/perf.folded"
	read -r pfull pall < <(resolver_paths "$TMP/perf.folded" main)
	perf_line="perf --call-graph dwarf: $pfull of $pall such samples reach main"
fi
ok "$full of $all samples in the lazy-binding resolver reach main ($dfull of $dall with --call-graph dwarf); $perf_line"
