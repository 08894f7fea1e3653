#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel types for the BPF program's CO-RE relocations come from the
# minimal BTF the build cut from this machine's kernel (user/kernel/core_btf.c),
# not from the 5.5 MB /sys/kernel/btf/vmlinux (~13 ms to read and parse
# at every start); BPFPROF_VMLINUX_BTF=1 (and any other kernel) takes the
# kernel's own.  The lifecycle programs (raw tracepoints) read task_struct
# fields through those relocations.  Checked, each way, on forker with 5
# exec'd children, perf.data output, strace on the collector only
# (run_traced):
#   - default: /sys/kernel/btf/vmlinux is never opened; with
#     BPFPROF_VMLINUX_BTF=1 it is;
#   - both: the summary counts 6 processes, and perf.data holds 5 FORK,
#     6 EXIT and 6 exec COMM records (tgid, tid and comm read through
#     CO-RE), as the workload made them.
. "$(dirname "$0")/../lib/common.sh"
need_root

# events PERF_DATA: "FORK EXIT COMM_EXEC" record counts
events() {
	perf script -i "$1" --show-task-events 2> /dev/null | awk '
		/PERF_RECORD_FORK/ { f++ } /PERF_RECORD_EXIT/ { e++ }
		/PERF_RECORD_COMM exec/ { c++ }
		END { printf "%d %d %d\n", f, e, c }'
}

check() { # NAME OPENS_WANTED(0|1); the caller's environment reaches bpfprof
	local name=$1 want=$2 opens forks exits comms
	run_traced openat "$TMP/$name" -F 999 --format perf -o "$TMP/$name.data" \
		-- "$WL/forker" -n 5 -m exec > /dev/null
	opens=$(grep -c '"/sys/kernel/btf/vmlinux"' "$TMP/$name.strace")
	if [ "$want" -eq 0 ]; then
		[ "$opens" -eq 0 ] || fail "$name: /sys/kernel/btf/vmlinux was read although the embedded BTF fits this kernel"
	else
		[ "$opens" -ge 1 ] || fail "$name: /sys/kernel/btf/vmlinux was not read"
	fi
	grep -q 'from 6 processes' "$TMP/$name.err" || fail "$name: not 6 processes in the summary"
	read -r forks exits comms < <(events "$TMP/$name.data")
	[ "$forks" -eq 5 ] && [ "$exits" -eq 6 ] && [ "$comms" -eq 6 ] ||
		fail "$name: FORK/EXIT/exec COMM records $forks/$exits/$comms, expected 5/6/6"
	ok "$name: vmlinux BTF opened $opens times; 5 forks, 6 exits, 6 execs recorded"
}

check embedded 0
BPFPROF_VMLINUX_BTF=1 check vmlinux 1
