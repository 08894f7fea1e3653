/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * plugins/perf/perf_internal.h - declarations shared by the files of the
 * perf.data output plugin:
 *
 *   perf_records.c  one writer per data-section record (PERF_RECORD_*)
 *   perf_header.c   the file header, the attrs section and the feature
 *                   sections (HEADER_*), one writer per structure
 *   perf_sysinfo.c  facts read from the running system (kernel text,
 *                   kernel build-id, CPU description, memory size)
 *   perf_interp.c   interpreted frames (Python functions): the MMAP2
 *                   record and the image perf names them from
 *   perf_plugin.c   the plugin entry point: open/event/write/close, the
 *                   per-process/per-thread/per-file state and the order
 *                   records reach the file in
 *
 * Everything is written in the byte order of the machine that runs
 * bpfprof, as perf does.
 */
#ifndef BPFPROF_PERF_INTERNAL_H
#define BPFPROF_PERF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <uthash.h>

#include <bpfprof/plugin.h>

#include "common/buf.h"		/* the buffer every structure is built in */
#include "common/hashtab.h"
#include "common/interp_image.h"

#define PERF_HIDDEN __attribute__((visibility("hidden")))

/* ---- records (perf_records.c) ------------------------------------------ */

/* What every sample carries; sample_id_all gives the other records the
 * TID, TIME, CPU and IDENTIFIER parts of it as a trailer. */
#define PERF_PLUGIN_SAMPLE_TYPE                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |             \
	 PERF_SAMPLE_CALLCHAIN)

/* The id of our one event (attrs section, EVENT_DESC, every record). */
#define PERF_PLUGIN_EVENT_ID 1ull

/* perf's pid for the host kernel (HOST_KERNEL_ID). */
#define PERF_HOST_KERNEL_PID 0xffffffffu

/* Record types perf record adds to the kernel's (perf.data-file-format). */
#define PERF_RECORD_FINISHED_ROUND_TYPE 68u

/* The sample_id trailer (struct sample_id in perf_event.h). */
struct perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

/* The kernel's (and perf's) name of anonymous memory in MMAP2 records:
 * perf looks code in it up in /tmp/perf-PID.map. */
#define PERF_ANON_NAME "//anon"

/* Whether @m is anonymous executable memory ("" or "[anon:NAME]"),
 * written as PERF_ANON_NAME. */
PERF_HIDDEN int perf_anon_mapping(const struct bpfprof_mapping *m);

PERF_HIDDEN int write_record_mmap(struct buf *b, uint32_t pid, uint32_t tid,
				  uint64_t start, uint64_t len, uint64_t pgoff,
				  const char *filename, uint16_t misc,
				  const struct perf_sample_id *id);
PERF_HIDDEN int write_record_mmap2(struct buf *b, uint32_t pid, uint32_t tid,
				   const struct bpfprof_mapping *m,
				   const struct perf_sample_id *id);
PERF_HIDDEN int write_record_comm(struct buf *b, uint32_t pid, uint32_t tid,
				  const char *comm, int exec,
				  const struct perf_sample_id *id);
PERF_HIDDEN int write_record_fork(struct buf *b, uint32_t pid, uint32_t ppid,
				  uint32_t tid, uint32_t ptid,
				  const struct perf_sample_id *id);
PERF_HIDDEN int write_record_exit(struct buf *b, uint32_t pid, uint32_t ppid,
				  uint32_t tid, uint32_t ptid,
				  const struct perf_sample_id *id);
/* @kstack/@ustack leaf first, either may be NULL; period in ns. */
PERF_HIDDEN int write_record_sample(struct buf *b, const struct bpfprof_stack *kstack,
				    const struct bpfprof_stack *ustack, uint64_t period,
				    const struct perf_sample_id *id);
PERF_HIDDEN int write_record_lost_samples(struct buf *b, uint64_t lost,
					  const struct perf_sample_id *id);
PERF_HIDDEN int write_record_finished_round(struct buf *b);

/* ---- header and features (perf_header.c) ------------------------------- */

/* Where the sections are (offsets from the start of the file). */
struct perf_file_layout {
	uint64_t attrs_offset, attrs_size;
	uint64_t data_offset, data_size;
	uint64_t feat_bits[4];		/* HEADER_* bitmap: flags, flags1[3] */
};

/* Size of struct perf_header on disk. */
#define PERF_FILE_HEADER_SIZE 104u

/* A file with a build-id, for HEADER_BUILD_ID (keyed by path). */
struct perf_dso {
	char *path;
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint8_t kernel;			/* 1: [kernel.kallsyms] */
	UT_hash_handle hh;
};

/* Everything the feature sections describe. */
struct perf_features {
	const char *hostname, *os_release, *version, *arch;
	uint32_t nr_cpus_online, nr_cpus_available;
	const char *cpudesc;		/* NULL: feature left out */
	const char *cpuid;		/* NULL: feature left out */
	uint64_t total_mem_kb;		/* 0: feature left out */
	int argc;
	const char *const *argv;
	const struct perf_event_attr *attr;
	const char *event_name;
	uint64_t event_id;
	const struct perf_dso *dsos;
	uint64_t first_sample_ns, last_sample_ns;
	uint32_t clockid;
	uint64_t clockid_res_ns;
	uint64_t wall_clock_ns, clockid_time_ns; /* the same instant on both clocks */
};

