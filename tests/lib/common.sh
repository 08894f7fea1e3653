# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/common.sh - shared helpers of the integration tests (sourced).
# Provides: $BPFPROF (the binary), $WL (workloads dir), a per-test $TMP that is
# removed on exit, fail/skip/need_root, and start_workload/release_workload.
set -u
BPFPROF_BUILD=${BPFPROF_BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}
BPFPROF_SRC=${BPFPROF_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BPFPROF=$BPFPROF_BUILD/bpfprof
WL=$BPFPROF_BUILD/workloads
TMP=$(mktemp -d /tmp/bpfprof-test.XXXXXX)
CHILD_PIDS=()
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

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', expected '$3'"; ok "$1 = $3"; }
