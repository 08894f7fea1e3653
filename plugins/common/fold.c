// SPDX-License-Identifier: BSD-2-Clause
/*
 * common/fold.c - folding a bpfprof profile into folded stacks, the
 * steps behind fold_profile() and fold_next() (common/fold.h says what a
 * folded stack is and how it is made); part of plugins/common/.  The
 * hash tables are common/hashtab.h: names and frame sequences, keys of
 * any length, go in by (hash, n) and are compared here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fold.h"
#include "common/grow.h"

/* An interned frame sequence, root first: fold.pool[off ... off + len - 1]. */
struct fold_seq {
	size_t off;
	uint32_t len;
};

/* A distinct (pid, stack, part of a count) and the sequence it renders to. */
struct fold_memo {
	uint32_t pid, stack;
	uint32_t kernel;		/* 1: the kernel part (names get _[k]) */
	uint32_t seq;
	uint32_t group;			/* index of its (pid, kernel) */
	uint32_t next;			/* the next memo of the same stack, 0 if none */
};

/* The stack of a group rendered last (fold_render_memos()). */
struct fold_last {
	const uint64_t *ips;		/* leaf first */
	uint32_t nr;
	uint32_t memo;			/* 0: none yet */
};

/* A distinct (comm, user sequence, kernel sequence) and its samples. */
struct fold_line {
	uint32_t comm;			/* name id */
	uint32_t user, kernel;		/* seq ids; 0 is the empty sequence */
	uint64_t samples;
};

/* How a frame's name was made (struct fold_frame.how). */
enum { FOLD_FUNCTION = 0, FOLD_MODULE = 1, FOLD_UNKNOWN = 2, FOLD_KERNEL = 4 };

/* A frame being named: the host string it resolved to and how it is used. */
struct fold_frame {
	const char *s;			/* sym.function or sym.module, NULL if unknown */
	const char *module;		/* sym.module, in case sym.function is "" */
	uint64_t h;			/* fold_map_hash() of (s, how) */
	uint32_t how;			/* FOLD_FUNCTION, _MODULE or _UNKNOWN, | FOLD_KERNEL */
};

/* The hash of the @n bytes at @s (hashtab_hash() mixes it). */
static inline uint64_t fold_hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	for (; n; s++, n--)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The hash of the @n words at @w. */
static inline uint64_t fold_hash_words(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ w[i]) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	return h;
}

/* --- names ------------------------------------------------------------------ */

/*
 * Room for @n more bytes of text, and FOLD_TEXT_SLACK readable bytes after
 * them: a name can be copied in whole blocks (buf_put32()).
 */
static int fold_text_room(struct fold *f, size_t n)
{
	return grow_array(&f->text, &f->text_cap, f->text_len + n + FOLD_TEXT_SLACK, 1);
}

/* Append @s (@n bytes) to the uncommitted name at f->text + f->text_len + *len. */
static void fold_text_put(struct fold *f, size_t *len, const char *s, size_t n)
{
	char *d = f->text + f->text_len + *len;

	memcpy(d, s, n);
	for (size_t i = 0; i < n; i++) {
		if (d[i] == ';')
			d[i] = '_';
		else if (d[i] == '\n' || d[i] == '\r')
			d[i] = ' ';
	}
	*len += n;
}

/*
 * The id of the name of @len bytes written after the ';' at
 * f->text + f->text_len: an existing one, or that one, committed.
 */
