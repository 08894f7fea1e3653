/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/fold.h - folding a bpfprof profile into "folded stacks" (part of
 * plugins/common/, the internal library linked into every plugin; used by
 * the folded and flamegraph plugins).  The folding is common/fold.c, the
 * sorts it needs common/foldsort.c.
 *
 * A folded stack is one line "comm;frame;...;leaf", root first: the
 * process name, the user frames from the outermost caller down, then the
 * kernel frames (each suffixed "_[k]", as FlameGraph's stackcollapse
 * scripts do) down to the kernel leaf.  A frame is its function name (a
 * caller is looked up at its return address - 1, the call site), else
 * "[module]" (the file name of the mapping that holds it), else
 * "[unknown]".  ';' and line breaks in names become '_' and ' ', so the
 * line stays parseable.  The samples of all threads with the same line
 * are summed; the lines are sorted by byte value.
 *
 * Parallel jobs: when the profile knows the MPI rank of any thread
 * (bpfprof_profile.thread_ids), the lines of each thread with a rank
 * start with one more root frame, "rank N;comm;...", so that a flame
 * graph groups the processes of each rank; the lines of threads without
 * one stay "comm;...", and a profile without ranks folds as before.
 *
 * How, for a million counts over deep stacks, without building any line
 * as text (fold_profile()):
 *  1. fold_collect_batch(): each count's (pid, user stack) and (pid,
 *     kernel stack) is looked up in f->memos; each distinct one is a memo.
 *  2. fold_render_memos(): the stacks are sorted by address from the
 *     root (foldsort.h) and their memos rendered in that order.  A frame's
 *     name is interned once per host string (struct fold_frame); frames a
 *     stack shares with the one rendered before in the same process are
 *     not symbolized again.  A stack becomes a sequence of name ids,
 *     interned by content.
 *  3. fold_sum_batch(): counts are summed per (comm, user sequence,
 *     kernel sequence): the lines.
 *  4. fold_order(): lines are sorted by text (foldsort.h: piece ranks and
 *     a multikey quicksort); lines of equal text with different keys,
 *     possible only if a user frame's name itself ends in "_[k]", come
 *     out adjacent and fold_next() merges them.
 * The caller then writes each line from the interned names:
 *
 *   fold_profile() -> fold_next()* -> fold_name() ... -> fold_free()
 */
#ifndef BPFPROF_COMMON_FOLD_H
#define BPFPROF_COMMON_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "bpfprof/plugin.h"
#include "common/foldsort.h"
#include "common/hashtab.h"

/* An interned piece: text at fold.text + off, preceded by ';' and NUL-terminated. */
struct fold_name {
	size_t off;
	uint32_t len;
	uint32_t mid, end;		/* ranks of "name;" and "name\0" (from 1) */
};

/* The parts of struct fold only common/fold.c looks into. */
struct fold_seq;
struct fold_memo;
struct fold_line;
struct fold_frame;

/* A folded profile (fold_profile()); callers read total, nr_names and max_pieces. */
struct fold {
	const struct bpfprof_host *host;
	const struct bpfprof_profile *prof;
	const char *who;		/* message prefix: the plugin's name */
	uint64_t total;			/* samples of all lines */
	char *text;			/* the names' text */
	size_t text_len, text_cap;
	struct fold_name *names;
	size_t nr_names, names_cap;
	struct hashtab name_tab;	/* (text hash, n) -> name */
	struct hashtab syms;		/* (host string, how) -> name */
	struct fold_frame *frames;	/* the stack being rendered */
	size_t frames_cap;
	uint32_t *pool;			/* sequences: name ids (mid ranks while sorting) */
	size_t pool_len, pool_cap;
	struct fold_seq *seqs;
	size_t nr_seqs, seqs_cap;
	struct hashtab seq_tab;	/* (content hash, n) -> seq */
	struct fold_memo *memo;		/* [0]: no frames */
	size_t nr_memo, memo_cap;
	struct hashtab memos;		/* (pid << 32 | stack, kernel) -> memo */
	uint32_t *stack_memo;		/* the first memo of each stack, 0 if none */
	struct hashtab groups;		/* (pid, kernel) -> group */
	uint32_t *count_memo;		/* user and kernel memo of each count */
	uint32_t *thread_comm;		/* comm name of each thread, UINT32_MAX unknown yet */
	uint32_t *mpi_rank;		/* "rank N" name of each thread, UINT32_MAX if it
					 * has none; NULL if no thread has one */
	struct hashtab mpi_seqs;	/* (comm << 32 | user seq) -> seq of comm and user */
	struct fold_line *lines;
	size_t nr_lines;
	struct hashtab line_map;	/* (comm << 32 | user, kernel) -> line */
	struct fold_sortent *sorted;	/* the lines in text order (name ids, comm too) */
	uint32_t *pieces;		/* fold_next(): the current line's names */
	uint32_t max_pieces;		/* of any line */
};

/* Where fold_next() is: the line it returned, as name ids, root first. */
struct fold_cursor {
	size_t next;			/* position in fold.sorted */
	uint64_t samples;
	uint32_t nr;			/* names */
	uint32_t same;			/* the first names that the line before has too */
	const uint32_t *names;
};


/*
 * Room after each name's text for copies in whole blocks
 * (fold_name(), buf_put32()).
 */
#define FOLD_TEXT_SLACK 64

/*
 * Fold @prof: *out gets the folded profile (free with fold_free()).
 * 0, -EINVAL or -ENOMEM (after host->error(), messages prefixed with @who).
 */
int fold_profile(const struct bpfprof_host *host, const struct bpfprof_profile *prof,
		 const char *who, struct fold **out);

void fold_free(struct fold *f);

/*
 * The next line in text order into @c (start with it zeroed): 1, or 0 at
 * the end.  c->names stay valid until the next call; c->same of them are
 * the first names of the line before too (a writer can repeat that part).
 * One cursor at a time.
 */
int fold_next(const struct fold *f, struct fold_cursor *c);

/* The samples of all lines. */
static inline uint64_t fold_total(const struct fold *f)
{
	return f->total;
}

/*
 * Name @id: its text (NUL-terminated, preceded by ';', followed by at least
 * FOLD_TEXT_SLACK readable bytes) and *@len.
 */
static inline const char *fold_name(const struct fold *f, uint32_t id, size_t *len)
{
	*len = f->names[id].len;
	return f->text + f->names[id].off;
}

#endif /* BPFPROF_COMMON_FOLD_H */
