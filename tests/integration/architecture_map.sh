#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# architecture_map.sh - this file owns the check that docs/ARCHITECTURE.md
# names every source file under user/ and plugins/ (C, C++ and assembly
# sources, headers), so that a newcomer who reads it finds every room of
# the house: a file is named when the doc holds its path (as
# "symbols/vdso.c" or "user/symbols/vdso.c"), or holds its folder
# ("`perf/`") and its file name; a header is also named by its .c twin
# followed by "/`.h`" ("`kernel/cpus.c`/`.h`").  Also that no source file
# in bpf/, user/, plugins/ or include/ is over 800 lines, and that no
# plugin includes another plugin's files (issue 14).
# No root needed.  Exit: 0 pass, 1 fail.
. "$(dirname "$0")/../lib/common.sh"
cd "$BPFPROF_SRC"
python3 - <<'PY' || fail "see above"
import os, re, sys
doc = open("docs/ARCHITECTURE.md").read()
missing = []
for top in ("user", "plugins"):
    for root, _, files in os.walk(top):
        for f in files:
            if not re.search(r"\.(c|cc|h|S)$", f):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            folder = os.path.dirname(rel)
            twin = re.sub(r"\.h$", ".c", f)
            def names(name):
                return name in doc or (f.endswith(".h") and
                                       name[:-len(f)] + twin + "`/`.h`" in doc)
            named = (names(rel) or
                     (folder and ("`%s/`" % folder) in doc and names(f)) or
                     (not folder and names("`%s" % f)))
            if not named:
                missing.append(path)
if missing:
    print("docs/ARCHITECTURE.md does not name: " + ", ".join(sorted(missing)))
    sys.exit(1)
print("ok: docs/ARCHITECTURE.md names every file under user/ and plugins/")
PY
long=$(find bpf user plugins include -type f \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) \
	-exec wc -l {} + |
       awk '$2 != "total" && $1 > 800 { print $2 " (" $1 " lines)" }')
[ -z "$long" ] || fail "source files over 800 lines: $long"
ok "no source file in bpf/, user/, plugins/, include/ is over 800 lines"
cross=$(grep -rn '#include "\.\./' plugins/ || true)
[ -z "$cross" ] || fail "a plugin includes another plugin's files: $cross"
ok "no plugin includes another plugin's files"
