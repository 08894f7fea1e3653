#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release sanitized
#   (tests/run --sanitized: its peak RSS budget holds on the release build only)
# Load.  1,000 threads busy at once (tests/workloads/threadstorm), and
# 10 kHz on every CPU system-wide (or kernel.perf_event_max_sample_rate if
# lower), in counts mode and through the timestamped stream: bpfprof keeps
# up or counts what it drops, i.e. in the "N samples (M seen)" and
# "drops:" summary lines N + drops = M, the profile the plugin gets (the
# dump test plugin) holds exactly N samples, the stream delivered exactly
# N samples; and bpfprof's peak RSS (VmHWM) stays within a budget set by
# the configured sizes: 96 MiB (code, symbolizer caches for every binary
# of a system-wide run) + the sample ring buffer + 1 KiB per stack-map
# entry + 128 B per count-map entry.  The workloads run at nice 19 and bpfprof at nice
# -10, as one would profile a saturated machine.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
mkdir -m 700 "$TMP/p" && build_plugin dump "$TMP/p"
max=$(sysctl -n kernel.perf_event_max_sample_rate)
HZ=$((max < 10000 ? max : 10000))

# profile NAME BPFPROF-ARGS...: run nice -10 under /usr/bin/time, check
# the accounting and the memory budget; sets $SEEN.
profile() {
	local name=$1 stacks=16384 counts=65536 ringbuf=$((8 << 20))
	shift
	local args=("$@") i
	for ((i = 0; i < ${#args[@]}; i++)); do
		case ${args[i]} in
		--stack-map-size) stacks=${args[i + 1]} ;;
		--count-map-size) counts=${args[i + 1]} ;;
		--ringbuf-size) ringbuf=${args[i + 1]} ;;
		esac
	done
	/usr/bin/time -f 'maxrss_kb %M' -o "$TMP/$name.time" nice -n -10 \
		"$BPFPROF" --plugin "$TMP/p/dump.so" -o "$TMP/$name.txt" "$@" 2> "$TMP/$name.err" ||
		fail "$name: bpfprof failed: $(cat "$TMP/$name.err")"
	read -r kept seen drops < <(summary_counts "$TMP/$name.err") || fail "$name: no summary"
	[ $((kept + drops)) -eq "$seen" ] ||
		fail "$name: $kept kept + $drops dropped != $seen seen: $(grep -E 'samples|drops' "$TMP/$name.err")"
	local in_file
	in_file=$(awk -F'\t' '$1 == "count" { n += $4 } END { print n + 0 }' "$TMP/$name.txt")
	[ "$in_file" -eq "$kept" ] || fail "$name: the profile holds $in_file samples, the summary says $kept"
	if grep -q '^stream' "$TMP/$name.txt"; then
		local st
		st=$(awk -F'\t' '$1 == "stream" { print $3 }' "$TMP/$name.txt")
		[ "$st" -eq "$kept" ] || fail "$name: the stream carried $st samples, the summary says $kept"
	fi
	local rss budget
	rss=$(awk '/maxrss_kb/ { print $2 }' "$TMP/$name.time")
	budget=$((96 * 1024 + ringbuf / 1024 + stacks + counts / 8))
	# AddressSanitizer's shadow memory and quarantine are not ours to budget.
	if [ -n "${BPFPROF_SANITIZED:-}" ]; then
		echo "note: sanitizer build, peak RSS $rss KiB not checked against $budget KiB"
	else
		[ "$rss" -le "$budget" ] || fail "$name: peak RSS $rss KiB over the budget $budget KiB"
	fi
	ok "$name: $kept kept + $drops dropped = $seen seen; in the file $in_file; peak RSS $rss KiB (budget $budget)"
	SEEN=$seen
}

# 1,000 busy threads of one process.
nice -n 19 "$WL/threadstorm" 1000 40 > "$TMP/storm.out" & storm=$!; CHILD_PIDS+=($storm)
for _ in $(seq 200); do [ -s "$TMP/storm.out" ] && break; sleep 0.05; done
read -r word pid n < "$TMP/storm.out"
[ "$word" = ready ] && [ "$n" = 1000 ] || fail "threadstorm did not start 1000 threads: $(cat "$TMP/storm.out")"
profile threads1000 -p "$storm" -F 999 -d 2
nthreads=$(awk -F'\t' '$1 == "count" { t[$3] = 1 } END { print length(t) }' "$TMP/threads1000.txt")
[ "$nthreads" -ge 100 ] || fail "samples from only $nthreads of 1000 threads"
ok "samples from $nthreads distinct threads"
# Tiny maps under the same load: drops are counted, memory shrinks with them.
profile threads1000-tiny -p "$storm" -F 999 -d 1 --stack-map-size 64 --count-map-size 64
kill "$storm" 2>/dev/null; wait "$storm" 2>/dev/null

# $HZ on every CPU, system-wide, busy CPUs.
ncpu=$(nproc)
nice -n 19 "$WL/spin" 30 "$ncpu" & CHILD_PIDS+=($!)
profile all-${HZ}hz --all -F "$HZ" -d 2
[ "$SEEN" -ge $((HZ * ncpu * 2 / 4)) ] ||
	fail "only $SEEN samples seen at $HZ Hz x $ncpu CPUs x 2 s of busy CPUs"
BPFPROF_TEST_DUMP_STREAM=1 profile all-${HZ}hz-stream --all -F "$HZ" -d 2