static int fold_intern_name(struct fold *f, size_t len, uint32_t *id)
{
	const char *s = f->text + f->text_len + 1;
	uint64_t h = fold_hash_bytes(s, len);
	uint32_t k;
	struct hashtab_slot *slot;

	for (k = 0;; k++) {		/* past names of the same hash */
		slot = hashtab_find(&f->name_tab, hashtab_hash(h, k), h, k);
		if (slot->v == HASHTAB_NONE)
			break;
		if (f->names[slot->v].len == len && !memcmp(f->text + f->names[slot->v].off, s, len)) {
			*id = slot->v;
			return 0;
		}
	}
	if (grow_array(&f->names, &f->names_cap, f->nr_names + 1, sizeof(*f->names)) ||
	    len >= UINT32_MAX || f->nr_names >= UINT32_MAX / 2 - 1)
		return -ENOMEM;
	f->names[f->nr_names] = (struct fold_name){ .off = f->text_len + 1, .len = (uint32_t)len };
	f->text[f->text_len] = ';';
	f->text[f->text_len + 1 + len] = '\0';
	f->text_len += len + 2;
	*id = (uint32_t)f->nr_names++;
	*slot = (struct hashtab_slot){ .a = h, .b = k, .v = *id };
	return hashtab_added(&f->name_tab);
}

/* Intern the name of a frame that resolved to @s used as @how. */
static int fold_render_name(struct fold *f, const char *s, uint32_t how, uint32_t *id)
{
	const char *base = s;
	size_t len = 0, n;

	if ((how & ~FOLD_KERNEL) == FOLD_MODULE) {
		base = strrchr(s, '/');
		base = base ? base + 1 : s;
	}
	n = (how & ~FOLD_KERNEL) == FOLD_UNKNOWN ? 0 : strlen(base);
	if (fold_text_room(f, n + 16))
		return -ENOMEM;
	f->text[f->text_len] = ';';
	len = 1;
	switch (how & ~FOLD_KERNEL) {
	case FOLD_FUNCTION:
		fold_text_put(f, &len, s, n);
		break;
	case FOLD_MODULE:
		if (*base == '[') {
			fold_text_put(f, &len, base, n);
		} else {
			fold_text_put(f, &len, "[", 1);
			fold_text_put(f, &len, base, n);
			fold_text_put(f, &len, "]", 1);
		}
		break;
	default:
		fold_text_put(f, &len, "[unknown]", 9);
	}
	if (how & FOLD_KERNEL)
		fold_text_put(f, &len, "_[k]", 4);
	return fold_intern_name(f, len - 1, id);
}

/* Resolve frame @ip (the leaf of its stack if @leaf) of process @pid into @fr. */
static void fold_resolve(struct fold *f, uint32_t pid, uint64_t ip, int kernel, int leaf,
			 struct fold_frame *fr)
{
	struct bpfprof_symbol sym;
	uint32_t k = kernel ? FOLD_KERNEL : 0;
	int rc;

	memset(&sym, 0, sizeof(sym));
	rc = f->host->symbolize(f->host, pid, leaf || !ip ? ip : ip - 1, kernel, &sym);
	fr->module = sym.module;
	if (rc == 0 && sym.function)
		fr->s = sym.function, fr->how = FOLD_FUNCTION | k;
	else if (sym.module && *sym.module)
		fr->s = sym.module, fr->how = FOLD_MODULE | k;
	else
		fr->s = NULL, fr->how = FOLD_UNKNOWN | k;
	fr->h = hashtab_hash((uintptr_t)fr->s, fr->how);
	hashtab_prefetch(&f->syms, fr->h);
}

/*
 * The name of a resolved frame.  A host string seen before is not read
 * again (that would be a cache miss per frame): a function is taken as
 * is and only checked for "" (then the module counts) when new.
 */
static int fold_frame_name(struct fold *f, struct fold_frame *fr, uint32_t *id)
{
	struct hashtab_slot *slot = hashtab_find(&f->syms, fr->h, (uintptr_t)fr->s, fr->how);
	uint32_t k = fr->how & FOLD_KERNEL;

	if (slot->v == HASHTAB_NONE && fr->how == (FOLD_FUNCTION | k) && !*fr->s) {
		if (fr->module && *fr->module)
			fr->s = fr->module, fr->how = FOLD_MODULE | k;
		else
			fr->s = NULL, fr->how = FOLD_UNKNOWN | k;
		fr->h = hashtab_hash((uintptr_t)fr->s, fr->how);
		slot = hashtab_find(&f->syms, fr->h, (uintptr_t)fr->s, fr->how);
	}
	if (slot->v != HASHTAB_NONE) {
		*id = slot->v;
		return 0;
	}
	if (fold_render_name(f, fr->s, fr->how, id))
		return -ENOMEM;
	*slot = (struct hashtab_slot){ .a = (uintptr_t)fr->s, .b = fr->how, .v = *id };
	return hashtab_added(&f->syms);
}

