/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * heap.h - the collector's malloc heap, populated ahead of use.
 *
 * A page of the heap first touched costs a page fault, ~11 us on the test
 * VM (a PVM guest, where every fault goes through the hypervisor), against
 * ~1.1 us a page populated by one madvise(MADV_POPULATE_WRITE) call
 * (docs/PERFORMANCE.md, session 35): a pyburn run's ~400 heap faults were
 * ~5 ms of its ~80 ms of CPU.  So the heap grows at least
 * HEAP_GROWTH_BYTES at a time (M_TOP_PAD), allocations up to
 * HEAP_MMAP_THRESHOLD come from it rather than from mmap, and
 * heap_populate() populates what the heap grew by since its last call.
 * Without MADV_POPULATE_WRITE (before Linux 5.14) nothing is populated
 * and the pages fault in as before; under AddressSanitizer, whose
 * allocator is not glibc's, all of this does nothing.
 *
 * Call heap_setup() after the command's fork (command.h): pages populated
 * before it would fault again on the first write after it, as copy-on-write.
 */
#ifndef BPFPROF_HEAP_H
#define BPFPROF_HEAP_H

#include <stddef.h>

/* Bytes the heap grows by at least, each time it grows (M_TOP_PAD). */
#define HEAP_GROWTH_BYTES (1u << 20)
/* Allocations below this come from the heap, not from their own mmap. */
#define HEAP_MMAP_THRESHOLD (16u << 20)

/*
 * Set malloc's options above, grow the heap by @initial bytes (a malloc
 * freed at once: it stays, as the top of the heap) and populate it.
 */
void heap_setup(size_t initial);

/* Populate the pages the heap grew by since the last call (one system
 * call when it grew, none otherwise).  Bytes populated so far: heap_populated(). */
void heap_populate(void);

/* Bytes heap_setup() and heap_populate() populated. */
size_t heap_populated(void);

#endif /* BPFPROF_HEAP_H */
