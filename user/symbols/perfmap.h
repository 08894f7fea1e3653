/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perfmap.h - names of JIT code from a process's perf map, the text file
 * /tmp/perf-PID.map that JITs write for perf (Node's --perf-basic-prof,
 * Java agents, Python 3.12's -X perf; perf's
 * tools/perf/Documentation/jit-interface.txt).  One line per piece of code:
 *
 *     START SIZE NAME
 *
 * START and SIZE hexadecimal (perf writes no "0x"; a "0x" is accepted),
 * separated by blanks, NAME the rest of the line.  The JIT appends as it
 * emits code, so the file is read incrementally: each perfmap_update()
 * parses the complete lines added since the last one.  Entries may
 * overlap (code space reused after a GC, code replaced): an address
 * belongs to the last line that covers it, as in perf.
 *
 * Which file: the process's own /tmp, with the pid the process has in its
 * own pid namespace (the last NSpid of /proc/PID/status); for a process
 * in another mount namespace, /proc/PID/root/tmp/perf-NSPID.map.  The path
 * is decided at the first read while the process lives; after it exited
 * (perfmap_process_exited()), /proc paths are not used any more and the
 * file is read only if it is still there (and, when it was read before,
 * is the same file).  Like perf, a file is used only when it is a regular
 * file (not a symbolic link) owned by root or by the process's real or
 * effective uid.
 *
 * Not thread-safe.  Names handed out live until perfmap_free(), also
 * across perfmap_reset() and re-reads.
 */
#ifndef BPFPROF_PERFMAP_H
#define BPFPROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A miss re-reads the file at most this often (ns), see perfmap_lookup();
 * while the last attempt found no file to read, at most every
 * PERFMAP_ABSENT_REREAD_NS (most processes with anonymous code have no
 * perf map). */
#define PERFMAP_REREAD_NS 50000000ull
#define PERFMAP_ABSENT_REREAD_NS 1000000000ull

/* Lines longer than this (bytes, with the newline) are skipped as malformed. */
#define PERFMAP_MAX_LINE 65536

/* One named range of JIT code after overlaps were resolved. */
struct perfmap_entry {
	uint64_t start, end;		/* the part of the line's range it holds:
					 * [start, end) */
	uint64_t sym_start;		/* START of the line (the function's start) */
	const char *name;		/* NUL-terminated, owned by the perfmap */
};

/* What reading found, for the summary and the tests. */
struct perfmap_stats {
	uint64_t lines;			/* lines taken */
	uint64_t malformed;		/* lines skipped (see perfmap_parse()) */
	uint64_t reads;			/* perfmap_update() calls that read the file */
	uint64_t bytes;			/* bytes parsed */
	uint64_t resets;		/* the file was replaced or truncated */
	uint64_t lookups;		/* perfmap_lookup() calls */
	uint64_t misses;		/* of them, not found even after a re-read */
};

struct perfmap;

/*
 * A perf map for process @pid, empty; nothing is read yet.  NULL if out
 * of memory.  perfmap_new_path() reads @path instead (tests, saved maps;
 * no owner check), naming it @name (NULL: @path); both are copied.
 */
struct perfmap *perfmap_new(uint32_t pid);
struct perfmap *perfmap_new_path(const char *path, const char *name);

/* Release @pm and every name it handed out.  NULL allowed. */
void perfmap_free(struct perfmap *pm);

/*
 * The process exec()ed: forget the entries, the file and its path (the
 * next read decides them again).  Names handed out stay valid.
 */
void perfmap_reset(struct perfmap *pm);

/* The process is gone: see the file rules above. */
void perfmap_process_exited(struct perfmap *pm);

/*
 * Parse @len bytes of map text at @text, as read at the file's current
 * offset: complete lines only (a line ends with '\n'), and with @final
 * also a last line without one.  Returns the bytes consumed (the rest
 * is an incomplete line to parse again with more text), or -ENOMEM.
 * Lines taken are added over the earlier ones (later lines win).
 * Malformed lines are counted and skipped: no or bad START or SIZE
 * (not hex, over 64 bits, SIZE 0, START + SIZE past 2^64), no blank
 * between the fields, an empty NAME, a NUL byte, longer than
 * PERFMAP_MAX_LINE.  A trailing '\r' and blanks are cut from NAME;
 * empty lines are ignored silently.
 */
long perfmap_parse(struct perfmap *pm, const char *text, size_t len, bool final);

/*
 * Read what the file gained since the last read and add it (a file that
 * was replaced or shrank is read again from its start, the entries of
 * the old one dropped).  Returns 0; -ENOENT if there is no such file
 * (now); -EPERM if it is not a regular file owned as required;
 * -ENOMEM; another negative errno of open()/read().  Entries read
 * before stay on errors.
 */
int perfmap_update(struct perfmap *pm, uint64_t now_ns);

/* The entry holding @addr, or NULL: no file reading. */
const struct perfmap_entry *perfmap_find(const struct perfmap *pm, uint64_t addr);

/*
 * The entry holding @addr; on a miss the file is read again first if the
 * last read (or attempt) was PERFMAP_REREAD_NS (PERFMAP_ABSENT_REREAD_NS
 * after a failed one) or more before @now_ns (CLOCK_MONOTONIC), or never.
 * NULL if still not found.
 */
const struct perfmap_entry *perfmap_lookup(struct perfmap *pm, uint64_t addr, uint64_t now_ns);

/*
 * The name a profile shows as the module of JIT code: the file as the
 * process names it, "/tmp/perf-NSPID.map" (perf's name too); until the
 * first read, "/tmp/perf-PID.map".  Valid until perfmap_free().
 */
const char *perfmap_name(const struct perfmap *pm);

/* The path read (or to be read), NULL before the first read decided it. */
const char *perfmap_path(const struct perfmap *pm);

/* Entries (after overlaps were resolved) and statistics. */
size_t perfmap_entries(const struct perfmap *pm);
const struct perfmap_stats *perfmap_stats(const struct perfmap *pm);

/*
 * Whether a mapping with path @path (as /proc/PID/maps prints it, "" for
 * anonymous memory) and protection @prot (BPFPROF_PROT_*) can hold code
 * named by a perf map: executable anonymous memory ("", "//anon",
 * "[anon:NAME]", "/memfd:NAME" with or without " (deleted)").
 */
bool perfmap_covers_mapping(const char *path, uint32_t prot);

#endif /* BPFPROF_PERFMAP_H */
