// SPDX-License-Identifier: BSD-2-Clause
/*
 * demangle.c - owns demangle_symbol() (demangle.h): the one place that
 * calls the demanglers, the C++ runtime's for C++ and libiberty's (GNU
 * binutils' and GCC's) for Rust.
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/demangle.h"

/* libstdc++'s abi::__cxa_demangle() (<cxxabi.h>, a C++ header): extern "C"
 * in the Itanium C++ ABI, so C can call it.  status: 0 done, -1 out of
 * memory, -2 not a valid mangled name, -3 bad arguments. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

/* @copy (NUL-terminated) as C++ names are shown, or NULL. */
static char *demangle_cxx(const char *copy)
{
	int status = -3;
	char *out = __cxa_demangle(copy, NULL, NULL, &status);

	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
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
