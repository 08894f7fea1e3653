// SPDX-License-Identifier: BSD-2-Clause
/*
 * gperftools.c - the "gperftools" output plugin: the legacy gperftools CPU
 * profile (the default output, bpfprof.prof), read by google-pprof (perl)
 * and `go tool pprof`.  Format: gperftools' "CPU Profiler Binary Data File
 * Format" (docs/cpuprofile-fileformat; here /work/shared/specs/).
 * One file holds one process (BPFPROF_PLUGIN_PER_PROCESS); it is made of
 * the binary header, the profile records, the binary trailer and the text
 * list of mapped objects, each written by the function named after its
 * spec section.
 *
 * What a record holds.  The call chain of a record is the user stack only,
 * leaf first.  Kernel frames are left out: the format has no way to mark
 * them and pprof can only resolve addresses through the mapped objects
 * listed at the end, which never include the kernel.  Samples whose user
 * stack is empty (kernel threads, or a user stack that could not be read)
 * have nothing pprof could show; they are left out and counted in one
 * warning, and so are the rare ones with a leaf pc of 0, which would read
 * as the end of the records.  Counts of all threads with the same chain are summed into one
 * record, and records are written in a fixed order (most samples first,
 * ties by chain), so the same profile always gives the same bytes.
 *
 * pprof's "signal frame" heuristics.  Both readers assume the records come
 * from gperftools' signal handler and throw away frames at position 1
 * (the slot after the leaf) when it looks like an artifact of the handler:
 *   - google-pprof (RemoveUninterestingFrames) removes position 1 again and
 *     again for as long as every distinct stack has the same address there;
 *   - go tool pprof (cpuProfile) removes position 1, at most twice, when at
 *     least n - n/32 of the n records share the address there; then
 *     (cleanupDuplicateLocations) it drops position 1 of any record whose
 *     leaf equals position 1 + 1, i.e. a leaf written twice.
 * Written plainly, a profile with one hot call path (all stacks
 * leaf <- f <- main <- ...) has f's return address at position 1 of every
 * record: google-pprof strips f, main and everything above, go tool pprof
 * the two callers above the leaf.  The records are therefore written plainly only as long as
 * no address is at position 1 of n - n/32 or more of them (which also
 * keeps google-pprof's "all of them" from holding).  Otherwise
 * guard_second_frame() writes just enough records, the smallest first,
 * as [leaf, leaf, f, main, ...], the shape go tool pprof's duplicate rule
 * was made for (a handler that got the leaf both from the signal context
 * and from the unwinder): their position 1 is now their leaf address.  go tool pprof removes the copy again by its
 * duplicate rule; google-pprof keeps it, which only shows in its
 * call-graph outputs (--collapsed, --callgrind, graphs: leaf;leaf) for
 * those few records; --text counts a function once per stack.  A lone
 * record is split into a plain record and a leaf-twice record of count 1.
 * Leaves at the first byte of a function (asked through host->symbolize)
 * are taken last, because google-pprof would resolve their copy, leaf - 1,
 * to the function before.  A profile of one single sample cannot be
 * protected: google-pprof keeps only its leaf.
 *
 * Interpreted frames (Python functions, plugin.h's
 * BPFPROF_INTERP_FRAME_START .. END) lie in no mapping; pprof names an
 * address only from the objects listed.  A process with such frames gets
 * the image of its interpreted functions written beside the output
 * (OUTPUT.python.so, common/interp_image.h) and one more line in the
 * list, mapping the whole range to it at offset 0: google-pprof reads its
 * symbols with nm like any library's.  The image is a companion file of
 * the output (host->companion()): the host publishes both or neither.  google-pprof skips every address
 * above 0x7fffffffffffffff in its reports ("fake entries on RH9"), so the
 * range is written moved to GPERF_INTERP_BASE, below that and still far
 * above any process's addresses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "bpfprof/plugin.h"
#include "common/interp_image.h"
#include "common/plugin_ctx.h"

/* Where interpreted frames are written (see the file comment). */
#define GPERF_INTERP_BASE 0x7000000000000000ull

