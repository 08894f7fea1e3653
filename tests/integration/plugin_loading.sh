#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Plugin loading: a good plugin loads and writes a real profile; a wrong ABI
# version, a missing entry point, a non-ELF file and a missing file are each
# refused with a clear one-line message and a non-zero exit; a plugin that
# fails in write() leaves no output file.
. "$(dirname "$0")/../lib/common.sh"
need_root
FX=$BPFPROF_SRC/tests/fixtures/plugins
for p in good bad_abi no_entry fails; do
	cc -shared -fPIC -I"$BPFPROF_SRC/include" "$FX/$p.c" -o "$TMP/$p.so" || fail "cannot build $p"
done
echo "just text" > "$TMP/notelf.so"
sleep 30 & CHILD_PIDS+=($!); target=$!

# refused_with PLUGIN REGEX: exit non-zero, message on one line matching REGEX.
refused_with() {
	local out rc
	out=$("$BPFPROF" --plugin "$1" -p "$target" -d 0.2 -o "$TMP/out" 2>&1); rc=$?
	[ $rc -ne 0 ] || fail "$1 was accepted"
	echo "$out" | grep -Eq "$2" || fail "$1: message '$out' does not match /$2/"
	[ "$(echo "$out" | wc -l)" -eq 1 ] || fail "$1: expected one line, got: $out"
	[ ! -e "$TMP/out" ] || fail "$1: output file left behind"
	ok "$(basename "$1") refused: $out"
}
refused_with "$TMP/bad_abi.so" "ABI version 42.*speaks version 1"
refused_with "$TMP/no_entry.so" "does not export bpfprof_plugin_entry"
refused_with "$TMP/notelf.so" "not an ELF shared object"
refused_with "$TMP/missing.so" "cannot open plugin .*No such file"

out=$("$BPFPROF" --plugin "$TMP/fails.so" -p "$target" -d 0.2 -o "$TMP/out" 2>&1) && fail "failing plugin: exit 0"
echo "$out" | grep -q "disk quota of the test plugin exceeded" || fail "failing plugin message missing: $out"
[ -z "$(ls -A "$TMP" | grep -v '\.so$\|^notelf')" ] || fail "failing plugin left files: $(ls -A "$TMP")"
ok "failing plugin: non-zero exit, its message, no file"

# The good plugin: a real run through BPF on a busy process.
"$WL/spin" 3 & CHILD_PIDS+=($!); busy=$!
"$BPFPROF" --plugin "$TMP/good.so" -p "$busy" -F 199 -d 1 -o "$TMP/good.txt" || fail "good plugin run failed"
read -r word n rest < "$TMP/good.txt"
[ "$word" = samples ] && [ "$n" -ge 100 ] || fail "good plugin wrote '$(cat "$TMP/good.txt")'"
ok "good plugin wrote: $(cat "$TMP/good.txt")"

# --list-formats lists the built-in plugins with descriptions.
"$BPFPROF" --list-formats > "$TMP/formats" || fail "--list-formats failed"
grep -q '^gperftools ' "$TMP/formats" || fail "--list-formats: no gperftools: $(cat "$TMP/formats")"
BPFPROF_PLUGIN_PATH=$TMP "$BPFPROF" --list-formats | grep -q '^testgood .*sample totals' ||
	fail "BPFPROF_PLUGIN_PATH plugins are not listed"
ok "--list-formats and BPFPROF_PLUGIN_PATH"
