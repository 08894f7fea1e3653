// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_samples.c - the Samples of the profile: one per bpfprof count
 * (thread, user stack, kernel stack).  Its locations are the kernel frames
 * (leaf first) then the user frames, its values [samples, samples *
 * period ns], its labels pid and tid (numeric: the ids on the thread's
 * node, which a merge keeps where it renumbered ids that collided across
 * nodes), comm (process name) and
 * thread (thread name), and from the thread's identity (thread_ids) node
 * (host name) and, when its process has one, rank (numeric, with the
 * unit "rank": go tool pprof drops a numeric label that is 0 and has no
 * unit, and rank 0 must stay).
 *
 * Samples are written grouped by user stack, then kernel stack, threads
 * in order within (the host's order is by thread; pprof does not care).
 * Each stack is resolved to location ids once, not once per count, and
 * kept encoded (the body of a packed varint field):
 *
 *  - a kernel stack once for the whole profile (kernel locations belong
 *    to no process);
 *  - a user stack once per variant: the scopes of its frames (pprof.h)
 *    decide its locations, so processes that map the same files at the
 *    same places (forked workers) share one variant, others get their
 *    own.  A process finds its variant through a memo per process, else
 *    through one per space (pprof.h) when the variant is all in shared
 *    scopes, else by computing its frames' scopes; the variants are
 *    dropped when the next user stack's group begins.
 *
 * The encoded labels are kept per thread.  Identical id lists thus follow
 * each other in the output, where deflate finds them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/plugin.h"
#include "pprof.h"

#define NO_STACK UINT32_MAX
#define NR_KEYS 6
#define ANY_PROCESS SIZE_MAX

/* An encoded list of location ids in an arena, once it is known. */
struct span {
	size_t off;
	uint32_t len;
	uint32_t known;
};

/* One resolution of the user stack of the current group. */
struct variant {
	size_t scopes;			/* its frames' scopes: offset into scopes[] */
	struct span ids;		/* in variant_ids */
	size_t owner;			/* the process it is valid for, or ANY_PROCESS */
	int whole_space;		/* valid for every process of the space */
};

/* Per process or space: its variant of the user stack of the current group. */
struct memo {
	uint32_t user_stack;
	uint32_t variant;
};

struct sample_writer {
	const struct bpfprof_host *host;
	const struct bpfprof_profile *prof;
	struct pprof_tables *tables;
	int64_t period;

	uint32_t *order;		/* count indexes in output order */
	uint32_t *ids;			/* of the stack being encoded */
	size_t cap_ids;

	struct buf kernel_ids;	/* arena of kernel_spans */
	struct span *kernel_spans;	/* by stack index */

	/* the user stack of the current group and its variants */
	uint32_t user_stack;
	struct variant *variants;
	size_t nr_variants, cap_variants;
	uint32_t *scopes;		/* arena of the variants' scopes */
	size_t nr_scopes, cap_scopes;
	struct buf variant_ids;	/* arena of the variants' ids */
	struct memo *proc_memo;		/* by process index (nr_processes: none) */
	struct memo *space_memo;	/* by space */

	struct buf labels;		/* arena of label_spans */
	struct span *label_spans;	/* by thread index */
	int64_t label_keys[NR_KEYS];	/* "pid", "tid", "comm", "thread", "node", "rank" */
	int64_t rank_unit;		/* "rank" */
};

/* Process index of a thread; nr_processes if it has none. */
static size_t process_of(const struct bpfprof_profile *prof, uint32_t thread)
{
	uint32_t p = prof->threads[thread].process;

	return p < prof->nr_processes ? p : prof->nr_processes;
}

/* --- the order of the samples ------------------------------------------- */

/* Stable counting sort of order[] (indexes of counts) by their kernel
 * (@user 0) or user stack, through @tmp. */
static int sort_by_stack(struct sample_writer *s, uint32_t *tmp, int user)
{
	const struct bpfprof_profile *prof = s->prof;
	const struct bpfprof_count *c = prof->counts;
	size_t *start = calloc(prof->nr_stacks + 1, sizeof(*start));

	if (!start)
		return -ENOMEM;
	for (size_t i = 0; i < prof->nr_counts; i++)
		start[(user ? c[i].user_stack : c[i].kernel_stack) + 1]++;
	for (size_t k = 1; k <= prof->nr_stacks; k++)
		start[k] += start[k - 1];
	for (size_t i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *x = &c[s->order[i]];

		tmp[start[user ? x->user_stack : x->kernel_stack]++] = s->order[i];
	}
	memcpy(s->order, tmp, prof->nr_counts * sizeof(*s->order));
	free(start);
	return 0;
}

/* Check every count, then sort their indexes into order[] (see the file
 * comment): counting sorts, by the less significant key first. */
static int order_counts(struct sample_writer *s)
{
	const struct bpfprof_profile *prof = s->prof;
	uint32_t *tmp;
	int err;

	for (size_t i = 0; i < prof->nr_counts; i++) {
		const struct bpfprof_count *c = &prof->counts[i];

		if (c->thread >= prof->nr_threads || c->user_stack >= prof->nr_stacks ||
		    c->kernel_stack >= prof->nr_stacks) {
			s->host->error(s->host,
				       "pprof: count %zu refers to a missing thread or stack", i);
			return -EINVAL;
		}
	}
	if (prof->nr_counts >= UINT32_MAX || prof->nr_stacks >= UINT32_MAX)
		return -ENOMEM;
	tmp = malloc(prof->nr_counts * sizeof(*tmp) + 1);
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < prof->nr_counts; i++)
		s->order[i] = (uint32_t)i;
	err = sort_by_stack(s, tmp, 0);
	if (!err)
		err = sort_by_stack(s, tmp, 1);
	free(tmp);
	return err;
}

