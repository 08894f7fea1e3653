// SPDX-License-Identifier: BSD-2-Clause
/*
 * tests/unit/perf/test_perf_format.c - byte-level checks of what the perf
 * plugin writes: struct perf_header, the attrs/ids sections, the feature
 * section table and string features, and the SAMPLE (callchain context
 * markers), MMAP2, COMM, FORK/EXIT, LOST_SAMPLES and FINISHED_ROUND
 * records, against perf.data-file-format.txt and linux/perf_event.h.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_host.h"
#include "perf/perf_internal.h"

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- the host driving the plugin ---------------------------------------- */

static const uint64_t user_ips[] = { 0x401000, 0x402000, 0x403000 };
static const uint64_t kernel_ips[] = { 0xffffffff81001000ull, 0xffffffff81002000ull };
static const struct bpfprof_stack stacks[] = {
	{ NULL, 0, 0 },
	{ user_ips, 3, 0 },
	{ kernel_ips, 2, 1 },
};

static struct fake_host fh;

/* The fake host serving stacks[], errors and warnings on stderr. */
static const struct bpfprof_host *host_init(void)
{
	fake_host_init(&fh);
	fake_host_stacks(&fh, stacks, 3);
	fh.echo = 1;
	return &fh.host;
}

/* Run the plugin over @events (samples only) into a memory file. */
static uint8_t *run_plugin(const struct bpfprof_event *events, size_t nr, size_t *size)
{
	static const char *const argv[] = { "bpfprof", "--format", "perf", "-F", "499" };
	struct bpfprof_run run = {
		.version = "0.1.0",
		.event = "cpu-clock",
		.sample_freq = 499,
		.sample_period = 2004008,
		.start_ns = 1000000000ull,
		.end_ns = 3000000000ull,
		.realtime_anchor_ns = 1700000000000000000ull,
		.hostname = "testhost",
		.os_release = "6.1.0-test",
		.arch = "x86_64",
		.nr_cpus_online = 2,
		.nr_cpus_available = 4,
		.argc = 5,
		.argv = argv,
	};
	struct bpfprof_profile prof = { .run = &run, .stacks = stacks, .nr_stacks = 3 };
	const struct bpfprof_plugin *pl = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	struct bpfprof_output out = { .dir_fd = -1, .path = "mem" };
	void *state = NULL;
	uint8_t *buf;
	long len;
	size_t i;

	assert_non_null(pl);
	assert_string_equal(pl->name, "perf");
	assert_true(pl->flags & BPFPROF_PLUGIN_STREAM);
	out.file = tmpfile();
	assert_non_null(out.file);
	assert_int_equal(pl->open(host_init(), &run, &out, &state), 0);
	for (i = 0; i < nr; i++)
		assert_int_equal(pl->event(state, &events[i]), 0);
	run.drops[BPFPROF_DROP_USER_STACK] = 3;
	assert_int_equal(pl->write(state, &prof), 0);
	pl->close(state);
	assert_int_equal(fh.nr_errors, 0);

	fseek(out.file, 0, SEEK_END);
	len = ftell(out.file);
	buf = malloc((size_t)len);
	assert_non_null(buf);
	rewind(out.file);
	assert_int_equal(fread(buf, 1, (size_t)len, out.file), (size_t)len);
	fclose(out.file);
	*size = (size_t)len;
	return buf;
}

/* The perf_file_section of feature @bit, or NULL if the bit is clear. */
static const uint8_t *feature(const uint8_t *f, int bit)
{
	uint64_t feat_off = rd64(f + 40) + rd64(f + 48);
	int i, idx = 0;

	if (!(rd64(f + 72 + (bit / 64) * 8) & (1ull << (bit % 64))))
		return NULL;
	for (i = 0; i < bit; i++)
		if (rd64(f + 72 + (i / 64) * 8) & (1ull << (i % 64)))
			idx++;
	return f + feat_off + 16 * idx;
}

