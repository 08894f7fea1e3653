#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# An exited process keeps only its code mappings (proc_keep_code_maps()):
# a long run over many short-lived processes must not keep every one's
# data, heap, stack and files' other segments to the end (~6 KB each, the
# growth behind a perf_rss failure in CI).  forker runs 150 children, one
# after the other, that exec forker and spend ~2 ms of CPU in child_work;
# bpfprof -v reports the mappings it keeps per exited process: at most 12
# (8.0 here: the child's image and its parent's, before the exec, ~4 code
# mappings each; 24.8 when it kept them all).  What is kept still names
# the children's samples once they are gone: child_work, in the folded
# and the pprof output, and no frame of forker's image left unnamed.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/forker" ] || fail "no $WL/forker (make B=$BPFPROF_BUILD)"

for fmt in folded pprof; do
	"$BPFPROF" -v -F 999 --format "$fmt" -o "$TMP/out.$fmt" -- "$WL/forker" -n 150 -m exec -c 2 \
		> /dev/null 2> "$TMP/err.$fmt" || { cat "$TMP/err.$fmt"; fail "bpfprof ($fmt) failed"; }
	line=$(grep 'processes tracked:' "$TMP/err.$fmt") ||
		fail "$fmt: -v reports no processes tracked"
	echo "$fmt: $line"
	read -r exited per < <(sed -En 's/.*, ([0-9]+) of them exited; .*, ([0-9.]+) per exited process$/\1 \2/p' \
		<<< "$line")
	[ "${exited:-0}" -ge 150 ] || fail "$fmt: only ${exited:-0} exited processes (expected >= 150)"
	python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 12 else 1)" "$per" ||
		fail "$fmt: $per mappings kept per exited process (expected <= 12): all of them kept?"
done
ok "exited processes keep their code mappings only"

# the children's samples: folded lines "comm;frames COUNT".  ~300 samples
# of the ~450 are child_work's (exec and ld.so's start-up take most of
# the rest); none may have an unnamed frame of forker's image ([forker]),
# as it would if the code mapping naming it were gone.
read -r in_work unnamed all < <(awk '$1 ~ /^forker(;|$)/ { n = $NF; all += n
	if ($1 ~ /;child_work(;|$)/) w += n; if ($1 ~ /(^|;)\[forker\](;|$)/) u += n }
	END { print w + 0, u + 0, all + 0 }' "$TMP/out.folded")
echo "folded: $in_work of $all forker samples in child_work, $unnamed with an unnamed frame of forker"
[ "$in_work" -ge 150 ] || fail "only $in_work samples in child_work (expected >= 150 of ~300)"
[ "$unnamed" -le 2 ] || fail "$unnamed forker samples with an unnamed frame of forker's image"
go tool pprof -top -nodecount=5 "$TMP/out.pprof" > "$TMP/top" 2> "$TMP/top.err" ||
	fail "go tool pprof failed: $(head -3 "$TMP/top.err")"
grep -q ' child_work$' "$TMP/top" || { cat "$TMP/top"; fail "pprof: no child_work among the top functions"; }
ok "the exited children's samples are named (folded: $in_work of $all in child_work; pprof)"