/* --- location id lists ------------------------------------------------------ */

/*
 * Append the location ids of @st (leaf first) in @scopes (NULL: the
 * kernel's) to @b as varints; *own is set if one of them is the current
 * process's alone.  0 or -ENOMEM.
 */
static int encode_stack(struct sample_writer *s, struct buf *b, const struct bpfprof_stack *st,
			const uint32_t *scopes, int *own)
{
	if (grow_array(&s->ids, &s->cap_ids, st->nr, sizeof(*s->ids)) ||
	    pprof_stack_locations(s->tables, st->ips, scopes, st->nr, s->ids, own))
		return -ENOMEM;
	for (uint32_t i = 0; i < st->nr; i++)
		pb_varint(b, s->ids[i]);
	return b->err ? -ENOMEM : 0;
}

/* The encoded ids of kernel stack @index, resolved on first use. */
static int kernel_ids(struct sample_writer *s, uint32_t index, struct pprof_sample *out)
{
	struct span *sp = &s->kernel_spans[index];

	if (!sp->known) {
		size_t off = s->kernel_ids.len;
		int own, err = encode_stack(s, &s->kernel_ids, &s->prof->stacks[index], NULL, &own);

		if (err)
			return err;
		*sp = (struct span){ .off = off, .len = (uint32_t)(s->kernel_ids.len - off),
				     .known = 1 };
	}
	out->kernel_ids = s->kernel_ids.data + sp->off;
	out->kernel_len = sp->len;
	return 0;
}

/* Start the group of user stack @index: no variants yet. */
static void start_user_stack(struct sample_writer *s, uint32_t index)
{
	s->user_stack = index;
	s->nr_variants = 0;
	s->nr_scopes = 0;
	buf_reset(&s->variant_ids);
}

/* Append the scopes of the frames of @st in the current process to
 * scopes[] (not yet owned by a variant); 0 or -ENOMEM. */
static int frame_scopes(struct sample_writer *s, const struct bpfprof_stack *st)
{
	if (grow_array(&s->scopes, &s->cap_scopes, s->nr_scopes + st->nr, sizeof(*s->scopes)))
		return -ENOMEM;
	for (uint32_t i = 0; i < st->nr; i++)
		s->scopes[s->nr_scopes + i] = pprof_user_scope(s->tables, st->ips[i]);
	return 0;
}

/* A variant for process @p with the scopes just computed, or -1; only
 * its own if @own_only. */
static ptrdiff_t find_variant(const struct sample_writer *s, size_t p, uint32_t nr, int own_only)
{
	const uint32_t *mine = &s->scopes[s->nr_scopes];

	for (size_t v = 0; v < s->nr_variants; v++) {
		const struct variant *x = &s->variants[v];

		if ((x->owner == p || (x->owner == ANY_PROCESS && !own_only)) &&
		    (!nr || !memcmp(&s->scopes[x->scopes], mine, nr * sizeof(*mine))))
			return (ptrdiff_t)v;
	}
	return -1;
}

