#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# rust_names.sh - Rust function names come out as perf and Rust's own
# backtraces print them, from both of rustc's symbol manglings: legacy
# (C++'s scheme with a hash as the last part, which c++filt keeps and
# bpfprof, like perf, leaves out) and v0 ("_R...", which c++filt prints
# with the crates' disambiguators, "rsburn[1a2b3c]::").  Before, legacy
# names kept the hash (m::burn::hbfbdb885f235c4a8) and v0 names, those of
# Rust 1.95's std among them, were shown mangled.
#
# tests/workloads/rsburn (legacy) and rsburn_v0, built by Debian's rustc
# without frame pointers: rsburn::outer::inner_a 50%, <rsburn::Lcg as
# rsburn::Step>::step_many 30%, and the generic Work<u32>::run 20%
# (rsburn::Work<T>::run in legacy names, <rsburn::Work<u32>>::run in v0),
# each called from rsburn::round.  For each build, bpfprof (folded) and
# `perf record -g` attached to one run at 999 Hz:
#   a. the symbols are of the build's scheme, and its --truth names are
#      c++filt's (binutils' demangler, not ours) without the hash and the
#      disambiguators;
#   b. bpfprof's leaf shares of the three names are within max(3 points,
#      3.5 sigma) of the truth, and >= 90% of their samples sit under
#      rsburn::round, below rsburn::main (the CFI walk: no frame pointers);
#   c. perf report's names (perf demangles Rust by itself) are bpfprof's,
#      at leaf shares within max(3 points, 3.5 sigma) of each other.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v perf >/dev/null || fail "perf not installed (Debian package linux-perf)"
command -v nm >/dev/null && command -v c++filt >/dev/null || fail "nm/c++filt not installed (binutils)"
export lib=$BPFPROF_SRC/tests/lib
. "$lib/names.sh"

# c++filt's names of FILE's symbols, without legacy hashes and v0
# disambiguators (one per line).
oracle_names() {
	nm "$1" | awk '{ print $3 }' | c++filt |
		sed -E 's/::h[0-9a-f]{16}$//; s/\[[0-9a-f]+\]//g'
}

check_build() {
	local name=$1 scheme=$2 bin=$WL/$1 pid under all
	[ -x "$bin" ] || fail "no $bin (make builds it where rustc is installed: Debian package rustc)"
	# a. the scheme, and the truth against c++filt
	case $scheme in
	legacy) nm "$bin" | grep -q ' _ZN6rsburn5outer7inner_a17h[0-9a-f]\{16\}E$' ;;
	v0) nm "$bin" | grep -q ' _RNvNtCs[0-9A-Za-z_]*_6rsburn5outer7inner_a$' ;;
	esac || fail "$name/a: rsburn::outer::inner_a is not a $scheme symbol in $bin"
	"$bin" --truth >"$TMP/$name.truth" || fail "$name --truth failed"
	oracle_names "$bin" >"$TMP/$name.oracle"
	while read -r _ rest; do
		grep -qxF "${rest% *}" "$TMP/$name.oracle" ||
			fail "$name/a: '${rest% *}' is not among c++filt's names of $bin"
	done <"$TMP/$name.truth"
	ok "$name/a: $scheme symbols; the truth names are c++filt's without hash or disambiguators"

	# b. shares and stacks
	"$bin" -s 10 >/dev/null 2>"$TMP/$name.wlerr" &
	pid=$!
	CHILD_PIDS+=("$pid")
	attach_both "$pid" 3 "$name"
	kill "$pid" 2>/dev/null
	fs top "$TMP/$name.folded" 4 | sed "s/^/    $name: /"
	while read -r _ rest; do
		local fn=${rest% *} fraction=${rest##* } got truth allowed
		truth=$(awk -v f="$fraction" 'BEGIN { printf "%.2f", 100 * f }')
		got=$(leaf_share "$TMP/$name.folded" "$fn")
		allowed=$(truth_allowed "$TMP/$name.folded" "$fraction")
		within "$got" "$truth" "$allowed" ||
			fail "$name/b: $fn: $got% of the samples, truth $truth% (allowed +-$allowed)"
		read -r under all < <(python3 - "$TMP/$name.folded" "$fn" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["lib"])
from folded_stacks import read_folded
under = all_ = 0
for user, n in read_folded(sys.argv[1]):
    if user and user[-1] == sys.argv[2]:
        all_ += n
        if user[-3:-1] == ["rsburn::main", "rsburn::round"]:
            under += n
print(under, all_)
EOF
)
		[ "$all" -gt 0 ] && [ $((under * 100)) -ge $((all * 90)) ] ||
			fail "$name/b: $under of $all $fn samples under rsburn::main;rsburn::round"
		ok "$name/b: $fn: $got% (truth $truth%, +-$allowed), $under of $all under rsburn::main;rsburn::round"
	done <"$TMP/$name.truth"

	# c. perf's names
	perf_shares_agree "$name" 3 "$name/c"
	while read -r _ rest; do
		[ "$(leaf_share "$TMP/$name.perf.folded" "${rest% *}")" != 0.00 ] ||
			fail "$name/c: perf script has no leaf '${rest% *}'"
	done <"$TMP/$name.truth"
	ok "$name/c: perf's names and leaf shares are bpfprof's"
}

check_build rsburn legacy
check_build rsburn_v0 v0
