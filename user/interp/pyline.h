/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interp/pyline.h - decoders of CPython's own formats, on bytes already
 * copied out of a process: the line table of a code object (3.11+: the
 * location table, co_linetable, CPython's Objects/locations.md; 3.10's
 * co_linetable and 3.6-3.9's co_lnotab, their Objects/lnotab_notes.txt)
 * and the characters of a compact str object.  Pure functions, no I/O.
 */
#ifndef BPFPROF_PYLINE_H
#define BPFPROF_PYLINE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The source line of the instruction at index @instr (code units from
 * the start of the bytecode) by the location table @table (@len bytes) of
 * a code object whose first line is @firstlineno.  An instruction without
 * a location of its own (or beyond the table) gets the last line the
 * table reached; never below 0.
 */
int py_line_of(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

/*
 * The same for 3.10's co_linetable (@instr in code units, as 3.10's
 * f_lasti): an instruction in a range without a line gets the last line
 * a range had before it.
 */
int py_line_of_310(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

/* The same for 3.6-3.9's co_lnotab (@instr: their f_lasti / 2). */
int py_line_of_lnotab(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);

/*
 * The UTF-8 text of @length characters of @kind bytes each (1: Latin-1,
 * 2: UCS-2, 4: UCS-4) at @data (@avail bytes; characters beyond are left
 * out).  A malloc'd string the caller frees, NULL on a bad kind or
 * ENOMEM.  Characters that are not valid code points become U+FFFD.
 */
char *py_str_utf8(const uint8_t *data, size_t avail, unsigned kind, size_t length);

#endif /* BPFPROF_PYLINE_H */