/* The id of the name @s of @n bytes. */
static int fold_intern_text(struct fold *f, const char *s, size_t n, uint32_t *id)
{
	size_t len = 1;

	if (fold_text_room(f, n + 2))
		return -ENOMEM;
	f->text[f->text_len] = ';';
	fold_text_put(f, &len, s, n);
	return fold_intern_name(f, n, id);
}

/* The comm name of thread @t: its process's comm, else its own, else "[unknown]". */
static int fold_comm_name(struct fold *f, uint32_t t, uint32_t *id)
{
	const struct bpfprof_profile *prof = f->prof;
	const struct bpfprof_thread *th = &prof->threads[t];
	const struct bpfprof_process *proc;
	const char *comm;

	if (f->thread_comm[t] != UINT32_MAX) {
		*id = f->thread_comm[t];
		return 0;
	}
	proc = th->process < prof->nr_processes ? &prof->processes[th->process] : NULL;
	comm = proc && proc->comm && *proc->comm ? proc->comm :
	       th->comm && *th->comm ? th->comm : "[unknown]";
	if (fold_intern_text(f, comm, strlen(comm), id))
		return -ENOMEM;
	f->thread_comm[t] = *id;
	return 0;
}

/* f->mpi_rank: the name "rank N" of each thread with an MPI rank, if any has one. */
static int fold_mpi_ranks(struct fold *f)
{
	const struct bpfprof_thread_identity *ids = f->prof->thread_ids;
	size_t i, n = f->prof->nr_threads;
	char s[32];

	for (i = 0; ids && i < n && ids[i].rank < 0; i++)
		;
	if (!ids || i == n)
		return 0;
	f->mpi_rank = malloc(n * sizeof(*f->mpi_rank));
	if (!f->mpi_rank)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int len = snprintf(s, sizeof(s), "rank %d", (int)ids[i].rank);

		f->mpi_rank[i] = UINT32_MAX;
		if (ids[i].rank >= 0 && fold_intern_text(f, s, (size_t)len, &f->mpi_rank[i]))
			return -ENOMEM;
	}
	return 0;
}

/* --- sequences -------------------------------------------------------------- */

/* The id of the @n names at f->pool + f->pool_len: an existing sequence, or them. */
static int fold_intern_seq(struct fold *f, size_t n, uint32_t *id)
{
	const uint32_t *w = f->pool + f->pool_len;
	uint64_t h = fold_hash_words(w, n);
	uint32_t k;
	struct hashtab_slot *slot;

	for (k = 0;; k++) {		/* past sequences of the same hash */
		slot = hashtab_find(&f->seq_tab, hashtab_hash(h, k), h, k);
		if (slot->v == HASHTAB_NONE)
			break;
		if (f->seqs[slot->v].len == n &&
		    !memcmp(f->pool + f->seqs[slot->v].off, w, n * sizeof(*w))) {
			*id = slot->v;
			return 0;
		}
	}
	if (grow_array(&f->seqs, &f->seqs_cap, f->nr_seqs + 1, sizeof(*f->seqs)) ||
	    f->nr_seqs >= UINT32_MAX - 1)
		return -ENOMEM;
	f->seqs[f->nr_seqs] = (struct fold_seq){ .off = f->pool_len, .len = (uint32_t)n };
	f->pool_len += n;
	*id = (uint32_t)f->nr_seqs++;
	*slot = (struct hashtab_slot){ .a = h, .b = k, .v = *id };
	return hashtab_added(&f->seq_tab);
}

