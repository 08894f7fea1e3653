/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procfs.h - small readers of /proc/PID: comm, exe, cmdline, parent,
 * kernel-thread flag, the thread list and the MPI rank in the
 * environment.  Mappings are in procmaps.h.
 */
#ifndef BPFPROF_PROCFS_H
#define BPFPROF_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* /proc/PID/task/TID/comm without the newline into buf (size >= 16).
 * 0 or -errno (-ENOENT when the task is gone). */
int procfs_comm(uint32_t pid, uint32_t tid, char *buf, size_t size);

/* readlink /proc/PID/exe into buf. 0 or -errno (-ENOENT: gone or kernel thread). */
int procfs_exe(uint32_t pid, char *buf, size_t size);

/* /proc/PID/cmdline with NULs turned into spaces. 0 or -errno. */
int procfs_cmdline(uint32_t pid, char *buf, size_t size);

/* Parent tgid and whether the task is a kernel thread (PF_KTHREAD), from
 * /proc/PID/stat. 0 or -errno. */
int procfs_stat(uint32_t pid, uint32_t *ppid, bool *kthread);

/* Thread group id of task @tid (from /proc/TID/status). 0 or -errno. */
int procfs_tgid(uint32_t tid, uint32_t *tgid);

/* Call fn(ctx, tid) for every thread of @pid. 0 or -errno. */
int procfs_for_each_thread(uint32_t pid, int (*fn)(void *ctx, uint32_t tid), void *ctx);

/*
 * The MPI rank in the environment block @env of @len bytes, laid out as
 * /proc/PID/environ holds it ("NAME=VALUE" entries, each ended by a NUL;
 * the last one may lack it, and @env need not be NUL-terminated).  The
 * value of the first of OMPI_COMM_WORLD_RANK (Open MPI), PMIX_RANK (PMIx),
 * PMI_RANK (MPICH, Intel MPI) and SLURM_PROCID (srun) that is set and is
 * a non-negative decimal integer no larger than INT32_MAX (digits only:
 * no sign, no space); a variable set to anything else is passed over.
 * SLURM_PROCID counts only beside SLURM_STEP_ID, in the tasks of a job
 * step: Slurm also gives the batch script (and all it starts outside
 * srun) SLURM_PROCID=0, without a step id.
 * Where a name is set twice, its first entry counts, as for getenv().
 * Returns the rank, or -1 if none.
 */
int32_t procfs_env_rank(const char *env, size_t len);

/* The MPI rank of process @pid: procfs_env_rank() of /proc/PID/environ,
 * the environment its current image started with.  -1 if none, or if
 * the file cannot be read (gone, kernel thread, no permission). */
int32_t procfs_rank(uint32_t pid);

/* True if process @pid exists and is not a zombie. */
bool procfs_alive(uint32_t pid);

/* Read a whole file (any size; /proc files report size 0) into a malloc'd
 * buffer the caller frees. 0 or -errno. */
int procfs_read_file(const char *path, char **buf, size_t *len);

/*
 * Parse the hexadecimal number (digits 0-9, a-f, A-F, no prefix) at *@p,
 * reading no further than @end, as /proc text files print addresses and
 * offsets (maps, kallsyms).  Stops at the first character that is not a
 * hex digit, or at @end.  On success stores the value in *@val, advances
 * *@p past the digits and returns their number (> 0).  Returns -EINVAL
 * if there is no digit, -ERANGE if the value does not fit in 64 bits;
 * *@p and *@val are unchanged then.
 */
int procfs_parse_hex(const char **p, const char *end, uint64_t *val);

#endif /* BPFPROF_PROCFS_H */
