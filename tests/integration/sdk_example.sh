#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# sdk_example.sh - end-to-end test of the plugin SDK: this file owns the
# check that `make install PREFIX=...` installs a usable SDK (collector,
# plugins, <bpfprof/plugin.h>, bpfprof-plugin.pc, bpfprof(1), PLUGINS.md,
# the example plugin), that the example (docs/examples/plugin/) builds out
# of tree from the installed copy with nothing but
# `PKG_CONFIG_PATH=... pkg-config bpfprof-plugin`, and that the installed
# bpfprof loads it with --plugin on a real run of the ground-truth workload
# (tests/workloads/shares.c) and writes a CSV in which leaf_a, the hot
# function, has the most self samples with a plausible share (truth 50%).
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v pkg-config >/dev/null || fail "pkg-config not installed"
[ -x "$WL/shares" ] || fail "no workload $WL/shares"
P=$TMP/prefix

# 1. Install into a temporary prefix.
make -s -C "$BPFPROF_SRC" install PREFIX="$P" B="$BPFPROF_BUILD" >"$TMP/install.log" 2>&1 ||
	fail "make install failed: $(tail -20 "$TMP/install.log")"
for f in bin/bpfprof include/bpfprof/plugin.h lib/pkgconfig/bpfprof-plugin.pc \
	 share/man/man1/bpfprof.1 share/doc/bpfprof/PLUGINS.md \
	 share/doc/bpfprof/examples/plugin/Makefile share/doc/bpfprof/examples/plugin/funcs_csv.c; do
	[ -f "$P/$f" ] || fail "make install did not install $f"
done
for p in "$BPFPROF_BUILD"/plugins/*.so; do
	[ -x "$P/lib/bpfprof/plugins/$(basename "$p")" ] || fail "plugin $(basename "$p") not installed"
done
if command -v man >/dev/null; then
	man -l "$P/share/man/man1/bpfprof.1" 2>/dev/null | grep -q 'list-formats' || fail "man page does not render"
fi
ok "installed: $(cd "$P" && find . -type f | wc -l) files"

# 2. pkg-config sees the SDK.
export PKG_CONFIG_PATH=$P/lib/pkgconfig
expect_eq "pkg-config --cflags" "$(pkg-config --cflags bpfprof-plugin | sed "s/ *$//")" "-I$P/include"
expect_eq "plugindir" "$(pkg-config --variable=plugindir bpfprof-plugin)" "$P/lib/bpfprof/plugins"
abi=$(sed -n 's/^#define BPFPROF_PLUGIN_ABI_VERSION \([0-9]*\).*/\1/p' "$BPFPROF_SRC/include/bpfprof/plugin.h")
expect_eq "abi_version" "$(pkg-config --variable=abi_version bpfprof-plugin)" "$abi"
ver=$("$P/bin/bpfprof" --version | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -1)
expect_eq "pkg-config --modversion" "$(pkg-config --modversion bpfprof-plugin)" "$ver"

# 3. Build the installed example out of tree: only pkg-config may point at
# the headers (the source tree is hidden from the compiler's view).
EX=$TMP/example
cp -r "$P/share/doc/bpfprof/examples/plugin" "$EX"
chmod 0755 "$EX"
make -C "$EX" >"$TMP/build.log" 2>&1 || fail "example build failed: $(cat "$TMP/build.log")"
grep -q -- "-I$P/include" "$TMP/build.log" || fail "example not built with pkg-config's flags: $(cat "$TMP/build.log")"
! grep -q -- "$BPFPROF_SRC" "$TMP/build.log" || fail "example build used the source tree"
[ -f "$EX/funcs_csv.so" ] || fail "no funcs_csv.so"
ok "example built out of tree: $(grep -- '-shared' "$TMP/build.log")"
BPFPROF_PLUGIN_PATH=$EX "$P/bin/bpfprof" --list-formats | grep -q '^funcs_csv .*CSV' ||
	fail "--list-formats does not show funcs_csv"
BPFPROF_PLUGIN_PATH=$P/lib/bpfprof/plugins "$P/bin/bpfprof" --list-formats >"$TMP/formats"
for f in pprof folded flamegraph; do
	grep -q "^$f " "$TMP/formats" || fail "installed bpfprof does not list $f: $(cat "$TMP/formats")"
done
ok "--list-formats shows the example and the installed formats"

# 4. A real run with --plugin.
"$WL/shares" -t 1 -s 2 --wait >"$TMP/wl.out" 2>"$TMP/wl.err" & CHILD_PIDS+=($!); wl=$!
for _ in $(seq 100); do grep -q '^ready' "$TMP/wl.out" && break; sleep 0.1; done
grep -q '^ready' "$TMP/wl.out" || fail "workload not ready"
"$P/bin/bpfprof" --plugin "$EX/funcs_csv.so" -p "$wl" -F 499 -d 30 -o "$TMP/funcs.csv" 2>"$TMP/run.err" &
prof=$!; CHILD_PIDS+=($prof)
sleep 1
kill -USR1 "$wl"
wait "$wl" || fail "workload failed"
wait "$prof" || fail "bpfprof --plugin failed: $(cat "$TMP/run.err")"
head -6 "$TMP/funcs.csv"
expect_eq "CSV header" "$(head -1 "$TMP/funcs.csv")" \
	"function,module,self_samples,self_percent,total_samples,total_percent"
IFS=, read -r fn mod self selfp total totalp < <(sed -n 2p "$TMP/funcs.csv")
expect_eq "hottest function" "$fn" leaf_a
[[ "$mod" == */shares ]] || fail "leaf_a's module is '$mod'"
awk -v p="$selfp" 'BEGIN { exit !(p >= 40 && p <= 60) }' || fail "leaf_a self share $selfp%, expected about 50%"
bl=$(awk -F, '$1 == "busy_loop" { print $6 }' "$TMP/funcs.csv")
awk -v p="$bl" 'BEGIN { exit !(p >= 90) }' || fail "busy_loop total share '$bl'%, expected about 100%"
kept=$(sed -n 's/^bpfprof: \([0-9]*\) samples (.*/\1/p' "$TMP/run.err")
sum=$(awk -F, 'NR > 1 { s += $3 } END { print s }' "$TMP/funcs.csv")
expect_eq "sum of self samples" "$sum" "$kept"
ok "leaf_a self $selfp%, busy_loop total $bl%"
