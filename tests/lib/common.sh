# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/common.sh - shared helpers of the integration tests (sourced).
# Provides: $BPFPROF (the binary), $WL (workloads dir), a per-test $TMP that is
# removed on exit, fail/skip/need_root, start_workload/release_workload,
# stall (a collector stopped a while), and
# fs and perf_folded (tests/lib/folded_stacks.py).
set -u
BPFPROF_BUILD=${BPFPROF_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}
BPFPROF_SRC=${BPFPROF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BPFPROF=$BPFPROF_BUILD/bpfprof
WL=$BPFPROF_BUILD/workloads
TMP=$(mktemp -d /tmp/bpfprof-test.XXXXXX)
# Workloads have no MPI rank unless a test gives them one (a suite run
# inside a Slurm or MPI job would otherwise put "rank N" roots in folded
# output and rank labels everywhere; see tests/integration/mpi_ranks.sh).
unset OMPI_COMM_WORLD_RANK PMIX_RANK PMI_RANK SLURM_PROCID SLURM_STEP_ID
CHILD_PIDS=()
# SHARES_HZ: the rate of the runs whose Python functions' shares are held
# to 2 points of the workload's own CPU time (issue 17's bar).  At 999 Hz a
# 3 s run has ~3,000 samples, a binomial sigma of 0.84 points at a 30%
# share, and 2 points is only 2.4 sigma: python_stacks.sh's -g run failed
# CI once so (31.59% for a truth of 29.51%).  4999 Hz gives ~5,000
# samples a CPU second, sigma <= 0.5/sqrt(5000 * SECONDS) (0.41 points
# at 3 s: 2 points is 4.9 sigma).
SHARES_HZ=4999
# SHARES_DWARF_RING: the ring buffer option of the --call-graph dwarf runs
# at SHARES_HZ.  Under the sanitizers the collector unwinds the copies
# several times slower than they come: the default 8 MiB ring dropped
# 2,500 of 15,300 samples here and 6,700 on CI (8,307 kept, under the
# 10,000 the shares need).  256 MiB holds a whole 3 s run's copies.
SHARES_DWARF_RING=()
[ -n "${BPFPROF_SANITIZED:-}" ] && SHARES_DWARF_RING=(--ringbuf-size 268435456)
cleanup_test() {
	for p in "${CHILD_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup_test EXIT

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
ok() { echo "ok: $*"; }

# Skip only where root/BPF are truly missing (never on the CI machine).
need_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (BPF and perf events)"
	[ -e /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
}

# run_traced SYSCALLS OUT_PREFIX BPFPROF_ARGS...: run bpfprof under strace,
# tracing SYSCALLS (strace -e trace=...) of the collector only, not of its
# child (ptrace would slow the workload at each of its system calls), into
# OUT_PREFIX.strace; bpfprof's stderr goes to OUT_PREFIX.err and is printed.
# LeakSanitizer cannot run under ptrace (ASan builds): leaks are checked by
# every other test, not by the traced runs.
run_traced() {
	local calls=$1 out=$2
	shift 2
	command -v strace > /dev/null || fail "strace is not installed (apt-get install strace)"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -e trace="$calls" -o "$out.strace" "$BPFPROF" "$@" 2> "$out.err" ||
		{ cat "$out.err"; fail "bpfprof $* failed"; }
	cat "$out.err"
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; ok "$1 = $3"; }

# pct A B: 100 * A / B with two decimals (0 when B is 0).
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? 100 * a / b : 0 }'; }

# fs ARGS...: tests/lib/folded_stacks.py, e.g. fs count [--comm COMM]
# [--among SELECT] FOLDED REGEX...: one line "HIT SELECTED" per REGEX: the
# samples of processes named COMM whose user stack ("root;...;leaf", comm
# and kernel frames removed) matches SELECT, and of those, the ones
# matching REGEX.
fs() { python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" "$@"; }

# perf_folded DATA: perf script's stacks of perf.data DATA as folded lines
# (root first, inlined frames not expanded).
perf_folded() {
	perf script --no-inline -i "$1" -F comm,ip,sym,dso 2>/dev/null | fs from-perf-script
}

# build_id FILE: FILE's GNU build-id in hex (empty without one)
build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p'
}

# warm_unwind_cache COMMAND [ARGS...]: fill the test's own unwind cache,
# "$TMP/cache" (pass --unwind-cache "$TMP/cache" to the measured runs),
# with the tables of the files COMMAND maps, by a short profile of it
# (-q -F 99, its profile and output discarded).  The measured runs then
# read the tables rather than build them while their process starts,
# which takes long under the sanitizers.  Two profiles: the first stores a
# big file's table lazily (the FDEs its walks met, user/unwind/cfi_lazy.c),
# the second, meeting the file again, builds it whole and stores that
# (cfi_loader.c, complete_table()), which the measured runs read.  Fails
# the test, with bpfprof's stderr, when a run fails.
warm_unwind_cache() {
	for _ in 1 2; do
		"$BPFPROF" -q -F 99 --unwind-cache "$TMP/cache" -o "$TMP/warm-cache.prof" -- "$@" \
			> /dev/null 2> "$TMP/warm-cache.err" ||
			{ cat "$TMP/warm-cache.err"; fail "bpfprof -- $* (filling the unwind cache) failed"; }
	done
}

# stall PID SETTLE_S STOP_S: let the collector PID run SETTLE_S seconds,
# then stop it (SIGSTOP) for STOP_S and let it go on.  Its BPF program
# keeps sampling meanwhile, with nobody draining its maps and rings.
stall() {
	sleep "$2"
	kill -STOP "$1"
	sleep "$3"
	kill -CONT "$1"
}

# find_pythons VERSION...: set the array pythons to Debian's python3.11 and
# the first pyenv build found of each VERSION (3.12, 3.13); skips the test
# without python3.11.  find_pythons 3.13 3.12 with FIRST_ONLY=1 stops at
# the first of them found.
find_pythons() {
	local v p
	[ -x /usr/bin/python3.11 ] || skip "no /usr/bin/python3.11 (apt-get install python3.11)"
	pythons=(/usr/bin/python3.11)
	for v in "$@"; do
		p=$(ls -d "${PYENV_ROOT:-/root/.pyenv}"/versions/"$v".*/bin/python"$v" 2>/dev/null | head -n 1)
		[ -n "$p" ] || continue
		pythons+=("$p")
		[ -n "${FIRST_ONLY:-}" ] && break
	done
	return 0
}
