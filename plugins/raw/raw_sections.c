// SPDX-License-Identifier: BSD-2-Clause
/*
 * raw/raw_sections.c - the raw format's writers: one function per on-disk
 * structure, named after its section (docs/RAW.md lays out each one byte
 * for byte, in the same order as these functions write them).  Integers
 * are stored little-endian; strings as a u32 length that counts the
 * terminating NUL, then the bytes and the NUL.
 */
#include <endian.h>
#include <string.h>

#include "raw/raw.h"

static void le32(struct buf *b, uint32_t v)
{
	buf_u32(b, htole32(v));
}

static void le64(struct buf *b, uint64_t v)
{
	buf_u64(b, htole64(v));
}

void raw_write_header(struct buf *b)
{
	buf_put(b, RAW_MAGIC, RAW_MAGIC_SIZE);		/* 0: magic */
	le32(b, RAW_VERSION);				/* 8: version */
	buf_char(b, (char)RAW_ELFCLASS64);		/* 12: ELF class of the recorder */
	buf_char(b, (char)(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? RAW_ELFDATA2LSB
								     : RAW_ELFDATA2MSB));
	buf_u16(b, htole16(RAW_EM_X86_64));		/* 14: ELF machine */
	le32(b, RAW_HEADER_SIZE);			/* 16: header size */
	le32(b, 0);					/* 20: flags */
	le64(b, 0);					/* 24: reserved */
}

uint64_t raw_write_section_header(struct buf *b, uint32_t type, uint64_t length)
{
	uint64_t at;

	le32(b, type);
	le32(b, 0);		/* flags */
	at = buf_pos(b);
	le64(b, length);
	return at;
}

void raw_write_string(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n >= RAW_MAX_STRING)
		n = RAW_MAX_STRING - 1;	/* cut, never refused by the reader */
	le32(b, (uint32_t)n + 1);
	buf_put(b, s ? s : "", n);
	buf_char(b, '\0');
}

void raw_write_run(struct buf *b, const struct bpfprof_run *run, uint32_t host_id)
{
	uint32_t argc = run->argc > 0 ? (uint32_t)run->argc : 0;

	if (argc > RAW_MAX_ARGC)
		argc = RAW_MAX_ARGC;
	le64(b, run->sample_freq);
	le64(b, run->sample_period);
	le64(b, run->start_ns);
	le64(b, run->end_ns);
	le64(b, run->realtime_anchor_ns);
	le64(b, run->samples_seen);
	le64(b, run->samples_kept);
	for (int i = 0; i < BPFPROF_DROP_NR; i++)
		le64(b, run->drops[i]);
	for (int i = 0; i < BPFPROF_UNWIND_STOP_NR; i++)
		le64(b, run->unwind_stops[i]);
	le32(b, run->nr_cpus_online);
	le32(b, run->nr_cpus_available);
	le32(b, run->max_stack_depth);
	le32(b, host_id);
	le32(b, argc);
	le32(b, 0);
	raw_write_string(b, run->version);
	raw_write_string(b, run->event);
	raw_write_string(b, run->hostname);
	raw_write_string(b, run->os_release);
	raw_write_string(b, run->arch);
	raw_write_string(b, run->target);
	raw_write_string(b, run->call_graph);
	for (uint32_t i = 0; i < argc; i++)
		raw_write_string(b, run->argv ? run->argv[i] : NULL);
}

void raw_write_mapping(struct buf *b, const struct bpfprof_mapping *m)
{
	uint32_t bid = m->build_id && m->build_id_size <= RAW_MAX_BUILD_ID ? m->build_id_size : 0;

	le64(b, m->start);
	le64(b, m->end);
	le64(b, m->pgoff);
	le64(b, m->inode);
	le32(b, m->prot);
	le32(b, m->shared);
	le32(b, m->dev_major);
	le32(b, m->dev_minor);
	le32(b, bid);
	le32(b, 0);
	buf_put(b, m->build_id, bid);
	raw_write_string(b, m->path);
}

/* The rank of a process: that of its first thread's identity. */
static int32_t process_rank(const struct bpfprof_profile *p, const struct bpfprof_process *pr)
{
	if (!p->thread_ids || !pr->nr_threads || pr->first_thread >= p->nr_threads)
		return -1;
	return p->thread_ids[pr->first_thread].rank;
}

void raw_write_processes(struct buf *b, const struct bpfprof_profile *p)
{
	le32(b, (uint32_t)p->nr_processes);
	le32(b, 0);
	for (size_t i = 0; i < p->nr_processes; i++) {
		const struct bpfprof_process *pr = &p->processes[i];

		le32(b, pr->pid);
		le32(b, pr->ppid);
		le32(b, (uint32_t)process_rank(p, pr));
		le32(b, pr->exited ? 1 : 0);
		le32(b, (uint32_t)pr->nr_mappings);
		le32(b, 0);
		le64(b, pr->samples);
		raw_write_string(b, pr->comm);
		raw_write_string(b, pr->exe);
		raw_write_string(b, pr->cmdline);
		for (size_t m = 0; m < pr->nr_mappings; m++)
			raw_write_mapping(b, &pr->mappings[m]);
	}
}