/* Add a variant with the scopes just computed: resolve its frames. */
static ptrdiff_t new_variant(struct sample_writer *s, size_t p)
{
	const struct bpfprof_stack *st = &s->prof->stacks[s->user_stack];
	const uint32_t *scopes = &s->scopes[s->nr_scopes];
	size_t off = s->variant_ids.len;
	struct variant *x;
	int own, local = 0;

	if (grow_array(&s->variants, &s->cap_variants, s->nr_variants + 1, sizeof(*s->variants)) ||
	    encode_stack(s, &s->variant_ids, st, scopes, &own))
		return -ENOMEM;
	for (uint32_t i = 0; i < st->nr; i++)
		local |= pprof_process_scope(scopes[i]);
	x = &s->variants[s->nr_variants];
	*x = (struct variant){
		.scopes = s->nr_scopes, .owner = own ? p : ANY_PROCESS,
		.whole_space = !own && !local,
		.ids = { .off = off, .len = (uint32_t)(s->variant_ids.len - off), .known = 1 },
	};
	s->nr_scopes += st->nr;
	return (ptrdiff_t)s->nr_variants++;
}

/* The variant of the current user stack for process @p, resolved if new;
 * its index or -ENOMEM. */
static ptrdiff_t user_variant(struct sample_writer *s, size_t p)
{
	int64_t space = pprof_tables_set_process(s->tables, p);
	int own_only = pprof_tables_has_own(s->tables, p);
	struct memo *sm;
	ptrdiff_t v;

	if (space < 0)
		return -ENOMEM;
	sm = &s->space_memo[space];
	if (sm->user_stack == s->user_stack && !own_only)
		return sm->variant;
	if (frame_scopes(s, &s->prof->stacks[s->user_stack]))
		return -ENOMEM;
	v = find_variant(s, p, s->prof->stacks[s->user_stack].nr, own_only);
	if (v < 0)
		v = new_variant(s, p);
	if (v >= 0 && s->variants[v].whole_space)
		*sm = (struct memo){ .user_stack = s->user_stack, .variant = (uint32_t)v };
	return v;
}

/* The encoded ids of user stack @index for process @p. */
static int user_ids(struct sample_writer *s, uint32_t index, size_t p, struct pprof_sample *out)
{
	struct memo *pm = &s->proc_memo[p];
	const struct variant *x;

	if (index != s->user_stack)
		start_user_stack(s, index);
	if (pm->user_stack != index) {
		ptrdiff_t v = user_variant(s, p);

		if (v < 0)
			return (int)v;
		*pm = (struct memo){ .user_stack = index, .variant = (uint32_t)v };
	}
	x = &s->variants[pm->variant];
	out->user_ids = s->variant_ids.data + x->ids.off;
	out->user_len = x->ids.len;
	return 0;
}

static int init_samples(struct sample_writer *s)
{
	static const char *const keys[NR_KEYS] = { "pid", "tid", "comm", "thread", "node", "rank" };
	const struct bpfprof_profile *prof = s->prof;
	size_t nr_procs = prof->nr_processes + 1;

	s->user_stack = NO_STACK;
	s->order = malloc(prof->nr_counts * sizeof(*s->order) + 1);
	s->kernel_spans = calloc(prof->nr_stacks + 1, sizeof(*s->kernel_spans));
	s->proc_memo = malloc(nr_procs * sizeof(*s->proc_memo));
	s->space_memo = malloc(nr_procs * sizeof(*s->space_memo));
	s->label_spans = calloc(prof->nr_threads + 1, sizeof(*s->label_spans));
	/* arenas with memory, so that pointers into them are never NULL */
	if (!s->order || !s->kernel_spans || !s->proc_memo || !s->space_memo || !s->label_spans ||
	    buf_make_room(&s->kernel_ids, 4096) || buf_make_room(&s->variant_ids, 4096) ||
	    buf_make_room(&s->labels, 4096) ||
	    grow_array(&s->scopes, &s->cap_scopes, 64, sizeof(*s->scopes)))
		return -ENOMEM;
	for (size_t p = 0; p < nr_procs; p++)
		s->proc_memo[p].user_stack = s->space_memo[p].user_stack = NO_STACK;
	for (size_t i = 0; i < NR_KEYS; i++)
		if ((s->label_keys[i] = pprof_string(s->tables, keys[i])) < 0)
			return -ENOMEM;
	s->rank_unit = s->label_keys[5];
	return 0;
}

