/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * output/guard.h - which temporary outputs a second Ctrl-C must remove.
 *
 * The output stage registers the output it is writing, and the finished
 * temporaries of a per-process format waiting to be published together;
 * the signal handler (signals.c) calls output_guard_abort_signal_safe().
 * State is process-global and touched only with async-signal-safe
 * stores; one run at a time.
 */
#ifndef BPFPROF_OUTPUT_GUARD_H
#define BPFPROF_OUTPUT_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "output.h"

/* The output being written (borrowed until replaced), or NULL. */
void output_guard_current(struct output *o);

/* The array finished temporaries are collected in (borrowed; NULL ends
 * it): output_guard_pending_add() counts one more in use. */
void output_guard_pending(struct output *arr);
void output_guard_pending_add(void);

/* Every output is in place: a second Ctrl-C has nothing left to remove. */
void output_guard_published(bool published);

/* Block (or unblock) SIGINT around publishing, so outputs are in place
 * all or none when a second Ctrl-C comes. */
void output_guard_block_sigint(bool block);

/* In a signal handler: remove every registered temporary.  Returns true
 * if the outputs were already published (nothing removed). */
bool output_guard_abort_signal_safe(void);

#endif /* BPFPROF_OUTPUT_GUARD_H */
