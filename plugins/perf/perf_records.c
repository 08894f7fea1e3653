// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_records.c - the records of the perf.data data
 * section, one writer per record type (perf_event.h's enum
 * perf_event_type, plus perf record's PERF_RECORD_FINISHED_ROUND), and
 * the sample_id trailer sample_id_all adds to every non-sample record.
 *
 * Each writer appends one complete record (struct perf_event_header,
 * body, trailer; header.size filled in) to a struct buf and returns 0 or
 * a negative errno.  The layouts follow our one attr: sample_type
 * PERF_PLUGIN_SAMPLE_TYPE, sample_id_all = 1.
 */
#include <errno.h>
#include <string.h>

#include "perf_internal.h"

#define PERF_ALIGN8(x) (((x) + 7u) & ~(size_t)7u)

/* Largest record perf can describe: header.size is a u16. */
#define PERF_RECORD_MAX_SIZE 0xfff8u

/* Start a record; returns the offset of its header in @b. */
static size_t record_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t start = b->len;

	buf_u32(b, type);
	buf_u16(b, misc);
	buf_u16(b, 0);		/* size, set by record_end() */
	return start;
}

static int record_end(struct buf *b, size_t start)
{
	size_t size = b->len - start;

	if (b->err)
		return b->err;
	if (size > PERF_RECORD_MAX_SIZE || size % 8) {
		b->len = start;
		return -EOVERFLOW;
	}
	return buf_patch(b, start + 6, &(uint16_t){ (uint16_t)size }, sizeof(uint16_t));
}

/* A NUL-terminated string padded with zeros to a multiple of 8 bytes. */
static void put_padded_string(struct buf *b, const char *s, size_t max)
{
	size_t n = strnlen(s ? s : "", max);

	buf_put(b, s, n);
	buf_zero(b, PERF_ALIGN8(n + 1) - n);
}

/* struct sample_id: { pid, tid } { time } { cpu, res } { identifier }. */
static void write_sample_id(struct buf *b, const struct perf_sample_id *id)
{
	buf_u32(b, id->pid);
	buf_u32(b, id->tid);
	buf_u64(b, id->time);
	buf_u32(b, id->cpu);
	buf_u32(b, 0);
	buf_u64(b, PERF_PLUGIN_EVENT_ID);
}

/* PERF_RECORD_MMAP: used for the kernel ([kernel.kallsyms]_text). */
int write_record_mmap(struct buf *b, uint32_t pid, uint32_t tid, uint64_t start,
		      uint64_t len, uint64_t pgoff, const char *filename, uint16_t misc,
		      const struct perf_sample_id *id)
{
	size_t rec = record_begin(b, PERF_RECORD_MMAP, misc);

	buf_u32(b, pid);
	buf_u32(b, tid);
	buf_u64(b, start);
	buf_u64(b, len);
	buf_u64(b, pgoff);
	put_padded_string(b, filename, 4096);
	write_sample_id(b, id);
	return record_end(b, rec);
}

/*
 * PERF_RECORD_MMAP2 of a user mapping.  With a build-id of at most 20
 * bytes the record carries it (PERF_RECORD_MISC_MMAP_BUILD_ID) instead of
 * device and inode numbers, as perf record --buildid-mmap does.
 */
int write_record_mmap2(struct buf *b, uint32_t pid, uint32_t tid,
		       const struct bpfprof_mapping *m, const struct perf_sample_id *id)
{
	int with_bid = m->build_id && m->build_id_size && m->build_id_size <= 20;
	uint16_t misc = PERF_RECORD_MISC_USER;
	uint32_t prot = 0;
	size_t rec;

	if (with_bid)
		misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	rec = record_begin(b, PERF_RECORD_MMAP2, misc);
	buf_u32(b, pid);
	buf_u32(b, tid);
	buf_u64(b, m->start);
	buf_u64(b, m->end - m->start);
	buf_u64(b, m->pgoff);
	if (with_bid) {
		uint8_t bid[20] = { 0 };

		memcpy(bid, m->build_id, m->build_id_size);
		buf_put(b, &(uint8_t){ (uint8_t)m->build_id_size }, 1);
		buf_zero(b, 3);
		buf_put(b, bid, sizeof(bid));
	} else {
		buf_u32(b, m->dev_major);
		buf_u32(b, m->dev_minor);
		buf_u64(b, m->inode);
		buf_u64(b, 0);	/* ino_generation */
	}
	if (m->prot & BPFPROF_PROT_READ)
		prot |= 0x1;		/* PROT_READ */
	if (m->prot & BPFPROF_PROT_WRITE)
		prot |= 0x2;		/* PROT_WRITE */
	if (m->prot & BPFPROF_PROT_EXEC)
		prot |= 0x4;		/* PROT_EXEC */
	buf_u32(b, prot);
	buf_u32(b, m->shared ? 0x01 : 0x02); /* MAP_SHARED : MAP_PRIVATE */
	/* anonymous memory under the kernel's own name: perf names the code
	 * in it from the process's /tmp/perf-PID.map */
	put_padded_string(b, perf_anon_mapping(m) ? PERF_ANON_NAME : m->path, 4096);
	write_sample_id(b, id);
	return record_end(b, rec);
}