/* One distinct user call chain and the samples it got. */
struct chain {
	const uint64_t *ips;		/* leaf first, owned by the host */
	uint32_t nr;
	uint64_t samples;
	UT_hash_handle hh;		/* keyed by the nr ips */
};

/* One record as it goes into the file. */
struct record {
	const uint64_t *ips;
	uint32_t nr;
	uint64_t count;
	int leaf_twice;			/* written as [ips[0], ips[0], ips[1], ...] */
};

/* Number of records having one address at position 1. */
struct second_pc {
	uint64_t pc;
	size_t records;
	UT_hash_handle hh;
};

/* Reports a failed write of the output, errno telling why. */
static int write_failed(struct plugin_ctx *st)
{
	int err = errno ? errno : EIO;

	st->host->error(st->host, "gperftools: cannot write %s: %s", st->out->path, strerror(err));
	return -err;
}

static int write_slots(struct plugin_ctx *st, const uint64_t *slots, size_t n)
{
	errno = 0;
	if (fwrite(slots, sizeof(*slots), n, st->out->file) != n)
		return write_failed(st);
	return 0;
}

/* Spec "Binary Header": 0, 3, version 0, sampling period (us), padding 0. */
static int write_binary_header(struct plugin_ctx *st)
{
	/* Rounded to whole microseconds, at least 1: pprof multiplies counts
	 * by it, and a period of 0 would make every CPU time 0. */
	uint64_t period_us = (st->run->sample_period + 500) / 1000;
	uint64_t hdr[5] = { 0, 3, 0, period_us ? period_us : 1, 0 };

	return write_slots(st, hdr, 5);
}

/* The pc @ip is written as (interpreted frames moved, see above). */
static uint64_t file_pc(uint64_t ip)
{
	return interp_image_frame(ip) ? ip - BPFPROF_INTERP_FRAME_START + GPERF_INTERP_BASE : ip;
}

/* The @n pcs at @ips, as file_pc() writes them. */
static int write_pcs(struct plugin_ctx *st, const uint64_t *ips, size_t n)
{
	uint64_t chunk[256];
	int err = 0;

	for (size_t i = 0; i < n && !err; i += 256) {
		size_t k = n - i < 256 ? n - i : 256;

		for (size_t j = 0; j < k; j++)
			chunk[j] = file_pc(ips[i + j]);
		err = write_slots(st, chunk, k);
	}
	return err;
}

/* Spec "Binary Profile Records": count, number of pcs, pcs leaf first. */
static int write_profile_records(struct plugin_ctx *st, const struct record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct record *r = &recs[i];
		uint64_t head[3] = { r->count, r->nr + (r->leaf_twice ? 1 : 0), file_pc(r->ips[0]) };
		int err = write_slots(st, head, r->leaf_twice ? 3 : 2);

		if (!err)
			err = write_pcs(st, r->ips, r->nr);
		if (err)
			return err;
	}
	return 0;
}

/* Spec "Binary Trailer": a record of count 0 with the one pc 0. */
static int write_binary_trailer(struct plugin_ctx *st)
{
	static const uint64_t trailer[3] = { 0, 1, 0 };

	return write_slots(st, trailer, 3);
}

/* The path as /proc/PID/maps shows it: a newline would end the line. */
static int write_map_path(FILE *f, const char *path)
{
	for (const char *p = path; *p; p++) {
		if ((*p == '\n' ? fputs("\\012", f) : fputc(*p, f)) == EOF)
			return -1;
	}
	return 0;
}

/*
 * Spec "Text List of Mapped Objects": one /proc/PID/maps line per mapping,
 * in the kernel's layout: a path is padded to column 73, then one space.
 */
