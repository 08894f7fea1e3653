/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof.h - the internal interfaces of the pprof plugin, which writes one
 * profile.proto Profile message (github.com/google/pprof, file
 * proto/profile.proto) as a gzip stream without holding it in memory:
 *
 *   pprof_plugin.c    entry points; the order of the Profile's fields
 *   pprof_samples.c   the Samples: their order, location lists resolved
 *                     once per distinct stack, labels per thread
 *   pprof_tables.c    string table, functions, mappings and locations,
 *                     each deduplicated
 *   pprof_scopes.c    whose code an address is: where processes share
 *                     locations
 *   pprof_messages.c  one encoder per message of profile.proto
 *   pprof_gzip.c      the gzip stream to the output file
 *   pb.c              the protobuf wire format
 *
 * and plugins/common/ (buf.h: the byte buffers; hashtab.h: the big
 * lookups; grow.h: the arrays).
 *
 * Protobuf lets the fields of a message come in any order, also
 * interleaved; only the order among the values of one repeated field
 * counts (and, for profile.proto, that string_table[0] is "").  So the
 * Profile is written as:
 *
 *   1. the scalar header fields;
 *   2. the Samples, one per count, as their stacks are resolved to
 *      locations (pprof_samples.c), and between them, in batches, the
 *      new Functions and Locations, each batch in address order
 *      (pprof_tables.c);
 *   3. the Mappings (their has_* flags need every location), the string
 *      table last (strings are interned until then, "" first).
 *
 * Samples, Functions and Locations stream out; only the deduplication
 * tables and the strings are held in memory.
 *
 * All "string" fields are indexes into the string table, ids are 1-based
 * and 0 means "none", as in profile.proto.
 */
#ifndef BPFPROF_PPROF_H
#define BPFPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "common/grow.h"
#include "common/hashtab.h"
#include "pb.h"

struct bpfprof_host;
struct bpfprof_mapping;
struct bpfprof_output;
struct bpfprof_profile;

/* --- messages (pprof_messages.c) ------------------------------------------ */

/* message ValueType */
struct pprof_value_type {
	int64_t type;			/* e.g. "cpu" */
	int64_t unit;			/* e.g. "nanoseconds" */
};

/* message Label: a string label has str, a numeric one num (+ num_unit). */
struct pprof_label {
	int64_t key;
	int64_t str;
	int64_t num;
	int64_t num_unit;
};

#define PPROF_NR_VALUES 2		/* samples/count, cpu/nanoseconds */

/*
 * message Sample, with its repeated parts already encoded: the location
 * ids as packed varints in two pieces (kernel frames, then user frames,
 * each leaf first), the labels as Label fields (write_sample_label()).
 */
struct pprof_sample {
	const uint8_t *kernel_ids, *user_ids;
	size_t kernel_len, user_len;	/* bytes */
	int64_t values[PPROF_NR_VALUES];
	const uint8_t *labels;
	size_t labels_len;		/* bytes */
};

/* message Mapping */
struct pprof_mapping {
	uint64_t id;
	uint64_t memory_start, memory_limit, file_offset;
	int64_t filename;
	int64_t build_id;		/* hex string */
	int has_functions, has_filenames, has_line_numbers, has_inline_frames;
	int kernel;			/* (not encoded) the kernel's mapping */
	int main_binary;		/* (not encoded) a process's executable */
};

/* message Line */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
};

/* message Location: at most one Line (the host reports no inlining). */
struct pprof_location {
	uint64_t id;
	uint64_t mapping_id;
	uint64_t address;
	struct pprof_line line;		/* function_id 0: no Line */
};

/* message Function */
struct pprof_function {
	uint64_t id;
	int64_t name, system_name, filename;
	int64_t start_line;		/* 0: unknown */
	int start_line_asked;		/* the host was asked for it (not written) */
};

#define PPROF_MAX_COMMENTS 4

/* The scalar fields of message Profile (and its sample types). */
struct pprof_header {
	struct pprof_value_type sample_type[PPROF_NR_VALUES];
	int64_t time_nanos;
	int64_t duration_nanos;
	struct pprof_value_type period_type;
	int64_t period;
	int64_t comments[PPROF_MAX_COMMENTS];
	size_t nr_comments;
	int64_t default_sample_type;
};

/* One label = 3 field of a Sample. */
void write_sample_label(struct buf *b, const struct pprof_label *l);

/* Fields of message Profile, one function per field (or group of them). */
void write_profile_header(struct buf *b, const struct pprof_header *h);
void write_profile_sample(struct buf *b, const struct pprof_sample *s);
void write_profile_mapping(struct buf *b, const struct pprof_mapping *m);
void write_profile_location(struct buf *b, const struct pprof_location *l);
void write_profile_function(struct buf *b, const struct pprof_function *f);
void write_profile_string(struct buf *b, const char *s);

/* --- the gzip stream (pprof_gzip.c) -------------------------------------- */

struct pprof_gz;

/* Bytes gathered before they are compressed. */
#define PPROF_CHUNK (1024u * 1024)

