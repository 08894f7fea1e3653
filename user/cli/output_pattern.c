// SPDX-License-Identifier: BSD-2-Clause
/*
 * output_pattern.c - expands the %h, %p and %% of `-o PATH` (see
 * output_pattern.h); user/cli/options.c calls it with this host's name
 * and the collector's pid before anything checks or creates the output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_pattern.h"

/* Append @s to @f with '/' turned into '_'. */
static void put_component(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '/' ? '_' : *s, f);
}

int output_pattern_expand(const char *pattern, const char *host, uint32_t pid, char **out,
			  const char **bad)
{
	size_t len;
	FILE *f;

	*out = NULL;
	*bad = NULL;
	f = open_memstream(out, &len);
	if (!f)
		return -ENOMEM;
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			fputc(*p, f);
			continue;
		}
		if (p[1] == 'h')
			put_component(f, host);
		else if (p[1] == 'p')
			fprintf(f, "%u", pid);
		else if (p[1] == '%')
			fputc('%', f);
		else {
			*bad = p;	/* also a '%' at the end: p[1] is its NUL */
			break;
		}
		p++;		/* past the letter */
	}
	if (fclose(f) || *bad) {
		free(*out);
		*out = NULL;
		return *bad ? -EINVAL : -ENOMEM;
	}
	return 0;
}
