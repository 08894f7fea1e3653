/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interp/py_layout.h - where CPython keeps what the profiler reads, per
 * minor version (3.6 to 3.13), for release builds of x86-64 Linux
 * without the -dbg packages: the offsets the BPF walk uses (struct
 * py_offsets of bpf/python.h) and those the collector uses to name a code
 * object (its strings and line table).  The table was taken from the
 * DWARF of Debian's python3.11 (its debug file) and of pyenv's 3.6.15,
 * 3.7.16, 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0;
 * tests/unit/interp/test_py_layout.c checks every field against the DWARF
 * of every interpreter on the machine that has it.
 */
#ifndef BPFPROF_PY_LAYOUT_H
#define BPFPROF_PY_LAYOUT_H

#include <stdint.h>

#include "python.h"

/* The format of a code object's line table (pyline.h). */
enum py_line_format {
	PY_LINES_LOCATIONS = 0,		/* 3.11+: co_linetable, Objects/locations.md */
	PY_LINES_310 = 1,		/* 3.10: co_linetable, Objects/lnotab_notes.txt */
	PY_LINES_LNOTAB = 2,		/* 3.6-3.9: co_lnotab */
};

struct py_layout {
	unsigned minor;			/* 11 for 3.11 */
	struct py_offsets bpf;		/* what the BPF walk reads */
	/* PyCodeObject; code_qualname is co_name's offset before 3.11 (no
	 * co_qualname: functions are named without their class), and
	 * code_linetable co_lnotab's before 3.10 */
	uint16_t code_filename, code_name, code_qualname, code_firstlineno, code_linetable;
	uint16_t line_format;		/* enum py_line_format */
	/* PyUnicodeObject: compact strings' data follows the header, whose
	 * size is ascii_size (ASCII) or compact_size (others) */
	uint16_t str_length, str_state, ascii_size, compact_size;
	/* PyBytesObject */
	uint16_t bytes_size, bytes_data;
	uint16_t object_type;		/* PyObject.ob_type */
	uint16_t pad;			/* (named: every other byte is checked) */
};

/*
 * The bits of PyASCIIObject.state, read as a uint32_t, of 3.11-3.13:
 * kind (3 bits: 1, 2 or 4 bytes a character), compact, ascii.
 */
#define PY_STR_KIND_SHIFT 2
#define PY_STR_COMPACT_BIT 5
#define PY_STR_ASCII_BIT 6

/* The minor versions the table knows: 3.PY_LAYOUT_FIRST to 3.PY_LAYOUT_LAST. */
#define PY_LAYOUT_FIRST 6
#define PY_LAYOUT_LAST 13

/* The layout of CPython 3.@minor, NULL if unknown. */
const struct py_layout *py_layout_find(unsigned minor);

#endif /* BPFPROF_PY_LAYOUT_H */
