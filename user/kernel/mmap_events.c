// SPDX-License-Identifier: BSD-2-Clause
/*
 * kernel/mmap_events.c - perf's MMAP2 and exec COMM records (see
 * mmap_events.h): one dummy software event per online CPU, their ring
 * buffers, the records parsed into a queue sorted by time.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cpus.h"
#include "mmap_events.h"

/* perf's name for anonymous executable memory; /proc/PID/maps says "". */
#define PERF_ANON_PATH "//anon"

/* The trailer of every record with sample_id_all (sample_type TID | TIME). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

/* PERF_RECORD_MMAP2 after its header (without build-id: attr.build_id is 0). */
struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

/* One CPU's event and its ring buffer. */
struct ring {
	int fd;
	void *base;			/* metadata page, then the data pages */
	size_t size;			/* bytes of data, a power of two */
};

/* A record waiting to be handed out. */
struct pending {
	uint64_t time;
	uint64_t seq;			/* arrival order: ties keep it */
	struct mmap_event ev;		/* ev.map.path is owned (malloc'd) */
};

struct mmap_events {
	struct ring *rings;
	size_t nr_rings;
	size_t page_size;
	struct pending *q;		/* q[head..n) waits, sorted by (time, seq) */
	size_t head, n, cap;
	uint64_t seq;
	uint64_t read_ns;		/* the rings were last read at this time */
	uint64_t lost;
	char *handed_path;		/* path of the record handed out last */
	uint8_t rec[1u << 16];		/* one record, unwrapped (sizes are u16) */
};

static long perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- the queue ----------------------------------------------------------- */

static int push(struct mmap_events *me, const struct pending *p)
{
	if (me->head == me->n)
		me->head = me->n = 0;
	if (me->n == me->cap && me->head > 0) {
		memmove(me->q, me->q + me->head, (me->n - me->head) * sizeof(*me->q));
		me->n -= me->head;
		me->head = 0;
	}
	if (me->n == me->cap) {
		size_t cap = me->cap ? 2 * me->cap : 64;
		struct pending *q = realloc(me->q, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		me->q = q;
		me->cap = cap;
	}
	me->q[me->n] = *p;
	me->q[me->n].seq = me->seq++;
	me->n++;
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- records --------------------------------------------------------------- */

static int parse_mmap2(struct mmap_events *me, const uint8_t *rec, size_t size, uint64_t time)
{
	const struct mmap2_body *b = (const void *)(rec + sizeof(struct perf_event_header));
	const char *name = b->filename;
	struct pending p = { .time = time };
	char *path;

	if (size <= sizeof(struct perf_event_header) + sizeof(*b) ||
	    !memchr(name, '\0', size - sizeof(struct perf_event_header) - sizeof(*b)))
		return 0;
	if (!strcmp(name, PERF_ANON_PATH))
		name = "";
	path = strdup(name);
	if (!path)
		return -ENOMEM;
	p.ev = (struct mmap_event){
		.type = MMAP_EVENT_MAP, .pid = b->pid, .time_ns = time,
		.map = { .start = b->addr, .end = b->addr + b->len, .pgoff = b->pgoff,
			 .prot = b->prot & (BPFPROF_PROT_READ | BPFPROF_PROT_WRITE |
					    BPFPROF_PROT_EXEC),
			 .shared = (b->flags & 0x01) != 0,	/* MAP_SHARED */
			 .dev_major = b->maj, .dev_minor = b->min, .inode = b->ino,
			 .path = path },
	};
	if (push(me, &p)) {
		free(path);
		return -ENOMEM;
	}
	return 0;
}

/* One record of @size bytes at @rec. 0 or -ENOMEM. */
static int parse_record(struct mmap_events *me, const uint8_t *rec, size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	struct sample_id id;
	uint32_t pid;
	uint64_t lost;

	if (size < sizeof(*h) + sizeof(id))
		return 0;
	memcpy(&id, rec + size - sizeof(id), sizeof(id));
	size -= sizeof(id);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return parse_mmap2(me, rec, size, id.time);
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || size < sizeof(*h) + 8)
			return 0;
		memcpy(&pid, rec + sizeof(*h), sizeof(pid));
		return push(me, &(struct pending){ .time = id.time, .ev = {
			.type = MMAP_EVENT_EXEC, .pid = pid, .time_ns = id.time } });
	case PERF_RECORD_LOST:
		if (size >= sizeof(*h) + 16) {
			memcpy(&lost, rec + sizeof(*h) + 8, sizeof(lost));
			me->lost += lost;
		}
		return 0;
	}
	return 0;
}

