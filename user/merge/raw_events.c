// SPDX-License-Identifier: BSD-2-Clause
/*
 * merge/raw_events.c - the event records of a raw measurement (see
 * raw_read.h): a cursor that reads them one at a time with its own file
 * handle, and the check raw_file_open() runs over all of them first, so
 * that a merge never finds a bad record after its output was begun.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge/raw_parse.h"

/* Parse the record @r (its whole size) into @ev, checked against @rf. */
static int parse_event(const struct raw_file *rf, struct rd *r, struct bpfprof_event *ev,
		       struct bpfprof_mapping *map)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = rd_u32(r);
	rd_u32(r);	/* size: the caller's */
	ev->time_ns = rd_u64(r);
	ev->cpu = rd_u32(r);
	ev->pid = rd_u32(r);
	ev->tid = rd_u32(r);
	switch (ev->type) {
	case RAW_EV_SAMPLE:
		ev->sample.user_stack = rd_u32(r);
		ev->sample.kernel_stack = rd_u32(r);
		ev->sample.period = rd_u64(r);
		if (ev->sample.user_stack >= rf->nr_stacks ||
		    ev->sample.kernel_stack >= rf->nr_stacks)
			r->bad = true;
		else if (rf->stacks && ((ev->sample.user_stack && rf->stacks[ev->sample.user_stack].kernel) ||
			 (ev->sample.kernel_stack && !rf->stacks[ev->sample.kernel_stack].kernel)))
			r->bad = true;
		break;
	case RAW_EV_COMM:
	case RAW_EV_EXEC:
		ev->comm = rd_str(r);
		break;
	case RAW_EV_FORK:
		ev->fork.ppid = rd_u32(r);
		ev->fork.ptid = rd_u32(r);
		break;
	case RAW_EV_EXIT:
		break;
	case RAW_EV_MMAP:
		rd_mapping(r, map);
		ev->mapping = map;
		break;
	case RAW_EV_LOST:
		ev->lost.lost = rd_u64(r);
		ev->lost.reason = rd_u32(r);
		if (ev->lost.reason >= BPFPROF_DROP_NR)
			r->bad = true;
		break;
	default:
		r->bad = true;
	}
	return r->bad || r->off != r->len ? -1 : 0;
}

int raw_cursor_open(const struct raw_file *rf, struct raw_cursor *c)
{
	memset(c, 0, sizeof(*c));
	c->rf = rf;
	c->pos = rf->events_offset;
	c->end = rf->events_offset + rf->events_length;
	/* its own handle: several cursors read one file's events apart */
	c->f = fopen(rf->path, "rb");
	if (!c->f)
		return -errno;
	if (fseeko(c->f, (off_t)c->pos, SEEK_SET)) {
		fclose(c->f);
		c->f = NULL;
		return -errno;
	}
	return 0;
}

/* Read the next record into c->rec (sequentially: no seek, so stdio's
 * buffer serves many records); its size in *@size.  1, 0 at the end,
 * -EBADMSG or -ENOMEM. */
static int read_record(struct raw_cursor *c, uint32_t *size)
{
	uint32_t head[2], sz;

	if (c->pos == c->end)
		return 0;
	if (c->end - c->pos < RAW_EVENT_HEADER_SIZE || fread(head, 1, 8, c->f) != 8)
		return -EBADMSG;
	sz = le32toh(head[1]);
	if (sz < RAW_EVENT_HEADER_SIZE || sz > c->end - c->pos)
		return -EBADMSG;
	if (sz > c->cap) {
		uint8_t *grown = realloc(c->rec, sz < 256 ? 256 : sz);

		if (!grown)
			return -ENOMEM;
		c->rec = grown;
		c->cap = sz < 256 ? 256 : sz;
	}
	memcpy(c->rec, head, 8);
	if (fread(c->rec + 8, 1, sz - 8, c->f) != sz - 8)
		return -EBADMSG;
	c->pos += sz;
	*size = sz;
	return 1;
}

int raw_cursor_next(struct raw_cursor *c, struct bpfprof_event *ev, char why[RAW_WHY_SIZE])
{
	uint64_t at = c->pos;
	uint32_t size = 0;
	int n = read_record(c, &size);
	struct rd r;

	if (n <= 0) {
		if (n < 0)
			snprintf(why, RAW_WHY_SIZE, "%s event record at byte %llu",
				 n == -ENOMEM ? "no memory for the" : "malformed or truncated",
				 (unsigned long long)at);
		return n;
	}
	r = (struct rd){ .p = c->rec, .len = size };
	if (parse_event(c->rf, &r, ev, &c->map)) {
		snprintf(why, RAW_WHY_SIZE, "malformed event record at byte %llu",
			 (unsigned long long)at);
		return -EBADMSG;
	}
	return 1;
}

void raw_cursor_close(struct raw_cursor *c)
{
	if (c->f)
		fclose(c->f);
	free(c->rec);
	memset(c, 0, sizeof(*c));
}

int raw_events_check(struct raw_file *rf, char *why)
{
	struct raw_cursor c = { .rf = rf, .f = rf->f, .pos = rf->events_offset,
				.end = rf->events_offset + rf->events_length };
	struct bpfprof_event ev;
	int n;

	if (fseeko(rf->f, (off_t)c.pos, SEEK_SET)) {
		snprintf(why, RAW_WHY_SIZE, "cannot seek: %s", strerror(errno));
		return -EIO;
	}
	while ((n = raw_cursor_next(&c, &ev, why)) > 0) {
		if (!rf->nr_events || ev.time_ns < rf->first_event_ns)
			rf->first_event_ns = ev.time_ns;
		rf->nr_events++;
	}
	free(c.rec);
	return n;
}
