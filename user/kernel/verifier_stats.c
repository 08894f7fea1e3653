// SPDX-License-Identifier: BSD-2-Clause
/*
 * verifier_stats.c - owns BPFPROF_DEBUG=stats, the verifier's statistics
 * of each program as the sampler loads the BPF object (see
 * verifier_stats.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "verifier_stats.h"

#define VERIFIER_LOG_SIZE 4096
#define VERIFIER_LOG_PROGS 8

struct verifier_logs {
	size_t nr;
	struct bpf_program *progs[VERIFIER_LOG_PROGS];
	char buf[VERIFIER_LOG_PROGS][VERIFIER_LOG_SIZE];
};

static bool wanted(void)
{
	const char *v = getenv("BPFPROF_DEBUG");

	return v && strcmp(v, "stats") == 0;
}

struct verifier_logs *verifier_stats_request(struct bpf_object *obj)
{
	struct verifier_logs *logs = wanted() ? calloc(1, sizeof(*logs)) : NULL;
	struct bpf_program *prog;

	if (!logs)
		return NULL;
	bpf_object__for_each_program(prog, obj) {
		if (logs->nr == VERIFIER_LOG_PROGS)
			break;
		logs->buf[logs->nr][0] = 0;
		if (bpf_program__set_log_buf(prog, logs->buf[logs->nr], VERIFIER_LOG_SIZE) ||
		    bpf_program__set_log_level(prog, 4))
			continue;
		logs->progs[logs->nr++] = prog;
	}
	return logs;
}

/* The line of @log starting with @prefix, without its newline ("" if none). */
static int log_line(const char *log, const char *prefix, const char **line)
{
	const char *p = strstr(log, prefix);

	*line = p ? p : "";
	return p ? (int)strcspn(p, "\n") : 0;
}

void verifier_stats_finish(struct verifier_logs *logs, bool loaded)
{
	for (size_t i = 0; logs && loaded && i < logs->nr; i++) {
		const char *insns, *time;
		int ni = log_line(logs->buf[i], "processed ", &insns);
		int nt = log_line(logs->buf[i], "verification time ", &time);

		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(logs->progs[i]);

		/* what the kernel runs: the program after dead-code removal and
		 * the rewrites of map look-ups, helpers and context loads */
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			info.xlated_prog_len = 0;
		fprintf(stderr, "bpfprof: verifier: %s: %.*s; %.*s; %zu insns loaded, %u after "
			"the verifier's rewrites\n", bpf_program__name(logs->progs[i]), ni, insns,
			nt, time, bpf_program__insn_cnt(logs->progs[i]),
			info.xlated_prog_len / 8);
	}
	free(logs);
}
