// SPDX-License-Identifier: BSD-2-Clause
/*
 * ids.c - the identity of each thread profile of the HPCToolkit plugin:
 * the NODE / RANK / THREAD identifier tuple profile.db gives it (written
 * by profile_db.c) and the host, pid, tid and comm the description lists.
 *
 * From bpfprof_profile.thread_ids (hosts from 0.2 on): NODE is the node's
 * index (logical) and host id (physical), RANK the process's MPI rank
 * (logical) and pid on its node (physical), THREAD the thread's index
 * within its process as hpcrun numbers them (logical) and its tid
 * (physical).  As in hpcrun's tuples of a non-MPI run, RANK is left out
 * when no process has a rank and every node ran one process; otherwise
 * every profile has one, and a process without a rank of its own (not an
 * MPI rank, or a second process claiming a rank already taken, e.g. a
 * rank's child that inherited its environment) gets the next one above
 * the highest real rank, in process order, so that tuples stay unique.
 *
 * Older hosts (no thread_ids): one node (this host), no ranks, threads
 * numbered by their position in their process, pids and tids as given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

/* Does @version ("MAJOR.MINOR...") say at least 0.2, the first host that
 * hands over thread_ids? */
static int has_thread_ids(const struct bpfprof_profile *p)
{
	const char *v = p->run ? p->run->version : NULL;
	char *end;
	unsigned long major, minor;

	if (!v || !p->thread_ids)
		return 0;
	major = strtoul(v, &end, 10);
	if (end == v || *end != '.')
		return 0;
	minor = strtoul(end + 1, NULL, 10);
	return major > 0 || minor >= 2;
}

/* Thread @t's identity before ranks are settled; @k: its index within its
 * process. */
static void base_identity(const struct bpfprof_profile *p, int from_host, size_t t,
			  uint32_t k, uint64_t hostid, struct hpc_thread_id *id)
{
	const struct bpfprof_thread *th = &p->threads[t];

	memset(id, 0, sizeof(*id));
	id->comm = th->comm;
	if (from_host) {
		const struct bpfprof_thread_identity *ti = &p->thread_ids[t];

		id->node = ti->node;
		id->host_id = ti->host_id;
		id->host = ti->host;
		id->rank = ti->rank < 0 ? -1 : ti->rank;
		id->thread = ti->thread;
		id->pid = ti->host_pid;
		id->tid = ti->host_tid;
		return;
	}
	id->host_id = hostid;
	id->host = p->run ? p->run->hostname : NULL;
	id->rank = -1;
	id->thread = k;
	id->pid = th->pid;
	id->tid = th->tid;
}

struct proc_rank {
	int32_t rank;
	uint32_t proc;
};

static int cmp_proc_rank(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* Rank of each process (from its first thread), -1 for none and for all
 * but the first process claiming a rank; returns the highest rank kept. */
static int32_t process_ranks(const struct bpfprof_profile *p, const struct hpc_thread_id *ids,
			     int32_t *rank, struct proc_rank *tmp)
{
	size_t n = p->nr_processes, k = 0;
	int32_t max = -1;

	for (size_t i = 0; i < n; i++) {
		const struct bpfprof_process *pr = &p->processes[i];

		rank[i] = pr->nr_threads && pr->first_thread < p->nr_threads ?
				  ids[pr->first_thread].rank : -1;
		if (rank[i] >= 0)
			tmp[k++] = (struct proc_rank){ rank[i], i };
	}
	qsort(tmp, k, sizeof(*tmp), cmp_proc_rank);
	for (size_t j = 0; j < k; j++) {
		if (j && tmp[j].rank == tmp[j - 1].rank)
			rank[tmp[j].proc] = -1;		/* taken */
		else if (tmp[j].rank > max)
			max = tmp[j].rank;
	}
	return max;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Does some node hold more than one process? 1, 0 or -ENOMEM. */
static int shared_node(const struct bpfprof_profile *p, const struct hpc_thread_id *ids)
{
	uint32_t *node = calloc(p->nr_processes ? p->nr_processes : 1, sizeof(*node));
	size_t n = 0;
	int shared = 0;

	if (!node)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_processes; i++) {
		const struct bpfprof_process *pr = &p->processes[i];

		if (pr->nr_threads && pr->first_thread < p->nr_threads)
			node[n++] = ids[pr->first_thread].node;
	}
	qsort(node, n, sizeof(*node), cmp_u32);
	for (size_t i = 1; i < n && !shared; i++)
		shared = node[i] == node[i - 1];
	free(node);
	return shared;
}

/* Settle the ranks: none at all, or one per process, unique. */
static int settle_ranks(const struct bpfprof_profile *p, struct hpc_thread_id *ids)
{
	size_t n = p->nr_processes;
	int32_t *rank = calloc(n ? n : 1, sizeof(*rank)), max, next;
	struct proc_rank *tmp = calloc(n ? n : 1, sizeof(*tmp));
	int err = 0, any = 0, shared;

	if (!rank || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	max = process_ranks(p, ids, rank, tmp);
	for (size_t i = 0; i < n; i++)
		any |= rank[i] >= 0;
	shared = any ? 1 : shared_node(p, ids);
	if (shared < 0) {
		err = shared;
		goto out;
	}
	next = max + 1;
	for (size_t i = 0; i < n; i++) {
		const struct bpfprof_process *pr = &p->processes[i];
		int32_t r = !shared ? -1 : rank[i] >= 0 ? rank[i] : next++;

		for (uint32_t k = 0; k < pr->nr_threads && pr->first_thread + k < p->nr_threads; k++)
			ids[pr->first_thread + k].rank = r;
	}
out:
	free(rank);
	free(tmp);
	return err;
}

int hpc_thread_ids(const struct bpfprof_profile *p, struct hpc_thread_id *ids)
{
	int from_host = has_thread_ids(p);
	uint64_t hostid = (uint32_t)gethostid();

	for (size_t i = 0; i < p->nr_processes; i++) {
		const struct bpfprof_process *pr = &p->processes[i];

		for (uint32_t k = 0; k < pr->nr_threads; k++) {
			size_t t = (size_t)pr->first_thread + k;

			if (t >= p->nr_threads)
				break;
			base_identity(p, from_host, t, k, hostid, &ids[t]);
		}
	}
	return settle_ranks(p, ids);
}
