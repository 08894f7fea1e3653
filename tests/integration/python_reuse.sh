#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Python code objects are named by what lies at their address when a stack
# shows them, and read only when that may have changed (issue 17; the
# "py_codes_seen" set of bpf/new_stack.bpf.h, user/interp/pynames.c):
#
#  1. Addresses reused under other names: tests/workloads/pyreuse.py
#     compiles pyreuse_alpha (~60% of the rounds) or pyreuse_beta again
#     every few ms and frees it; the allocator gives each the address the
#     other had (the workload counts those switches, at least 20 here or
#     the check means nothing).  Run by Debian's python3.11 and a pyenv
#     3.13 (else 3.12) build at 999 Hz, folded output: alpha's share of
#     the samples of the two is within 4 points of its share of their CPU
#     time as the workload measured it (~2,500 samples: sigma ~1 point).
#     Named by address alone, beta's samples at alpha's old addresses are
#     alpha's: 50% against a truth of 60%.
#  2. Code objects seen before, unchanged, are not read again: on pyburn
#     (python3.11, -v), at most one read of code-object headers per
#     code object named (or unreadable) plus 5, and at least 80% of the
#     Python frames in new stacks named without a read.  Reading the
#     frames of every batch of new stacks again made ~100-270 header
#     reads for ~50 code objects.
#  3. Forked children: tests/workloads/pyforks.py forks two children that
#     run the same Python function (pyforks_worker) from the parent's
#     frames, at the same addresses.  Each stack with Python frames is its
#     process's (the program salts its id with the tgid), so each child's
#     frames are named from that child's code objects: at least 90% of
#     the samples in pyforks_worker, under 1% with an unnamed Python frame
#     ("[python]").  When the two children shared a stack, the one whose
#     stack came second had its Python frames unnamed: ~40% of the samples.
. "$(dirname "$0")/../lib/common.sh"
need_root
fs() { python3 "$BPFPROF_SRC/tests/lib/folded_stacks.py" "$@"; }
FIRST_ONLY=1 find_pythons 3.13 3.12

# ---- 1. addresses reused under other names -----------------------------------
for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	"$BPFPROF" -F 999 --format folded -o "$TMP/$tag.folded" -- \
		"$py" "$BPFPROF_SRC/tests/workloads/pyreuse.py" 3 >"$TMP/$tag.out" 2>"$TMP/$tag.err" ||
		{ cat "$TMP/$tag.err"; fail "bpfprof -- $py pyreuse.py failed"; }
	cat "$TMP/$tag.out"
	read -r _ _ t _ _ < <(grep '^truth ' "$TMP/$tag.out")
	read -r _ _ _ sw _ < <(grep '^reuse ' "$TMP/$tag.out")
	[ -n "$t" ] && [ -n "$sw" ] || fail "$tag: no truth or reuse line"
	[ "$sw" -ge 20 ] || fail "$tag: code objects' addresses switched names only $sw times"
	read -r a n < <(fs count "$TMP/$tag.folded" '[;]pyreuse_alpha(;|$)')
	read -r b _ < <(fs count "$TMP/$tag.folded" '[;]pyreuse_beta(;|$)')
	awk -v a="$a" -v b="$b" -v n="$n" -v t="$t" -v tag="$tag" 'BEGIN {
		if (a < 300 || b < 200) { printf "FAIL: %s: too few samples: %d alpha, %d beta of %d\n", tag, a, b, n; exit 1 }
		s = 100 * a / (a + b); d = s - t; if (d < 0) d = -d
		printf "%s: %d samples, %d alpha, %d beta: alpha %.2f%% of the two, truth %.2f%%\n", tag, n, a, b, s, t
		if (d > 4) { printf "FAIL: %s: alpha share off by %.2f points\n", tag, d; exit 1 }
	}' || fail "$tag: code objects at reused addresses misnamed"
	ok "$tag: code objects at reused addresses named by what lies there"
done

# ---- 2. unchanged code objects not read again ---------------------------------
"$BPFPROF" -v -F 999 -o "$TMP/burn.prof" -- /usr/bin/python3.11 \
	"$BPFPROF_SRC/tests/workloads/pyburn.py" 3 "$TMP/burn.truth" >/dev/null 2>"$TMP/burn.err" ||
	{ cat "$TMP/burn.err"; fail "bpfprof -v -- python3.11 pyburn.py failed"; }
line=$(grep 'code objects:' "$TMP/burn.err") || { cat "$TMP/burn.err"; fail "no code objects line"; }
echo "$line"
read -r named unreadable seen unread reads < <(echo "$line" | sed -E \
	's/.*code objects: ([0-9]+) named, ([0-9]+) unreadable, ([0-9]+) frames in new stacks .*, ([0-9]+) of them named without a read, ([0-9]+) header reads.*/\1 \2 \3 \4 \5/')
[ -n "$reads" ] || fail "cannot parse: $line"
[ "$reads" -le $((named + unreadable + 5)) ] ||
	fail "pyburn: $reads header reads for $((named + unreadable)) code objects"
[ $((unread * 100)) -ge $((seen * 80)) ] ||
	fail "pyburn: only $unread of $seen frames in new stacks named without a read"
ok "pyburn: $reads header reads for $((named + unreadable)) code objects; $unread of $seen frames named without one"

# ---- 3. forked children running the same code ---------------------------------
for py in "${pythons[@]}"; do
	tag=$(basename "$py")
	"$BPFPROF" -F 999 --format folded -o "$TMP/$tag.forks.folded" -- \
		"$py" "$BPFPROF_SRC/tests/workloads/pyforks.py" 2 >"$TMP/$tag.forks.out" 2>"$TMP/$tag.forks.err" ||
		{ cat "$TMP/$tag.forks.err"; fail "bpfprof -- $py pyforks.py failed"; }
	grep -q '^done$' "$TMP/$tag.forks.out" || fail "$tag: pyforks.py did not finish"
	read -r w n < <(fs count "$TMP/$tag.forks.folded" '[;]pyforks_worker(;|$)')
	read -r u _ < <(fs count "$TMP/$tag.forks.folded" '(^|;)\[python\](;|$)')
	echo "$tag: forked children: $n samples, $w in pyforks_worker, $u with an unnamed Python frame"
	[ $((w * 100)) -ge $((n * 90)) ] || fail "$tag: only $w of $n samples named pyforks_worker"
	[ $((u * 100)) -lt "$n" ] || fail "$tag: $u of $n samples with unnamed Python frames"
	ok "$tag: forked children's Python frames named"
done