void raw_write_threads(struct buf *b, const struct bpfprof_profile *p)
{
	le32(b, (uint32_t)p->nr_threads);
	le32(b, 0);
	for (size_t i = 0; i < p->nr_threads; i++) {
		const struct bpfprof_thread *t = &p->threads[i];

		le32(b, t->tid);
		le32(b, t->pid);
		le32(b, t->process);
		le32(b, p->thread_ids ? p->thread_ids[i].thread : 0);
		le64(b, t->samples);
		raw_write_string(b, t->comm);
	}
}

void raw_write_stacks(struct buf *b, const struct bpfprof_profile *p)
{
	le32(b, (uint32_t)p->nr_stacks);
	le32(b, 0);
	for (size_t i = 0; i < p->nr_stacks; i++) {
		const struct bpfprof_stack *s = &p->stacks[i];

		le32(b, s->nr);
		le32(b, s->kernel ? 1 : 0);
		for (uint32_t f = 0; f < s->nr; f++)
			le64(b, s->ips[f]);
	}
}

void raw_write_counts(struct buf *b, const struct bpfprof_profile *p)
{
	le32(b, (uint32_t)p->nr_counts);
	le32(b, 0);
	for (size_t i = 0; i < p->nr_counts; i++) {
		const struct bpfprof_count *c = &p->counts[i];

		le32(b, c->thread);
		le32(b, c->user_stack);
		le32(b, c->kernel_stack);
		le32(b, 0);
		le64(b, c->samples);
	}
}

void raw_write_kernel_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr)
{
	le32(b, (uint32_t)nr);
	le32(b, 0);
	for (size_t i = 0; i < nr; i++) {
		le64(b, syms[i].address);
		le64(b, syms[i].function_start);
		raw_write_string(b, syms[i].function);
		raw_write_string(b, syms[i].module);
	}
}

void raw_write_user_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr)
{
	le32(b, (uint32_t)nr);
	le32(b, 0);
	for (size_t i = 0; i < nr; i++) {
		le32(b, syms[i].pid);
		le32(b, 0);
		le64(b, syms[i].address);
		le64(b, syms[i].module_offset);
		le64(b, syms[i].function_start);
		raw_write_string(b, syms[i].function);
		raw_write_string(b, syms[i].module);
	}
}

void raw_write_interp_symbols(struct buf *b, const struct raw_symbol *syms, size_t nr)
{
	le32(b, (uint32_t)nr);
	le32(b, 0);
	for (size_t i = 0; i < nr; i++) {
		le32(b, syms[i].pid);
		le32(b, syms[i].line);
		le64(b, syms[i].address);
		le64(b, syms[i].function_start);
		le32(b, syms[i].start_line);
		le32(b, 0);
		raw_write_string(b, syms[i].function);
		raw_write_string(b, syms[i].file);
		raw_write_string(b, syms[i].module);
	}
}

/* The bytes of @ev's body (after the 28-byte record header). */
static void event_body(struct buf *b, const struct bpfprof_event *ev)
{
	switch (ev->type) {
	case BPFPROF_EVENT_SAMPLE:
		le32(b, ev->sample.user_stack);
		le32(b, ev->sample.kernel_stack);
		le64(b, ev->sample.period);
		break;
	case BPFPROF_EVENT_COMM:
	case BPFPROF_EVENT_EXEC:
		raw_write_string(b, ev->comm);
		break;
	case BPFPROF_EVENT_FORK:
		le32(b, ev->fork.ppid);
		le32(b, ev->fork.ptid);
		break;
	case BPFPROF_EVENT_MMAP:
		raw_write_mapping(b, ev->mapping);
		break;
	case BPFPROF_EVENT_LOST:
		le64(b, ev->lost.lost);
		le32(b, ev->lost.reason);
		break;
	default:		/* EXIT: the header says it all */
		break;
	}
}

void raw_write_event(struct buf *b, const struct bpfprof_event *ev)
{
	uint64_t start = buf_pos(b);
	uint64_t size_at;
	uint32_t size;

	le32(b, ev->type);
	size_at = buf_pos(b);
	le32(b, 0);		/* size, patched below */
	le64(b, ev->time_ns);
	le32(b, ev->cpu);
	le32(b, ev->pid);
	le32(b, ev->tid);
	event_body(b, ev);
	size = htole32((uint32_t)(buf_pos(b) - start));
	buf_patch(b, (size_t)(size_at - b->flushed), &size, sizeof(size));
}
