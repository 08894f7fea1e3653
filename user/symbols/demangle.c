// SPDX-License-Identifier: BSD-2-Clause
/*
 * demangle.c - owns demangle_symbol() (demangle.h): the one place that
 * calls the C++ runtime's demangler.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

/* libstdc++'s abi::__cxa_demangle() (<cxxabi.h>, a C++ header): extern "C"
 * in the Itanium C++ ABI, so C can call it.  status: 0 done, -1 out of
 * memory, -2 not a valid mangled name, -3 bad arguments. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

char *demangle_symbol(const char *name, size_t len)
{
	char *copy, *out;
	int status = -3;

	if (!name || len < 3 || name[0] != '_' || name[1] != 'Z')
		return NULL;
	copy = strndup(name, len);	/* the demangler reads up to a NUL */
	if (!copy)
		return NULL;
	out = __cxa_demangle(copy, NULL, NULL, &status);
	free(copy);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
