#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Frames in the vDSO are named.  vdso_loop calls clock_gettime(CLOCK_MONOTONIC)
# in a tight loop, so most of its samples end in its [vdso] mapping, which
# has no file: the symbolizer names them from a copy of bpfprof's own vDSO
# (same kernel, same image, another address).  The end-of-run summary, which
# names leaves through host->symbolize like the plugins, must list
# __vdso_clock_gettime (the name perf report gives it) with at least 30% of
# the samples (about 75% on the CI machine), and never "[unknown] ([vdso])".
. "$(dirname "$0")/../lib/common.sh"
need_root

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
"$BPFPROF" -F 499 -d 3 -o "$TMP/out.prof" -- "$WL/vdso_loop" 2 2> "$TMP/err" ||
	{ cat "$TMP/err"; fail "bpfprof failed"; }
cat "$TMP/err"
top=$(sed -n '/top functions/,$p' "$TMP/err")
grep -Fq '[unknown] ([vdso])' <<< "$top" && fail "vDSO frames left unnamed: [unknown] ([vdso])"
line=$(grep -E '^ +[0-9.]+% +[0-9]+  __(vdso|kernel)_clock_gettime$' <<< "$top" | head -n 1)
# a clocksource without vDSO support (hpet, acpi_pm) sends every call into the kernel
[ -n "$line" ] ||
	fail "no vDSO clock_gettime among the top functions (clocksource: ${cs:-unknown})"
share=$(awk '{ sub("%", "", $1); print int($1) }' <<< "$line")
[ "$share" -ge 30 ] || fail "vDSO clock_gettime has only $share% of the samples (expected >= 30%)"
ok "vDSO frames named: $(sed 's/^ *//' <<< "$line")"
