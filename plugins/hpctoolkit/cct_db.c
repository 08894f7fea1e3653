// SPDX-License-Identifier: BSD-2-Clause
/*
 * cct_db.c - writes cct.db: for every ctxId (0 = global) a context-major
 * sparse value block, the transpose of profile.db's thread profiles, value
 * for value (same doubles, computed the same way).  The blocks are written
 * in ctxId order as values.c produces the contexts; the Context Info array
 * (indexed by ctxId) is left as a hole and filled in INFO_CHUNK records at
 * a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define CCT_HDR_SIZE 0x30	/* hpcprof pads the 0x20 header to 0x30 */
#define CTX_INFO_SIZE 0x20
#define INFO_CHUNK 2048		/* {CI} records patched at once */

/*
 * Context-Major Sparse Value Block: {profIndex u32, value f64} per non-zero
 * value (by metric, then profile), {metricId u16, startIndex u64} per
 * metric.  @v: the context's values sorted by thread.
 */
void write_context_major_sparse_value_block(struct bw *w, const struct hpc_value *v, size_t n,
					    double scale, uint8_t hdr[32])
{
	uint64_t pvalues, pidx, nvalues = 0, start[HPC_NR_SCOPES];
	uint16_t nmetrics = 0;

	bw_align(w, 4);
	pvalues = w->off;
	for (int m = 0; m < HPC_NR_SCOPES; m++) {
		start[m] = nvalues;
		for (size_t i = 0; i < n; i++) {
			uint64_t c = hpc_value_of(&v[i], m);

			if (!c)
				continue;
			bw_u32(w, v[i].thread + 1);
			bw_f64(w, (double)c * scale);
			nvalues++;
		}
	}
	pidx = w->off;
	for (int m = 0; m < HPC_NR_SCOPES; m++) {
		uint64_t end = m + 1 < HPC_NR_SCOPES ? start[m + 1] : nvalues;

		if (end == start[m])
			continue;
		bw_u16(w, m);
		bw_u64(w, start[m]);
		nmetrics++;
	}
	memset(hdr, 0, 32);
	put_u64(hdr, nvalues);
	put_u64(hdr + 8, pvalues);
	put_u16(hdr + 0x10, nmetrics);
	put_u64(hdr + 0x18, pidx);
}

struct cct_writer {
	struct bw *w;
	double scale;
	uint8_t infos[INFO_CHUNK * CTX_INFO_SIZE];
	uint32_t first;			/* ctxId of infos[0] */
	uint32_t nr;			/* records in infos */
};

static void flush_infos(struct cct_writer *cw)
{
	bw_patch(cw->w, CCT_HDR_SIZE + 0x10 + (uint64_t)cw->first * CTX_INFO_SIZE, cw->infos,
		 (size_t)cw->nr * CTX_INFO_SIZE);
	cw->first += cw->nr;
	cw->nr = 0;
}

static int write_context_block(void *arg, uint32_t ctx, const struct hpc_value *v, size_t n)
{
	struct cct_writer *cw = arg;

	if (ctx != cw->first + cw->nr)
		return -EINVAL;
	write_context_major_sparse_value_block(cw->w, v, n, cw->scale,
					       cw->infos + (size_t)cw->nr * CTX_INFO_SIZE);
	if (++cw->nr == INFO_CHUNK)
		flush_infos(cw);
	return cw->w->err;
}

int write_cct_db(int dir_fd, const struct hpc_values *in, double scale)
{
	struct cct_writer *cw = calloc(1, sizeof(*cw));
	uint64_t sec[2], nctxs = in->nctxs;
	struct hpc_db db;
	struct bw *w = &db.w;
	int err;

	if (!cw)
		return -ENOMEM;
	err = hpc_db_create(&db, dir_fd, "cct.db", CCT_HDR_SIZE);
	if (err) {
		free(cw);
		return err;
	}
	bw_u64(w, CCT_HDR_SIZE + 0x10);	/* Context Info section header */
	bw_u32(w, nctxs);
	bw_u8(w, CTX_INFO_SIZE);
	bw_align(w, 8);
	bw_seek(w, w->off + nctxs * CTX_INFO_SIZE);	/* {CI}: patched */
	sec[0] = 0x10 + nctxs * CTX_INFO_SIZE;
	sec[1] = CCT_HDR_SIZE;
	cw->w = w;
	cw->scale = scale;
	err = w->err ? w->err : hpc_values_walk(in, write_context_block, cw);
	if (!err && cw->first + cw->nr != nctxs)
		err = -EINVAL;
	if (err)
		bw_fail(w, err);
	flush_infos(cw);
	bw_align(w, 4);
	free(cw);
	return hpc_db_finish(&db, "ctxt", "__ctx.db", sec, 1);
}
