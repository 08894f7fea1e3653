#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# jit_perfmap.sh - issue 17: this file owns the checks that JIT code is
# named from the process's /tmp/perf-PID.map (user/symbols/perfmap.c),
# on Node.js run with --perf-basic-prof (Debian's nodejs; nodesource's
# too), and that the auto walk steps through them: anonymous code gets
# the frame-pointer rule (user/unwind/cfi_anon.c), and so do V8's
# builtins in node's .text, which have no CFI (user/unwind/cfi_fp.c).
#
# Workload: tests/workloads/jit_shares.js: burnA and burnB run the same
# loop body for 70% and 30% of the work; the program measures the CPU
# time spent in each (its "truth" line) and the share of its CPU time
# they took ("burned").
#
#  1. -p: bpfprof (folded), bpfprof (--format perf) and `perf record -g`
#     attach to one run together (as in dwarf_vs_perf.sh: same execution,
#     independent samplers).  In the folded output and in bpfprof's
#     perf.data as `perf script` reads it (the anonymous mappings are
#     written as //anon, so perf reads the same map):
#       - the share of samples named burnA or burnB is at least the
#         workload's "burned" share minus 10 points (without the map they
#         are all "[unknown]");
#       - burnA's share of the samples of the two is within the bound
#         below of the workload's truth;
#       - at least 90% of the samples of the two have stacks that reach
#         the process root (__libc_start_call_main) through the JIT
#         frames and the builtins (without the rules: none);
#     perf record -g's shares are printed beside them, and it must name
#     the same two functions.
#  2. -- COMMAND: the same checks on the folded output of a run of its own,
#     with 80% to the root: the burn starts at once, while node's table
#     (3 MB of CFI: 0.15-0.7 s to build) is loading, and code pages V8
#     makes executable with mprotect() (no MMAP record) are learned only
#     when a walk asks for them; those walks stop at the JIT leaf
#     (unmapped).  94-99% here; -p, attached before the burn, 100%.
#  3. --all: node's samples are named too.
#  4. another mount and pid namespace (unshare, a private tmpfs on /tmp):
#     node writes /tmp/perf-1.map where only /proc/PID/root reaches it;
#     its names are read while it runs (the file is gone with its /tmp).
#  5. -p on tests/workloads/js_runtime.js (Date.now() in a loop: C++ that
#     JavaScript calls through the builtin CEntry, which V8 runs from a
#     second mapping of node's .text): at least 90% of the samples through
#     CEntry reach the root; perf record -g's count printed beside it.
#
# The bound on burnA's share: with N samples of the two functions the
# sampling error of a share p ~ 0.7 is sqrt(p (1 - p) / N), 1.5 points at
# N = 1,000; the bound is 4 sigma, at least 5 points: the first chunks run
# in V8's interpreter and baseline tiers, partly in builtins that are not
# named burnA/burnB, and process.cpuUsage() counts V8's helper threads
# (compilers, GC) to whichever function runs - a few points at most.
#
# Environment: BPFPROF_BUILD, NODE (default: node on PATH), FREQ (499),
# WORK_SECONDS (3).  Exit: 0 pass, 77 skip (no root/BPF), 1 fail.
. "$(dirname "$0")/../lib/common.sh"
need_root
NODE=${NODE:-$(command -v node || command -v nodejs || true)}
FREQ=${FREQ:-499}
SECS=${WORK_SECONDS:-3}
js=$BPFPROF_SRC/tests/workloads/jit_shares.js
lib=$BPFPROF_SRC/tests/lib
[ -x "$BPFPROF" ] || fail "no collector at $BPFPROF (set BPFPROF_BUILD)"
[ -n "$NODE" ] || fail "node is not installed (Debian package nodejs)"
command -v perf >/dev/null || fail "perf not installed (Debian package linux-perf)"
echo "node: $NODE $("$NODE" --version)"
# V8 writes isolate-*-v8.log files into node's working directory
cd "$TMP" || fail "cannot enter $TMP"

