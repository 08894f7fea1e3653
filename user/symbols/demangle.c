// SPDX-License-Identifier: BSD-2-Clause
/*
 * demangle.c - owns demangle_symbol() (demangle.h): the one place that
 * calls the demanglers, libiberty's (GNU binutils' and GCC's) for C++ and
 * Rust.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"

/* @copy (NUL-terminated) as C++ names are shown, or NULL: libiberty's
 * cplus_demangle_v3(), the demangler of GCC's cp-demangle.c, which
 * libstdc++'s abi::__cxa_demangle() also is (not linking libstdc++ spared
 * its load and relocations at start-up, ~1 ms on the test VM). */
static char *demangle_cxx(const char *copy)
{
	return cplus_demangle_v3(copy, DMGL_PARAMS | DMGL_ANSI);
}

char *demangle_symbol(const char *name, size_t len)
{
	char *copy, *out;

	if (!name || len < 3 || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	copy = strndup(name, len);	/* the demanglers read up to a NUL */
	if (!copy)
		return NULL;
	/* Rust's legacy names are C++ names whose last part is the hash
	 * ("17h" and 16 hex digits): rust_demangle() takes only those, and
	 * without DMGL_VERBOSE leaves out the hash and v0's crate
	 * disambiguators, as perf and Rust's own backtraces do. */
	out = rust_demangle(copy, DMGL_PARAMS | DMGL_ANSI);
	if (!out && name[1] == 'Z')
		out = demangle_cxx(copy);
	free(copy);
	return out;
}
