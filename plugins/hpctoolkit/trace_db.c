// SPDX-License-Identifier: BSD-2-Clause
/*
 * trace_db.c - writes trace.db: one trace line per thread profile (header i
 * describes profile i + 1, as hpcviewer expects), each the thread's samples
 * as (ns since the epoch, leaf ctxId) in time order, with a ctxId 0 element
 * where the thread was not running (a gap of more than a few periods);
 * min/maxTimestamp bound all lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define TRACE_HDR_SIZE 0x20
#define TRACE_SECT_HDR 0x20
#define TRACE_HEADER_SIZE 0x18

/* {CTH}: profIndex, pad, pStart, pEnd. */
void write_context_trace_header(struct bw *w, uint32_t prof_index, uint64_t pstart,
				uint64_t pend)
{
	bw_u32(w, prof_index);
	bw_u32(w, 0);
	bw_u64(w, pstart);
	bw_u64(w, pend);
}

static void elem(struct bw *w, uint64_t time, uint32_t ctx, uint64_t *tmin, uint64_t *tmax)
{
	bw_u64(w, time);
	bw_u32(w, ctx);
	if (time < *tmin)
		*tmin = time;
	if (time > *tmax)
		*tmax = time;
}

/* A trace line of {timestamp u64, ctxId u32} elements from samples @s. */
uint64_t write_trace_line(struct bw *w, const struct hpc_trace_elem *s, size_t n,
			  uint64_t gap_ns, uint64_t period_ns, uint64_t *tmin, uint64_t *tmax)
{
	uint64_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && s[i].time - s[i - 1].time > gap_ns) {
			elem(w, s[i - 1].time + period_ns, 0, tmin, tmax);
			k++;
		}
		elem(w, s[i].time, s[i].ctx, tmin, tmax);
		k++;
	}
	return k;
}

static int cmp_elem(const void *a, const void *b)
{
	const struct hpc_trace_elem *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ctx < y->ctx ? -1 : x->ctx > y->ctx;
}

int write_trace_db(int dir_fd, struct hpc_trace_elem *elems, const uint64_t *line_start,
		   uint32_t nthreads, uint64_t gap_ns, uint64_t period_ns)
{
	uint64_t tmin = UINT64_MAX, tmax = 0, sec[2], minmax[2];
	struct hpc_db db;
	struct bw *w = &db.w, th;
	int err;

	err = hpc_db_create(&db, dir_fd, "trace.db", TRACE_HDR_SIZE);
	if (err)
		return err;
	bw_u64(w, TRACE_HDR_SIZE + TRACE_SECT_HDR);	/* pTraces */
	bw_u32(w, nthreads);
	bw_u8(w, TRACE_HEADER_SIZE);
	bw_align(w, 8);
	bw_zero(w, 16);				/* min/max, patched */
	bw_zero(w, (uint64_t)nthreads * TRACE_HEADER_SIZE);
	sec[0] = TRACE_SECT_HDR + (uint64_t)nthreads * TRACE_HEADER_SIZE;
	sec[1] = TRACE_HDR_SIZE;
	bw_init_mem(&th);
	for (uint32_t t = 0; t < nthreads; t++) {
		size_t n = line_start[t + 1] - line_start[t];
		uint64_t pstart, k;

		bw_align(w, 8);
		pstart = w->off;
		qsort(elems + line_start[t], n, sizeof(*elems), cmp_elem);
		k = write_trace_line(w, elems + line_start[t], n, gap_ns, period_ns, &tmin, &tmax);
		write_context_trace_header(&th, t + 1, pstart, pstart + 12 * k);
	}
	if (tmin > tmax)
		tmin = tmax = 0;
	if (th.err)
		bw_fail(w, th.err);
	else if (nthreads)
		bw_patch(w, TRACE_HDR_SIZE + TRACE_SECT_HDR, th.buf, th.len);
	bw_free(&th);
	put_u64((uint8_t *)&minmax[0], tmin);
	put_u64((uint8_t *)&minmax[1], tmax);
	bw_patch(w, TRACE_HDR_SIZE + 0x10, minmax, 16);
	return hpc_db_finish(&db, "trce", "trace.db", sec, 1);
}
