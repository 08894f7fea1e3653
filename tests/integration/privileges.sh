#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Privileges: an unprivileged user (created for the test, removed after)
# gets one line that says bpfprof needs root or CAP_BPF + CAP_PERFMON, not a
# raw libbpf errno, for -p, --all and -- COMMAND, and no file; CAP_BPF alone
# is not enough and says so; with CAP_BPF + CAP_PERFMON (no root) a run
# works and the file belongs to that user.  --list-formats needs nothing.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
make_user
chmod 711 "$TMP"
mkdir "$TMP/u" && chown "$TUSER:" "$TMP/u"
OUT=$TMP/u/out.prof
as_user sleep 30 & mine=$!; CHILD_PIDS+=($mine)

NEEDS="root or (with )?CAP_BPF and CAP_PERFMON"
check_needs() {
	refused "$OUT" "$NEEDS" "$@"
	echo "$OUT_TEXT" | grep -Eqi 'libbpf|errno|^-?[0-9]+$|Operation not permitted' &&
		fail "raw libbpf/errno text in: $OUT_TEXT"
	return 0
}
check_needs as_user "$BPFPROF" -p "$mine" -d 0.2 -o "$OUT"
check_needs as_user "$BPFPROF" --all -d 0.2 -o "$OUT"
check_needs as_user "$BPFPROF" -d 0.2 -o "$OUT" -- true
check_needs as_user caps=+bpf "$BPFPROF" -p "$mine" -d 0.2 -o "$OUT"
check_needs as_user caps=+perfmon "$BPFPROF" -p "$mine" -d 0.2 -o "$OUT"

as_user "$BPFPROF" --list-formats | grep -q '^gperftools ' || fail "--list-formats as $TUSER"
ok "--list-formats works unprivileged"

# CAP_BPF + CAP_PERFMON without root: a real run; the file is the user's.
as_user caps=+bpf,+perfmon \
	"$BPFPROF" -p "$mine" -d 0.3 -o "$OUT" 2> "$TMP/caps.err" ||
	fail "CAP_BPF + CAP_PERFMON run failed: $(cat "$TMP/caps.err")"
[ -s "$OUT" ] || fail "no profile with CAP_BPF + CAP_PERFMON"
[ "$(stat -c %U "$OUT")" = "$TUSER" ] || fail "profile owned by $(stat -c %U "$OUT"), not $TUSER"
ok "CAP_BPF + CAP_PERFMON as $TUSER: $(head -n 1 "$TMP/caps.err")"
