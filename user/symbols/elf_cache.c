// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf_cache.c - owns the symbolizer's ELF files (symbolizer_impl.h): the
 * cache of files by (dev, inode, path) of their mappings, one libdwfl
 * session per file (reported at base 0, so that module addresses are
 * the file's own vaddrs; separate debug files through debuginfo.h), kept
 * open least recently used first up to max_open, and each file's ABI
 * and PT_LOAD segments (file offset -> vaddr).
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo.h"
#include "symbolizer_impl.h"
#include "targets/procmaps.h"

/* Attempts to open a file that could not be opened, with other pids. */
#define OPEN_ATTEMPTS 4

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debuginfo_find,	/* local; debuginfod if DEBUGINFOD_URLS */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,		/* elfutils default: :.debug:/usr/lib/debug */
};

/* Close the Dwfl of @f (its fds); symbols are reloaded when reopened. */
static void close_file(struct elf_cache *c, struct elf_file *f)
{
	if (!f->dwfl)
		return;
	dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	elf_symtab_drop(f);
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else
		c->lru_head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		c->lru_tail = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
	c->nr_open--;
}

/* Make the open file @f the most recently used. */
static void lru_touch(struct elf_cache *c, struct elf_file *f)
{
	if (c->lru_head == f)
		return;
	/* unlink (if linked) */
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else if (c->lru_tail == f)
		c->lru_tail = f->lru_prev;
	f->lru_prev = NULL;
	f->lru_next = c->lru_head;
	if (c->lru_head)
		c->lru_head->lru_prev = f;
	c->lru_head = f;
	if (!c->lru_tail)
		c->lru_tail = f;
}

void elf_cache_free_file(struct elf_cache *c, struct elf_file *f)
{
	close_file(c, f);
	free(f->segs);
	free(f->path);
	free(f);
}

void elf_cache_clear(struct elf_cache *c)
{
	struct elf_file *f, *ftmp;

	HASH_ITER(hh, c->files, f, ftmp) {
		HASH_DEL(c->files, f);
		while (f) {
			struct elf_file *next = f->next_same;

			elf_cache_free_file(c, f);
			f = next;
		}
	}
}

/*
 * Read the ABI (ELF class, machine) and the PT_LOAD segments of the
 * module's main ELF file (once); the load bias at every open.
 */
static int load_segments(struct elf_file *f)
{
	Elf *elf = dwfl_module_getelf(f->mod, &f->bias);
	size_t phnum, i;

	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return -EINVAL;
	if (f->segs_loaded)
		return 0;
	if (elf_abi_read(elf, &f->abi))
		return -EINVAL;
	f->segs_loaded = true;
	if (!phnum)
		return 0;
	f->segs = calloc(phnum, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD || !ph->p_filesz)
			continue;
		if (ph->p_offset > UINT64_MAX - ph->p_filesz)
			continue;
		f->segs[f->nsegs].off = ph->p_offset;
		f->segs[f->nsegs].filesz = ph->p_filesz;
		f->segs[f->nsegs].vaddr = ph->p_vaddr;
		f->nsegs++;
	}
	return 0;
}

/* Report the file of @map, opened for @pid, as the module of f->dwfl. */
static int report_file(struct elf_file *f, uint32_t pid, const struct bpfprof_mapping *map)
{
	size_t plen;
	char *name;
	int fd;

	fd = procmaps_open_file(pid, map);
	if (fd < 0)
		return fd;
	/* the path without " (deleted)" is where debug links are looked for */
	procmaps_path_deleted(map->path, &plen);
	name = strndup(map->path, plen);
	if (!name) {
		close(fd);
		return -ENOMEM;
	}
	f->mod = dwfl_report_elf(f->dwfl, name, name, fd, 0, true);
	free(name);
	if (!f->mod) {
		close(fd);	/* only consumed on success */
		f->bad_elf = true;
		return -EINVAL;
	}
	return 0;
}

/* Report the in-memory image of @f as the module of f->dwfl. */
static int report_image(struct elf_file *f)
{
	f->mod = dwfl_report_offline_memory(f->dwfl, f->path, f->path, f->image,
					    f->image_size);
	if (!f->mod) {
		f->bad_elf = true;
		return -EINVAL;
	}
	return 0;
}

/* Open the file of @map (or @f's image) and set up its Dwfl. */
static int open_dwfl(struct elf_file *f, uint32_t pid, const struct bpfprof_mapping *map)
{
	int err;

	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->dwfl)
		return -ENOMEM;
	dwfl_report_begin(f->dwfl);
	err = f->image ? report_image(f) : report_file(f, pid, map);
	if (err)
		return err;
	if (dwfl_report_end(f->dwfl, NULL, NULL) != 0) {
		f->bad_elf = true;
		return -EINVAL;
	}
	if (load_segments(f)) {
		f->bad_elf = true;
		return -EINVAL;
	}
	return 0;
}

/*
 * Make sure @f has an open Dwfl (see symbolizer_impl.h): a file that is
 * not ELF fails at once, one that could not be opened is tried again
 * with other pids, OPEN_ATTEMPTS times in all.
 */
int elf_cache_open(struct elf_cache *c, struct elf_file *f, uint32_t pid,
		   const struct bpfprof_mapping *map)
{
	int err;

	if (f->dwfl) {
		lru_touch(c, f);
		return 0;
	}
	if (f->bad_elf)
		return f->err;
	if (f->err && (f->attempts >= OPEN_ATTEMPTS || pid == f->failed_pid))
		return f->err;
	err = open_dwfl(f, pid, map);
	if (err) {
		if (f->dwfl) {
			dwfl_end(f->dwfl);
			f->dwfl = NULL;
			f->mod = NULL;
		}
		f->err = err;
		f->attempts++;
		f->failed_pid = pid;
		return err;
	}
	f->err = 0;
	c->nr_open++;
	lru_touch(c, f);
	while (c->nr_open > c->max_open && c->lru_tail && c->lru_tail != f)
		close_file(c, c->lru_tail);
	return 0;
}

struct elf_file *elf_cache_get(struct elf_cache *c, const struct bpfprof_mapping *map)
{
	struct file_key key;
	struct elf_file *head, *f;

	memset(&key, 0, sizeof(key));
	key.major = map->dev_major;
	key.minor = map->dev_minor;
	key.inode = map->inode;
	HASH_FIND(hh, c->files, &key, sizeof(key), head);
	for (f = head; f; f = f->next_same)
		if (strcmp(f->path, map->path) == 0)
			return f;

	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = key;
	f->path = strdup(map->path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	if (head) {
		f->next_same = head->next_same;
		head->next_same = f;
	} else {
		HASH_ADD(hh, c->files, key, sizeof(key), f);
	}
	return f;
}

struct elf_file *elf_cache_new_image(const char *path, void *image, size_t size)
{
	struct elf_file *f = calloc(1, sizeof(*f));

	if (f)
		f->path = strdup(path);
	if (!f || !f->path) {
		free(f);
		return NULL;
	}
	f->image = image;
	f->image_size = size;
	return f;
}

int elf_file_vaddr(const struct elf_file *f, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < f->nsegs; i++) {
		const struct seg *sg = &f->segs[i];

		if (off >= sg->off && off - sg->off < sg->filesz) {
			*vaddr = off - sg->off + sg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}