static int write_mapped_objects(struct plugin_ctx *st, const struct bpfprof_process *proc,
				const char *image)
{
	FILE *f = st->out->file;

	errno = 0;
	if (image && (fprintf(f, "%016llx-%016llx r-xp 00000000 00:00 0%*s", GPERF_INTERP_BASE,
			      GPERF_INTERP_BASE + (BPFPROF_INTERP_FRAME_END -
						   BPFPROF_INTERP_FRAME_START),
			      31, "") < 0 ||
		      write_map_path(f, image) || fputc('\n', f) == EOF))
		return write_failed(st);
	for (size_t i = 0; proc && i < proc->nr_mappings; i++) {
		const struct bpfprof_mapping *m = &proc->mappings[i];
		errno = 0;
		int len = fprintf(f, "%08" PRIx64 "-%08" PRIx64 " %c%c%c%c %08" PRIx64
				  " %02x:%02x %" PRIu64 " ",
				  m->start, m->end,
				  m->prot & BPFPROF_PROT_READ ? 'r' : '-',
				  m->prot & BPFPROF_PROT_WRITE ? 'w' : '-',
				  m->prot & BPFPROF_PROT_EXEC ? 'x' : '-',
				  m->shared ? 's' : 'p',
				  m->pgoff, m->dev_major, m->dev_minor, m->inode);
		int ok = len > 0;

		if (ok && m->path && m->path[0])
			ok = fprintf(f, "%*s ", len < 72 ? 72 - len : 0, "") >= 0 &&
			     write_map_path(f, m->path) == 0;
		if (ok)
			ok = fputc('\n', f) != EOF;
		if (!ok)
			return write_failed(st);
	}
	return 0;
}

static int compare_records(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	for (uint32_t i = 0; i < x->nr && i < y->nr; i++) {
		if (x->ips[i] != y->ips[i])
			return x->ips[i] < y->ips[i] ? -1 : 1;
	}
	return (x->nr > y->nr) - (x->nr < y->nr);
}

static void free_chains(struct chain **chains)
{
	struct chain *c, *tmp;

	HASH_ITER(hh, *chains, c, tmp) {
		HASH_DEL(*chains, c);
		free(c);
	}
}

/*
 * Sum the samples of each distinct user chain into a sorted array of
 * records (*recs, *nr; room is left for one more, see guard_second_frame).
 */
static int collect_records(struct plugin_ctx *st, const struct bpfprof_profile *prof,
			   struct record **recs, size_t *nr, uint64_t *no_user_stack)
{
	struct chain *chains = NULL, *c, *tmp;
	int err = 0;

	*no_user_stack = 0;
	for (size_t i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *cnt = &prof->counts[i];
		const struct bpfprof_stack *s;

		if (cnt->user_stack >= prof->nr_stacks) {
			st->host->error(st->host, "gperftools: count %zu names stack %" PRIu32
					" of %zu", i, cnt->user_stack, prof->nr_stacks);
			err = -EINVAL;
			goto out;
		}
		s = &prof->stacks[cnt->user_stack];
		/* A leaf pc of 0 would read as the trailer to google-pprof. */
		if (s->nr == 0 || s->ips[0] == 0) {
			*no_user_stack += cnt->samples;
			continue;
		}
		HASH_FIND(hh, chains, s->ips, s->nr * sizeof(*s->ips), c);
		if (!c) {
			c = calloc(1, sizeof(*c));
			if (!c) {
				st->host->error(st->host, "gperftools: out of memory");
				err = -ENOMEM;
				goto out;
			}
			c->ips = s->ips;
			c->nr = s->nr;
			HASH_ADD_KEYPTR(hh, chains, c->ips, c->nr * sizeof(*c->ips), c);
		}
		c->samples += cnt->samples;
	}