MAPS=()
cleanup_maps() { rm -f "${MAPS[@]}"; cleanup_test; }
trap cleanup_maps EXIT

A='[:*~^]burnA( |;|$)'
B='[:*~^]burnB( |;|$)'
ROOT='__libc_start_call_main;.*[:*~^]burn[AB]( |;|$)'

# truth FIELD: a number of the workload's "truth" line in $TMP/$1.out
truth() { awk -v f="$2" '$1 == "truth" { for (i = 2; i < NF; i++) if ($i == f) print $(i + 1) }' "$TMP/$1.out"; }

# check FOLDED WHAT RUN [ROOT_PCT]: the checks of the header on one
# profile; with ROOT_PCT, that share of burnA/burnB samples reach the root
check() {
	local file=$1 what=$2 run=$3 roots=${4:-0} a b n r t burned
	read -r a n < <(fs count "$file" "$A")
	read -r b _ < <(fs count "$file" "$B")
	read -r r _ < <(fs count "$file" "$ROOT")
	t=$(truth "$run" burnA)
	burned=$(truth "$run" burned)
	[ -n "$t" ] && [ -n "$burned" ] || fail "$run: no truth line: $(cat "$TMP/$run.out")"
	awk -v a="$a" -v b="$b" -v n="$n" -v r="$r" -v t="$t" -v burned="$burned" -v what="$what" \
	    -v roots="$roots" 'BEGIN {
		ab = a + b
		if (n < 200 || ab < 100) {
			printf "FAIL: %s: too few samples: %d, %d in burnA/burnB\n", what, n, ab; exit 1
		}
		named = 100 * ab / n; share = 100 * a / ab; p = t / 100
		bound = 400 * sqrt(p * (1 - p) / ab); if (bound < 5) bound = 5
		printf "%s: %d samples, %d named burnA/burnB (%.1f%%, workload burned %.1f%%); " \
		       "burnA %.2f%% of them, truth %.2f%%, bound %.2f points; %d of them reach " \
		       "__libc_start_call_main (%.1f%%)\n", what, n, ab, named, burned, share, t, bound,
		       r, 100 * r / ab
		if (named < burned - 10) { printf "FAIL: %s: JIT frames not named\n", what; exit 1 }
		d = share - t; if (d < 0) d = -d
		if (d > bound) { printf "FAIL: %s: burnA share off by %.2f points\n", what, d; exit 1 }
		if (100 * r < roots * ab) {
			printf "FAIL: %s: %.1f%% of the stacks reach the root, not %d%%\n", what,
			       100 * r / ab, roots; exit 1
		}
	}' || fail "$what (top stacks: $(fs top "$file" 3 | cut -c1-300))"
}

perf_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'; }

# ---- 1. -p: folded, perf.data and perf record -g on one run ----------------
"$NODE" --perf-basic-prof "$js" -s "$SECS" --wait >"$TMP/p.out" 2>"$TMP/p.wl.err" & wl=$!
CHILD_PIDS+=("$wl")
MAPS+=("/tmp/perf-$wl.map")
python3 "$lib/procwait.py" ready "$TMP/p.out" 30 >/dev/null || fail "workload not ready: $(cat "$TMP/p.wl.err")"
"$BPFPROF" -p "$wl" -F "$FREQ" -d 120 --format folded -o "$TMP/p.folded" 2>"$TMP/p.err" & b1=$!
"$BPFPROF" -p "$wl" -F "$FREQ" -d 120 --format perf -o "$TMP/p.data" 2>"$TMP/pd.err" & b2=$!
perf record -e cpu-clock -F "$FREQ" -g -p "$wl" -o "$TMP/perf.data" >"$TMP/perf.out" 2>"$TMP/perf.err" & pr=$!
CHILD_PIDS+=("$b1" "$b2" "$pr")
python3 "$lib/procwait.py" attached "$b1" "$b2" --timeout 60 ||
	fail "bpfprof did not attach: $(cat "$TMP/p.err" "$TMP/pd.err")"
