// SPDX-License-Identifier: BSD-2-Clause
/*
 * nofp_lazy - calls through the PLT that the dynamic linker resolves
 * again on every call, built without frame pointers (-O2 -g
 * -fomit-frame-pointer) and linked for lazy binding (-z lazy).
 *
 * Run under LD_BIND_NOT=1, each cbrt() call enters glibc's lazy-binding
 * trampoline (_dl_runtime_resolve_xsavec, or its _xsave / _fxsave sibling
 * on older CPUs), which aligns the stack for xsave and keeps its CFA in
 * rbx, then _dl_fixup and the symbol lookup under it:
 *
 *   main -> lazy_stage -> _dl_runtime_resolve_* -> _dl_fixup -> ...
 *
 * Most of the CPU time is spent there, so a walk that cannot follow a CFA
 * from rbx (bpf/cfi_row.h, CFI_KIND_RBX) loses main on most samples.
 * tests/integration/lazy_binding.sh uses it.
 *
 * Usage: nofp_lazy [-s SECONDS] [--wait]
 *   -s SECONDS  CPU seconds of calls (default 2)
 *   --wait      print "ready PID" and block until SIGUSR1 first
 * At exit it prints "nofp_lazy: calls=N cpu_seconds=S" on stderr.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "groundtruth.h"

/* Calls between two looks at the clock. */
#define CALLS_PER_CHUNK 1000

/* @n calls of cbrt() through the PLT; a frame with locals of its own. */
NOIPA double lazy_stage(double x, uint64_t n)
{
	volatile double seen[4] = { 0 };

	for (uint64_t i = 0; i < n; i++) {
		x = cbrt(x + (double)i) + 1.0;
		seen[i & 3] = x;
	}
	return x + seen[0];
}

int main(int argc, char **argv)
{
	double seconds = 2.0, x = 1.0, t0;
	uint64_t calls = 0;

	start_seconds_wait(argc, argv, "nofp_lazy", &seconds);
	t0 = now(CLOCK_THREAD_CPUTIME_ID);
	while (now(CLOCK_THREAD_CPUTIME_ID) - t0 < seconds) {
		x = lazy_stage(x, CALLS_PER_CHUNK);
		calls += CALLS_PER_CHUNK;
	}
	result_sink = (uint64_t)x;
	fprintf(stderr, "nofp_lazy: calls=%llu cpu_seconds=%.3f\n", (unsigned long long)calls,
		now(CLOCK_THREAD_CPUTIME_ID) - t0);
	return 0;
}
