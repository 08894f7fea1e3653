/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * gopclntab.h - function names of Go programs from .gopclntab, the table
 * the Go runtime reads itself to name its frames (Go's runtime/symtab.go:
 * pcHeader, functab, _func; the layout of Go 1.18 and later, magic
 * 0xfffffff0 or 0xfffffff1, 64-bit little-endian).  A Go binary built with
 * `-ldflags="-s -w"` or stripped has no symbol table, but keeps this one.
 */
#ifndef BPFPROF_GOPCLNTAB_H
#define BPFPROF_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* One function: [start, end) in the file's vaddr space, and its name. */
struct go_func {
	uint64_t start, end;
	const char *name;	/* points into the table's data: valid while it is */
};

/*
 * The functions of the @size bytes of .gopclntab at @data, in address
 * order.  @text is the vaddr of the .text section: function entries are
 * offsets from pcHeader.textStart, which is that address, and which a
 * position-independent binary leaves 0 in the file for the loader to set.
 * *@funcs is a malloc()ed array the caller frees; names point into @data.
 * Returns the number of functions (> 0); -ENOENT for data that is not a
 * table of a supported version, -EINVAL for one whose sizes or offsets lie
 * outside @size (a damaged file), -ENOMEM.
 */
long gopclntab_funcs(const void *data, size_t size, uint64_t text, struct go_func **funcs);

#endif /* BPFPROF_GOPCLNTAB_H */
