#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Frames in the vDSO are named.  vdso_loop calls clock_gettime(CLOCK_MONOTONIC)
# in a tight loop, so most of its samples end in its [vdso] mapping, which
# has no file: the symbolizer names them from a copy of bpfprof's own vDSO
# (same kernel, same image, another address).  The end-of-run summary, which
# names leaves through host->symbolize like the plugins, must list
# __vdso_clock_gettime (the name perf report gives it) with at least 30% of
# the samples (about 75% on the CI machine), and never "[unknown] ([vdso])",
# but for code of the vDSO that no symbol covers, called from it (a kernel
# that builds the clock read out of line: tests/lib/vdso_unnamed.py).
. "$(dirname "$0")/../lib/common.sh"
need_root

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
"$BPFPROF" -F 499 -d 3 --format folded -o "$TMP/out.folded" -- "$WL/vdso_loop" 2 2> "$TMP/err" ||
	{ cat "$TMP/err"; fail "bpfprof failed"; }
cat "$TMP/err"
top=$(sed -n '/top functions/,$p' "$TMP/err")
# Code of the vDSO that no symbol covers (tests/lib/vdso_unnamed.py: a
# kernel that builds clock_gettime()'s clock read out of line, as a static
# function) cannot be named, by perf report either: its samples count
# with clock_gettime's, provided they are clock_gettime's callees there.
unnamed=$(python3 "$BPFPROF_SRC/tests/lib/vdso_unnamed.py") || fail "cannot read this kernel's vDSO"
unknown=$(grep -E '^ +[0-9.]+% +[0-9]+  \[unknown\] \(\[vdso\]\)$' <<< "$top" | head -n 1)
if [ -n "$unknown" ]; then
	[ -n "$unnamed" ] || fail "vDSO frames left unnamed: $unknown"
	# folded lines: root;...;caller;leaf COUNT; the unnamed leaves' callers
	callers=$(awk '{ n = split($1, f, ";"); if (f[n] !~ /^[_a-zA-Z]/ && n > 1) print f[n - 1] }' \
		"$TMP/out.folded" | sort | uniq -c)
	echo "unnamed leaves by caller: $callers"
	grep -qv ' __vdso_clock_gettime$' <<< "$callers" &&
		fail "unnamed leaves not called from __vdso_clock_gettime: $callers"
	echo "note: this kernel's vDSO has code outside its symbols ($unnamed): $unknown"
fi
line=$(grep -E '^ +[0-9.]+% +[0-9]+  __(vdso|kernel)_clock_gettime$' <<< "$top" | head -n 1)
# a clocksource without vDSO support (hpet, acpi_pm) sends every call into the kernel
[ -n "$line" ] ||
	fail "no vDSO clock_gettime among the top functions (clocksource: ${cs:-unknown})"
share=$(awk '{ sub("%", "", $1); print int($1) }' <<< "$line")
[ -z "$unknown" ] || share=$((share + $(awk '{ sub("%", "", $1); print int($1) }' <<< "$unknown")))
[ "$share" -ge 30 ] || fail "vDSO clock_gettime has only $share% of the samples (expected >= 30%)"
ok "vDSO frames named: $(sed 's/^ *//' <<< "$line")${unknown:+; with its unnamed callee: $share%}"
