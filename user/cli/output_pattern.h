/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output_pattern.h - the patterns of `-o PATH`: %h (host name), %p
 * (the collector's pid) and %%, so that the runs of one job on many
 * nodes can share one output directory, each writing its own file.
 */
#ifndef BPFPROF_OUTPUT_PATTERN_H
#define BPFPROF_OUTPUT_PATTERN_H

#include <stdint.h>

/*
 * Expand @pattern into *@out, a malloc'd string the caller frees:
 * "%h" becomes @host (any '/' in it turned into '_', so that it stays
 * one path component), "%p" the decimal @pid, "%%" one '%'; every other
 * byte is copied.  Returns 0; -EINVAL if a '%' is followed by anything
 * else or by nothing, with *@bad pointing at that '%' in @pattern (and
 * *@out NULL); -ENOMEM (*@out NULL).
 */
int output_pattern_expand(const char *pattern, const char *host, uint32_t pid, char **out,
			  const char **bad);

#endif /* BPFPROF_OUTPUT_PATTERN_H */
