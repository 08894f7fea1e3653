#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# merge_raw.sh - `bpfprof --format raw` and `bpfprof merge`:
#   1. the shares workload (2 busy threads) recorded at once by two
#      collectors, one writing a raw measurement, one folded stacks
#      directly; the measurement merged into folded, perf.data, pprof and
#      an HPCToolkit database must give the direct run's leaf functions
#      with the same shares (each within max(3 points, 4 sigma) of the
#      direct run: folded_stacks.py self); perf report and perf script
#      read the perf.data; the database passes `hpcdb --strict` with one
#      trace line per thread profile;
#   1b. vdso_loop and syscalls recorded raw: [vdso] frames (no file to
#      find later) and kernel frames (this kernel's KASLR) come out of the
#      merge named from the tables the recording stored:
#      __vdso_clock_gettime leaves >= 30% of vdso_loop's samples, >= 95%
#      of syscalls' kernel frames are named;
#   2. two nodes: a second measurement recorded inside `unshare --uts`
#      under another host name, and a copy of the first (its pids collide
#      with the original's), merged: 2 nodes numbered in host name order,
#      each thread with its host, and the copy's pids renumbered while the
#      identities keep the real ones; a DIR operand reads the same files;
#   3. broken inputs (truncated, another version, aarch64, big-endian, not
#      a measurement, an empty directory): exit 1, one line naming the
#      file, and no output, not even a temporary, left behind.
. "$(dirname "$0")/../lib/common.sh"
need_root
LIB=$BPFPROF_SRC/tests/lib
command -v perf >/dev/null || fail "perf not installed"
command -v go >/dev/null || fail "go not installed (golang-go, for go tool pprof)"
command -v unshare >/dev/null || fail "unshare not installed (util-linux)"
[ -x "$BPFPROF_BUILD/tools/hpcdb" ] || fail "hpcdb not built"

# ---- 1. one measurement, merged into each format, against a direct run ----
"$WL/shares" -t 2 -s 3 --wait >"$TMP/wl.out" 2>"$TMP/wl.err" &
WPID=$!
CHILD_PIDS+=("$WPID")
for _ in $(seq 100); do grep -q '^ready' "$TMP/wl.out" && break; sleep 0.1; done
grep -q '^ready' "$TMP/wl.out" || fail "shares did not get ready"
"$BPFPROF" -q --format raw -F 499 -o "$TMP/a.raw" -p "$WPID" 2>"$TMP/raw.err" &
RPID=$!
"$BPFPROF" -q --format folded -F 499 -o "$TMP/direct.folded" -p "$WPID" 2>"$TMP/direct.err" &
DPID=$!
sleep 1
kill -USR1 "$WPID"
wait "$RPID" || fail "bpfprof --format raw failed: $(cat "$TMP/raw.err")"
wait "$DPID" || fail "bpfprof --format folded failed: $(cat "$TMP/direct.err")"
wait "$WPID"
[ -s "$TMP/a.raw" ] || fail "no raw measurement written"
ok "recorded $(stat -c %s "$TMP/a.raw") bytes of raw measurement"

merge() {	# merge OUT FORMAT FILE...
	local out=$1 fmt=$2
	shift 2
	"$BPFPROF" merge -o "$out" --format "$fmt" "$@" 2>"$TMP/merge.err" ||
		fail "bpfprof merge --format $fmt failed: $(cat "$TMP/merge.err")"
	cat "$TMP/merge.err"
}

same_shares() {	# same_shares WHAT FOLDED: leaf shares against the direct run
	python3 "$LIB/folded_stacks.py" self "$TMP/direct.folded" "$2" 5 3 4 >"$TMP/self.out" ||
		fail "$1: folded_stacks.py self failed"
	cat "$TMP/self.out"
	for fn in leaf_a leaf_b leaf_c; do
		grep -q " $fn\$" "$TMP/self.out" || fail "$1: $fn missing"
	done
	awk '/^worst/ { exit !($2 <= $3) }' "$TMP/self.out" ||
		fail "$1: a leaf share differs from the direct run by more than allowed"
	ok "$1: leaf shares as in the direct run ($(grep '^worst' "$TMP/self.out"))"
}

merge "$TMP/m.folded" folded "$TMP/a.raw"
same_shares "merged folded" "$TMP/m.folded"

merge "$TMP/m.data" perf "$TMP/a.raw"
perf report -i "$TMP/m.data" --stdio >"$TMP/report.out" 2>"$TMP/report.err" ||
	fail "perf report rejects the merged perf.data: $(tail -n 3 "$TMP/report.err")"
perf script -i "$TMP/m.data" -F comm,ip,sym,dso 2>"$TMP/script.err" |
	python3 "$LIB/folded_stacks.py" from-perf-script >"$TMP/perf.folded" ||
	fail "perf script failed: $(tail -n 3 "$TMP/script.err")"
