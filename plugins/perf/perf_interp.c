// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_interp.c - interpreted frames (Python functions,
 * BPFPROF_INTERP_FRAME_START .. END of plugin.h) named for perf.
 *
 * perf names a user address from the file of the MMAP2 record that
 * covers it, so the file gets, before the first sample of a process
 * whose stack holds such frames, an MMAP2 record of the whole range
 * (offset 0) to one image beside the output, "OUTPUT.python.so"
 * (common/interp_image.c): an ELF file with one symbol per interpreted
 * function, at its address minus the range's start.  write() makes the
 * image from every stack of the profile, writes it as a companion of the
 * output (host->companion(): published with perf.data or not at all) and
 * lists it with its build-id in the header's build-id table; perf names
 * the frames from it as long as it is at that path, or from its build-id
 * cache after `perf buildid-cache --add OUTPUT.python.so`.  A host
 * without companion() gets neither the records nor the image.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_internal.h"

/* What is known of user stack @index: 0 unknown, 1 none, 2 interpreted. */
enum { STACK_UNKNOWN, STACK_NATIVE, STACK_INTERP };

int perf_interp_init(struct perf_interp *pi, const struct bpfprof_host *host,
		     const struct bpfprof_output *out)
{
	int err;

	memset(pi, 0, sizeof(*pi));
	pi->out = out;
	if (!bpfprof_host_has_companion(host))
		return 0;		/* no image: frames stay unnamed */
	err = interp_image_path(out->path, &pi->image_path);
	return err == -ENOMEM ? err : 0;	/* else no image either */
}

void perf_interp_free(struct perf_interp *pi)
{
	free(pi->image_path);
	free(pi->stacks);
	hashtab_free(&pi->announced);
	memset(pi, 0, sizeof(*pi));
}

int perf_interp_stack(struct perf_interp *pi, uint32_t index, const struct bpfprof_stack *u)
{
	uint8_t k = STACK_NATIVE;

	if (!pi->image_path || !u || !index)
		return 0;
	if (index < pi->nr_stacks && pi->stacks[index] != STACK_UNKNOWN)
		return pi->stacks[index] == STACK_INTERP;
	if (index >= pi->nr_stacks) {
		size_t n = pi->nr_stacks ? pi->nr_stacks : 1024;
		uint8_t *s;

		while (n <= index)
			n *= 2;
		s = realloc(pi->stacks, n);
		if (!s)
			return -ENOMEM;
		memset(s + pi->nr_stacks, 0, n - pi->nr_stacks);
		pi->stacks = s;
		pi->nr_stacks = n;
	}
	for (uint32_t i = 0; i < u->nr && k == STACK_NATIVE; i++)
		if (interp_image_frame(u->ips[i]))
			k = STACK_INTERP;
	pi->stacks[index] = k;
	return k == STACK_INTERP;
}

/* Values of pi->announced: the process's MMAP2 is in the file, or was
 * until an exec (perf may have dropped it with the old image). */
enum { MAP_WRITTEN = 1, MAP_STALE = 2 };

int perf_interp_need_map(struct perf_interp *pi, uint32_t pid)
{
	if (hashtab_get(&pi->announced, pid, 0) == MAP_WRITTEN)
		return 0;
	return hashtab_put(&pi->announced, pid, 0, MAP_WRITTEN) ? -ENOMEM : 1;
}

void perf_interp_forget(struct perf_interp *pi, uint32_t pid)
{
	if (hashtab_get(&pi->announced, pid, 0) == MAP_WRITTEN)
		hashtab_put(&pi->announced, pid, 0, MAP_STALE);
}

void perf_interp_mapping(const struct perf_interp *pi, struct bpfprof_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = BPFPROF_INTERP_FRAME_START;
	m->end = BPFPROF_INTERP_FRAME_END;
	m->prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC;
	m->path = pi->image_path;
}

/* Every interpreted frame of the user stacks of @prof into @im. */
static int collect_profile(struct perf_interp *pi, const struct bpfprof_host *host,
			   const struct bpfprof_profile *prof, struct interp_image *im)
{
	for (size_t i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *k = &prof->counts[i];
		const struct bpfprof_stack *u;
		int err;

		if (k->thread >= prof->nr_threads || !k->user_stack ||
		    k->user_stack >= prof->nr_stacks)
			continue;
		u = &prof->stacks[k->user_stack];
		err = perf_interp_stack(pi, k->user_stack, u);
		if (err > 0)
			err = interp_image_add_stack(im, host, prof->threads[k->thread].pid, u);
		if (err)
			return err;
	}
	return 0;
}

int perf_interp_write_image(struct perf_interp *pi, const struct bpfprof_host *host,
			    const struct bpfprof_profile *prof, uint8_t build_id[20])
{
	struct interp_image im = { 0 };
	int err;

	if (!pi->image_path || !pi->announced.n)
		return 0;
	err = collect_profile(pi, host, prof, &im);
	if (!err)
		err = interp_image_write(&im, host, pi->out, build_id);
	if (!err) {
		pi->nr_symbols = im.nr;
		if (im.conflicts)
			host->warn(host, "perf: %llu interpreted frames share an address with "
					 "another function's; perf names them after the first",
				   (unsigned long long)im.conflicts);
	}
	interp_image_free(&im);
	return err ? err : 1;
}
