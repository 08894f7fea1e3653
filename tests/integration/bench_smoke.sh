#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: it times profilers; the sanitizers' cost would be
#   measured)
# The benchmark harness works end to end: tests/bench/run --quick (one
# frequency, one thread, two repetitions, small synthetic profile) must
# produce a complete report: a row for perf record and for every built-in
# format of bpfprof with -p and --all, each with a slowdown, CPU time, RSS,
# output size and sample counts; the long --all runs; the collector's CPU
# per short-lived exec'd child; one row per plugin in the writers table and
# the symbolizer table; the Python frames section (pyburn under perf and
# bpfprof), with frames read per sample and the time each sample spends in
# the kernel's sample handler; the time each sample takes from a
# Python thread, a number for every profiler run (the gaps in the loop, and
# the time in the kernel's sample handler), with the loop on one CPU and
# with a loop on every CPU.  No timing is asserted: the numbers of a smoke run
# on a shared machine mean nothing.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v perf >/dev/null || fail "perf is not installed (linux-perf)"
[ -x "$WL/bench_work" ] || fail "$WL/bench_work missing"
bash "$BPFPROF_SRC/tests/bench/run" "$BPFPROF_BUILD" --quick > "$TMP/report.md" 2> "$TMP/log" ||
	{ cat "$TMP/log"; fail "tests/bench/run --quick failed"; }
cat "$TMP/report.md"
R=$TMP/report.md
for s in "### Overhead" "### --all for" "### Short-lived exec'd children" "### Writers" \
	 "### Symbolizer" "### Python frames"; do
	grep -q "^$s" "$R" || fail "section '$s' missing"
done
ok "every section present"
grep -q "frames read per sample with Python frames" "$R" || grep -q "^### Python frames: skipped" "$R" ||
	fail "Python section without frames read per sample"
grep -q "^### Python frames: skipped" "$R" ||
	grep -q "^| in the kernel's sample handler, us per sample .* | [0-9.]* | [0-9.]* | [0-9.]* |$" "$R" ||
	fail "Python section without the kernel time per sample of perf record and bpfprof"
! grep -q "FAILED\|failed\]" "$R" || fail "a measurement failed"
ok "no failed measurement"
for t in -p -a; do
	for v in "perf record -g $t" "bpfprof gperftools $t" "bpfprof perf $t" \
		 "bpfprof hpctoolkit $t" "bpfprof pprof $t" "bpfprof folded $t"; do
		row=$(grep -F "| $v |" "$R" | head -1)
		[ -n "$row" ] || fail "no row for $v"
		# slowdown, CPU during, CPU total, RSS, output, samples must be numbers
		echo "$row" | awk -F'|' '{
			if ($5 !~ /[0-9]/ || $8 !~ /[0-9]/ || $10 !~ /[0-9]/ || $11 !~ /[0-9]/) exit 1
			n = split($12, s, "/"); if (n != 3) exit 1
			for (i = 1; i <= 3; i++) if (s[i] !~ /[0-9]/) exit 1 }' ||
			fail "incomplete row: $row"
	done
done
ok "overhead table complete"
for v in "bpfprof gperftools -a" "bpfprof perf -a" "perf record -g -a"; do
	grep -A6 "^### --all for" "$R" | grep -qF "| $v | 999 |" || fail "long run row $v missing"
done
ok "long-run table complete"
for v in "bpfprof -g -p" "bpfprof --call-graph dwarf -p" "perf record -g -p"; do
	row=$(grep -A8 "^### Short-lived exec'd children" "$R" | grep -F "| $v | 50 |" | head -1)
	[ -n "$row" ] || fail "short-lived children row $v missing"
	# seconds, CPU after release, per child and total must be numbers
	echo "$row" | awk -F'|' '{ if ($4 !~ /[0-9]/ || $6 !~ /[0-9]/ || $7 !~ /[0-9]/ ||
		$8 !~ /[0-9]/) exit 1 }' || fail "incomplete row: $row"
done
ok "short-lived children table complete"
for so in "$BPFPROF_BUILD"/plugins/*.so; do
	p=$(basename "$so" .so)
	grep -A12 "^### Writers" "$R" | grep -qE "^\| $p \| [0-9]+ \|" || fail "writers row $p missing"
done
ok "writers table complete"
[ "$(grep -A8 "^### Symbolizer" "$R" | grep -cE '^\| /.* \| [0-9.]+ \| [0-9]+ \|')" -ge 2 ] ||
	fail "symbolizer rows missing"
ok "symbolizer table complete"
if ! grep -q "^### Time each sample takes from a Python thread: skipped" "$R"; then
	# the loop on one CPU, then (--busy) one on every CPU
	for busy in "" ", all CPUs busy"; do
		S=$(grep -A16 -E "^### Time each sample takes from a Python thread .*repetitions? of [0-9.]+ s$busy\$" "$R")
		[ -n "$S" ] || fail "section on the time each sample takes${busy:+ ($busy)} missing"
		for v in "perf record -g" "bpfprof" "perf record, no callchain" "bpfprof -g --no-interpreters"; do
			echo "$S" | grep -qE "^\| $v \| [0-9.]+ \[.*\] \| -?[0-9.]+ \[.*\] \| -?[0-9.]+ \| [0-9.]+ \[.*\] \|$" ||
				fail "sample cost row '$v'${busy:+ ($busy)} missing or incomplete"
		done
		echo "$S" | grep -q "^In the kernel's sample handler .* bpfprof minus perf record -g, paired by repetition: -\?[0-9.]\+ us" ||
			fail "sample cost${busy:+ ($busy)}: no paired kernel time of bpfprof and perf record -g"
	done
	ok "sample cost tables complete (one loop; a loop on every CPU)"
fi