/* --- labels and samples ---------------------------------------------------- */

/* The labels of thread @index's identity: node, and rank if known. */
static int identity_labels(struct sample_writer *s, uint32_t index)
{
	const struct bpfprof_thread_identity *id = &s->prof->thread_ids[index];
	const int64_t *k = s->label_keys;
	int64_t node = pprof_string(s->tables, id->host ? id->host : "");

	if (node < 0)
		return -ENOMEM;
	write_sample_label(&s->labels, &(struct pprof_label){ .key = k[4], .str = node });
	if (id->rank >= 0)
		write_sample_label(&s->labels, &(struct pprof_label){ .key = k[5], .num = id->rank,
								      .num_unit = s->rank_unit });
	return 0;
}

/* The encoded labels of thread @index, made on first use. */
static int thread_labels(struct sample_writer *s, uint32_t index, struct pprof_sample *out)
{
	const struct bpfprof_thread *t = &s->prof->threads[index];
	size_t p = process_of(s->prof, index);
	struct span *sp = &s->label_spans[index];

	if (!sp->known) {
		size_t off = s->labels.len;
		const int64_t *k = s->label_keys;
		int64_t comm = pprof_string(s->tables, p < s->prof->nr_processes ?
					    s->prof->processes[p].comm : "");
		int64_t tcomm = pprof_string(s->tables, t->comm);

		if (comm < 0 || tcomm < 0)
			return -ENOMEM;
		/* the ids on the thread's node: a merge renumbers ids that collide */
		const struct bpfprof_thread_identity *id =
			s->prof->thread_ids ? &s->prof->thread_ids[index] : NULL;

		write_sample_label(&s->labels, &(struct pprof_label){
			.key = k[0], .num = id && id->host_pid ? id->host_pid : t->pid });
		write_sample_label(&s->labels, &(struct pprof_label){
			.key = k[1], .num = id && id->host_tid ? id->host_tid : t->tid });
		write_sample_label(&s->labels, &(struct pprof_label){ .key = k[2], .str = comm });
		write_sample_label(&s->labels, &(struct pprof_label){ .key = k[3], .str = tcomm });
		if (s->prof->thread_ids && identity_labels(s, index))
			return -ENOMEM;
		if (s->labels.err)
			return -ENOMEM;
		*sp = (struct span){ .off = off, .len = (uint32_t)(s->labels.len - off),
				     .known = 1 };
	}
	out->labels = s->labels.data + sp->off;
	out->labels_len = sp->len;
	return 0;
}

/* The Sample of @c. */
static int write_sample(struct sample_writer *s, const struct bpfprof_count *c,
			struct pprof_gz *gz)
{
	struct pprof_sample out = {
		.values = { (int64_t)c->samples, (int64_t)c->samples * s->period },
	};
	int err = kernel_ids(s, c->kernel_stack, &out);

	if (!err)
		err = user_ids(s, c->user_stack, process_of(s->prof, c->thread), &out);
	if (!err)
		err = thread_labels(s, c->thread, &out);
	if (err)
		return err;
	write_profile_sample(pprof_gz_buf(gz), &out);
	err = pprof_gz_flush(gz);
	return err ? err : pprof_write_locations(s->tables, 0);
}

static void free_samples(struct sample_writer *s)
{
	free(s->order);
	free(s->ids);
	buf_free(&s->kernel_ids);
	free(s->kernel_spans);
	free(s->variants);
	free(s->scopes);
	buf_free(&s->variant_ids);
	free(s->proc_memo);
	free(s->space_memo);
	buf_free(&s->labels);
	free(s->label_spans);
}

int pprof_write_samples(const struct bpfprof_host *host, const struct bpfprof_profile *prof,
			struct pprof_tables *t, struct pprof_gz *gz)
{
	struct sample_writer s = {
		.host = host, .prof = prof, .tables = t,
		.period = prof->run ? (int64_t)prof->run->sample_period : 0,
	};
	int err = init_samples(&s);

	if (!err)
		err = order_counts(&s);
	for (size_t i = 0; !err && i < prof->nr_counts; i++)
		err = write_sample(&s, &prof->counts[s.order[i]], gz);
	if (err == -ENOMEM)
		host->error(host, "pprof: out of memory");
	free_samples(&s);
	return err;
}
