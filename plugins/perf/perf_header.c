// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugins/perf/perf_header.c - the non-data parts of a perf.data file
 * (PERFILE2, see perf.data-file-format.txt): the perf_event_attr of our
 * event, struct perf_header, the ids and attrs sections, and the feature
 * sections (HEADER_*) with the perf_file_section table that precedes
 * them right after the data section.  One writer per structure.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "perf_internal.h"

/* Feature bits (perf.data-file-format.txt, "Flags section"). */
enum {
	HEADER_BUILD_ID = 2,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_SAMPLE_TIME = 21,
	HEADER_CLOCKID = 23,
	HEADER_CLOCK_DATA = 29,
};

/* perf pads header strings and build-id file names to this (NAME_ALIGN). */
#define PERF_NAME_ALIGN 64u
#define PERF_ALIGN(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))

/* perf's PERF_RECORD_MISC_BUILD_ID_SIZE: build_id_event carries its size. */
#define PERF_MISC_BUILD_ID_SIZE (1u << 15)

/* The attr perf record -g would have written for this run's event. */
void fill_perf_event_attr(struct perf_event_attr *attr, const struct bpfprof_run *run)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	if (run->event && !strcmp(run->event, "task-clock"))
		attr->config = PERF_COUNT_SW_TASK_CLOCK;
	if (run->sample_freq) {
		attr->freq = 1;
		attr->sample_freq = run->sample_freq;
	} else {
		attr->sample_period = run->sample_period;
	}
	attr->sample_type = PERF_PLUGIN_SAMPLE_TYPE;
	attr->read_format = PERF_FORMAT_ID;
	attr->inherit = 1;
	attr->mmap = 1;
	attr->comm = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->mmap2 = 1;
	attr->comm_exec = 1;
	attr->build_id = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	if (run->max_stack_depth && run->max_stack_depth <= 0xffff)
		attr->sample_max_stack = (uint16_t)run->max_stack_depth;
}

/* struct perf_file_section */
static void put_file_section(struct buf *b, uint64_t offset, uint64_t size)
{
	buf_u64(b, offset);
	buf_u64(b, size);
}

/* struct perf_header: magic, size, attr_size, attrs, data, event_types,
 * the feature bitmap. */
int write_perf_header(struct buf *b, const struct perf_file_layout *l)
{
	int i;

	buf_put(b, "PERFILE2", 8);
	buf_u64(b, PERF_FILE_HEADER_SIZE);
	buf_u64(b, sizeof(struct perf_event_attr) + 16);
	put_file_section(b, l->attrs_offset, l->attrs_size);
	put_file_section(b, l->data_offset, l->data_size);
	put_file_section(b, 0, 0);	/* event_types: unused */
	for (i = 0; i < 4; i++)
		buf_u64(b, l->feat_bits[i]);
	return b->err;
}

/* The u64 ids an attr's ids section points at. */
int write_ids_section(struct buf *b, const uint64_t *ids, size_t nr)
{
	buf_put(b, ids, nr * sizeof(*ids));
	return b->err;
}

/* One entry of the attrs section: the attr and a perf_file_section for
 * its ids. */
int write_attrs_section(struct buf *b, const struct perf_event_attr *attr,
			uint64_t ids_offset, uint64_t nr_ids)
{
	buf_put(b, attr, sizeof(*attr));
	put_file_section(b, ids_offset, nr_ids * sizeof(uint64_t));
	return b->err;
}

/* struct perf_header_string: u32 len, the string NUL-padded to len
 * (a multiple of NAME_ALIGN, as perf writes it). */
int write_perf_header_string(struct buf *b, const char *s)
{
	size_t n = strlen(s ? s : "");
	size_t len = PERF_ALIGN(n + 1, PERF_NAME_ALIGN);

	buf_u32(b, (uint32_t)len);
	buf_put(b, s, n);
	buf_zero(b, len - n);
	return b->err;
}

/* struct perf_header_string_list: u32 nr, nr strings. */
int write_perf_header_string_list(struct buf *b, int nr, const char *const *s)
{
	int i;

	buf_u32(b, nr > 0 ? (uint32_t)nr : 0);
	for (i = 0; i < nr; i++)
		write_perf_header_string(b, s[i]);
	return b->err;
}

/* HEADER_BUILD_ID: a build_id_event per file, pid = the host machine. */
int write_feature_build_id(struct buf *b, const struct perf_features *f)
{
	const struct perf_dso *d;

	for (d = f->dsos; d; d = d->hh.next) {
		size_t n = strlen(d->path);
		size_t len = PERF_ALIGN(n + 1, PERF_NAME_ALIGN);
		uint16_t misc = d->kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
		uint8_t bid[24] = { 0 };

		if (!d->build_id_size)
			continue;
		if (36 + len > 0xffff)
			continue;
		memcpy(bid, d->build_id, d->build_id_size);
		bid[20] = d->build_id_size;
		buf_u32(b, 0);	/* header.type: unused */
		buf_u16(b, misc | PERF_MISC_BUILD_ID_SIZE);
		buf_u16(b, (uint16_t)(36 + len));
		buf_u32(b, PERF_HOST_KERNEL_PID);
		buf_put(b, bid, sizeof(bid));
		buf_put(b, d->path, n);
		buf_zero(b, len - n);
	}
	return b->err;
}

int write_feature_hostname(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->hostname);
}

int write_feature_osrelease(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->os_release);
}

int write_feature_version(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->version);
}

int write_feature_arch(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->arch);
}

