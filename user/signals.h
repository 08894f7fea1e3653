/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * signals.h - how a run is stopped from outside: Ctrl-C and SIGTERM end
 * sampling and write the profile; a second Ctrl-C aborts at once, removing
 * the temporary outputs (output/guard.h), unless they are already in
 * place.  SIGCHLD only interrupts the wait when a -- COMMAND ends.
 */
#ifndef BPFPROF_SIGNALS_H
#define BPFPROF_SIGNALS_H

#include <stdbool.h>

/* Install the handlers (SIGINT, SIGTERM, SIGCHLD; SIGPIPE ignored). */
void signals_install(void);

/* True once Ctrl-C or SIGTERM asked the run to stop. */
bool signals_stop_requested(void);

#endif /* BPFPROF_SIGNALS_H */