for _ in $(seq 300); do [ "$(perf_fds "$pr")" -ge 1 ] && break; sleep 0.1; done
[ "$(perf_fds "$pr")" -ge 1 ] || fail "perf record did not open its events: $(cat "$TMP/perf.err")"
sleep 0.5
kill -USR2 "$wl" || fail "cannot release the workload"
wait "$wl" || fail "workload failed: $(cat "$TMP/p.wl.err")"
wait "$b1" || fail "bpfprof (folded) failed: $(cat "$TMP/p.err")"
wait "$b2" || fail "bpfprof (perf) failed: $(cat "$TMP/pd.err")"
wait "$pr" || fail "perf record failed: $(cat "$TMP/perf.err")"
cat "$TMP/p.out" "$TMP/p.err"
[ -s "/tmp/perf-$wl.map" ] || fail "node wrote no /tmp/perf-$wl.map"
for d in p perf; do
	perf script -i "$TMP/$d.data" -F comm,ip,sym,dso 2>"$TMP/$d.script.err" | fs from-perf-script \
		>"$TMP/$d.script.folded" || fail "perf script $d.data failed: $(tail -n 5 "$TMP/$d.script.err")"
done
echo "--- bpfprof folded:"; fs top "$TMP/p.folded" 3 | cut -c1-400
echo "--- perf record -g:"; fs top "$TMP/perf.script.folded" 3 | cut -c1-400
check "$TMP/p.folded" "-p, folded" p 90
check "$TMP/p.script.folded" "-p, bpfprof's perf.data through perf script" p 90
check "$TMP/perf.script.folded" "-p, perf record -g (for comparison)" p
grep -q 'burnA /' "$TMP/p.script.folded" || fail "perf script shows no burnA name from bpfprof's perf.data"
ok "-p: JIT functions named in folded and perf.data, shares as the workload's, stacks to the root"

# ---- 2. -- COMMAND ------------------------------------------------------------
"$BPFPROF" -F "$FREQ" --format folded -o "$TMP/c.folded" -- \
	"$NODE" --perf-basic-prof "$js" -s "$SECS" >"$TMP/c.out" 2>"$TMP/c.err" ||
	fail "bpfprof -- node failed: $(cat "$TMP/c.err")"
MAPS+=("/tmp/perf-$(awk '$1 == "ready" { print $2 }' "$TMP/c.out").map")
cat "$TMP/c.out"
check "$TMP/c.folded" "-- COMMAND, folded" c 80
ok "-- COMMAND: JIT functions named, stacks to the root"

# ---- 3. --all ---------------------------------------------------------------
"$NODE" --perf-basic-prof "$js" -s 60 >"$TMP/a.out" 2>"$TMP/a.wl.err" & wl=$!
CHILD_PIDS+=("$wl")
MAPS+=("/tmp/perf-$wl.map")
python3 "$lib/procwait.py" ready "$TMP/a.out" 30 >/dev/null || fail "workload not ready: $(cat "$TMP/a.wl.err")"
sleep 0.5
"$BPFPROF" -a -F "$FREQ" -d 2 --format folded -o "$TMP/a.folded" 2>"$TMP/a.err" ||
	fail "bpfprof -a failed: $(cat "$TMP/a.err")"
kill "$wl"
grep '^node;' "$TMP/a.folded" >"$TMP/a.node.folded" || fail "--all: no samples of node"
read -r an nn < <(fs count "$TMP/a.node.folded" '[:*~^]burn[AB]( |;|$)')
echo "--all: node: $nn samples, $an in burnA/burnB"
[ "${nn:-0}" -ge 100 ] || fail "--all: too few samples of node: ${nn:-0}"
[ "$((an * 100))" -ge "$((nn * 70))" ] || fail "--all: node's JIT functions not named ($an of $nn)"
ok "--all: JIT functions named"

