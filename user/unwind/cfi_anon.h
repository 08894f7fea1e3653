/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi_anon.h - unwind tables for anonymous executable memory (JIT code),
 * which has no CFI, for `--call-graph auto` (user/unwind/cfi_loader.c
 * loads them):
 *
 *  - CPython 3.12+'s `-X perf` trampolines, recognised by their machine
 *    code (sub $8,%rsp; call *%rcx; add $8,%rsp; ret, optionally after an
 *    endbr64), copied back to back into arenas of anonymous memory: they
 *    keep no frame pointer, so each copy gets exact sp-based rows (CFA =
 *    sp + 8 at its first instruction and at its ret, sp + 16 in between;
 *    rbp unchanged).  Bytes between copies (an arena's unused tail) have
 *    no row.
 *  - Any other anonymous code (V8's JIT code, JVMs): the frame-pointer
 *    rule, CFA = rbp + 16, return address at CFA - 8, the caller's rbp at
 *    CFA - 16, as one row for the whole mapping.
 *
 * Row pcs are offsets from the mapping's start (the mapping's bias is its
 * start).  Not thread-safe; keeps no state.
 */
#ifndef BPFPROF_UNWIND_CFI_ANON_H
#define BPFPROF_UNWIND_CFI_ANON_H

#include <stdint.h>

#include "unwind/cfi_table.h"

/* Bytes of a trampoline mapping read at most; larger ones get no table. */
#define CFI_ANON_MAX_BYTES (16u << 20)

/* The frame-pointer row (pc 0): CFA = rbp + 16, caller's rbp at CFA - 16,
 * caller's rbx lost. */
struct cfi_row cfi_anon_fp_row(void);

/*
 * Whether the anonymous executable mapping [@start, @end) of process @pid
 * holds CPython's trampolines (it starts with one), read with
 * process_vm_readv().  Returns:
 *   0          and *@code NULL: it does not (or is unreadable): the
 *              frame-pointer row applies;
 *   0          and *@code a malloc()ed copy of its end - start bytes (the
 *              caller frees it), *@hash a 64-bit hash of them and of the
 *              size (equal bytes, equal tables);
 *   -EFBIG     trampolines, but more than CFI_ANON_MAX_BYTES;
 *   -EFAULT    trampolines, but the whole mapping could not be read;
 *   -ENOMEM.
 */
int cfi_anon_read(uint32_t pid, uint64_t start, uint64_t end, uint8_t **code, uint64_t *hash);

/*
 * The trampolines' table of @size bytes of code at @code (a mapping's
 * bytes, from cfi_anon_read()), pcs from 0: *@out a new table (free with
 * cfi_table_free()), or NULL if @code does not start with a trampoline.
 * 0 or -ENOMEM.
 */
int cfi_anon_table_mem(const uint8_t *code, uint64_t size, struct cfi_table **out);

#endif /* BPFPROF_UNWIND_CFI_ANON_H */
