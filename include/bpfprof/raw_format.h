/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bpfprof/raw_format.h - the constants of the raw measurement format
 * (`bpfprof --format raw`, read by `bpfprof merge`).  docs/RAW.md
 * describes the format byte for byte; this header only names its numbers,
 * shared by the writer (plugins/raw/) and the reader (user/merge/raw_read.c).
 *
 * Every integer is little-endian, whatever machine wrote the file.  A file
 * is a 32-byte header, then sections (a 16-byte section header: type,
 * flags, payload length; then the payload), the last of which is
 * RAW_SEC_END.  A file without RAW_SEC_END is truncated.
 */
#ifndef BPFPROF_RAW_FORMAT_H
#define BPFPROF_RAW_FORMAT_H

/* The file's first 8 bytes. */
#define RAW_MAGIC "BPFPRAW\n"
#define RAW_MAGIC_SIZE 8u
/* The one version this bpfprof writes and reads. */
#define RAW_VERSION 1u
#define RAW_HEADER_SIZE 32u
#define RAW_SECTION_HEADER_SIZE 16u

/* The recording machine (the header's ELF identification fields). */
#define RAW_ELFCLASS64 2u
#define RAW_ELFDATA2LSB 1u
#define RAW_ELFDATA2MSB 2u
#define RAW_EM_X86_64 62u

/* Section types, in the order the writer puts them (the reader takes any
 * order and skips types it does not know).  Every version-1 file has
 * EVENTS .. USER_SYMBOLS; INTERP_SYMBOLS came later within version 1, so
 * a file may lack it (older writers) and an older reader skips it. */
enum raw_section {
	RAW_SEC_EVENTS = 1,		/* the stream: samples, comm, exec, fork, exit, mmap, lost */
	RAW_SEC_RUN = 2,		/* the run's settings and counters */
	RAW_SEC_PROCESSES = 3,		/* processes with their mappings */
	RAW_SEC_THREADS = 4,		/* threads with their identities */
	RAW_SEC_STACKS = 5,		/* deduplicated stacks, as addresses */
	RAW_SEC_COUNTS = 6,		/* samples per (thread, user stack, kernel stack) */
	RAW_SEC_KERNEL_SYMBOLS = 7,	/* kernel addresses named at record time */
	RAW_SEC_USER_SYMBOLS = 8,	/* [vdso] and anonymous-memory addresses named then */
	RAW_SEC_INTERP_SYMBOLS = 9,	/* Python frames named then (optional, see above) */
	RAW_SEC_END = 0x454e4421,	/* "!DNE" as bytes: the end marker, empty */
};

/* Event record types (RAW_SEC_EVENTS), the plugin ABI's event types. */
enum raw_event {
	RAW_EV_SAMPLE = 0,
	RAW_EV_COMM = 1,
	RAW_EV_EXEC = 2,
	RAW_EV_FORK = 3,
	RAW_EV_EXIT = 4,
	RAW_EV_MMAP = 5,
	RAW_EV_LOST = 6,
	RAW_EV_NR = 7,
};

/* Sizes of the fixed parts (bytes). */
#define RAW_EVENT_HEADER_SIZE 28u	/* type, size, time, cpu, pid, tid */
#define RAW_RUN_FIXED_SIZE 200u		/* the integers of the RUN section */
#define RAW_MAPPING_FIXED_SIZE 56u	/* start .. reserved of a mapping */
#define RAW_COUNT_SIZE 24u
#define RAW_INTERP_SYMBOL_FIXED_SIZE 32u /* pid .. reserved of an INTERP_SYMBOLS entry */

/* Limits the reader enforces (the writer never exceeds them). */
#define RAW_MAX_STRING (1u << 20)	/* bytes of one string with its NUL */
#define RAW_MAX_BUILD_ID 64u
#define RAW_MAX_STACK_DEPTH 65536u
#define RAW_MAX_ARGC 65536u

#endif /* BPFPROF_RAW_FORMAT_H */
