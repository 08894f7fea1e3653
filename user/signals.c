// SPDX-License-Identifier: BSD-2-Clause
/*
 * signals.c - stop requests by signal, and the abort on a second Ctrl-C
 * (see signals.h).
 */
#include <signal.h>
#include <unistd.h>

#include "output/guard.h"
#include "signals.h"

static volatile sig_atomic_t stop_requests;

static void on_stop_signal(int sig)
{
	static const char msg[] = "\nbpfprof: aborted; no profile written\n";
	static const char late[] = "\nbpfprof: interrupted; the profile was already written\n";

	stop_requests++;
	if (stop_requests < 2 || sig != SIGINT)
		return;
	if (output_guard_abort_signal_safe())
		(void)!write(STDERR_FILENO, late, sizeof(late) - 1);
	else
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(130);
}

/* Only there to interrupt the poll when the command exits (EINTR). */
static void on_child_signal(int sig)
{
}

void signals_install(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct sigaction child = { .sa_handler = on_child_signal, .sa_flags = SA_NOCLDSTOP };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&child.sa_mask);
	sigaction(SIGCHLD, &child, NULL);
	signal(SIGPIPE, SIG_IGN);
}

bool signals_stop_requested(void)
{
	return stop_requests > 0;
}
