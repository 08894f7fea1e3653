#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Command-line mistakes: each gets a one-line error naming the problem, a
# usage line, exit status 2, and nothing is written.
. "$(dirname "$0")/../lib/common.sh"

# rejected ARGS... -- REGEX
rejected() {
	local args=() out rc
	while [ "$1" != "--" ]; do args+=("$1"); shift; done
	out=$(cd "$TMP" && "$BPFPROF" "${args[@]}" 2>&1); rc=$?
	[ $rc -eq 2 ] || fail "bpfprof ${args[*]}: exit $rc, expected 2 ($out)"
	[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "bpfprof ${args[*]}: expected error + usage, got: $out"
	echo "$out" | head -n 1 | grep -Eq "^bpfprof: $2" || fail "bpfprof ${args[*]}: first line '$(echo "$out" | head -n1)' !~ /$2/"
	echo "$out" | tail -n 1 | grep -q "^Usage: bpfprof" || fail "bpfprof ${args[*]}: no usage line"
	[ -z "$(ls -A "$TMP")" ] || fail "bpfprof ${args[*]}: wrote $(ls -A "$TMP")"
	ok "bpfprof ${args[*]} -> $(echo "$out" | head -n 1)"
}
rejected --bogus -p 1 -- "unknown option '--bogus'"
rejected -Z -p 1 -- "unknown option '-Z'"
rejected -p -- "option '-p' needs a value"
rejected -F 99 -- "no target: give -p PID"
rejected -p abc -- "invalid PID list 'abc'"
rejected -p 1 -F fast -- "invalid frequency 'fast'"
rejected -p 1 -F 0 -- "invalid frequency '0'"
rejected -p 1 -F -5 -- "invalid frequency '-5'"
rejected -p 1 -d soon -- "invalid duration 'soon'"
rejected --all -p 1 -- "-p conflicts with another target option"
rejected -C 1-0 --all -- "invalid CPU list '1-0'"

"$BPFPROF" --help | grep -q -- "--format NAME" || fail "--help lacks --format"
"$BPFPROF" --version | grep -Eq '^bpfprof [0-9]+\.[0-9]+' || fail "--version"
ok "--help and --version"