PERF_HIDDEN void fill_perf_event_attr(struct perf_event_attr *attr, const struct bpfprof_run *run);
PERF_HIDDEN int write_perf_header(struct buf *b, const struct perf_file_layout *l);
PERF_HIDDEN int write_ids_section(struct buf *b, const uint64_t *ids, size_t nr);
PERF_HIDDEN int write_attrs_section(struct buf *b, const struct perf_event_attr *attr,
				    uint64_t ids_offset, uint64_t nr_ids);
PERF_HIDDEN int write_perf_header_string(struct buf *b, const char *s);
PERF_HIDDEN int write_perf_header_string_list(struct buf *b, int nr, const char *const *s);
PERF_HIDDEN int write_feature_build_id(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_hostname(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_osrelease(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_version(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_arch(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_nrcpus(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_cpudesc(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_cpuid(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_total_mem(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_cmdline(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_event_desc(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_sample_time(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_clockid(struct buf *b, const struct perf_features *f);
PERF_HIDDEN int write_feature_clock_data(struct buf *b, const struct perf_features *f);
/*
 * Write the feature section table and every feature at @feat_offset (the
 * end of the data section) of @f, setting l->feat_bits.  Returns 0 or a
 * negative errno.
 */
PERF_HIDDEN int write_feature_sections(FILE *file, uint64_t feat_offset,
				       const struct perf_features *f,
				       struct perf_file_layout *l);

/* ---- the running system (perf_sysinfo.c) ------------------------------- */

struct perf_kernel_info {
	uint64_t text_start;		/* _text (or _stext) */
	uint64_t text_end;		/* _etext */
	uint64_t ref_reloc_addr;	/* address of ref_reloc_sym */
	const char *ref_reloc_sym;	/* "_text" or "_stext" */
	uint8_t build_id[20];
	uint8_t build_id_size;		/* 0: unknown */
};

/* Kernel text range [_text, _etext) from @kallsyms (e.g. "/proc/kallsyms"),
 * the end taken from the "Kernel code" length in @iomem (e.g. "/proc/iomem";
 * NULL: scan kallsyms up to _etext instead) when it is there; -ENOENT if
 * the symbols are missing or hidden (all zero), -errno if @kallsyms cannot
 * be opened. */
PERF_HIDDEN int read_kernel_text(const char *kallsyms, const char *iomem,
				 struct perf_kernel_info *k);
/* GNU build-id from an ELF note file such as /sys/kernel/notes. */
PERF_HIDDEN int read_build_id_notes(const char *path, uint8_t *id, uint8_t *size);
/* CPU description and perf's CPUID string from /proc/cpuinfo (x86 form
 * "vendor,family,model,stepping"); empty strings when unknown. */
PERF_HIDDEN void read_cpu_info(const char *cpuinfo, char *desc, size_t desc_size,
			       char *cpuid, size_t cpuid_size);
/* MemTotal of /proc/meminfo in kB, 0 if unknown. */
PERF_HIDDEN uint64_t read_total_mem_kb(const char *meminfo);

/* ---- interpreted frames (perf_interp.c) ----------------------------------- */

/* What the plugin keeps about interpreted frames (common/interp_image.h). */
struct perf_interp {
	char *image_path;		/* absolute; NULL: frames are left unnamed */
	const struct bpfprof_output *out; /* the image is its companion */
	uint8_t *stacks;		/* per user stack index: does it hold any */
	size_t nr_stacks;
	struct hashtab announced;	/* pid -> its MMAP2 of the range is written */
	size_t nr_symbols;		/* functions in the image written */
};

/* Start with the image at the absolute path of output @out plus
 * INTERP_IMAGE_SUFFIX, a companion of @out; none (frames left unnamed)
 * when @host has no companion().  0 or -ENOMEM. */
PERF_HIDDEN int perf_interp_init(struct perf_interp *pi, const struct bpfprof_host *host,
				 const struct bpfprof_output *out);
PERF_HIDDEN void perf_interp_free(struct perf_interp *pi);
/* Whether user stack @index (@u) holds interpreted frames: 1, 0, or
 * -ENOMEM.  Decided once per index. */
PERF_HIDDEN int perf_interp_stack(struct perf_interp *pi, uint32_t index,
				  const struct bpfprof_stack *u);
/* 1 if the MMAP2 record of the range must be written for @pid now (it is
 * then taken as written), 0 if it is, -ENOMEM. */
PERF_HIDDEN int perf_interp_need_map(struct perf_interp *pi, uint32_t pid);
/* @pid exec'd: its next interpreted sample writes the MMAP2 record again. */
PERF_HIDDEN void perf_interp_forget(struct perf_interp *pi, uint32_t pid);
/* The mapping that MMAP2 record describes. */
PERF_HIDDEN void perf_interp_mapping(const struct perf_interp *pi, struct bpfprof_mapping *m);
/*
 * Write the image of every interpreted function in @prof's user stacks,
 * if an MMAP2 record names it; its build-id in @build_id.  1 if written,
 * 0 if there was none to write, or a negative errno.
 */
PERF_HIDDEN int perf_interp_write_image(struct perf_interp *pi, const struct bpfprof_host *host,
					const struct bpfprof_profile *prof,
					uint8_t build_id[20]);

#endif /* BPFPROF_PERF_INTERNAL_H */