same_shares "merged perf.data (perf script)" "$TMP/perf.folded"

merge "$TMP/m.pb.gz" pprof "$TMP/a.raw"
go tool pprof -sample_index=samples -traces "$WL/shares" "$TMP/m.pb.gz" 2>"$TMP/pprof.err" |
	python3 "$LIB/folded_stacks.py" from-pprof-traces >"$TMP/pprof.folded" ||
	fail "go tool pprof failed: $(tail -n 3 "$TMP/pprof.err")"
same_shares "merged pprof (go tool pprof)" "$TMP/pprof.folded"

merge "$TMP/m.db" hpctoolkit "$TMP/a.raw"
"$BPFPROF_BUILD/tools/hpcdb" --strict --threads "$TMP/m.db" >"$TMP/hpcdb.out" 2>&1 ||
	fail "hpcdb --strict: $(cat "$TMP/hpcdb.out")"
profiles=$(grep -c '^profile [0-9]* \[' "$TMP/hpcdb.out")
lines=$(awk '/^trace: / { print $2 }' "$TMP/hpcdb.out")
expect_eq "thread profiles in the merged database" "$profiles" 2
expect_eq "trace lines (one per thread)" "$lines" "$profiles"
awk '/^profile [0-9]+ \[/ && !/trace samples [1-9]/ { bad = 1 } END { exit bad }' "$TMP/hpcdb.out" ||
	fail "a thread's trace line is empty"
ok "hpcdb --strict accepts the merged database"

# ---- 1b. names only the recording machine knows ----
cc -shared -fPIC -I"$BPFPROF_SRC/include" "$BPFPROF_SRC/tests/fixtures/plugins/dump.c" \
	-o "$TMP/dump.so" || fail "cannot build the dump plugin"
"$BPFPROF" -q --format raw -F 499 -o "$TMP/v.raw" -- "$WL/vdso_loop" 2 >/dev/null 2>"$TMP/v.err" ||
	fail "recording vdso_loop failed: $(cat "$TMP/v.err")"
grep -aq __vdso_clock_gettime "$TMP/v.raw" || fail "the measurement holds no vDSO name"
"$BPFPROF" merge -q -o "$TMP/v.txt" --plugin "$TMP/dump.so" --allow-untrusted-plugin "$TMP/v.raw" ||
	fail "merge of the vdso_loop measurement failed"
# an unnamed leaf in code of the vDSO no symbol covers, called by
# __vdso_clock_gettime, counts with it where this kernel has such code
# (tests/lib/vdso_unnamed.py; see vdso.sh)
unnamed=$(python3 "$BPFPROF_SRC/tests/lib/vdso_unnamed.py") || fail "cannot read this kernel's vDSO"
read -r vdso all < <(awk -F'\t' -v unnamed="$unnamed" '$1 == "count" { all += $4
	if ($6 ~ /^__vdso_clock_gettime;/ || (unnamed != "" && $6 ~ /^\?\[vdso\]@0x[0-9a-f]+;__vdso_clock_gettime;/))
		v += $4 }
	END { print v + 0, all + 0 }' "$TMP/v.txt")
[ "$all" -gt 0 ] && [ $((vdso * 100)) -ge $((all * 30)) ] ||
	fail "__vdso_clock_gettime leaves $vdso of $all samples (< 30%)"
ok "vDSO frames named from the measurement: $vdso of $all samples"
"$BPFPROF" -q --format raw -F 499 -o "$TMP/k.raw" -- "$WL/syscalls" -k 50 -s 2 >/dev/null 2>"$TMP/k.err" ||
	fail "recording syscalls failed: $(cat "$TMP/k.err")"
"$BPFPROF" merge -q -o "$TMP/k.txt" --plugin "$TMP/dump.so" --allow-untrusted-plugin "$TMP/k.raw" ||
	fail "merge of the syscalls measurement failed"
read -r named kframes < <(awk -F'\t' '$1 == "count" && $5 != "-" { n = split($5, f, ";")
	for (i = 1; i <= n; i++) { k += $4; if (f[i] !~ /^\?/) named += $4 } }
	END { print named + 0, k + 0 }' "$TMP/k.txt")
[ "$kframes" -gt 0 ] && [ $((named * 100)) -ge $((kframes * 95)) ] ||
	fail "kernel frames: $named of $kframes named (< 95%)"
ok "kernel frames named from the measurement: $named of $kframes"

# ---- 2. two nodes, and ids that collide ----
unshare --uts sh -c "hostname bpfprof-node-b && exec '$BPFPROF' -q --format raw -F 499 \
	-o '$TMP/b.raw' -- '$WL/shares' -s 1" >/dev/null 2>"$TMP/b.err" ||
	fail "recording in a second UTS namespace failed: $(cat "$TMP/b.err")"
