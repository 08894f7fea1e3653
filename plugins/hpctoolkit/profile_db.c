// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile_db.c - writes profile.db: the summary profile (index 0, sums over
 * threads, statMetricIds) and one profile per thread (index thread + 1,
 * identifier tuple NODE / RANK / THREAD, propMetricIds), each a
 * profile-major sparse value block; global ctxId 0 holds a thread's total.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpc.h"

#define PROF_HDR_SIZE 0x30
#define PROF_INFO_SIZE 0x30
#define ID_TUPLE_SIZE (8 + 3 * 16)

/* Was the block header of this {PI} filled in (pValues != 0)? */
static int get_pointer_set(const uint8_t *pi)
{
	for (int i = 8; i < 16; i++)
		if (pi[i])
			return 1;
	return 0;
}

/* Hierarchical Identifier Tuple: NODE (physical hostid), RANK, THREAD. */
void write_identifier_tuple(struct bw *w, uint64_t hostid, const struct hpc_thread_id *id)
{
	bw_u16(w, 3);
	bw_zero(w, 6);
	bw_u8(w, 1);		/* NODE */
	bw_u8(w, 0);
	bw_u16(w, 1);		/* isPhysical */
	bw_u32(w, 0);
	bw_u64(w, hostid);
	bw_u8(w, 2);		/* RANK: process index */
	bw_u8(w, 0);
	bw_u16(w, 0);
	bw_u32(w, id->process);
	bw_u64(w, id->process);
	bw_u8(w, 3);		/* THREAD: index within the process */
	bw_u8(w, 0);
	bw_u16(w, 0);
	bw_u32(w, id->thread);
	bw_u64(w, id->thread);
}

/*
 * Profile-Major Sparse Value Block: {metricId u16, value f64} per non-zero
 * value (by context, then metric), padding to 4, {ctxId u32, startIndex
 * u64} per context.  @hdr receives the 32-byte block header.
 */
void write_profile_major_sparse_value_block(struct bw *w, const struct hpc_value *v, size_t n,
					    double scale, uint8_t hdr[32])
{
	uint64_t pvalues = w->off, nvalues = 0, pidx;
	uint32_t nctxs = 0;

	for (size_t i = 0; i < n; i++) {
		int any = 0;

		for (int m = 0; m < HPC_NR_SCOPES; m++) {
			uint64_t c = hpc_value_of(&v[i], m);

			if (!c)
				continue;
			bw_u16(w, m);
			bw_f64(w, (double)c * scale);
			nvalues++;
			any = 1;
		}
		nctxs += any;
	}
	bw_align(w, 4);
	pidx = w->off;
	nvalues = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = 0;

		for (int m = 0; m < HPC_NR_SCOPES; m++)
			k += hpc_value_of(&v[i], m) != 0;
		if (!k)
			continue;
		bw_u32(w, v[i].ctx);
		bw_u64(w, nvalues);
		nvalues += k;
	}
	memset(hdr, 0, 32);
	put_u64(hdr, nvalues);
	put_u64(hdr + 8, pvalues);
	put_u32(hdr + 0x10, nctxs);
	put_u64(hdr + 0x18, pidx);
}

/* @vals: thread values sorted by (thread, ctx). */
int write_profile_db(int dir_fd, const struct hpc_value *vals, size_t nvals,
		     const struct hpc_thread_id *ids, uint32_t nthreads, uint32_t nctxs,
		     uint64_t hostid, double scale)
{
	uint64_t nprof = (uint64_t)nthreads + 1, ptuples, sec[4];
	uint8_t *infos = calloc(nprof, PROF_INFO_SIZE);
	struct hpc_value *sum = calloc(nctxs ? nctxs : 1, sizeof(*sum));
	struct bw w, h;
	size_t i, j, nsum = 0;
	int fd, err;

	if (!infos || !sum) {
		free(infos);
		free(sum);
		return -ENOMEM;
	}
	fd = openat(dir_fd, "profile.db", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		free(infos);
		free(sum);
		return err;
	}
	bw_init_fd(&w, fd);
	bw_zero(&w, PROF_HDR_SIZE);
	/* Profile Info section header; the {PI} array is patched in at the end */
	bw_u64(&w, PROF_HDR_SIZE + 0x10);
	bw_u32(&w, nprof);
	bw_u8(&w, PROF_INFO_SIZE);
	bw_align(&w, 8);
	bw_zero(&w, nprof * PROF_INFO_SIZE);
	sec[0] = 0x10 + nprof * PROF_INFO_SIZE;
	sec[1] = PROF_HDR_SIZE;
	/* Hierarchical Identifier Tuple section */
	ptuples = w.off;
	for (uint32_t t = 0; t < nthreads; t++) {
		put_u64(infos + (t + 1) * PROF_INFO_SIZE + 0x20, w.off);
		write_identifier_tuple(&w, hostid, &ids[t]);
	}
	sec[2] = w.off - ptuples;
	sec[3] = ptuples;
	bw_align(&w, 4);
	/* thread value blocks, and the summary accumulated on the way */
	for (i = 0; i < nctxs; i++)
		sum[i].ctx = i;
	for (i = 0; i < nvals; i = j) {
		uint32_t t = vals[i].thread;

		for (j = i; j < nvals && vals[j].thread == t; j++) {
			if (vals[j].ctx >= nctxs)
				continue;
			sum[vals[j].ctx].point += vals[j].point;
			sum[vals[j].ctx].function += vals[j].function;
			sum[vals[j].ctx].execution += vals[j].execution;
		}
		write_profile_major_sparse_value_block(&w, vals + i, j - i, scale,
						       infos + (t + 1) * PROF_INFO_SIZE);
	}
	for (uint32_t t = 0; t < nthreads; t++) {	/* empty profiles */
		uint8_t *pi = infos + (t + 1) * PROF_INFO_SIZE;

		if (!get_pointer_set(pi)) {
			put_u64(pi + 8, w.off);
			put_u64(pi + 0x18, w.off);
		}
	}
	for (i = 0; i < nctxs; i++)	/* compact the summary to non-zero contexts */
		if (sum[i].point || sum[i].function || sum[i].execution)
			sum[nsum++] = sum[i];
	write_profile_major_sparse_value_block(&w, sum, nsum, scale, infos);
	put_u32(infos + 0x28, 1);	/* isSummary; pIdTuple stays 0 */
	bw_bytes(&w, "_prof.db", 8);
	bw_patch(&w, PROF_HDR_SIZE + 0x10, infos, nprof * PROF_INFO_SIZE);
	bw_init_mem(&h);
	write_file_header(&h, "prof", 0, sec, 2);
	bw_patch(&w, 0, h.buf, h.len);
	bw_free(&h);
	err = bw_finish(&w);
	bw_free(&w);
	if (close(fd) < 0 && !err)
		err = -errno;
	free(infos);
	free(sum);
	return err;
}