/*
 * Root-side frames that the stack @ips (@nr, leaf first) shares with the
 * one rendered before in its group, @last, and that are callers in both
 * (a leaf is looked up at its address, a caller at its address - 1):
 * their names are the same.
 */
static uint32_t fold_shared(const uint64_t *ips, uint32_t nr, const struct fold_last *last)
{
	uint32_t k = 0, max;

	if (!last->memo)
		return 0;
	max = (last->nr < nr ? last->nr : nr) - 1;
	while (k < max && last->ips[last->nr - 1 - k] == ips[nr - 1 - k])
		k++;
	return k;
}

/*
 * Render memo @id, stack @ips (@nr frames, leaf first), into its sequence:
 * the names of the frames it shares with @last are copied, the others
 * resolved first (so that their lookups in f->syms are prefetched), then
 * named.  @last becomes this one.
 */
static int fold_render_stack(struct fold *f, uint32_t id, const uint64_t *ips, uint32_t nr,
			     struct fold_last *last)
{
	struct fold_memo *m = &f->memo[id];
	uint32_t k = fold_shared(ips, nr, last), *p;
	struct fold_frame *fr;

	if (grow_array(&f->pool, &f->pool_cap, f->pool_len + nr, sizeof(*f->pool)) ||
	    grow_array(&f->frames, &f->frames_cap, nr, sizeof(*f->frames)))
		return -ENOMEM;
	p = f->pool + f->pool_len;
	fr = f->frames;
	if (k)
		memcpy(p, f->pool + f->seqs[f->memo[last->memo].seq].off, k * sizeof(*p));
	for (uint32_t i = k; i < nr; i++)		/* root first */
		fold_resolve(f, m->pid, ips[nr - 1 - i], m->kernel, i == nr - 1, &fr[i - k]);
	for (uint32_t i = k; i < nr; i++) {
		if (fold_frame_name(f, &fr[i - k], &p[i]))
			return -ENOMEM;
	}
	*last = (struct fold_last){ .ips = ips, .nr = nr, .memo = id };
	return fold_intern_seq(f, nr, &m->seq);
}

/*
 * Render every memo: the stacks in the order of their addresses from the
 * root (fold_sort_stacks()), each for all its memos; within a (pid,
 * kernel) group, a stack comes right after the one with the most callers
 * in common.
 */
static int fold_render_memos(struct fold *f)
{
	struct fold_stackent *a = malloc(f->nr_memo * sizeof(*a));
	struct fold_last *last = calloc(f->groups.n + 1, sizeof(*last));
	size_t n = 0;
	int err = 0;

	if (!a || !last) {
		free(a);
		free(last);
		return -ENOMEM;
	}
	for (size_t i = 1; i < f->nr_memo; i++) {
		const struct bpfprof_stack *st = &f->prof->stacks[f->memo[i].stack];

		if (f->stack_memo[f->memo[i].stack] == i)	/* once per stack */
			a[n++] = (struct fold_stackent){ .ips = st->ips, .nr = st->nr,
							 .id = f->memo[i].stack };
	}
	fold_sort_stacks(a, n, 0, 0);
	for (size_t i = 0; i < n && !err; i++) {
		for (uint32_t m = f->stack_memo[a[i].id]; m && !err; m = f->memo[m].next) {
			err = fold_render_stack(f, m, a[i].ips, a[i].nr,
						&last[f->memo[m].group]);
		}
	}
	free(a);
	free(last);
	return err;
}

/* --- counts ----------------------------------------------------------------- */

#define FOLD_BATCH 16

static inline uint64_t fold_memo_key(uint32_t pid, uint32_t index)
{
	return (uint64_t)pid << 32 | index;
}

/* *@group: the index of (@pid, @kernel), added if new. */
static int fold_group(struct fold *f, uint32_t pid, uint32_t kernel, uint32_t *group)
{
	struct hashtab_slot *slot = hashtab_find(&f->groups, hashtab_hash(pid, kernel), pid,
					       kernel);

	if (slot->v == HASHTAB_NONE) {
		*slot = (struct hashtab_slot){ .a = pid, .b = kernel, .v = (uint32_t)f->groups.n };
		*group = slot->v;
		return hashtab_added(&f->groups);
	}
	*group = slot->v;
	return 0;
}