int perf_anon_mapping(const struct bpfprof_mapping *m)
{
	return (m->prot & BPFPROF_PROT_EXEC) && m->path &&
	       (!m->path[0] || !strncmp(m->path, "[anon:", 6));
}

/* PERF_RECORD_COMM; @exec marks the name an execve() gave. */
int write_record_comm(struct buf *b, uint32_t pid, uint32_t tid, const char *comm,
		      int exec, const struct perf_sample_id *id)
{
	size_t rec = record_begin(b, PERF_RECORD_COMM,
				  exec ? PERF_RECORD_MISC_COMM_EXEC : 0);

	buf_u32(b, pid);
	buf_u32(b, tid);
	put_padded_string(b, comm ? comm : "", 16);
	write_sample_id(b, id);
	return record_end(b, rec);
}

/* PERF_RECORD_FORK and PERF_RECORD_EXIT share one layout. */
static int write_task_record(struct buf *b, uint32_t type, uint32_t pid, uint32_t ppid,
			     uint32_t tid, uint32_t ptid, const struct perf_sample_id *id)
{
	size_t rec = record_begin(b, type, 0);

	buf_u32(b, pid);
	buf_u32(b, ppid);
	buf_u32(b, tid);
	buf_u32(b, ptid);
	buf_u64(b, id->time);
	write_sample_id(b, id);
	return record_end(b, rec);
}

int write_record_fork(struct buf *b, uint32_t pid, uint32_t ppid, uint32_t tid,
		      uint32_t ptid, const struct perf_sample_id *id)
{
	return write_task_record(b, PERF_RECORD_FORK, pid, ppid, tid, ptid, id);
}

int write_record_exit(struct buf *b, uint32_t pid, uint32_t ppid, uint32_t tid,
		      uint32_t ptid, const struct perf_sample_id *id)
{
	return write_task_record(b, PERF_RECORD_EXIT, pid, ppid, tid, ptid, id);
}

/*
 * PERF_RECORD_SAMPLE: { identifier } { ip } { pid, tid } { time }
 * { cpu, res } { period } { nr, ips[nr] }.  The callchain is laid out as
 * the kernel does: PERF_CONTEXT_KERNEL and the kernel frames, then
 * PERF_CONTEXT_USER and the user frames, each leaf first; ip is the
 * innermost frame.  A chain too long for one record loses outer frames.
 */
int write_record_sample(struct buf *b, const struct bpfprof_stack *kstack,
			const struct bpfprof_stack *ustack, uint64_t period,
			const struct perf_sample_id *id)
{
	uint32_t knr = kstack ? kstack->nr : 0, unr = ustack ? ustack->nr : 0;
	const uint32_t max_nr = (PERF_RECORD_MAX_SIZE - 64) / 8 - 2;
	uint64_t ip = 0, nr;
	uint16_t misc;
	size_t rec;

	if (knr > max_nr)
		knr = max_nr;
	if (unr > max_nr - knr)
		unr = max_nr - knr;
	if (knr) {
		ip = kstack->ips[0];
		misc = PERF_RECORD_MISC_KERNEL;
	} else {
		if (unr)
			ip = ustack->ips[0];
		misc = PERF_RECORD_MISC_USER;
	}
	nr = (knr ? knr + 1 : 0) + (unr ? unr + 1 : 0);

	rec = record_begin(b, PERF_RECORD_SAMPLE, misc);
	buf_u64(b, PERF_PLUGIN_EVENT_ID);
	buf_u64(b, ip);
	buf_u32(b, id->pid);
	buf_u32(b, id->tid);
	buf_u64(b, id->time);
	buf_u32(b, id->cpu);
	buf_u32(b, 0);
	buf_u64(b, period);
	buf_u64(b, nr);
	/* the stacks are u64 arrays already: one copy each */
	if (knr) {
		buf_u64(b, PERF_CONTEXT_KERNEL);
		buf_put(b, kstack->ips, knr * sizeof(uint64_t));
	}
	if (unr) {
		buf_u64(b, PERF_CONTEXT_USER);
		buf_put(b, ustack->ips, unr * sizeof(uint64_t));
	}
	return record_end(b, rec);
}

/* PERF_RECORD_LOST_SAMPLES: { lost } and the trailer. */
int write_record_lost_samples(struct buf *b, uint64_t lost, const struct perf_sample_id *id)
{
	size_t rec = record_begin(b, PERF_RECORD_LOST_SAMPLES, 0);

	buf_u64(b, lost);
	write_sample_id(b, id);
	return record_end(b, rec);
}

/* PERF_RECORD_FINISHED_ROUND: a bare header; nothing before it is
 * reordered with anything after it by more than one round. */
int write_record_finished_round(struct buf *b)
{
	size_t rec = record_begin(b, PERF_RECORD_FINISHED_ROUND_TYPE, 0);

	return record_end(b, rec);
}
