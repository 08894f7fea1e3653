// SPDX-License-Identifier: BSD-2-Clause
/*
 * output/guard.c - the registry of temporary outputs a second Ctrl-C
 * removes (see guard.h).
 */
#include <signal.h>

#include "guard.h"

static struct output *volatile current;
/* Finished temporaries waiting to be published together (per process). */
static struct output *volatile pending;
static volatile size_t nr_pending;
/* Set (with SIGINT blocked) once the outputs are in place. */
static volatile sig_atomic_t published;

void output_guard_current(struct output *o)
{
	current = o;
}

void output_guard_pending(struct output *arr)
{
	nr_pending = 0;
	pending = arr;
}

void output_guard_pending_add(void)
{
	nr_pending++;
}

void output_guard_published(bool done)
{
	published = done;
}

void output_guard_block_sigint(bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

bool output_guard_abort_signal_safe(void)
{
	if (published)
		return true;
	if (current)
		output_abort_signal_safe(current);
	for (size_t i = 0; pending && i < nr_pending; i++)
		output_abort_signal_safe(&pending[i]);
	return false;
}