/*
 * *@memo: the memo of stack @index of process @pid as part @kernel of a
 * count (0 if it has no frames), added if new; @h is hashtab_hash() of its key.
 */
static int fold_memo_of(struct fold *f, uint32_t pid, uint32_t index, uint32_t kernel,
			uint64_t h, uint32_t *memo)
{
	uint64_t a = fold_memo_key(pid, index);
	struct hashtab_slot *slot;

	if (!f->prof->stacks[index].nr) {
		*memo = 0;
		return 0;
	}
	slot = hashtab_find(&f->memos, h, a, kernel);
	if (slot->v != HASHTAB_NONE) {
		*memo = slot->v;
		return 0;
	}
	if (grow_array(&f->memo, &f->memo_cap, f->nr_memo + 1, sizeof(*f->memo)) ||
	    f->nr_memo >= UINT32_MAX - 1)
		return -ENOMEM;
	*memo = (uint32_t)f->nr_memo++;
	*slot = (struct hashtab_slot){ .a = a, .b = kernel, .v = *memo };
	f->memo[*memo] = (struct fold_memo){ .pid = pid, .stack = index, .kernel = kernel,
					     .next = f->stack_memo[index] };
	f->stack_memo[index] = *memo;
	if (hashtab_added(&f->memos))
		return -ENOMEM;
	return fold_group(f, pid, kernel, &f->memo[*memo].group);
}

/*
 * The memos of the @n <= FOLD_BATCH counts from @first, and their comm
 * names: the hash slots of all of them are prefetched first, so that
 * their cache misses overlap.
 */
static int fold_collect_batch(struct fold *f, size_t first, size_t n)
{
	const struct bpfprof_profile *prof = f->prof;
	uint64_t h[FOLD_BATCH][2];
	uint32_t *memo = f->count_memo + 2 * first;

	for (size_t j = 0; j < n; j++) {
		const struct bpfprof_count *c = &prof->counts[first + j];
		uint32_t pid;

		if (c->thread >= prof->nr_threads || c->user_stack >= prof->nr_stacks ||
		    c->kernel_stack >= prof->nr_stacks) {
			f->host->error(f->host, "%s: count %zu refers to a missing thread or stack",
				       f->who, first + j);
			return -EINVAL;
		}
		pid = prof->threads[c->thread].pid;
		__builtin_prefetch(&prof->stacks[c->user_stack]);
		h[j][0] = hashtab_hash(fold_memo_key(pid, c->user_stack), 0);
		h[j][1] = hashtab_hash(fold_memo_key(pid, c->kernel_stack), 1);
		hashtab_prefetch(&f->memos, h[j][0]);
		if (c->kernel_stack)
			hashtab_prefetch(&f->memos, h[j][1]);
	}
	for (size_t j = 0; j < n; j++) {
		const struct bpfprof_count *c = &prof->counts[first + j];
		uint32_t pid = prof->threads[c->thread].pid, comm;

		if (fold_comm_name(f, c->thread, &comm) ||
		    fold_memo_of(f, pid, c->user_stack, 0, h[j][0], &memo[2 * j]) ||
		    fold_memo_of(f, pid, c->kernel_stack, 1, h[j][1], &memo[2 * j + 1]))
			return -ENOMEM;
	}
	return 0;
}

/* Add @samples to the line (@comm, @user, @kernel); @h is hashtab_hash() of its key. */
static int fold_add(struct fold *f, uint32_t comm, uint32_t user, uint32_t kernel, uint64_t h,
		    uint64_t samples)
{
	uint64_t a = (uint64_t)comm << 32 | user;
	struct hashtab_slot *slot = hashtab_find(&f->line_map, h, a, kernel);

	if (slot->v != HASHTAB_NONE) {
		f->lines[slot->v].samples += samples;
		return 0;
	}
	f->lines[f->nr_lines] = (struct fold_line){ .comm = comm, .user = user, .kernel = kernel,
						    .samples = samples };
	*slot = (struct hashtab_slot){ .a = a, .b = kernel, .v = (uint32_t)f->nr_lines++ };
	return hashtab_added(&f->line_map);
}