# ---- 4. another mount and pid namespace ----------------------------------------
if command -v unshare >/dev/null && unshare -m -p -f true 2>/dev/null; then
	# The script is opened before the tmpfs hides /tmp and copied into
	# it: the tree itself may be under /tmp.
	# shellcheck disable=SC2016
	"$BPFPROF" -F "$FREQ" --format folded -o "$TMP/n.folded" -- unshare -m -p -f sh -c \
		'exec 3<"$1" && mount -t tmpfs tmpfs /tmp && cat <&3 >/tmp/jit.js &&
		 exec 3<&- "$0" --perf-basic-prof /tmp/jit.js -s "$2"' \
		"$NODE" "$js" "$SECS" >"$TMP/n.out" 2>"$TMP/n.err" ||
		fail "bpfprof -- unshare ... node failed: $(cat "$TMP/n.err")"
	cat "$TMP/n.out"
	grep -q '^ready 1$' "$TMP/n.out" || fail "node was not pid 1 of its namespace"
	check "$TMP/n.folded" "other namespaces, folded" n 80
	ok "another mount namespace: the map read through /proc/PID/root with the namespace's pid"
else
	echo "unshare -m -p unavailable: namespace case not run"
fi

# ---- 5. C++ that JavaScript calls, through builtins mapped a second time -----
# V8 maps its embedded builtins (in node's .text, an ET_EXEC file) a second
# time next to its JIT code and calls them there; a walk through CEntry's
# copy must turn its pcs into the file's addresses (load bias
# start - vaddr(pgoff), user/symbols/elf_segments.c), else it looks them
# up past the table and stops there (6 of 99 stacks complete before).
rt=$BPFPROF_SRC/tests/workloads/js_runtime.js
CEN='Builtins_CEntry'
CROOT='__libc_start_call_main;.*Builtins_CEntry'
"$NODE" --perf-basic-prof "$rt" -s "$((SECS + 3))" >"$TMP/r.out" 2>"$TMP/r.wl.err" & wl=$!
CHILD_PIDS+=("$wl")
MAPS+=("/tmp/perf-$wl.map")
python3 "$lib/procwait.py" ready "$TMP/r.out" 30 >/dev/null || fail "workload not ready: $(cat "$TMP/r.wl.err")"
sleep 0.5
echo "node's second mappings of itself: $(awk -v f="$(readlink -f "$NODE")" \
	'$6 == f && $2 ~ /x/ && length($1) > 20 { printf "%s ", $1 }' "/proc/$wl/maps")"
"$BPFPROF" -p "$wl" -F "$FREQ" -d 2 --format folded -o "$TMP/r.folded" 2>"$TMP/r.err" & b1=$!
perf record -e cpu-clock -F "$FREQ" -g -p "$wl" -o "$TMP/rperf.data" -- sleep 2 >"$TMP/rperf.out" 2>&1 & pr=$!
CHILD_PIDS+=("$b1" "$pr")
wait "$b1" || fail "bpfprof -p (runtime calls) failed: $(cat "$TMP/r.err")"
wait "$pr" || fail "perf record (runtime calls) failed: $(cat "$TMP/rperf.out")"
wait "$wl" || fail "workload failed: $(cat "$TMP/r.wl.err")"
perf script -i "$TMP/rperf.data" -F comm,ip,sym,dso 2>/dev/null | fs from-perf-script >"$TMP/rperf.folded"
for f in r rperf; do
	read -r c n < <(fs count "$TMP/$f.folded" "$CEN")
	read -r r _ < <(fs count "$TMP/$f.folded" "$CROOT")
	echo "runtime calls, $f: $n samples, ${c:-0} through CEntry, ${r:-0} of those reach __libc_start_call_main"
	[ "$f" = r ] || continue
	[ "${c:-0}" -ge 100 ] && [ "$((c * 2))" -ge "${n:-0}" ] ||
		fail "runtime calls: too few samples through CEntry (${c:-0} of ${n:-0}): $(fs top "$TMP/r.folded" 2 | cut -c1-400)"
	[ "$((r * 100))" -ge "$((c * 90))" ] ||
		fail "runtime calls: ${r:-0} of ${c:-0} stacks through CEntry reach the root: $(fs top "$TMP/r.folded" 2 | cut -c1-400)"
done
ok "runtime calls: stacks through the builtins' second mapping reach the root"
