#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# folded_flamegraph.sh - end-to-end test of `--format folded` and
# `--format flamegraph` (plugins/folded/, plugins/flamegraph/) on real runs
# of the ground-truth workload (tests/workloads/shares.c, two threads).
#  folded:     well-formed "comm;root;...;leaf COUNT" lines, no duplicates,
#              kernel frames (_[k]) only below user frames, counts summing
#              to the samples of bpfprof's summary, the workload's call
#              paths, and the shares of the innermost user frames within
#              5 points of `shares --truth`.
#  flamegraph: a self-contained page (no network address but the SVG
#              namespace) rendered in headless Chromium; the page's own
#              summary (<pre id="bpfprof-summary">, see
#              plugins/flamegraph/assets.c) must show the profile's sample
#              total, the hottest leaf (leaf_a) as the widest box at its
#              depth with a plausible share of the width, and search
#              (#search=) and click-to-zoom state (#zoom=) working.
. "$(dirname "$0")/../lib/common.sh"
need_root
[ -x "$WL/shares" ] || fail "no workload $WL/shares"
CHROMIUM=$(command -v chromium || command -v chromium-browser) || fail "chromium not installed (Debian package chromium)"
FREQ=${FREQ:-499}
TOL=${TOL:-5}

# profile FORMAT OUT: profile a released `shares -t 2 -s 2`; summary in OUT.err.
profile() {
	local fmt=$1 out=$2 wl prof
	"$WL/shares" -t 2 -s 2 --wait >"$out.wl" 2>"$out.wlerr" & wl=$!; CHILD_PIDS+=($wl)
	for _ in $(seq 100); do grep -q '^ready' "$out.wl" && break; sleep 0.1; done
	grep -q '^ready' "$out.wl" || fail "workload not ready: $(cat "$out.wlerr")"
	"$BPFPROF" -p "$wl" -F "$FREQ" -d 30 --format "$fmt" -o "$out" 2>"$out.err" & prof=$!
	CHILD_PIDS+=($prof)
	sleep 1
	kill -USR1 "$wl" || fail "cannot release the workload"
	wait "$wl" || fail "workload failed: $(cat "$out.wlerr")"
	wait "$prof" || fail "bpfprof --format $fmt failed: $(cat "$out.err")"
	cat "$out.err"
	[ -s "$out" ] || fail "--format $fmt wrote nothing"
}
kept_of() { sed -n 's/^bpfprof: \([0-9]*\) samples (.*/\1/p' "$1"; }
# within GOT_PERCENT TRUTH_FRACTION
within() { awk -v g="$1" -v t="$2" -v tol="$TOL" 'BEGIN { d = g - 100 * t; exit !(d <= tol && d >= -tol) }'; }

# --- folded -------------------------------------------------------------------
F=$TMP/out.folded
profile folded "$F"
kept=$(kept_of "$F.err")
[ -n "$kept" ] && [ "$kept" -gt 200 ] || fail "too few samples: '$kept'"
bad=$(grep -Evc '^[^; ]+(;[^;]+)* [0-9]+$' "$F")
[ "$bad" -eq 0 ] || fail "$bad malformed lines: $(grep -Ev '^[^; ]+(;[^;]+)* [0-9]+$' "$F" | head -3)"
[ -z "$(sed 's/ [0-9]*$//' "$F" | sort | uniq -d)" ] || fail "identical stacks not merged"
awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); k = 0
       for (i = 2; i <= n; i++) { if (f[i] ~ /_\[k\]$/) k = 1; else if (k) exit 1 } }' "$F" ||
	fail "a user frame below a kernel frame"