/* Line @b of a thread whose MPI rank is named @rank: that name becomes its
 * root, its comm the first name of its user sequence (interned once each). */
static int fold_mpi_line(struct fold *f, uint32_t rank, struct fold_line *b)
{
	uint64_t a = (uint64_t)b->comm << 32 | b->user;
	uint32_t seq = hashtab_get(&f->mpi_seqs, a, 0), n = f->seqs[b->user].len;

	if (seq == HASHTAB_NONE) {
		if (grow_array(&f->pool, &f->pool_cap, f->pool_len + n + 1, sizeof(*f->pool)))
			return -ENOMEM;
		f->pool[f->pool_len] = b->comm;
		memcpy(f->pool + f->pool_len + 1, f->pool + f->seqs[b->user].off,
		       n * sizeof(*f->pool));
		if (fold_intern_seq(f, n + 1, &seq) || hashtab_put(&f->mpi_seqs, a, 0, seq))
			return -ENOMEM;
	}
	b->comm = rank;
	b->user = seq;
	return 0;
}

/* Add the @n <= FOLD_BATCH counts from @first to their lines (prefetched as above). */
static int fold_sum_batch(struct fold *f, size_t first, size_t n)
{
	const struct bpfprof_profile *prof = f->prof;
	const uint32_t *memo = f->count_memo + 2 * first;
	struct fold_line b[FOLD_BATCH];
	uint64_t h[FOLD_BATCH];

	for (size_t j = 0; j < n; j++) {
		const struct bpfprof_count *c = &prof->counts[first + j];

		b[j] = (struct fold_line){ .comm = f->thread_comm[c->thread],
			.user = f->memo[memo[2 * j]].seq, .kernel = f->memo[memo[2 * j + 1]].seq,
			.samples = c->samples };
		if (f->mpi_rank && f->mpi_rank[c->thread] != UINT32_MAX &&
		    fold_mpi_line(f, f->mpi_rank[c->thread], &b[j]))
			return -ENOMEM;
		h[j] = hashtab_hash((uint64_t)b[j].comm << 32 | b[j].user, b[j].kernel);
		hashtab_prefetch(&f->line_map, h[j]);
	}
	for (size_t j = 0; j < n; j++) {
		if (fold_add(f, b[j].comm, b[j].user, b[j].kernel, h[j], b[j].samples))
			return -ENOMEM;
		f->total += b[j].samples;
	}
	return 0;
}

/* Collect the memos of all counts, render them, sum the counts into lines. */
static int fold_counts(struct fold *f)
{
	size_t nr = f->prof->nr_counts;
	int err = 0;

	for (size_t i = 0; i < nr && !err; i += FOLD_BATCH)
		err = fold_collect_batch(f, i, nr - i < FOLD_BATCH ? nr - i : FOLD_BATCH);
	if (!err)
		err = fold_render_memos(f);
	for (size_t i = 0; i < nr && !err; i += FOLD_BATCH)
		err = fold_sum_batch(f, i, nr - i < FOLD_BATCH ? nr - i : FOLD_BATCH);
	return err;
}

/* --- order ------------------------------------------------------------------ */

/* Rank the pieces of every name (foldsort.h). */
static int fold_rank_names(struct fold *f)
{
	struct fold_rankent *e = malloc((f->nr_names ? f->nr_names : 1) * sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < f->nr_names; i++) {
		struct fold_name *nm = &f->names[i];

		e[i] = (struct fold_rankent){ .s = f->text + nm->off, .len = nm->len,
					      .mid = &nm->mid, .end = &nm->end };
	}
	err = fold_rank(e, f->nr_names);
	free(e);
	return err;
}