mkdir "$TMP/copy"
cp "$TMP/a.raw" "$TMP/copy/a-again.raw"
BPFPROF_TEST_DUMP_IDS=1 "$BPFPROF" merge -q -o "$TMP/nodes.txt" --plugin "$TMP/dump.so" \
	--allow-untrusted-plugin "$TMP/a.raw" "$TMP/b.raw" "$TMP/copy" 2>"$TMP/nodes.err" ||
	fail "merge of two nodes failed: $(cat "$TMP/nodes.err")"
expect_eq "nodes" "$(awk '$1 == "nodes" { print $2 }' "$TMP/nodes.txt")" 2
host_a=$(hostname)
want_a=1 want_b=0
[[ "$host_a" < "bpfprof-node-b" ]] && want_a=0 want_b=1
awk -F'\t' -v a="$host_a" -v wa="$want_a" -v wb="$want_b" -v p="$WPID" '
	$1 == "ident" { n++
		if ($4 == "bpfprof-node-b") { nb++; if ($5 != wb) bad = bad " node-b:" $5 }
		else if ($4 == a) { na++; if ($5 != wa) bad = bad " " a ":" $5
			if ($9 != p) bad = bad " host-pid " $9
			if ($3 != p) { moved++; if ($3 < 4194304) bad = bad " renumbered " $3 } }
		else bad = bad " host " $4 }
	END { if (bad != "" || nb < 1 || na != 4 || moved != 2) {
		print "ident lines wrong:" bad " (node-b " nb ", " a " " na ", renumbered " moved ")"; exit 1 } }
	' "$TMP/nodes.txt" || fail "$(awk -F'\t' '$1 == "ident"' "$TMP/nodes.txt")"
ok "identities: bpfprof-node-b node $want_b, $host_a node $want_a; the copy's pids renumbered, host pids kept"
# the thread index within a process follows the threads' ids on their host,
# renumbered or not: the same index for the same host tid in both copies
awk -F'\t' -v a="$host_a" '$1 == "ident" && $4 == a { k = $10 " " $8; seen[k]++ }
	END { for (k in seen) if (seen[k] != 2) { print "thread index differs: " k; exit 1 } }
	' "$TMP/nodes.txt" || fail "a renumbered thread got another thread index"
ok "renumbered threads keep their thread index"
samples=$(awk -F'\t' '$1 == "count" { s += $4 } END { print s + 0 }' "$TMP/nodes.txt")
kept=$(awk -F'\t' '$1 == "run" { print $5 }' "$TMP/nodes.txt")
expect_eq "samples in the merged counts" "$samples" "$kept"

# ---- 3. broken inputs: one line naming the file, exit 1, nothing written ----
size=$(stat -c %s "$TMP/a.raw")
mkdir "$TMP/bad" "$TMP/empty" "$TMP/out"
head -c $((size / 2)) "$TMP/a.raw" >"$TMP/bad/truncated.raw"
head -c $((size - 16)) "$TMP/a.raw" >"$TMP/bad/no-end.raw"
patch_bytes() {	# patch_bytes FILE OFFSET BYTES(printf escapes)
	cp "$TMP/a.raw" "$1"
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
patch_bytes "$TMP/bad/version.raw" 8 '\x02'
patch_bytes "$TMP/bad/aarch64.raw" 14 '\xb7\x00'
patch_bytes "$TMP/bad/bigendian.raw" 13 '\x02'
cp /bin/true "$TMP/bad/notraw.raw"
declare -A expect=(
	[truncated.raw]="truncated" [no-end.raw]="truncated" [version.raw]="version 2"
	[aarch64.raw]="aarch64" [bigendian.raw]="big-endian" [notraw.raw]="not a bpfprof raw")
for f in "${!expect[@]}"; do
	"$BPFPROF" merge -o "$TMP/out/p.folded" --format folded "$TMP/a.raw" "$TMP/bad/$f" \
		>"$TMP/err.out" 2>&1 && fail "$f: merge succeeded"
	[ "$(wc -l <"$TMP/err.out")" -eq 1 ] || fail "$f: not one line: $(cat "$TMP/err.out")"
	grep -q "$TMP/bad/$f: .*${expect[$f]}" "$TMP/err.out" || fail "$f: $(cat "$TMP/err.out")"
	[ -z "$(ls -A "$TMP/out")" ] || fail "$f: output left behind: $(ls -A "$TMP/out")"
	ok "$f: $(cat "$TMP/err.out")"
done
"$BPFPROF" merge -o "$TMP/out/p.folded" --format folded "$TMP/empty" >"$TMP/err.out" 2>&1 &&
	fail "merge of an empty directory succeeded"
grep -q "$TMP/empty: no raw measurements" "$TMP/err.out" || fail "empty dir: $(cat "$TMP/err.out")"
[ -z "$(ls -A "$TMP/out")" ] || fail "empty dir: output left behind"
ok "empty directory: $(cat "$TMP/err.out")"
