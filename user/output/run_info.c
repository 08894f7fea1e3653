// SPDX-License-Identifier: BSD-2-Clause
/*
 * output/run_info.c - fills the run's metadata for plugins (see run_info.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/cpus.h"
#include "run_info.h"
#include "targets/targets.h"

void run_info_fill(struct run_info *ri, const struct options *o)
{
	struct bpfprof_run *run = &ri->run;
	struct utsname u;
	int *cpus;
	size_t nr;

	memset(ri, 0, sizeof(*ri));
	gethostname(ri->hostname, sizeof(ri->hostname) - 1);
	if (uname(&u) == 0) {
		snprintf(ri->os_release, sizeof(ri->os_release), "%s", u.release);
		snprintf(ri->arch, sizeof(ri->arch), "%s", u.machine);
	}
	targets_describe(o, ri->hostname, ri->target_desc, sizeof(ri->target_desc));
	run->version = BPFPROF_VERSION;
	run->event = "cpu-clock";
	run->hostname = ri->hostname;
	run->os_release = ri->os_release;
	run->arch = ri->arch;
	run->nr_cpus_available = (uint32_t)sysconf(_SC_NPROCESSORS_CONF);
	run->nr_cpus_online = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (online_cpus(&cpus, &nr) == 0) {
		run->nr_cpus_online = (uint32_t)nr;
		free(cpus);
	}
	run->argc = o->argc;
	run->argv = (const char *const *)o->argv;
	run->target = ri->target_desc;
	run->max_stack_depth = o->max_stack;
	run->call_graph = o->call_graph == CALL_GRAPH_DWARF ? "dwarf"
			: o->call_graph == CALL_GRAPH_AUTO ? "auto" : "fp";
}