/* Line @i to sort, its sequences in f->pool as mid ranks. */
static struct fold_sortent fold_sortent_of(const struct fold *f, size_t i)
{
	const struct fold_line *l = &f->lines[i];
	const struct fold_seq *u = &f->seqs[l->user], *k = &f->seqs[l->kernel];
	const uint32_t *last = k->len ? &f->pool[k->off + k->len - 1] :
			       u->len ? &f->pool[u->off + u->len - 1] : NULL;

	return (struct fold_sortent){ .user = (uint32_t)u->off, .kernel = (uint32_t)k->off,
		.nu = u->len, .n = 1 + u->len + k->len, .comm = f->names[l->comm].mid,
		.last = last ? f->names[*last].end : f->names[l->comm].end, .line = (uint32_t)i };
}

/*
 * Sort the lines by text into f->sorted (fold_sort_lines() marks equal
 * texts); the pool holds mid ranks while sorting, name ids before and after.
 */
static int fold_order(struct fold *f)
{
	struct fold_sortent *a = malloc((f->nr_lines ? f->nr_lines : 1) * sizeof(*a));
	uint32_t *rank_name = malloc((2 * f->nr_names + 1) * sizeof(*rank_name));
	uint32_t max = 1;

	if (!a || !rank_name || f->pool_len >= UINT32_MAX || fold_rank_names(f)) {
		free(a);
		free(rank_name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->nr_lines; i++) {
		a[i] = fold_sortent_of(f, i);
		max = a[i].n > max ? a[i].n : max;
	}
	for (size_t i = 0; i < f->nr_names; i++) {
		rank_name[f->names[i].mid] = (uint32_t)i;
		rank_name[f->names[i].end] = (uint32_t)i;
	}
	for (size_t i = 0; i < f->pool_len; i++)
		f->pool[i] = f->names[f->pool[i]].mid;
	fold_sort_lines(f->pool, a, f->nr_lines, 0, 0);
	for (size_t i = 0; i < f->pool_len; i++)
		f->pool[i] = rank_name[f->pool[i]];
	for (size_t i = 0; i < f->nr_lines; i++)
		a[i].comm = rank_name[a[i].comm];
	if (f->nr_lines)
		fold_line_dup(&a[0], 0);
	free(rank_name);
	f->sorted = a;
	f->max_pieces = max;
	f->pieces = malloc(max * sizeof(*f->pieces));
	return f->pieces ? 0 : -ENOMEM;
}

/* --- the interface ---------------------------------------------------------- */

/* Free what only building needs. */
static void fold_free_build(struct fold *f)
{
	hashtab_free(&f->name_tab);
	hashtab_free(&f->syms);
	hashtab_free(&f->seq_tab);
	hashtab_free(&f->memos);
	hashtab_free(&f->groups);
	hashtab_free(&f->line_map);
	hashtab_free(&f->mpi_seqs);
	free(f->mpi_rank);
	f->mpi_rank = NULL;
	free(f->frames);
	free(f->memo);
	free(f->count_memo);
	free(f->stack_memo);
	free(f->thread_comm);
	f->stack_memo = NULL;
	f->frames = NULL;
	f->memo = NULL;
	f->count_memo = NULL;
	f->thread_comm = NULL;
}

void fold_free(struct fold *f)
{
	if (!f)
		return;
	fold_free_build(f);
	free(f->text);
	free(f->names);
	free(f->pool);
	free(f->seqs);
	free(f->lines);
	free(f->sorted);
	free(f->pieces);
	free(f);
}

static int fold_init(struct fold *f)
{
	const struct bpfprof_profile *prof = f->prof;
	size_t counts = prof->nr_counts ? prof->nr_counts : 1;
	uint32_t empty;

	if (prof->nr_counts >= FOLD_DUP)
		return -ENOMEM;
	f->lines = malloc(counts * sizeof(*f->lines));
	f->count_memo = malloc(2 * counts * sizeof(*f->count_memo));
	f->thread_comm = malloc((prof->nr_threads ? prof->nr_threads : 1) * sizeof(uint32_t));
	f->stack_memo = calloc(prof->nr_stacks ? prof->nr_stacks : 1, sizeof(uint32_t));
	if (!f->lines || !f->count_memo || !f->thread_comm || !f->stack_memo ||
	    grow_array(&f->memo, &f->memo_cap, 1, sizeof(*f->memo)) ||
	    grow_array(&f->pool, &f->pool_cap, 1, sizeof(*f->pool)) ||
	    hashtab_init(&f->name_tab, 512) || hashtab_init(&f->syms, 512) ||
	    hashtab_init(&f->seq_tab, 512) || hashtab_init(&f->memos, 512) ||
	    hashtab_init(&f->groups, 32) || hashtab_init(&f->line_map, 512))
		return -ENOMEM;
	memset(f->thread_comm, 0xff, prof->nr_threads * sizeof(uint32_t));
	f->memo[f->nr_memo++] = (struct fold_memo){ .seq = 0 };	/* memo 0: no frames */
	return fold_intern_seq(f, 0, &empty) ?: fold_mpi_ranks(f);	/* seq 0: no frames */
}

/*
 * Fold @prof: *out gets the folded profile (free with fold_free()).
 * 0, -EINVAL or -ENOMEM (after host->error(), messages prefixed with @who).
 */
int fold_profile(const struct bpfprof_host *host, const struct bpfprof_profile *prof,
		 const char *who, struct fold **out)
{
	struct fold *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f) {
		host->error(host, "%s: out of memory", who);
		return -ENOMEM;
	}
	f->host = host;
	f->prof = prof;
	f->who = who;
	err = fold_init(f);
	if (!err)
		err = fold_counts(f);
	fold_free_build(f);
	if (!err)
		err = fold_order(f);
	if (err == -ENOMEM)
		host->error(host, "%s: out of memory", who);
	if (err)
		fold_free(f);
	else
		*out = f;
	return err;
}

