// SPDX-License-Identifier: BSD-2-Clause
/*
 * late_lib.c - the shared library that tests/workloads/late_dlopen.c maps
 * with dlopen() once it has run for a while, i.e. after a profiler has
 * read its mappings.  Not a program: the Makefile builds it into
 * $(B)/workloads/late_lib.so, next to late_dlopen, with the workloads'
 * flags (frame pointers, no tail calls) plus -shared -fPIC.
 *
 * This file owns late_lib_hot(x, n), the hot leaf late_dlopen calls
 * through dlsym(): @n steps of groundtruth.h's LCG on @x.  It is global
 * (late_dlopen and the profiles look it up by name) and noipa, and ends by
 * calling the library's own sink() so that it keeps its frame pointer.
 */
#include <stdint.h>

#include "groundtruth.h"

static SINK_FUNCTION(sink)

LCG_LEAF(late_lib_hot)
