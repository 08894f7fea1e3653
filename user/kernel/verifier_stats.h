/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * verifier_stats.h - BPFPROF_DEBUG=stats: the verifier's statistics of
 * each program of a BPF object as it is loaded (log level 4: the
 * instructions and states it went through, and its time), and its size
 * as loaded and as the kernel keeps it (after dead-code removal and its
 * rewrites: BPF_OBJ_GET_INFO_BY_FD's xlated length), one line per program
 * on stderr:
 *
 *   bpfprof: verifier: PROG: processed N insns ...; verification time T
 *   usec; L insns loaded, X after the verifier's rewrites
 *
 * Costs nothing when not asked for.  tests/integration/verifier_stats.sh
 * reads these lines.
 */
#ifndef BPFPROF_KERNEL_VERIFIER_STATS_H
#define BPFPROF_KERNEL_VERIFIER_STATS_H

#include <stdbool.h>

struct bpf_object;
struct verifier_logs;

/*
 * Before bpf_object__load() of @obj (opened, not loaded): when
 * BPFPROF_DEBUG is "stats", have the kernel write each program's
 * statistics (up to 8 programs) into buffers returned here; else NULL.
 * NULL too when out of memory (then nothing is printed).
 */
struct verifier_logs *verifier_stats_request(struct bpf_object *obj);

/* After the load: print the programs' lines if @loaded, then free @logs
 * (NULL is fine). */
void verifier_stats_finish(struct verifier_logs *logs, bool loaded);

#endif /* BPFPROF_KERNEL_VERIFIER_STATS_H */
