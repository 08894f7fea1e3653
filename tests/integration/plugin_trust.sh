#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Plugin trust.  As root, a plugin file or its directory that is writable
# by group or others, or not owned by root, is refused with one line that
# names the file and the reason, also when reached through --format and
# BPFPROF_PLUGIN_PATH; --allow-untrusted-plugin overrides it.  A plugin
# that fails in open() or in write() makes bpfprof exit non-zero with the
# plugin's message and no output file or temporary.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/reliability.sh"
need_root
make_user
OUT=$TMP/out.txt
sleep 30 & target=$!; CHILD_PIDS+=($target)
mkdir -m 755 "$TMP/ok"
build_plugin good "$TMP/ok"
"$BPFPROF" --plugin "$TMP/ok/good.so" -p $target -d 0.2 -o "$OUT" || fail "a trusted plugin was refused"
rm -f "$OUT"
ok "root-owned 0755 plugin in a root-owned 0755 directory loads"

# untrusted SETUP REGEX: make a copy, apply SETUP to it, expect a refusal.
untrusted() {
	local d=$TMP/case$((++n)) re=$2
	mkdir -m 755 "$d"; cp "$TMP/ok/good.so" "$d/testgood.so"; chmod 755 "$d/testgood.so"
	eval "$1"
	refused "$OUT" "refusing plugin '$d/testgood.so'.*$re.*--allow-untrusted-plugin" \
		"$BPFPROF" --plugin "$d/testgood.so" -p $target -d 0.2 -o "$OUT"
	BPFPROF_PLUGIN_PATH=$d refused "$OUT" "refusing plugin '$d/testgood.so'" \
		"$BPFPROF" --format testgood -p $target -d 0.2 -o "$OUT"
	"$BPFPROF" --allow-untrusted-plugin --plugin "$d/testgood.so" -p $target -d 0.2 -o "$OUT" 2>/dev/null ||
		fail "--allow-untrusted-plugin did not override ($1)"
	rm -f "$OUT"
	ok "'$1': refused, loads with --allow-untrusted-plugin"
}
n=0
untrusted 'chmod g+w "$d/testgood.so"' "writable by group or others"
untrusted 'chmod o+w "$d/testgood.so"' "writable by group or others"
untrusted 'chown "$TUSER" "$d/testgood.so"' "not owned by root"
untrusted 'chmod 775 "$d"' "directory .*writable by group or others"
untrusted 'chmod 1777 "$d"' "directory .*writable by group or others"
untrusted 'chown "$TUSER" "$d"' "directory .*not owned by root"
# A root-owned symlink in a trusted directory to a root-owned file in a
# directory another user owns (who can swap the file): the file that is
# loaded is what must be trusted, with its own directory.
chmod 711 "$TMP"
untrusted 'mkdir -m 755 "$d/../evil$n"; chown "$TUSER" "$d/../evil$n"; mv "$d/testgood.so" "$d/../evil$n/"; ln -s "../evil$n/testgood.so" "$d/testgood.so"' \
	"directory .*evil.*not owned by root"

# Failing plugins: their message, non-zero exit, no file.
build_plugin fails_open
build_plugin fails
refused "$OUT" "testfailsopen plugin failed to open its output: the test plugin cannot open its output on purpose" \
	"$BPFPROF" --plugin "$TMP/fails_open.so" -p $target -d 0.2 -o "$OUT"
out=$("$BPFPROF" --plugin "$TMP/fails.so" -p $target -d 0.2 -o "$OUT" 2>&1) && fail "failing write(): exit 0"
echo "$out" | grep -q "testfails plugin failed to write the profile: disk quota of the test plugin exceeded" ||
	fail "failing write(): message: $out"
no_output "$OUT"
ok "failing write(): $out"
