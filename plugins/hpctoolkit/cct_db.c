// SPDX-License-Identifier: BSD-2-Clause
/*
 * cct_db.c - writes cct.db: for every ctxId (0 = global) a context-major
 * sparse value block, the transpose of profile.db's thread profiles, value
 * for value (same doubles, computed the same way).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define CCT_HDR_SIZE 0x30	/* hpcprof pads the 0x20 header to 0x30 */
#define CTX_INFO_SIZE 0x20

/*
 * Context-Major Sparse Value Block: {profIndex u32, value f64} per non-zero
 * value (by metric, then profile), {metricId u16, startIndex u64} per
 * metric.  @v: the context's values sorted by thread.
 */
void write_context_major_sparse_value_block(struct bw *w, const struct hpc_value *const *v,
					    size_t n, double scale, uint8_t hdr[32])
{
	uint64_t pvalues, pidx, nvalues = 0, start[HPC_NR_SCOPES];
	uint16_t nmetrics = 0;

	bw_align(w, 4);
	pvalues = w->off;
	for (int m = 0; m < HPC_NR_SCOPES; m++) {
		start[m] = nvalues;
		for (size_t i = 0; i < n; i++) {
			uint64_t c = hpc_value_of(v[i], m);

			if (!c)
				continue;
			bw_u32(w, v[i]->thread + 1);
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

/* @vals: thread values sorted by (thread, ctx); ctxIds < @nctxs. */
int write_cct_db(int dir_fd, const struct hpc_value *vals, size_t nvals, uint32_t nctxs,
		 double scale)
{
	const struct hpc_value **by_ctx = calloc(nvals ? nvals : 1, sizeof(*by_ctx));
	uint64_t *first = calloc((size_t)nctxs + 1, sizeof(*first));
	uint8_t *infos = calloc(nctxs ? nctxs : 1, CTX_INFO_SIZE);
	uint64_t sec[2];
	struct bw w, h;
	int fd, err = -ENOMEM;

	if (!by_ctx || !first || !infos)
		goto out;
	/* counting sort by ctx, stable: each context's values stay by thread */
	for (size_t i = 0; i < nvals; i++)
		if (vals[i].ctx < nctxs)
			first[vals[i].ctx + 1]++;
	for (uint32_t c = 0; c < nctxs; c++)
		first[c + 1] += first[c];
	{
		uint64_t *pos = calloc((size_t)nctxs + 1, sizeof(*pos));

		if (!pos)
			goto out;
		memcpy(pos, first, ((size_t)nctxs + 1) * sizeof(*pos));
		for (size_t i = 0; i < nvals; i++)
			if (vals[i].ctx < nctxs)
				by_ctx[pos[vals[i].ctx]++] = &vals[i];
		free(pos);
	}
	fd = openat(dir_fd, "cct.db", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	bw_init_fd(&w, fd);
	bw_zero(&w, CCT_HDR_SIZE);
	bw_u64(&w, CCT_HDR_SIZE + 0x10);	/* Context Info section header */
	bw_u32(&w, nctxs);
	bw_u8(&w, CTX_INFO_SIZE);
	bw_align(&w, 8);
	bw_zero(&w, (uint64_t)nctxs * CTX_INFO_SIZE);
	sec[0] = 0x10 + (uint64_t)nctxs * CTX_INFO_SIZE;
	sec[1] = CCT_HDR_SIZE;
	for (uint32_t c = 0; c < nctxs; c++)
		write_context_major_sparse_value_block(&w, by_ctx + first[c], first[c + 1] - first[c],
						       scale, infos + (size_t)c * CTX_INFO_SIZE);
	bw_align(&w, 4);
	bw_bytes(&w, "__ctx.db", 8);
	bw_patch(&w, CCT_HDR_SIZE + 0x10, infos, (size_t)nctxs * CTX_INFO_SIZE);
	bw_init_mem(&h);
	write_file_header(&h, "ctxt", 0, sec, 1);
	bw_patch(&w, 0, h.buf, h.len);
	bw_free(&h);
	err = bw_finish(&w);
	bw_free(&w);
	if (close(fd) < 0 && !err)
		err = -errno;
out:
	free(by_ctx);
	free(first);
	free(infos);
	return err;
}