	*nr = HASH_COUNT(chains);
	*recs = calloc(*nr + 1, sizeof(**recs));
	if (!*recs) {
		st->host->error(st->host, "gperftools: out of memory");
		err = -ENOMEM;
		goto out;
	}
	size_t i = 0;
	HASH_ITER(hh, chains, c, tmp) {
		(*recs)[i++] = (struct record){ .ips = c->ips, .nr = c->nr, .count = c->samples };
	}
	qsort(*recs, *nr, sizeof(**recs), compare_records);
out:
	free_chains(&chains);
	return err;
}

/* True if @ip is the first byte of a function the host can name. */
static int is_function_entry(struct plugin_ctx *st, uint32_t pid, uint64_t ip)
{
	struct bpfprof_symbol sym = { 0 };

	if (!st->host->symbolize || st->host->symbolize(st->host, pid, ip, 0, &sym))
		return 0;
	return sym.function && sym.module_offset == sym.function_start;
}

/* The address at position 1 of @r as written; 0 if it has none. */
static int record_second_pc(const struct record *r, uint64_t *pc)
{
	if (r->leaf_twice)
		*pc = r->ips[0];
	else if (r->nr >= 2)
		*pc = r->ips[1];
	else
		return 0;
	return 1;
}

/*
 * The address most records have at position 1 and how many have it (0 if
 * no record has a position 1).  Ties go to the lowest address.
 */
static int most_common_second_pc(const struct record *recs, size_t n,
				 uint64_t *pc, size_t *records)
{
	struct second_pc *table = NULL, *e, *tmp;
	int err = 0;

	*records = 0;
	*pc = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t v;

		if (!record_second_pc(&recs[i], &v))
			continue;
		HASH_FIND(hh, table, &v, sizeof(v), e);
		if (!e) {
			e = calloc(1, sizeof(*e));
			if (!e) {
				err = -ENOMEM;
				break;
			}
			e->pc = v;
			HASH_ADD(hh, table, pc, sizeof(e->pc), e);
		}
		e->records++;
	}
	HASH_ITER(hh, table, e, tmp) {
		if (e->records > *records || (e->records == *records && e->pc < *pc)) {
			*records = e->records;
			*pc = e->pc;
		}
		HASH_DEL(table, e);
		free(e);
	}
	return err;
}

/*
 * Write up to @need of the records that have @pc at position 1 with their
 * leaf twice, the smallest first; a record qualifies if it has a caller and
 * its leaf is not @pc.  Leaves at a function's first byte are taken only
 * when there are not enough others.  Returns how many were changed.
 */
static size_t write_leaf_twice(struct plugin_ctx *st, uint32_t pid, struct record *recs,
			       size_t n, uint64_t pc, size_t need)
{
	size_t done = 0;

	for (int entries = 0; entries < 2 && done < need; entries++) {
		for (size_t i = n; i-- > 0 && done < need;) {
			struct record *r = &recs[i];

			if (r->leaf_twice || r->nr < 2 || r->ips[1] != pc || r->ips[0] == pc)
				continue;
			if (!entries && is_function_entry(st, pid, r->ips[0]))
				continue;
			r->leaf_twice = 1;
			done++;
		}
	}
	return done;
}

/*
 * Keep both readers from stripping position 1 (see the file comment): no
 * address may be at position 1 of n - n/32 or more of the n records.
 * recs has room for one more record (for splitting a lone record).
 * Changing records cannot make another address that common (all others
 * are at position 1 of at most n/32 records), so this loop normally runs
 * once.
 */
static int guard_second_frame(struct plugin_ctx *st, uint32_t pid, struct record *recs,
			      size_t *n)
{
	for (;;) {
		uint64_t pc;
		size_t shared, limit = *n - *n / 32;
		int err = most_common_second_pc(recs, *n, &pc, &shared);

		if (err) {
			st->host->error(st->host, "gperftools: out of memory");
			return err;
		}
		if (shared == 0 || shared < limit)
			return 0;
		if (*n == 1) {
			if (recs[0].leaf_twice || recs[0].count < 2 || recs[0].ips[0] == pc)
				return 0;	/* one sample: cannot be protected */
			recs[1] = recs[0];
			recs[1].count = 1;
			recs[1].leaf_twice = 1;
			recs[0].count--;
			*n = 2;
			continue;
		}
		if (!write_leaf_twice(st, pid, recs, *n, pc, shared - limit + 1))
			return 0;	/* nothing left to change */
	}
}

