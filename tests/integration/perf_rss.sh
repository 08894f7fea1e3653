#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: it holds the collector's RSS, which
#   AddressSanitizer's shadow and quarantine change)
# perf.data streams samples to disk: the collector's memory stays flat with
# the length of a run.  A 60 s --all run (in a cgroup, below) at 999 Hz with both CPUs busy must
# keep bpfprof's peak anonymous memory (RssAnon: its heap, the ring's
# pages; polled every 0.2 s by the shell itself) within 10% of a 10 s run's (issue 4), and the
# file must still be read by perf report without complaint.  Not the peak
# of the whole RSS (reported too): it also counts the pages of the ELF
# files the collector maps for build-ids and unwind tables, which depend
# on which programs ran in the window, not on how long it was; on this
# machine it stood within 0.5% of the limit.  The runs are -q: the
# end-of-run summary loads symbol tables of every binary it names, a cost
# that depends on which programs ran, not on how long (sanitizer builds:
# AddressSanitizer's quarantine grows by design, so only the file is
# checked, and the runs are 4 and 8 s: they only have to stream past the
# ring).
# Both runs use a 1 MiB sample ring buffer: its pages count in RSS as the
# collector first touches them, so a larger ring would make a longer run
# look bigger until it wraps, although its size is fixed.
# The runs are --all within a cgroup of their own (--cgroup, which implies
# --all: the system-wide mode, its tracking of every process and its
# streaming), holding the workload alone: programs the machine starts
# meanwhile (a cron job, CI's own commands) cost the collector their
# files' build-ids and unwind tables, whatever the run's length, and have
# failed this test in CI (+228 and +528 KiB, the 60 s runs with 3-10
# programs more than the 10 s runs).
. "$(dirname "$0")/../lib/common.sh"
need_root
. "$BPFPROF_SRC/tests/lib/cgroups.sh"
[ -n "$CG2" ] || fail "no cgroup2 mount"
GROUP=$CG2/bpfprof-perf-rss.$$
make_group "$GROUP"
ncpu=$(nproc)
in_group "$GROUP" "$WL/spin" 80 "$ncpu" &
CHILD_PIDS+=($!)

# A pause of 0.2 s without a new process (the collector would keep the
# metadata of each poll's awk and sleep, were they in the group).
exec {pause}<> <(:)

run() {			# SECONDS -> sets RSS (peak RssAnon, KiB), HWM and SAMPLES
	local pid k v _
	"$BPFPROF" -q --all --cgroup "$GROUP" -F 999 -d "$1" --ringbuf-size 1048576 --format perf \
		-o "$TMP/perf.$1.data" 2> "$TMP/err.$1" &
	pid=$!
	RSS=0 HWM=0
	while [ -e "/proc/$pid/status" ]; do
		while read -r k v _; do
			case $k in
			RssAnon:) [ "$v" -gt "$RSS" ] && RSS=$v ;;
			VmHWM:) HWM=$v ;;
			esac
		done < "/proc/$pid/status" 2>/dev/null
		read -r -t 0.2 -u "$pause" _
	done
	wait "$pid" || { cat "$TMP/err.$1"; fail "bpfprof -d $1 failed"; }
	SAMPLES=$(perf report -i "$TMP/perf.$1.data" --stats 2>/dev/null |
		  awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
	[ -n "$SAMPLES" ] || SAMPLES=$(perf script -i "$TMP/perf.$1.data" -F pid 2>/dev/null | wc -l)
	ok "-d $1: $SAMPLES samples, peak RssAnon $RSS KiB (peak RSS $HWM KiB)"
}
SHORT=10 LONG=60
[ -z "${BPFPROF_SANITIZED:-}" ] || { SHORT=4 LONG=8; }
run $SHORT; short=$RSS short_samples=$SAMPLES
run $LONG; long=$RSS long_samples=$SAMPLES
[ $((long_samples * 3)) -ge $((short_samples * LONG / SHORT * 2)) ] ||
	fail "the $LONG s run kept $long_samples samples, the $SHORT s run $short_samples: not a longer run"
limit=$((short * 110 / 100))
perf report -i "$TMP/perf.$LONG.data" --stdio --sort comm > "$TMP/report" 2> "$TMP/report.err" ||
	fail "perf report failed: $(cat "$TMP/report.err")"
if [ -z "${BPFPROF_SANITIZED:-}" ]; then
	if [ "$long" -gt "$limit" ]; then
		# what else ran in the long run: each program's tables and maps count
		for d in "$SHORT" "$LONG"; do
			echo "processes sampled in the $d s run:"
			perf report -i "$TMP/perf.$d.data" --stdio --sort comm -g none 2>/dev/null |
				grep -v '^#' | grep .
		done
		fail "peak RssAnon grew from $short KiB ($SHORT s) to $long KiB ($LONG s), over the 10% allowance ($limit KiB)"
	fi
	ok "peak RssAnon $LONG s $long KiB <= 110% of $SHORT s $short KiB"
fi
[ ! -s "$TMP/report.err" ] || fail "perf report complained: $(head -5 "$TMP/report.err")"
grep -q spin "$TMP/report" || fail "perf report does not show the spin workload"
ok "perf report reads the $LONG s file cleanly"
