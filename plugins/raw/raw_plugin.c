// SPDX-License-Identifier: BSD-2-Clause
/*
 * raw/raw_plugin.c - the "raw" output plugin: a measurement that
 * `bpfprof merge` symbolizes and merges later, on any machine
 * (docs/RAW.md).  This file owns the plugin entry point and the order of
 * the file:
 *
 *   open()   the file header and the EVENTS section's header (length 0)
 *   event()  one record per stream event, appended at once through a
 *            write-through buffer (samples are never kept in memory)
 *   write()  the EVENTS length patched in, then RUN, PROCESSES, THREADS,
 *            STACKS, COUNTS, KERNEL_SYMBOLS, USER_SYMBOLS, INTERP_SYMBOLS
 *            and END
 *
 * A file cut anywhere lacks the END section, and the reader says so.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raw/raw.h"

struct raw_state {
	const struct bpfprof_host *host;
	const struct bpfprof_run *run;
	const struct bpfprof_output *out;
	struct buf file;		/* write-through to out->file */
	struct buf rec;			/* one event record, in memory */
	uint64_t events_length_at;	/* file offset of the EVENTS length field */
	uint64_t events_start;		/* file offset of the first event record */
};

static int fail(struct raw_state *st, int err, const char *what)
{
	st->host->error(st->host, "raw: %s: %s", what, strerror(-err));
	return err;
}

static int raw_open(const struct bpfprof_host *host, const struct bpfprof_run *run,
		    const struct bpfprof_output *out, void **state)
{
	struct raw_state *st = calloc(1, sizeof(*st));

	if (!st) {
		host->error(host, "raw: out of memory");
		return -ENOMEM;
	}
	*state = st;
	st->host = host;
	st->run = run;
	st->out = out;
	if (!out->file) {
		host->error(host, "raw: needs an output file");
		return -EINVAL;
	}
	if (buf_init_file(&st->file, out->file, BUF_WRITE_SIZE))
		return fail(st, -ENOMEM, "out of memory");
	raw_write_header(&st->file);
	st->events_length_at = raw_write_section_header(&st->file, RAW_SEC_EVENTS, 0);
	st->events_start = buf_pos(&st->file);
	return st->file.err ? fail(st, st->file.err, out->path) : 0;
}

static int raw_event(void *state, const struct bpfprof_event *ev)
{
	struct raw_state *st = state;

	buf_reset(&st->rec);
	raw_write_event(&st->rec, ev);
	if (st->rec.err)
		return fail(st, st->rec.err, "out of memory");
	buf_put(&st->file, st->rec.data, st->rec.len);
	return st->file.err ? fail(st, st->file.err, st->out->path) : 0;
}

/* One section: header with the payload's length, then the payload. */
static void section(struct raw_state *st, uint32_t type,
		    void (*payload)(struct buf *, const struct bpfprof_profile *),
		    const struct bpfprof_profile *p)
{
	uint64_t at = raw_write_section_header(&st->file, type, 0);
	uint64_t len;

	payload(&st->file, p);
	len = htole64(buf_pos(&st->file) - at - 8);
	if (at >= st->file.flushed)
		buf_patch(&st->file, (size_t)(at - st->file.flushed), &len, sizeof(len));
	else if (!st->file.err && (buf_finish(&st->file) ||
				   pwrite(fileno(st->out->file), &len, 8, (off_t)at) != 8))
		st->file.err = -EIO;
}

/* The symbol sections: the payload depends on more than the profile. */
static void symbol_section(struct raw_state *st, uint32_t type, const struct raw_symbol *syms,
			   size_t nr)
{
	struct buf tmp = { 0 };

	if (type == RAW_SEC_KERNEL_SYMBOLS)
		raw_write_kernel_symbols(&tmp, syms, nr);
	else if (type == RAW_SEC_USER_SYMBOLS)
		raw_write_user_symbols(&tmp, syms, nr);
	else
		raw_write_interp_symbols(&tmp, syms, nr);
	if (tmp.err)
		st->file.err = tmp.err;
	raw_write_section_header(&st->file, type, tmp.len);
	buf_put(&st->file, tmp.data, tmp.len);
	buf_free(&tmp);
}

static void run_payload(struct buf *b, const struct bpfprof_profile *p)
{
	raw_write_run(b, p->run, (uint32_t)gethostid());
}

/* The EVENTS section's length, now that it is complete. */
static int patch_events_length(struct raw_state *st)
{
	uint64_t len = htole64(buf_pos(&st->file) - st->events_start);

	if (buf_finish(&st->file))
		return st->file.err;
	if (pwrite(fileno(st->out->file), &len, sizeof(len), (off_t)st->events_length_at) != 8)
		return -errno ?: -EIO;
	return 0;
}

static int raw_write(void *state, const struct bpfprof_profile *p)
{
	struct raw_state *st = state;
	struct raw_symbol *ksyms = NULL, *usyms = NULL, *isyms = NULL;
	size_t nr_k = 0, nr_u = 0, nr_i = 0;
	int err;

	if ((err = patch_events_length(st)))
		return fail(st, err, st->out->path);
	if ((err = raw_collect_symbols(st->host, p, 1, &ksyms, &nr_k)) ||
	    (err = raw_collect_symbols(st->host, p, 0, &usyms, &nr_u)) ||
	    (err = raw_collect_interp_symbols(st->host, p, &isyms, &nr_i))) {
		free(ksyms);
		free(usyms);
		return fail(st, err, "naming kernel, vDSO and Python frames");
	}
	section(st, RAW_SEC_RUN, run_payload, p);
	section(st, RAW_SEC_PROCESSES, raw_write_processes, p);
	section(st, RAW_SEC_THREADS, raw_write_threads, p);
	section(st, RAW_SEC_STACKS, raw_write_stacks, p);
	section(st, RAW_SEC_COUNTS, raw_write_counts, p);
	symbol_section(st, RAW_SEC_KERNEL_SYMBOLS, ksyms, nr_k);
	symbol_section(st, RAW_SEC_USER_SYMBOLS, usyms, nr_u);
	symbol_section(st, RAW_SEC_INTERP_SYMBOLS, isyms, nr_i);
	raw_write_section_header(&st->file, RAW_SEC_END, 0);
	free(ksyms);
	free(usyms);
	free(isyms);
	if ((err = buf_finish(&st->file)))
		return fail(st, err, st->out->path);
	return 0;
}

static void raw_close(void *state)
{
	struct raw_state *st = state;

	if (!st)
		return;
	buf_free(&st->file);
	buf_free(&st->rec);
	free(st);
}

BPFPROF_PLUGIN("raw",
	.flags = BPFPROF_PLUGIN_STREAM | BPFPROF_PLUGIN_NAMES_ONLY,
	.description = "measurement for `bpfprof merge`: addresses, mappings, samples with times",
	.default_output = "bpfprof.raw",
	.open = raw_open, .event = raw_event, .write = raw_write, .close = raw_close);