/*
 * The image of the interpreted functions of @recs (@n, of process @pid), a
 * companion of the output that the host publishes with it; its path in
 * *@image, NULL if there are none or the host cannot write companions (a
 * warning: the frames stay unnamed).  Failing to write it fails the output.
 */
static int write_interp_image(struct plugin_ctx *st, uint32_t pid, const struct record *recs,
			      size_t n, char **image)
{
	struct interp_image im = { 0 };
	uint8_t bid[20];
	int err = 0;

	*image = NULL;
	for (size_t i = 0; i < n && !err; i++) {
		struct bpfprof_stack u = { .ips = recs[i].ips, .nr = recs[i].nr };

		err = interp_image_add_stack(&im, st->host, pid, &u);
	}
	if (!err && im.nr)
		err = interp_image_path(st->out->path, image);
	if (!err && im.nr)
		err = interp_image_write(&im, st->host, st->out, bid);
	interp_image_free(&im);
	if (err == -ENOTSUP)
		st->host->warn(st->host, "gperftools: this bpfprof cannot write files beside the "
			       "output (no host->companion()); Python frames stay unnamed");
	else if (err == -ENOMEM)
		st->host->error(st->host, "gperftools: out of memory");
	else if (err)
		st->host->error(st->host, "gperftools: cannot write %s%s: %s", st->out->path,
				INTERP_IMAGE_SUFFIX, strerror(-err));
	if (err) {
		free(*image);
		*image = NULL;
	}
	return err == -ENOTSUP ? 0 : err;
}

static int gperf_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		      const struct bpfprof_output *out, void **state)
{
	return plugin_ctx_open("gperftools", host, run, out, state);
}

static int gperf_write(void *state, const struct bpfprof_profile *prof)
{
	struct plugin_ctx *st = state;
	const struct bpfprof_process *proc = prof->nr_processes ? &prof->processes[0] : NULL;
	struct record *recs = NULL;
	char *image = NULL;
	size_t nr = 0;
	uint64_t no_user_stack;
	int err;

	if (prof->nr_processes > 1) {
		st->host->error(st->host, "gperftools: a profile holds one process, got %zu",
				prof->nr_processes);
		return -EINVAL;
	}
	err = collect_records(st, prof, &recs, &nr, &no_user_stack);
	if (err)
		goto out;
	if (no_user_stack)
		st->host->warn(st->host, "gperftools: %" PRIu64 " samples without a user "
			       "stack (kernel threads, unreadable stacks) left out of %s",
			       no_user_stack, st->out->path);

	err = write_interp_image(st, proc ? proc->pid : 0, recs, nr, &image);
	if (!err)
		err = guard_second_frame(st, proc ? proc->pid : 0, recs, &nr);
	if (!err)
		err = write_binary_header(st);
	if (!err)
		err = write_profile_records(st, recs, nr);
	if (!err)
		err = write_binary_trailer(st);
	if (!err)
		err = write_mapped_objects(st, proc, image);
	if (!err) {
		errno = 0;
		if (fflush(st->out->file) || ferror(st->out->file))
			err = write_failed(st);
	}
out:
	free(image);
	free(recs);
	return err;
}

BPFPROF_PLUGIN("gperftools",
	.flags = BPFPROF_PLUGIN_PER_PROCESS,
	.description = "gperftools CPU profile for pprof (one file per process, user stacks)",
	.default_output = "bpfprof.prof",
	.open = gperf_open, .write = gperf_write, .close = plugin_ctx_close);
