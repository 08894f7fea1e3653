#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# How the BPF maps are created (user/kernel/settings.c, sampler.c), read
# from the running collector's map descriptors (/proc/PID/fdinfo, names
# from bpftool):
#   - the LRU maps of threads and processes ("threads_seen", "py_threads",
#     "cfi_requests") have SETTINGS_TARGETED_THREAD_MAP (1,024) slots for a
#     command, that of code objects ("py_codes_seen")
#     SETTINGS_TARGETED_LRU_MAP (4,096): each created in ~0.1-0.5 ms
#     instead of ~2-3 ms, and the program's own sizes under --all (16,384;
#     cfi_requests 4,096);
#   - the stack and count maps are not preallocated (~8 ms of start-up
#     less): their inserts take elements from each CPU's cache, which the
#     collector fills from every sampled CPU before sampling
#     (user/kernel/map_warm.h).  Without that, a process's first sample on
#     a CPU with a new kernel and a new user stack fails the second insert
#     with -ENOMEM (a stack-map-full drop, every time here, and in sessions
#     9 and 25, docs/PERFORMANCE.md): -p of a process in read(2) must
#     drop nothing.  "targets" (inserts at forks) is not preallocated
#     either since session 48 (0.6 ms of start-up less), and warmed the
#     same way;
#   - both profiles are right: spin's samples under spin_loop.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v bpftool > /dev/null || skip "bpftool is not installed (apt-get install bpftool)"
SPIN=$BPFPROF_BUILD/workloads/spin
SYSCALLS=$BPFPROF_BUILD/workloads/syscalls

# maps PID OUT: "name flags max_entries" of each map PID holds open
maps() {
	python3 - "$1" > "$2" <<'EOF'
import json, os, subprocess, sys
pid = sys.argv[1]
names = {m["id"]: m.get("name", "?") for m in
         json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True,
                                   text=True, check=True).stdout)}
for fd in os.listdir("/proc/%s/fdinfo" % pid):
    try:
        info = dict(l.split(":", 1) for l in open("/proc/%s/fdinfo/%s" % (pid, fd)) if ":" in l)
    except OSError:
        continue
    if "map_id" in info:
        print(names.get(int(info["map_id"]), "?"), int(info["map_flags"], 16),
              info["max_entries"].strip())
EOF
}

# run TAG [ENV=VALUE...] -- BPFPROF_ARGS...: profile spin for 4 s, list the
# maps after 1.5 s (with 2 s, a loaded machine once let the run end before
# the listing), check the profile
run() {
	local tag=$1; shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$BPFPROF" --format folded -o "$TMP/$tag.folded" "$@" \
		2> "$TMP/$tag.err" &
	local pid=$!
	CHILD_PIDS+=("$pid")
	sleep 1.5
	maps "$pid" "$TMP/$tag.maps"
	wait "$pid" || { cat "$TMP/$tag.err"; fail "$tag: bpfprof failed"; }
	cat "$TMP/$tag.maps" | sort
	local n in_loop
	n=$(awk '/spin/ { s += $NF } END { print s + 0 }' "$TMP/$tag.folded")
	in_loop=$(awk '/spin;.*spin_loop/ { s += $NF } END { print s + 0 }' "$TMP/$tag.folded")
	[ "$n" -ge 500 ] && [ "$in_loop" -ge $((n * 95 / 100)) ] ||
		fail "$tag: $in_loop of $n samples of spin under spin_loop"
	ok "$tag: $in_loop of $n samples of spin under spin_loop"
}

# flag TAG MAP: MAP's flags & BPF_F_NO_PREALLOC (1) ; slots TAG MAP
flag() { awk -v m="$2" '$1 == m { print $2 % 2 }' "$TMP/$1.maps"; }
slots() { awk -v m="$2" '$1 == m { print $3 }' "$TMP/$1.maps"; }

run default -- -F 999 -- "$SPIN" 4
for m in stacks counts0 counts1; do
	expect_eq "$m not preallocated" "$(flag default $m)" 1
done
expect_eq "targets not preallocated" "$(flag default targets)" 1

# A process that spends 90% of its time in read(2), sampled from its middle:
# its first samples on each CPU store a new kernel and a new user stack.
for i in 1 2 3; do
	"$SYSCALLS" -k 90 -s 4 2> /dev/null &
	w=$!
	CHILD_PIDS+=("$w")
	sleep 0.3
	"$BPFPROF" -F 999 -d 0.5 -p "$w" --format folded -o "$TMP/warm$i.folded" \
		2> "$TMP/warm$i.err" || { cat "$TMP/warm$i.err"; fail "warm $i: bpfprof failed"; }
	kill "$w" 2> /dev/null
	wait "$w" 2> /dev/null
	grep -q 'kernel_stack\|sys_part;do_read;' "$TMP/warm$i.folded" ||
		fail "warm $i: no sample in read(2): $(head -c 300 "$TMP/warm$i.folded")"
	expect_eq "warm $i: drops of a -p run's first samples" \
		"$(sed -n 's/^bpfprof: drops: //p' "$TMP/warm$i.err")" "none"
done
for m in threads_seen py_threads cfi_requests; do
	expect_eq "$m slots for a command" "$(slots default $m)" 1024
done
expect_eq "py_codes_seen slots for a command" "$(slots default py_codes_seen)" 4096

"$SPIN" 5 &
CHILD_PIDS+=("$!")
run all -- -F 999 --all -d 4
for m in threads_seen py_threads py_codes_seen; do
	expect_eq "$m slots under --all" "$(slots all $m)" 16384
done
expect_eq "cfi_requests slots under --all" "$(slots all cfi_requests)" 4096
