# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/reliability.sh - helpers of the reliability and security tests
# (sourced after common.sh): refusals that must print one line and write
# nothing, a throw-away unprivileged user, test plugins, BPF leftovers.

# refused OUT REGEX CMD... : CMD exits non-zero, prints exactly one line on
# stderr+stdout matching REGEX, and neither OUT nor a temporary beside it
# (.NAME.tmp.*) exists afterwards.  Sets $OUT_TEXT.
refused() {
	local out=$1 re=$2 rc
	shift 2
	OUT_TEXT=$("$@" 2>&1); rc=$?
	[ $rc -ne 0 ] || fail "'$*' exited 0 (expected a refusal): $OUT_TEXT"
	echo "$OUT_TEXT" | grep -Eq -- "$re" || fail "'$*': message '$OUT_TEXT' does not match /$re/"
	[ "$(echo "$OUT_TEXT" | wc -l)" -eq 1 ] || fail "'$*': expected one line, got: $OUT_TEXT"
	no_output "$out"
	ok "refused (exit $rc): $OUT_TEXT"
}

# no_output PATH: nothing at PATH and no temporary .BASENAME.tmp.* beside it.
no_output() {
	local d b
	d=$(dirname "$1") b=$(basename "$1")
	[ ! -e "$1" ] && [ ! -L "$1" ] || fail "a file was left at $1"
	[ -z "$(ls -A "$d" 2>/dev/null | grep -F ".$b.tmp.")" ] ||
		fail "a temporary file was left beside $1: $(ls -A "$d" | grep -F ".$b.tmp.")"
}

# An unprivileged user for this test, removed on exit (after the test's
# own processes, which may run as that user, are gone): $TUSER.
TUSER=
make_user() {
	TUSER=bpft$$
	useradd -M -r -s /usr/sbin/nologin "$TUSER" >/dev/null 2>&1 ||
		fail "cannot create the test user $TUSER (useradd)"
	trap 'remove_user; cleanup_test' EXIT
}
remove_user() {
	local p
	[ -n "$TUSER" ] || return 0
	for p in "${CHILD_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for _ in $(seq 40); do
		userdel "$TUSER" >/dev/null 2>&1 && { TUSER=; return 0; }
		sleep 0.05
	done
	userdel -f "$TUSER" >/dev/null 2>&1
	TUSER=
}
# as_user [caps=+cap,+cap] CMD...: run CMD as $TUSER, no groups, with no
# capabilities but the ones named (inheritable and ambient).
as_user() {
	local caps=(--inh-caps=-all)
	if [[ $1 == caps=* ]]; then
		caps=(--inh-caps="-all,${1#caps=}" --ambient-caps="${1#caps=}")
		shift
	fi
	setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups "${caps[@]}" "$@"
}

# build_plugin NAME [DIR]: tests/fixtures/plugins/NAME.c -> DIR/NAME.so
build_plugin() {
	local dir=${2:-$TMP}
	cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/$1.c" \
		-o "$dir/$1.so" || fail "cannot build the $1 plugin"
}

# our_prog_ids PID: ids of the BPF programs named on_sample/on_fork/on_exec/
# on_exit that process PID holds (prog_id in /proc/PID/fdinfo of its
# program and link fds; bpftool names them).
our_prog_ids() {
	local id
	for id in $(cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" { print $2 }' | sort -un); do
		bpftool prog show id "$id" 2>/dev/null | grep -Eq "name (on_sample|on_fork|on_exec|on_exit) " &&
			echo "$id"
	done
}

# summary_counts FILE: "KEPT SEEN DROPS" from bpfprof's stderr summary
# ("N samples (M seen)" and "drops: none | REASON N ...").
summary_counts() {
	python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"bpfprof: (\d+) samples \((\d+) seen\)", t)
d = re.search(r"bpfprof: drops: (.*)", t)
if not m or not d:
    print("missing summary"); sys.exit(1)
drops = sum(int(n) for n in re.findall(r"[a-z-]+ (\d+)", d.group(1).split(";")[0]))
print(m.group(1), m.group(2), drops)
PY
}
