// SPDX-License-Identifier: BSD-2-Clause
/*
 * fuzz_symbolize.c - libFuzzer target of the ELF/DWARF symbolizer on
 * malformed files: the input is written to a temporary file, which a fake
 * executable mapping points at; addresses across the mapping are resolved
 * with symbolizer_user() (pid 0: by path only) and the build-id is read.
 * The file is $TMPDIR/bpfprof-fuzz-elf.PID (tests/fuzz/run points TMPDIR
 * at its scratch directory).  A fresh symbolizer per input: its caches key files by (dev, inode, path),
 * which a rewritten temporary file could reuse.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/buildid.h"
#include "symbols/symbolize.h"

static char path[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpfprof_mapping map = { 0 };
	struct bpfprof_symbol sym;
	struct symbolizer *s;
	uint8_t id[64];
	int fd;

	if (!path[0]) {
		const char *dir = getenv("TMPDIR");

		snprintf(path, sizeof(path), "%s/bpfprof-fuzz-elf.%d", dir && *dir ? dir : "/tmp",
			 (int)getpid());
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	elf_build_id_fd(fd, id, sizeof(id));
	close(fd);
	elf_build_id(path, id, 4);

	map.start = 0x400000;
	map.end = 0x400000 + 0x10000;
	map.pgoff = 0;
	map.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC;
	map.inode = 1;
	map.path = path;
	s = symbolizer_new();
	if (!s)
		return 0;
	for (uint64_t ip = map.start; ip < map.end; ip += 0x1000 - 3) {
		if (symbolizer_user(s, 0, &map, 1, ip, &sym) == 0) {
			if (sym.function)
				(void)strlen(sym.function);
			if (sym.file)
				(void)strlen(sym.file);
		}
	}
	/* A mapping with a file offset: pgoff past the end of the file. */
	map.pgoff = 0x7ffff000;
	symbolizer_user(s, 0, &map, 1, map.start + 5, &sym);
	symbolizer_free(s);
	return 0;
}
