#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad options: a frequency of 0, negative, or above the limit (the message
# states the limit: kernel.perf_event_max_sample_rate, or bpfprof's own
# cap), an unknown format (the message lists the known ones), conflicting
# targets, a duration that is not a positive number.  Each: non-zero exit,
# the first line names the problem, nothing is written.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
OUT=$TMP/out.prof
max=$(sysctl -n kernel.perf_event_max_sample_rate) || fail "cannot read kernel.perf_event_max_sample_rate"

# usage_error REGEX ARGS...: exit 2, "bpfprof: ..." + usage line, no file.
usage_error() {
	local re=$1 out rc
	shift
	out=$("$BPFPROF" "$@" -o "$OUT" 2>&1); rc=$?
	[ $rc -eq 2 ] || fail "bpfprof $*: exit $rc, expected 2 ($out)"
	echo "$out" | head -n 1 | grep -Eq -- "$re" || fail "bpfprof $*: '$(echo "$out" | head -n 1)' !~ /$re/"
	echo "$out" | tail -n 1 | grep -q '^Usage: bpfprof' || fail "bpfprof $*: no usage line: $out"
	no_output "$OUT"
	ok "bpfprof $* -> $(echo "$out" | head -n 1)"
}

usage_error "invalid frequency '0'" -p $$ -F 0
usage_error "invalid frequency '-1'" -p $$ -F -1
usage_error "invalid frequency '-99'" -p $$ --freq=-99
usage_error "invalid frequency ''" -p $$ -F ''
# Above bpfprof's own cap: the message says what the highest value is.
usage_error "invalid frequency '1000001'.*(1000000|$max)" -p $$ -F 1000001
# Above the kernel's limit: the message says the limit and the sysctl.
refused "$OUT" "$((max + 1)).*perf_event_max_sample_rate.*$max" "$BPFPROF" -p $$ -F $((max + 1)) -d 0.2 -o "$OUT"
# Exactly the limit is fine (counts nothing here, only the start matters).
"$BPFPROF" -p $$ -F "$max" -d 0.2 -o "$OUT" 2> "$TMP/err" || fail "-F $max (the limit) refused: $(cat "$TMP/err")"
rm -f "$OUT"
ok "-F $max (= kernel.perf_event_max_sample_rate) accepted"

# Unknown format: every format that exists is named in the message.
refused "$OUT" "unknown format 'nosuch'; known formats:" "$BPFPROF" --format nosuch -p $$ -d 0.2 -o "$OUT"
for so in "$BPFPROF_BUILD"/plugins/*.so; do
	n=$(basename "$so" .so)
	echo "$OUT_TEXT" | grep -qw -- "$n" || fail "the unknown-format message does not list '$n': $OUT_TEXT"
done
ok "unknown format lists: ${OUT_TEXT#*known formats:}"
refused "$OUT" "invalid format name" "$BPFPROF" --format ../../tmp/x -p $$ -d 0.2 -o "$OUT"

# Conflicting targets.
usage_error "conflicts with another target" --all -p $$
usage_error "conflicts with another target" -p $$ --all
usage_error "conflicts with another target" -p $$ -t $$
usage_error "conflicts with another target" -t $$ -a
usage_error "conflicts with another target" -p $$ -- true

# -d must be a positive number of seconds.
for d in abc 1s '' nan inf -1 0 1e999 0x; do
	usage_error "invalid duration '$d'" -p $$ -d "$d"
done

# A huge duration is refused, or means "practically forever": it must not
# wrap around into "stop now".
for d in 2e10 1e300; do
	"$BPFPROF" -p $$ -d "$d" -o "$OUT" > "$TMP/huge.err" 2>&1 & bp=$!
	sleep 1
	if kill -0 $bp 2>/dev/null; then
		kill -INT $bp; wait $bp || fail "-d $d: exit $? after Ctrl-C: $(cat "$TMP/huge.err")"
		rm -f "$OUT"
		ok "-d $d: still running after 1 s"
	else
		wait $bp; rc=$?
		[ $rc -eq 2 ] || fail "-d $d: the run ended at once (exit $rc): $(head -n 1 "$TMP/huge.err")"
		no_output "$OUT"
		ok "-d $d refused: $(head -n 1 "$TMP/huge.err")"
	fi
done