static void test_file_header_and_attr(void **unused)
{
	struct bpfprof_event ev = {
		.type = BPFPROF_EVENT_SAMPLE, .cpu = 1, .time_ns = 1500000000ull,
		.pid = 42, .tid = 43,
		.sample = { .user_stack = 1, .kernel_stack = 2, .period = 2004008 },
	};
	const uint8_t *attr, *ids, *sec;
	size_t size;
	uint8_t *f = run_plugin(&ev, 1, &size);

	assert_true(size > PERF_FILE_HEADER_SIZE);
	assert_memory_equal(f, "PERFILE2", 8);
	assert_int_equal(rd64(f + 8), 104);			/* header size */
	assert_int_equal(rd64(f + 16), sizeof(struct perf_event_attr) + 16);
	assert_int_equal(rd64(f + 24), 112);			/* attrs.offset */
	assert_int_equal(rd64(f + 32), sizeof(struct perf_event_attr) + 16);
	assert_int_equal(rd64(f + 40), 112 + sizeof(struct perf_event_attr) + 16);
	assert_true(rd64(f + 48) > 0);				/* data.size */
	assert_int_equal(rd64(f + 56), 0);			/* event_types */
	assert_int_equal(rd64(f + 64), 0);

	attr = f + 112;
	assert_int_equal(rd32(attr + 0), PERF_TYPE_SOFTWARE);
	assert_int_equal(rd32(attr + 4), sizeof(struct perf_event_attr));
	assert_int_equal(rd64(attr + 8), PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(rd64(attr + 16), 499);			/* sample_freq */
	assert_int_equal(rd64(attr + 24), PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
					  PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
					  PERF_SAMPLE_CALLCHAIN);
	/* flags word: freq (bit 10), sample_id_all (bit 18), mmap2 (23),
	 * comm_exec (24), use_clockid (25) */
	assert_true(rd64(attr + 40) & (1ull << 10));
	assert_true(rd64(attr + 40) & (1ull << 18));
	assert_true(rd64(attr + 40) & (1ull << 23));
	assert_true(rd64(attr + 40) & (1ull << 24));
	assert_true(rd64(attr + 40) & (1ull << 25));
	assert_int_equal(rd32(attr + offsetof(struct perf_event_attr, clockid)), 1);
	/* ids section of the attr */
	ids = attr + sizeof(struct perf_event_attr);
	assert_int_equal(rd64(ids), 104);
	assert_int_equal(rd64(ids + 8), 8);
	assert_int_equal(rd64(f + 104), PERF_PLUGIN_EVENT_ID);

	/* features perf report --header-only shows */
	assert_non_null(feature(f, 2));		/* BUILD_ID */
	for (int bit = 3; bit <= 12; bit++)
		if (bit != 8 && bit != 9 && bit != 10)	/* depend on /proc */
			assert_non_null(feature(f, bit));
	assert_non_null(feature(f, 21));
	assert_non_null(feature(f, 23));
	assert_non_null(feature(f, 29));
	assert_null(feature(f, 1));		/* TRACING_DATA */

	sec = feature(f, 3);			/* HOSTNAME */
	assert_int_equal(rd64(sec + 8), 4 + 64);
	assert_int_equal(rd32(f + rd64(sec)), 64);
	assert_string_equal((const char *)f + rd64(sec) + 4, "testhost");
	sec = feature(f, 4);			/* OSRELEASE */
	assert_string_equal((const char *)f + rd64(sec) + 4, "6.1.0-test");
	sec = feature(f, 6);			/* ARCH */
	assert_string_equal((const char *)f + rd64(sec) + 4, "x86_64");
	sec = feature(f, 7);			/* NRCPUS: available, online */
	assert_int_equal(rd64(sec + 8), 8);
	assert_int_equal(rd32(f + rd64(sec)), 4);
	assert_int_equal(rd32(f + rd64(sec) + 4), 2);
	sec = feature(f, 11);			/* CMDLINE */
	assert_int_equal(rd32(f + rd64(sec)), 5);
	assert_string_equal((const char *)f + rd64(sec) + 4 + 4, "bpfprof");
	assert_string_equal((const char *)f + rd64(sec) + 4 + 68 + 4, "--format");
	sec = feature(f, 12);			/* EVENT_DESC */
	assert_int_equal(rd32(f + rd64(sec)), 1);
	assert_int_equal(rd32(f + rd64(sec) + 4), sizeof(struct perf_event_attr));
	assert_string_equal((const char *)f + rd64(sec) + 8 + sizeof(struct perf_event_attr) + 8,
			    "cpu-clock");
	sec = feature(f, 21);			/* SAMPLE_TIME */
	assert_int_equal(rd64(f + rd64(sec)), 1500000000ull);
	assert_int_equal(rd64(f + rd64(sec) + 8), 1500000000ull);
	sec = feature(f, 29);			/* CLOCK_DATA */
	assert_int_equal(rd32(f + rd64(sec)), 1);
	assert_int_equal(rd32(f + rd64(sec) + 4), 1);	/* CLOCK_MONOTONIC */
	assert_int_equal(rd64(f + rd64(sec) + 8), 1700000000000000000ull);
	assert_int_equal(rd64(f + rd64(sec) + 16), 1000000000ull);
	/* the feature table starts right after the data section */
	assert_int_equal(rd64(feature(f, 2)) >= rd64(f + 40) + rd64(f + 48), 1);
	free(f);
}

/* Walk the data section; count records by type and check the one sample. */
static void test_data_section_records(void **unused)
{
	struct bpfprof_event ev[2] = {
		{ .type = BPFPROF_EVENT_SAMPLE, .cpu = 1, .time_ns = 1500000000ull,
		  .pid = 42, .tid = 43,
		  .sample = { .user_stack = 1, .kernel_stack = 2, .period = 2004008 } },
		{ .type = BPFPROF_EVENT_LOST, .cpu = 0, .time_ns = 1600000000ull,
		  .pid = 0, .tid = 0, .lost = { .lost = 7, .reason = BPFPROF_DROP_RINGBUF_FULL } },
	};
	unsigned counts[128] = { 0 };
	uint64_t lost = 0;
	size_t size;
	uint8_t *f = run_plugin(ev, 2, &size);
	const uint8_t *p = f + rd64(f + 40), *end = p + rd64(f + 48);

	while (p < end) {
		uint32_t type = rd32(p);
		uint16_t rsize = rd16(p + 6);

		assert_true(rsize >= 8 && rsize % 8 == 0);
		assert_true(p + rsize <= end);
		if (type < 128)
			counts[type]++;
		if (type == PERF_RECORD_LOST_SAMPLES)
			lost += rd64(p + 8);
		if (type == PERF_RECORD_SAMPLE) {
			assert_int_equal(rd16(p + 4), PERF_RECORD_MISC_KERNEL);
			assert_int_equal(rsize, 8 + 7 * 8 + 7 * 8);
			assert_int_equal(rd64(p + 8), PERF_PLUGIN_EVENT_ID);
			assert_int_equal(rd64(p + 16), kernel_ips[0]);
			assert_int_equal(rd32(p + 24), 42);
			assert_int_equal(rd32(p + 28), 43);
			assert_int_equal(rd64(p + 32), 1500000000ull);
			assert_int_equal(rd32(p + 40), 1);
			assert_int_equal(rd64(p + 48), 2004008);
			assert_int_equal(rd64(p + 56), 7);
			assert_int_equal(rd64(p + 64), PERF_CONTEXT_KERNEL);
			assert_int_equal(rd64(p + 72), kernel_ips[0]);
			assert_int_equal(rd64(p + 80), kernel_ips[1]);
			assert_int_equal(rd64(p + 88), PERF_CONTEXT_USER);
			assert_int_equal(rd64(p + 96), user_ips[0]);
			assert_int_equal(rd64(p + 112), user_ips[2]);
		}
		p += rsize;
	}
	assert_ptr_equal(p, end);
	assert_int_equal(counts[PERF_RECORD_SAMPLE], 1);
	assert_int_equal(counts[PERF_RECORD_LOST_SAMPLES], 2);	/* streamed + run->drops */
	assert_int_equal(lost, 7 + 3);
	assert_true(counts[PERF_RECORD_FINISHED_ROUND_TYPE] >= 1);
	/* pid 42 had no COMM/MMAP in the stream: write() adds a COMM only if
	 * the profile lists it; this profile is empty */
	assert_int_equal(counts[PERF_RECORD_COMM], 0);
	free(f);
}

static const struct perf_sample_id sid = { .pid = 7, .tid = 8, .time = 12345, .cpu = 3 };

static void check_sample_id(const uint8_t *trailer)
{
	assert_int_equal(rd32(trailer), 7);
	assert_int_equal(rd32(trailer + 4), 8);
	assert_int_equal(rd64(trailer + 8), 12345);
	assert_int_equal(rd32(trailer + 16), 3);
	assert_int_equal(rd32(trailer + 20), 0);
	assert_int_equal(rd64(trailer + 24), PERF_PLUGIN_EVENT_ID);
}

static void test_record_sample_user_only(void **unused)
{
	struct buf b = { 0 };

	assert_int_equal(write_record_sample(&b, NULL, &stacks[1], 1000, &sid), 0);
	assert_int_equal(b.len, 64 + 4 * 8);
	assert_int_equal(rd32(b.data), PERF_RECORD_SAMPLE);
	assert_int_equal(rd16(b.data + 4), PERF_RECORD_MISC_USER);
	assert_int_equal(rd16(b.data + 6), b.len);
	assert_int_equal(rd64(b.data + 16), user_ips[0]);
	assert_int_equal(rd64(b.data + 56), 4);
	assert_int_equal(rd64(b.data + 64), PERF_CONTEXT_USER);
	assert_int_equal(rd64(b.data + 72), user_ips[0]);
	buf_free(&b);
}

static void test_record_mmap2(void **unused)
{
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct bpfprof_mapping m = {
		.start = 0x7f0000001000, .end = 0x7f0000005000, .pgoff = 0x1000,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .dev_major = 254,
		.dev_minor = 1, .inode = 99, .path = "/usr/lib/libx.so",
	};
	struct buf b = { 0 };

	/* with device and inode */
	assert_int_equal(write_record_mmap2(&b, 7, 8, &m, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_MMAP2);
	assert_int_equal(rd16(b.data + 4), PERF_RECORD_MISC_USER);
	/* header 8, pid/tid 8, addr/len/pgoff 24, maj/min/ino/gen 24,
	 * prot/flags 8, "/usr/lib/libx.so\0" padded to 24, sample_id 32 */
	assert_int_equal(rd16(b.data + 6), 8 + 8 + 24 + 24 + 8 + 24 + 32);
	assert_int_equal(rd32(b.data + 8), 7);
	assert_int_equal(rd32(b.data + 12), 8);
	assert_int_equal(rd64(b.data + 16), 0x7f0000001000);
	assert_int_equal(rd64(b.data + 24), 0x4000);
	assert_int_equal(rd64(b.data + 32), 0x1000);
	assert_int_equal(rd32(b.data + 40), 254);
	assert_int_equal(rd32(b.data + 44), 1);
	assert_int_equal(rd64(b.data + 48), 99);
	assert_int_equal(rd32(b.data + 64), 0x5);	/* PROT_READ|PROT_EXEC */
	assert_int_equal(rd32(b.data + 68), 0x2);	/* MAP_PRIVATE */
	assert_string_equal((const char *)b.data + 72, "/usr/lib/libx.so");
	check_sample_id(b.data + 96);

	/* with a build-id */
	buf_reset(&b);
	m.build_id = bid;
	m.build_id_size = 20;
	assert_int_equal(write_record_mmap2(&b, 7, 8, &m, &sid), 0);
	assert_int_equal(rd16(b.data + 4), PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	assert_int_equal(b.data[40], 20);
	assert_memory_equal(b.data + 44, bid, 20);
	buf_free(&b);
}

static void test_record_comm_fork_exit(void **unused)
{
	struct buf b = { 0 };

	assert_int_equal(write_record_comm(&b, 7, 8, "worker", 1, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_COMM);
	assert_int_equal(rd16(b.data + 4), PERF_RECORD_MISC_COMM_EXEC);
	assert_int_equal(rd16(b.data + 6), 8 + 8 + 8 + 32);
	assert_string_equal((const char *)b.data + 16, "worker");
	assert_int_equal(b.data[23], 0);
	check_sample_id(b.data + 24);

	buf_reset(&b);
	assert_int_equal(write_record_comm(&b, 7, 8, "exactly8", 0, &sid), 0);
	assert_int_equal(rd16(b.data + 4), 0);
	assert_int_equal(rd16(b.data + 6), 8 + 8 + 16 + 32);	/* NUL needs a new word */

	buf_reset(&b);
	assert_int_equal(write_record_fork(&b, 10, 7, 11, 8, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_FORK);
	assert_int_equal(rd16(b.data + 6), 8 + 16 + 8 + 32);
	assert_int_equal(rd32(b.data + 8), 10);
	assert_int_equal(rd32(b.data + 12), 7);
	assert_int_equal(rd32(b.data + 16), 11);
	assert_int_equal(rd32(b.data + 20), 8);
	assert_int_equal(rd64(b.data + 24), 12345);

	buf_reset(&b);
	assert_int_equal(write_record_exit(&b, 10, 7, 11, 8, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_EXIT);

	buf_reset(&b);
	assert_int_equal(write_record_lost_samples(&b, 5, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_LOST_SAMPLES);
	assert_int_equal(rd16(b.data + 6), 8 + 8 + 32);
	assert_int_equal(rd64(b.data + 8), 5);

	buf_reset(&b);
	assert_int_equal(write_record_finished_round(&b), 0);
	assert_int_equal(b.len, 8);
	assert_int_equal(rd32(b.data), 68);
	assert_int_equal(rd16(b.data + 6), 8);

	buf_reset(&b);
	assert_int_equal(write_record_mmap(&b, PERF_HOST_KERNEL_PID, 0, 0xffffffff81000000ull,
					   0x1000000, 0xffffffff81000000ull,
					   "[kernel.kallsyms]_text", PERF_RECORD_MISC_KERNEL, &sid), 0);
	assert_int_equal(rd32(b.data), PERF_RECORD_MMAP);
	assert_int_equal(rd16(b.data + 6), 8 + 8 + 24 + 24 + 32);
	assert_int_equal(rd32(b.data + 8), 0xffffffffu);
	assert_string_equal((const char *)b.data + 40, "[kernel.kallsyms]_text");
	buf_free(&b);
}

static void test_string_features(void **unused)
{
	static const char *const argv[] = { "a", "" };
	struct perf_dso d = { .path = "/bin/x", .build_id = { 1, 2, 3 }, .build_id_size = 3 };
	struct perf_features f = { .dsos = &d };
	struct buf b = { 0 };

	assert_int_equal(write_perf_header_string(&b, "vm"), 0);
	assert_int_equal(b.len, 4 + 64);
	assert_int_equal(rd32(b.data), 64);
	assert_string_equal((const char *)b.data + 4, "vm");
	for (size_t i = 6; i < b.len; i++)
		assert_int_equal(b.data[i], 0);

	buf_reset(&b);
	assert_int_equal(write_perf_header_string_list(&b, 2, argv), 0);
	assert_int_equal(b.len, 4 + 2 * 68);
	assert_int_equal(rd32(b.data), 2);

	/* a 63-character string still fits in 64 bytes, 64 need 128 */
	buf_reset(&b);
	char s[65];
	memset(s, 'x', 64);
	s[64] = '\0';
	assert_int_equal(write_perf_header_string(&b, s), 0);
	assert_int_equal(rd32(b.data), 128);

	/* build_id_event: header, pid -1, build_id[24] with size at [20], name */
	buf_reset(&b);
	d.hh.next = NULL;
	assert_int_equal(write_feature_build_id(&b, &f), 0);
	assert_int_equal(b.len, 36 + 64);
	assert_int_equal(rd16(b.data + 4), PERF_RECORD_MISC_USER | (1u << 15));
	assert_int_equal(rd16(b.data + 6), 100);
	assert_int_equal(rd32(b.data + 8), 0xffffffffu);
	assert_int_equal(b.data[12], 1);
	assert_int_equal(b.data[14], 3);
	assert_int_equal(b.data[32], 3);
	assert_string_equal((const char *)b.data + 36, "/bin/x");
	buf_free(&b);
}

/* Writes @text to @tmpl (a mkstemp template, replaced by the name). */
static int write_text(char *tmpl, const char *text)
{
	int fd = mkstemp(tmpl);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	if (write(fd, text, len) != len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void test_sysinfo(void **unused)
{
	char ksyms[] = "/tmp/bpfprof-kallsyms.XXXXXX", iomem[] = "/tmp/bpfprof-iomem.XXXXXX";
	struct perf_kernel_info k = { 0 };
	char desc[256], cpuid[128];
	FILE *notes;
	uint8_t id[20], size = 0;
	char path[] = "/tmp/perf-notes-XXXXXX";
	int fd;
	/* Elf_Nhdr { namesz 4, descsz 4, type 1 } "GNU" then NT_GNU_BUILD_ID */
	static const uint8_t blob[] = {
		4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0, 9, 9, 9, 9,
		4, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 3, 4, 5, 0, 0, 0,
	};

	fd = mkstemp(path);
	assert_true(fd >= 0);
	notes = fdopen(fd, "wb");
	fwrite(blob, 1, sizeof(blob), notes);
	fclose(notes);
	assert_int_equal(read_build_id_notes(path, id, &size), 0);
	assert_int_equal(size, 5);
	assert_int_equal(id[0], 1);
	assert_int_equal(id[4], 5);
	unlink(path);

	/* kallsyms cut before _etext: the end comes from iomem's "Kernel code" */
	assert_int_equal(write_text(ksyms, "0000000000000000 A fixed_percpu_data\n"
				    "ffffffff81000000 T _stext\nffffffff81000000 T _text\n"
				    "ffffffff81000010 T do_one_initcall\n"), 0);
	assert_int_equal(write_text(iomem, "00100000-bfffffff : System RAM\n"
				    "  01000000-02206447 : Kernel code\n"
				    "  02400000-02e08fff : Kernel rodata\n"), 0);
	assert_int_equal(read_kernel_text(ksyms, NULL, &k), -ENOENT);
	assert_int_equal(read_kernel_text(ksyms, iomem, &k), 0);
	assert_int_equal(k.text_start, 0xffffffff81000000ull);
	assert_int_equal(k.text_end, 0xffffffff82206448ull);
	assert_string_equal(k.ref_reloc_sym, "_text");
	unlink(ksyms);
	unlink(iomem);

	if (read_kernel_text("/proc/kallsyms", NULL, &k) == 0) {
		struct perf_kernel_info fast = { 0 };

		assert_true(k.text_end > k.text_start);
		assert_int_equal(k.ref_reloc_addr, k.text_start);
		/* the early stop with /proc/iomem's length finds the same range */
		assert_int_equal(read_kernel_text("/proc/kallsyms", "/proc/iomem", &fast), 0);
		assert_int_equal(fast.text_start, k.text_start);
		assert_int_equal(fast.text_end, k.text_end);
	}
	read_cpu_info("/proc/cpuinfo", desc, sizeof(desc), cpuid, sizeof(cpuid));
#if defined(__x86_64__)
	assert_true(desc[0] != '\0');
	assert_non_null(strchr(cpuid, ','));
#endif
	assert_true(read_total_mem_kb("/proc/meminfo") > 0);
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Samples go straight to the file: a million of them, spread over 100
 * threads and 2000 s, must not grow the process. */
static void test_memory_flat(void **unused)
{
	struct bpfprof_run run = { .version = "0.1.0", .event = "cpu-clock", .sample_freq = 499,
				   .sample_period = 2004008, .start_ns = 1 };
	struct bpfprof_profile prof = { .run = &run, .stacks = stacks, .nr_stacks = 3 };
	const struct bpfprof_plugin *pl = bpfprof_plugin_entry(BPFPROF_PLUGIN_ABI_VERSION);
	struct bpfprof_output out = { .dir_fd = -1, .path = "/dev/null" };
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_SAMPLE, .pid = 42,
				    .sample = { .user_stack = 1, .kernel_stack = 2 } };
	void *state = NULL;
	long before, after;
	uint32_t i;

	out.file = fopen("/dev/null", "w+b");
	assert_non_null(out.file);
	assert_int_equal(pl->open(host_init(), &run, &out, &state), 0);
	/* warm up: the record buffer and the 100 threads' state */
	for (i = 0; i < 1000; i++) {
		ev.tid = 42 + i % 100;
		ev.cpu = i % 2;
		ev.time_ns = 1000000000ull + 2000000ull * i;
		assert_int_equal(pl->event(state, &ev), 0);
	}
	before = max_rss_kb();
	for (; i < 1000000; i++) {
		ev.tid = 42 + i % 100;
		ev.cpu = i % 2;
		ev.time_ns = 1000000000ull + 2000000ull * i;
		assert_int_equal(pl->event(state, &ev), 0);
	}
	after = max_rss_kb();
	assert_int_equal(pl->write(state, &prof), 0);
	pl->close(state);
	fclose(out.file);
	assert_int_equal(fh.nr_errors, 0);
	assert_true(after - before < 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_header_and_attr),
		cmocka_unit_test(test_data_section_records),
		cmocka_unit_test(test_record_sample_user_only),
		cmocka_unit_test(test_record_mmap2),
		cmocka_unit_test(test_record_comm_fork_exit),
		cmocka_unit_test(test_string_features),
		cmocka_unit_test(test_sysinfo),
		cmocka_unit_test(test_memory_flat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