/* Start a gzip member in @out->file; 0 or -ENOMEM after host->error(). */
int pprof_gz_open(struct pprof_gz **gz, const struct bpfprof_host *host,
		  const struct bpfprof_output *out);
/* The buffer to append encoded bytes to; it changes at each flush. */
struct buf *pprof_gz_buf(struct pprof_gz *gz);
/* Compress the buffer if it holds PPROF_CHUNK bytes or more; 0 or a
 * negative errno after host->error() (also if the buffer ran out of
 * memory). */
int pprof_gz_flush(struct pprof_gz *gz);
/* Compress the rest, end the member, flush the file; 0 or a negative
 * errno after host->error(). */
int pprof_gz_finish(struct pprof_gz *gz);
/* Free @gz (finished or not). */
void pprof_gz_free(struct pprof_gz *gz);

/* --- scopes (pprof_scopes.c) --------------------------------------------- */

/*
 * Scopes: whose code an address is.  Locations are shared within a scope:
 * 0 is the kernel, odd values a class of identical file mappings of
 * several processes, even values one process.
 */
#define PPROF_KERNEL_SCOPE 0

/* A scope of one process. */
static inline int pprof_process_scope(uint32_t scope)
{
	return scope && !(scope & 1);
}

struct pprof_scopes;

struct pprof_scopes *pprof_scopes_new(const struct bpfprof_profile *prof);
void pprof_scopes_free(struct pprof_scopes *sc);

/*
 * Make processes[@p] of the profile (nr_processes: an unknown process)
 * the current process.  Returns its space, or -ENOMEM: processes with the
 * same file mappings at the same places share a space, and an address in
 * a shared scope in one of them is in the same scope in all of them.
 */
int64_t pprof_scopes_set_process(struct pprof_scopes *sc, size_t p);

/* The scope of user address @ip of the current process. */
uint32_t pprof_scopes_user(const struct pprof_scopes *sc, uint64_t ip);

/* The scope of the current process's own code. */
uint32_t pprof_scopes_process(const struct pprof_scopes *sc);

/* The class of the mappings identical to @m, >= 0; -1 if @m is not
 * shared, -2 on ENOMEM. */
ptrdiff_t pprof_scopes_class(struct pprof_scopes *sc, const struct bpfprof_mapping *m);

/* --- tables (pprof_tables.c) --------------------------------------------- */

struct pprof_tables;

/* New, empty tables for the locations of @prof, writing to @gz; NULL on
 * ENOMEM. */
struct pprof_tables *pprof_tables_new(const struct bpfprof_host *host,
				      const struct bpfprof_profile *prof, struct pprof_gz *gz);
void pprof_tables_free(struct pprof_tables *t);

/* Index of @s (NULL: "") in the string table, adding it if new; -1 on ENOMEM. */
int64_t pprof_string(struct pprof_tables *t, const char *s);

/* Make processes[@p] the current process (pprof_scopes_set_process()),
 * for which new user locations are symbolized; its space or -ENOMEM. */
int64_t pprof_tables_set_process(struct pprof_tables *t, size_t p);

/* Does processes[@p] have locations of its own in shared scopes (that
 * the host could not symbolize for it)?  Then only its own resolutions of
 * a stack are valid for it. */
int pprof_tables_has_own(const struct pprof_tables *t, size_t p);

/* The scope of user address @ip of the current process. */
uint32_t pprof_user_scope(const struct pprof_tables *t, uint64_t ip);

/*
 * The ids of the Locations of the @n frames @ips of a stack (leaf first)
 * with their @scopes (NULL: the kernel's) into @ids, adding new ones (ids
 * 1, 2, ... in the order met).  *own is set when one of them is the
 * current process's alone although its scope is shared (the host could
 * not symbolize it for this process).  0 or -ENOMEM.
 */
int pprof_stack_locations(struct pprof_tables *t, const uint64_t *ips, const uint32_t *scopes,
			  uint32_t n, uint32_t *ids, int *own);

/* Write the new Functions, then the new Locations in address order, if
 * there are enough of them to fill a batch, or @all (from then on no
 * location can be added).  0 or a negative errno after host->error(). */
int pprof_write_locations(struct pprof_tables *t, int all);

/* Write every Mapping (executables first, the kernel last), then the
 * string table; the last call on @t but free.  0 or a negative errno
 * after host->error(). */
int pprof_write_tables(struct pprof_tables *t);

/* --- samples (pprof_samples.c) ------------------------------------------- */

/* Write one Sample per count of @prof to @gz (see pprof_samples.c); 0 or
 * a negative errno after host->error(). */
int pprof_write_samples(const struct bpfprof_host *host, const struct bpfprof_profile *prof,
			struct pprof_tables *t, struct pprof_gz *gz);

/* The value of key (@a, @b) in @t, 0 if none: the tables hold ids and
 * indexes + 1, never 0. */
static inline uint32_t pprof_find(const struct hashtab *t, uint64_t a, uint32_t b)
{
	uint32_t v = hashtab_get(t, a, b);

	return v == HASHTAB_NONE ? 0 : v;
}

#endif /* BPFPROF_PPROF_H */