/* struct nr_cpus { nr_cpus_available; nr_cpus_online; } */
int write_feature_nrcpus(struct buf *b, const struct perf_features *f)
{
	buf_u32(b, f->nr_cpus_available);
	buf_u32(b, f->nr_cpus_online);
	return b->err;
}

int write_feature_cpudesc(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->cpudesc);
}

int write_feature_cpuid(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string(b, f->cpuid);
}

int write_feature_total_mem(struct buf *b, const struct perf_features *f)
{
	buf_u64(b, f->total_mem_kb);
	return b->err;
}

int write_feature_cmdline(struct buf *b, const struct perf_features *f)
{
	return write_perf_header_string_list(b, f->argc, f->argv);
}

/* HEADER_EVENT_DESC: nr, attr_size, then { attr, nr_ids, name, ids[] }. */
int write_feature_event_desc(struct buf *b, const struct perf_features *f)
{
	buf_u32(b, 1);
	buf_u32(b, sizeof(*f->attr));
	buf_put(b, f->attr, sizeof(*f->attr));
	buf_u32(b, 1);
	write_perf_header_string(b, f->event_name);
	buf_u64(b, f->event_id);
	return b->err;
}

/* HEADER_SAMPLE_TIME: first and last sample time. */
int write_feature_sample_time(struct buf *b, const struct perf_features *f)
{
	buf_u64(b, f->first_sample_ns);
	buf_u64(b, f->last_sample_ns);
	return b->err;
}

/* HEADER_CLOCKID: the resolution of the sampling clock, ns. */
int write_feature_clockid(struct buf *b, const struct perf_features *f)
{
	buf_u64(b, f->clockid_res_ns);
	return b->err;
}

/* HEADER_CLOCK_DATA: { version 1, clockid, wall_clock_ns, clockid_time_ns }. */
int write_feature_clock_data(struct buf *b, const struct perf_features *f)
{
	buf_u32(b, 1);
	buf_u32(b, f->clockid);
	buf_u64(b, f->wall_clock_ns);
	buf_u64(b, f->clockid_time_ns);
	return b->err;
}

/* The features we write, in bit order (the order of the section table). */
static const struct {
	int bit;
	int (*write)(struct buf *b, const struct perf_features *f);
} feature_writers[] = {
	{ HEADER_BUILD_ID, write_feature_build_id },
	{ HEADER_HOSTNAME, write_feature_hostname },
	{ HEADER_OSRELEASE, write_feature_osrelease },
	{ HEADER_VERSION, write_feature_version },
	{ HEADER_ARCH, write_feature_arch },
	{ HEADER_NRCPUS, write_feature_nrcpus },
	{ HEADER_CPUDESC, write_feature_cpudesc },
	{ HEADER_CPUID, write_feature_cpuid },
	{ HEADER_TOTAL_MEM, write_feature_total_mem },
	{ HEADER_CMDLINE, write_feature_cmdline },
	{ HEADER_EVENT_DESC, write_feature_event_desc },
	{ HEADER_SAMPLE_TIME, write_feature_sample_time },
	{ HEADER_CLOCKID, write_feature_clockid },
	{ HEADER_CLOCK_DATA, write_feature_clock_data },
};

#define NR_FEATURE_WRITERS (sizeof(feature_writers) / sizeof(feature_writers[0]))

/* Whether @f has what feature @bit describes. */
static int feature_present(int bit, const struct perf_features *f)
{
	switch (bit) {
	case HEADER_CPUDESC:
		return f->cpudesc && *f->cpudesc;
	case HEADER_CPUID:
		return f->cpuid && *f->cpuid;
	case HEADER_TOTAL_MEM:
		return f->total_mem_kb != 0;
	case HEADER_HOSTNAME:
		return f->hostname != NULL;
	case HEADER_OSRELEASE:
		return f->os_release != NULL;
	case HEADER_ARCH:
		return f->arch != NULL;
	case HEADER_CLOCK_DATA:
		return f->wall_clock_ns != 0;
	default:
		return 1;
	}
}

/*
 * The perf_file_section table (one per set bit, in bit order) followed by
 * the features' data, at @feat_offset = data.offset + data.size.
 */
int write_feature_sections(FILE *file, uint64_t feat_offset, const struct perf_features *f,
			   struct perf_file_layout *l)
{
	struct buf table = { 0 }, data = { 0 };
	uint64_t start[NR_FEATURE_WRITERS], size[NR_FEATURE_WRITERS];
	int present[NR_FEATURE_WRITERS];
	size_t i, nr = 0;
	uint64_t base;
	int err = 0;

	memset(l->feat_bits, 0, sizeof(l->feat_bits));
	for (i = 0; i < NR_FEATURE_WRITERS; i++) {
		present[i] = feature_present(feature_writers[i].bit, f);
		nr += present[i];
	}
	base = feat_offset + nr * 16;
	for (i = 0; i < NR_FEATURE_WRITERS && !err; i++) {
		if (!present[i])
			continue;
		start[i] = data.len;
		err = feature_writers[i].write(&data, f);
		size[i] = data.len - start[i];
		l->feat_bits[feature_writers[i].bit / 64] |= 1ull << (feature_writers[i].bit % 64);
		put_file_section(&table, base + start[i], size[i]);
	}
	if (!err)
		err = table.err ? table.err : data.err;
	if (!err && fseeko(file, (off_t)feat_offset, SEEK_SET))
		err = -errno;
	if (!err && (fwrite(table.data, 1, table.len, file) != table.len ||
		     (data.len && fwrite(data.data, 1, data.len, file) != data.len)))
		err = -EIO;
	buf_free(&table);
	buf_free(&data);
	return err;
}