/* How many lines ahead fold_next() prefetches. */
#define FOLD_AHEAD 8

/* Put name @name at @i of f->pieces, which holds the line before: still the same? */
static inline int fold_piece(const struct fold *f, uint32_t i, uint32_t name, int same)
{
	same = same && f->pieces[i] == name;
	f->pieces[i] = name;
	return same;
}

/*
 * The next line in text order into @c (start with it zeroed): 1, or 0 at
 * the end.  c->names stay valid until the next call; c->same of them are
 * the first names of the line before too (a writer can repeat that part).
 * One cursor at a time.
 */
int fold_next(const struct fold *f, struct fold_cursor *c)
{
	const struct fold_sortent *e;
	int same;

	if (c->next >= f->nr_lines)
		return 0;
	if (c->next + FOLD_AHEAD < f->nr_lines) {	/* lines are in another order */
		e = &f->sorted[c->next + FOLD_AHEAD];
		__builtin_prefetch(&f->lines[e->line & ~FOLD_DUP]);
		__builtin_prefetch(&f->pool[e->user]);
		__builtin_prefetch(&f->pool[e->kernel]);
	}
	e = &f->sorted[c->next++];
	c->samples = f->lines[e->line & ~FOLD_DUP].samples;
	while (c->next < f->nr_lines && (f->sorted[c->next].line & FOLD_DUP))
		c->samples += f->lines[f->sorted[c->next++].line & ~FOLD_DUP].samples;
	same = c->nr > 0;
	c->same = 0;
	for (uint32_t i = 0; i < e->n; i++) {
		uint32_t name = i == 0 ? e->comm : i <= e->nu ? f->pool[e->user + i - 1] :
				f->pool[e->kernel + i - 1 - e->nu];

		same = fold_piece(f, i, name, same && i < c->nr);
		c->same += same;
	}
	c->nr = e->n;
	c->names = f->pieces;
	return 1;
}
