#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# perf.data streams samples to disk: the collector's memory stays flat with
# the length of a run.  A 60 s --all run at 999 Hz with both CPUs busy must
# keep bpfprof's peak anonymous memory (RssAnon: its heap, the ring's
# pages; polled every 0.2 s by the shell itself) within 10% of a 10 s run's (issue 4),
# plus 32 KiB for each program that ran in the long run only (below), and the
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
. "$(dirname "$0")/../lib/common.sh"
need_root
ncpu=$(nproc)
"$WL/spin" 80 "$ncpu" & CHILD_PIDS+=($!)

# A pause of 0.2 s without a new process: --all would sample each poll's
# awk and sleep, and the collector keep their metadata.
exec {pause}<> <(:)

run() {			# SECONDS -> sets RSS (peak RssAnon, KiB), HWM and SAMPLES
	local pid k v _
	"$BPFPROF" -q --all -F 999 -d "$1" --ringbuf-size 1048576 --format perf \
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
# Programs that ran in the long run only (the machine's own, a cron job, a
# shell's commands) each cost the collector their files' build-ids and
# unwind tables, built once, whatever the run's length: 13-43 KiB of
# RssAnon each here (mkdir, cat, mv, date, rm and sleep started in a 12 s
# run: +80-260 KiB), and 10 of them (most kernel threads, which cost
# nothing) failed this test in CI by 11 KiB.  32 KiB more for each: a
# cost per sample (100,000 more in the long run) would still show.
comms() {		# FILE -> the comms of its samples, one per line, sorted
	perf report -i "$1" --stdio --sort comm -g none 2>/dev/null |
		awk '!/^#/ && NF >= 3 { print $3 }' | sort -u
}
new_programs=$(comm -13 <(comms "$TMP/perf.$SHORT.data") <(comms "$TMP/perf.$LONG.data") | wc -l)
limit=$((short * 110 / 100 + 32 * new_programs))
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
		fail "peak RssAnon grew from $short KiB ($SHORT s) to $long KiB ($LONG s), over the allowance ($limit KiB: 10%, and 32 KiB for each of $new_programs programs in the $LONG s run only)"
	fi
	ok "peak RssAnon $LONG s $long KiB <= 110% of $SHORT s $short KiB + 32 KiB x $new_programs programs in the $LONG s run only"
fi
[ ! -s "$TMP/report.err" ] || fail "perf report complained: $(head -5 "$TMP/report.err")"
grep -q spin "$TMP/report" || fail "perf report does not show the spin workload"
ok "perf report reads the $LONG s file cleanly"