# The process's name is its main thread's last: it renamed itself shares-0.
grep -q '^shares-0;' "$F" || fail "no line starts with the comm 'shares-0'"
ok "folded lines well-formed, merged, root first, kernel frames last"
sum=$(awk '{ s += $NF } END { print s }' "$F")
expect_eq "sum of folded counts" "$sum" "$kept"
grep -q ';main;run_thread;busy_loop;phase_a;leaf_a ' "$F" || fail "no ...main;run_thread;busy_loop;phase_a;leaf_a"
grep -q ';thread_main;run_thread;busy_loop;leaf_c ' "$F" || fail "no ...thread_main;run_thread;busy_loop;leaf_c"
ok "call paths of both threads present"
while read -r kind fn share; do
	[ "$kind" = share ] || continue
	# charged to the innermost user frame (kernel frames below it are time
	# the kernel spent while it ran: interrupts, preemption)
	got=$(awk -v f="$fn" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, a, ";")
		while (k > 1 && a[k] ~ /_\[k\]$/) k--
		if (a[k] == f) s += n; t += n } END { printf "%.2f", t ? 100 * s / t : 0 }' "$F")
	within "$got" "$share" || fail "leaf $fn: $got% of samples, truth $share"
	ok "leaf $fn $got% (truth $share)"
done < <("$WL/shares" --truth)

# --- flamegraph ---------------------------------------------------------------
H=$TMP/out.html
profile flamegraph "$H"
kept=$(kept_of "$H.err")
grep -q '</html>' "$H" || fail "page incomplete"
ext=$(grep -Eo '(https?|wss?)://[^"'"'"' )]*' "$H" | grep -v '^http://www.w3.org/2000/svg$' || true)
[ -z "$ext" ] || fail "page refers to the network: $ext"
ok "page is self-contained"

# render URL_FRAGMENT OUT: the page's summary after its script ran.
render() {
	local prof
	prof=$(mktemp -d "$TMP/chromium.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
		--window-size=1200,800 --dump-dom "file://$H$1" 2>"$TMP/chromium.err" >"$TMP/dom" ||
		fail "chromium failed: $(tail -5 "$TMP/chromium.err")"
	sed -n '/<pre id="bpfprof-summary">/,/<\/pre>/p' "$TMP/dom" |
		sed -e 's/.*<pre id="bpfprof-summary">//' -e 's/<\/pre>.*//' >"$2"
	[ -s "$2" ] || fail "no summary in the rendered page (script did not run?)"
}
render "" "$TMP/sum"
head -12 "$TMP/sum"
expect_eq "flame graph total" "$(awk '$1 == "total" { print $2 }' "$TMP/sum")" "$kept"
root_w=$(awk '$1 == "box" && $2 == 0 { print $3 }' "$TMP/sum")
[ -n "$root_w" ] && awk -v w="$root_w" 'BEGIN { exit !(w > 500) }' || fail "root box width '$root_w'"
# The widest leaf_a box, and the widest box at its depth.
read -r d w < <(awk '$1 == "box" && $5 == "leaf_a" { print $2, $3; exit }' "$TMP/sum")
[ -n "${d:-}" ] || fail "no leaf_a box drawn"
widest=$(awk -v d="$d" '$1 == "box" && $2 == d { print $5; exit }' "$TMP/sum")
expect_eq "widest box at depth $d" "$widest" leaf_a
share=$(awk '$1 == "box" && $5 == "leaf_a" { s += $3 } END { print 100 * s / '"$root_w"' }' "$TMP/sum")
within "$share" 0.5 || fail "leaf_a boxes span $share% of the width, truth 50%"
ok "leaf_a boxes span $share% of the width"

render "#search=^leaf_a\$" "$TMP/sum.search"
m=$(awk '$1 == "search" { sub("%", "", $3); print $3 }' "$TMP/sum.search")
within "$m" 0.5 || fail "search ^leaf_a\$ matched '$m'%"
grep -q 'class="f hit"' "$TMP/dom" || fail "no highlighted box after search"
ok "search ^leaf_a\$ matched $m%"

render "#zoom=phase_a" "$TMP/sum.zoom"
grep -q '^zoom phase_a$' "$TMP/sum.zoom" || fail "zoom state not applied: $(head -3 "$TMP/sum.zoom")"
pw=$(awk '$1 == "box" && $5 == "phase_a" { print $3; exit }' "$TMP/sum.zoom")
awk -v p="$pw" -v r="$root_w" 'BEGIN { exit !(p >= r - 1) }' || fail "zoomed phase_a is $pw px, not the full $root_w"
[ -z "$(awk '$1 == "box" && ($5 == "leaf_b" || $5 == "leaf_c")' "$TMP/sum.zoom")" ] ||
	fail "boxes outside phase_a drawn while zoomed"
ok "zoom to phase_a: full width ($pw px), only its subtree"
