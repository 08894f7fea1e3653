#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds: release
#   (tests/run --sanitized: it builds its own ASan + UBSan fuzz targets)
# Fuzz smoke test: builds the libFuzzer targets tests/fuzz/fuzz_*.c (clang,
# ASan + UBSan, as `make fuzz` does) into $BPFPROF_BUILD/fuzz-smoke and runs
# each for FUZZ_SMOKE_SECONDS (default 4) on its seed corpus through
# tests/fuzz/run, which fails on any crash, leak or sanitizer report.
# `make fuzz FUZZ_SECONDS=N` is the long version.
. "$(dirname "$0")/../lib/common.sh"
command -v clang >/dev/null && command -v clang++ >/dev/null || fail "clang or clang++ is not installed"
FB=$BPFPROF_BUILD/fuzz-smoke
make -s -j"$(nproc)" -C "$BPFPROF_SRC" B="$FB" CC=clang CXX=clang++ \
	SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" fuzz-targets > "$TMP/build.log" 2>&1 ||
	{ tail -n 30 "$TMP/build.log"; fail "building the fuzz targets failed"; }
ok "fuzz targets built in $FB"
bash "$BPFPROF_SRC/tests/fuzz/run" "$FB" "${FUZZ_SMOKE_SECONDS:-4}" || fail "a fuzz target failed"
