// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_kallsyms.c - libFuzzer target of the /proc/kallsyms parser: any
 * bytes go to kallsyms_parse(), then addresses around every hex number
 * of the input are looked up.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *ks = NULL;
	const char *mod;
	uint64_t start;

	if (kallsyms_parse((const char *)data, size, &ks))
		return 0;
	kallsyms_count(ks);
	/* Probe near numbers taken from the input itself and at the edges. */
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		kallsyms_lookup(ks, a, &start, &mod);
	}
	for (size_t i = 0; i < size; i++) {
		if (i == 0 || data[i - 1] == '\n') {
			char buf[17] = { 0 };
			size_t n = 0;

			while (n < 16 && i + n < size && strchr("0123456789abcdefABCDEF", data[i + n]) &&
			       data[i + n])
				buf[n] = (char)data[i + n], n++;
			uint64_t a = strtoull(buf, NULL, 16);
			const char *name = kallsyms_lookup(ks, a, &start, &mod);

			if (name)
				(void)strlen(name), (void)(mod && strlen(mod));
			kallsyms_lookup(ks, a + 1, NULL, NULL);
			kallsyms_lookup(ks, a - 1, NULL, NULL);
		}
	}
	kallsyms_lookup(ks, 0, NULL, NULL);
	kallsyms_lookup(ks, UINT64_MAX, NULL, NULL);
	kallsyms_free(ks);
	return 0;
}
