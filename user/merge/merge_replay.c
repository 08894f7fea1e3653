// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/merge_replay.c - the event streams of every measurement, in one
 * time order, into a streaming plugin (see merge.h).  A k-way merge: one
 * cursor per file reads its events sequentially (one record in memory
 * each), and a binary heap keyed by merged time picks the next one.
 * Times move to the merged timeline (merge_file.time_shift), ids to the
 * merged profile's, stack indices to the profile's stacks.
 *
 * A file's own stream is in the order its collector received the
 * records (per CPU in time order; across CPUs nearly so), and the merge
 * keeps that order within each file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge/merge.h"

struct stream {
	struct merge_file *file;
	struct raw_cursor cursor;
	struct bpfprof_event ev;	/* its next event, merged time */
};

struct heap {
	struct stream **s;
	size_t nr;
};

static bool before(const struct stream *a, const struct stream *b)
{
	if (a->ev.time_ns != b->ev.time_ns)
		return a->ev.time_ns < b->ev.time_ns;
	return a->file->index < b->file->index;
}

static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = i;
		struct stream *t;

		if (l < h->nr && before(h->s[l], h->s[min]))
			min = l;
		if (r < h->nr && before(h->s[r], h->s[min]))
			min = r;
		if (min == i)
			return;
		t = h->s[i];
		h->s[i] = h->s[min];
		h->s[min] = t;
		i = min;
	}
}

static uint64_t shift_time(uint64_t t, int64_t shift)
{
	if (shift < 0 && t < (uint64_t)-shift)
		return 0;
	return t + (uint64_t)shift;
}

/* Read the next event of @s into s->ev, in merged terms: 1, 0 at its end,
 * or negative errno after a message. */
static int advance(struct merge *m, struct stream *s)
{
	struct merge_file *f = s->file;
	struct bpfprof_event *ev = &s->ev;
	char why[RAW_WHY_SIZE];
	int n = raw_cursor_next(&s->cursor, ev, why);

	if (n < 0) {
		fprintf(stderr, "bpfprof merge: %s: %s\n", f->rf.path, why);
		return n;
	}
	if (n == 0)
		return 0;
	ev->time_ns = shift_time(ev->time_ns, f->time_shift);
	if ((n = merge_map_id(m, f, ev->pid, &ev->pid)) || (n = merge_map_id(m, f, ev->tid, &ev->tid)))
		return n;
	if (ev->type == BPFPROF_EVENT_FORK &&
	    ((n = merge_map_id(m, f, ev->fork.ppid, &ev->fork.ppid)) ||
	     (n = merge_map_id(m, f, ev->fork.ptid, &ev->fork.ptid))))
		return n;
	if (ev->type == BPFPROF_EVENT_SAMPLE) {
		ev->sample.user_stack = f->stacks[ev->sample.user_stack];
		ev->sample.kernel_stack = f->stacks[ev->sample.kernel_stack];
	}
	return 1;
}

static int open_streams(struct merge *m, struct stream *streams, struct heap *h)
{
	int err;

	for (size_t i = 0; i < m->nr_files; i++) {
		struct stream *s = &streams[i];

		s->file = &m->files[i];
		if ((err = raw_cursor_open(&s->file->rf, &s->cursor))) {
			fprintf(stderr, "bpfprof merge: %s: %s\n", s->file->rf.path, strerror(-err));
			return err;
		}
		if ((err = advance(m, s)) < 0)
			return err;
		if (err > 0)
			h->s[h->nr++] = s;
	}
	for (size_t i = h->nr / 2; i-- > 0;)
		sift_down(h, i);
	return 0;
}

int merge_replay(struct merge *m, const struct record_sink *sink)
{
	struct stream *streams = calloc(m->nr_files + 1, sizeof(*streams));
	struct heap h = { .s = calloc(m->nr_files + 1, sizeof(*h.s)) };
	int err = streams && h.s ? open_streams(m, streams, &h) : -ENOMEM;

	while (!err && h.nr && !m->session.failed) {
		struct stream *s = h.s[0];
		int n;

		record_sink_put(sink, &s->ev);
		m->nr_events++;
		if ((n = advance(m, s)) < 0)
			err = n;
		else if (n == 0)
			h.s[0] = h.s[--h.nr];
		sift_down(&h, 0);
	}
	for (size_t i = 0; streams && i < m->nr_files; i++)
		raw_cursor_close(&streams[i].cursor);
	free(streams);
	free(h.s);
	return err ?: m->session.failed;
}
