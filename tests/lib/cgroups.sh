# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/cgroups.sh - cgroup v2 groups for the integration tests (sourced
# after common.sh).  Provides: CG2 (the cgroup2 mount, empty if none),
# make_group DIR (created, and removed at exit with whatever still runs in
# it), in_group DIR CMD ARGS... (CMD run inside DIR).
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
GROUPS_MADE=()

# Kill what is left in the test's cgroups, then remove them, deepest first;
# then common.sh's cleanup.
cleanup_cgroups() {
	local i g
	for ((i = ${#GROUPS_MADE[@]} - 1; i >= 0; i--)); do
		g=${GROUPS_MADE[i]}
		[ -d "$g" ] || continue
		xargs -r kill -9 < "$g/cgroup.procs" 2> /dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$g" 2> /dev/null && break; sleep 0.2; done
	done
	cleanup_test
}
trap cleanup_cgroups EXIT
make_group() { mkdir "$1" || fail "cannot create cgroup $1"; GROUPS_MADE+=("$1"); }

# in_group DIR CMD ARGS...: run CMD in cgroup DIR (moves itself, then execs).
in_group() {
	local dir=$1; shift
	bash -c 'echo $BASHPID > "$1/cgroup.procs" && shift && exec "$@"' _ "$dir" "$@"
}