/* @len bytes from ring offset @pos (wrapping) into @dst. */
static void ring_copy(const struct ring *r, const uint8_t *data, uint64_t pos, void *dst,
		      size_t len)
{
	size_t off = pos & (r->size - 1), first = r->size - off < len ? r->size - off : len;

	memcpy(dst, data + off, first);
	memcpy((uint8_t *)dst + first, data, len - first);
}

/* Parse every record in @r and free their space.  0 or -ENOMEM. */
static int read_ring(struct mmap_events *me, struct ring *r)
{
	struct perf_event_mmap_page *pg = r->base;
	const uint8_t *data = (const uint8_t *)r->base + me->page_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	int err = 0;

	while (!err && head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		ring_copy(r, data, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		ring_copy(r, data, tail, me->rec, h.size);
		err = parse_record(me, me->rec, h.size);
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

/* Read every ring, then sort what waits by time. */
static void read_rings(struct mmap_events *me)
{
	size_t before = me->n;

	for (size_t i = 0; i < me->nr_rings; i++)
		if (read_ring(me, &me->rings[i]))
			me->lost++;	/* no memory: the record is as good as lost */
	if (me->n != before)
		qsort(me->q + me->head, me->n - me->head, sizeof(*me->q), cmp_pending);
}

int mmap_events_next(struct mmap_events *me, uint64_t until_ns, struct mmap_event *out)
{
	struct pending *p;

	if (!me)
		return 0;
	if (until_ns > me->read_ns) {
		uint64_t now = monotonic_ns();

		read_rings(me);
		me->read_ns = now;
	}
	if (me->head == me->n || me->q[me->head].time > until_ns)
		return 0;
	p = &me->q[me->head++];
	free(me->handed_path);
	me->handed_path = (char *)p->ev.map.path;
	*out = p->ev;
	return 1;
}

int mmap_events_fd(const struct mmap_events *me, size_t i)
{
	return me && i < me->nr_rings ? me->rings[i].fd : -1;
}

uint64_t mmap_events_lost(const struct mmap_events *me)
{
	return me ? me->lost : 0;
}

/* ---- set-up ------------------------------------------------------------------ */

/* Open the dummy event of @cpu and map its ring buffer into @r. */
static int open_ring(struct mmap_events *me, int cpu, struct ring *r)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* readable (mmap_events_fd()) once half full: no wake-up per record */
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(MMAP_EVENTS_PAGES * me->page_size / 2),
	};
	long fd = perf_event_open(&attr, cpu);

	if (fd < 0)
		return -errno;
	r->fd = (int)fd;
	r->size = (size_t)MMAP_EVENTS_PAGES * me->page_size;
	r->base = mmap(NULL, r->size + me->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
		       0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

int mmap_events_open(struct mmap_events **out)
{
	struct mmap_events *me = calloc(1, sizeof(*me));
	int *cpus = NULL, err;
	size_t nr = 0;

	if (!me)
		return -ENOMEM;
	me->page_size = (size_t)sysconf(_SC_PAGESIZE);
	err = online_cpus(&cpus, &nr);
	if (!err && !(me->rings = calloc(nr, sizeof(*me->rings))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++) {
		me->rings[i].fd = -1;
		me->nr_rings++;
		err = open_ring(me, cpus[i], &me->rings[i]);
	}
	free(cpus);
	if (err) {
		mmap_events_close(me);
		return err;
	}
	*out = me;
	return 0;
}

void mmap_events_close(struct mmap_events *me)
{
	if (!me)
		return;
	for (size_t i = 0; i < me->nr_rings; i++) {
		if (me->rings[i].base)
			munmap(me->rings[i].base, me->rings[i].size + me->page_size);
		if (me->rings[i].fd >= 0)
			close(me->rings[i].fd);
	}
	for (size_t i = me->head; i < me->n; i++)
		free((char *)me->q[i].ev.map.path);
	free(me->handed_path);
	free(me->q);
	free(me->rings);
	free(me);
}
