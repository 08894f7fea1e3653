/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * sample_kernel_time.h - what tests/bench/sample_kernel_time.bpf.c and its
 * loader, tests/bench/sample_kernel_time.c, share: the histogram's shape
 * and the slots of the totals.
 */
#ifndef SAMPLE_KERNEL_TIME_H
#define SAMPLE_KERNEL_TIME_H

#define SKT_MAX_TGIDS 8		/* processes whose samples count */
#define SKT_COMM_LEN 16		/* a task's name, with its NUL (TASK_COMM_LEN) */
#define SKT_SLOT_NS 50		/* histogram resolution, ns */
#define SKT_SLOTS 2048		/* 0 .. 102.4 us; the last slot takes longer ones */

enum skt_total {
	SKT_COUNT = 0,		/* callbacks counted */
	SKT_SUM_NS,		/* their time, ns */
	SKT_TOTALS,
};

#endif
