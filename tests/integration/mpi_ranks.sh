#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# mpi_ranks.sh - the MPI rank of each process, read from its environment
# (user/targets/procfs.c, OMPI_COMM_WORLD_RANK > PMIX_RANK > PMI_RANK >
# SLURM_PROCID with SLURM_STEP_ID, the first that is a non-negative
# integer), as the output
# formats show it, on real runs of copies of the spin workload (a copy
# per expected rank, so each has its own comm):
#  - `-- COMMAND`: a shell forks them and each execs with its own rank
#    variables (the rank is read again after exec): rank 0, 1, 2 (PMI_RANK
#    before SLURM_PROCID), 3, and three without one (garbage, a batch
#    script's SLURM_PROCID=0 without a job step, none);
#  - `-p` and `--all`: processes started before bpfprof, first seen by
#    their snapshot.
# pprof (go tool pprof -tags per comm): rank label with the right single
# value, none for the others, node label = the host name.  folded: lines
# "rank N;comm;..." for ranked processes only.  flamegraph: "rank N" is
# a frame of the page's data.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || fail "go not installed (golang-go, for go tool pprof)"
[ -x "$WL/spin" ] || fail "no workload $WL/spin"
FREQ=${FREQ:-499}
host=$(uname -n)
for c in spin_r0 spin_r1 spin_r2 spin_r3 spin_r5 spin_bad spin_batch spin_none; do
	cp "$WL/spin" "$TMP/$c" || fail "cannot copy spin"
done
# No rank variable of ours may leak into the targets.
CLEAN=(env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID -u SLURM_STEP_ID)
SCRIPT="cd $TMP
OMPI_COMM_WORLD_RANK=0 PMI_RANK=9 ./spin_r0 1 2 &
PMIX_RANK=1 SLURM_PROCID=8 ./spin_r1 1 &
PMI_RANK=2 SLURM_PROCID=7 ./spin_r2 1 &
OMPI_COMM_WORLD_RANK=x SLURM_STEP_ID=0 SLURM_PROCID=3 ./spin_r3 1 &
PMI_RANK=bad ./spin_bad 1 &
SLURM_PROCID=0 ./spin_batch 1 &
./spin_none 1 &
wait"

# ranks_of PPROF COMM: the rank label values of COMM's samples, sorted, space-separated.
ranks_of() {
	go tool pprof -sample_index=samples -tagfocus="comm=^$2\$" -tags "$1" 2>/dev/null |
		awk '/^ *[a-z]+: Total/ { key = $1 } key == "rank:" && /%\): / { print $NF }' |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}
# node_of PPROF COMM: the node label values of COMM's samples.
node_of() {
	go tool pprof -sample_index=samples -tagfocus="comm=^$2\$" -tags "$1" 2>/dev/null |
		awk '/^ *[a-z]+: Total/ { key = $1 } key == "node:" && /%\): / { print $NF }' |
		sort -u | tr '\n' ' ' | sed 's/ $//'
}
# check_pprof PPROF COMM RANK ("" for none)
check_pprof() {
	local got
	go tool pprof -sample_index=samples -tagfocus="comm=^$2\$" -top "$1" 2>/dev/null |
		grep -q 'spin_loop' || fail "$1: no samples of $2 in spin_loop"
	got=$(ranks_of "$1" "$2")
	expect_eq "pprof rank label of $2" "$got" "$3"
	expect_eq "pprof node label of $2" "$(node_of "$1" "$2")" "$host"
}
# check_folded FOLDED COMM RANK ("" for none)
check_folded() {
	local other
	if [ -n "$3" ]; then
		grep -q "^rank $3;$2;.*spin_loop" "$1" || fail "$1: no line 'rank $3;$2;...spin_loop'"
		other=$(grep -E "^(rank [0-9]+;)?$2;" "$1" | grep -v "^rank $3;" | head -2)
		[ -z "$other" ] || fail "$1: $2 also under another root: $other"
		ok "folded: $2 under 'rank $3' only"
	else
		grep -q "^$2;.*spin_loop" "$1" || fail "$1: no line '$2;...spin_loop'"
		! grep -Eq "^rank [0-9]+;$2;" "$1" || fail "$1: $2 has a rank: $(grep "^rank [0-9]*;$2;" "$1" | head -1)"
		ok "folded: $2 without a rank root"
	fi
}

# 1. -- COMMAND: pprof and folded of the same kind of run.
for fmt in pprof folded; do
	"${CLEAN[@]}" "$BPFPROF" -F "$FREQ" --format "$fmt" -o "$TMP/cmd.$fmt" -- sh -c "$SCRIPT" \
		2>"$TMP/cmd.$fmt.err" || fail "bpfprof -- sh ($fmt) failed: $(cat "$TMP/cmd.$fmt.err")"
done
for x in "spin_r0 0" "spin_r1 1" "spin_r2 2" "spin_r3 3" "spin_bad" "spin_batch" "spin_none"; do
	set -- $x
	check_pprof "$TMP/cmd.pprof" "$1" "${2:-}"
	check_folded "$TMP/cmd.folded" "$1" "${2:-}"
done
# Both threads of spin_r0 carry its rank.
nt=$(go tool pprof -sample_index=samples -tagfocus='rank=0' -tags "$TMP/cmd.pprof" 2>/dev/null |
	awk '/^ *[a-z]+: Total/ { key = $1 } key == "tid:" && /%\): / { n++ } END { print n + 0 }')
[ "$nt" -ge 2 ] || fail "rank 0: samples of $nt thread(s), expected spin_r0's 2 threads"
ok "rank 0 on both threads of spin_r0"

# 2. -p: a process running before bpfprof, first seen by its snapshot.
"${CLEAN[@]}" PMIX_RANK=5 "$TMP/spin_r5" 30 & r5=$!; CHILD_PIDS+=($r5)
"${CLEAN[@]}" "$TMP/spin_none" 30 & none=$!; CHILD_PIDS+=($none)
sleep 0.3
"$BPFPROF" -p "$r5,$none" -F "$FREQ" -d 1 --format pprof -o "$TMP/p.pprof" 2>"$TMP/p.err" ||
	fail "bpfprof -p failed: $(cat "$TMP/p.err")"
check_pprof "$TMP/p.pprof" spin_r5 5
check_pprof "$TMP/p.pprof" spin_none ""
"$BPFPROF" -p "$r5,$none" -F "$FREQ" -d 1 --format flamegraph -o "$TMP/p.html" 2>"$TMP/p.err" ||
	fail "bpfprof -p --format flamegraph failed: $(cat "$TMP/p.err")"
grep -q '"rank 5"' "$TMP/p.html" || fail "flamegraph: no frame 'rank 5' in the page's data"
ok "flamegraph: frame 'rank 5'"

# 3. --all: the same processes among every other one.
"$BPFPROF" --all -F "$FREQ" -d 1 --format folded -o "$TMP/all.folded" 2>"$TMP/all.err" ||
	fail "bpfprof --all failed: $(cat "$TMP/all.err")"
check_folded "$TMP/all.folded" spin_r5 5
check_folded "$TMP/all.folded" spin_none ""
kill "$r5" "$none"
