// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf_cache.c - owns the symbolizer's ELF files (symbolizer_impl.h): the
 * cache of files by (dev, inode, path) of their mappings, one libdwfl
 * session per file (reported at base 0, so that module addresses are
 * the file's own vaddrs; separate debug files through debuginfo.h), kept
 * open least recently used first up to max_open, and each file's ABI
 * and PT_LOAD segments (file offset -> vaddr).  Files asked for without a
 * live process (pid 0) are found by the symbolizer's locator, if it has
 * one (locate.h).
 */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "debuginfo.h"
#include "symbolizer_impl.h"
#include "targets/procmaps.h"

/* The page size of the machines we read mappings of (x86-64 only). */
#define ELF_PAGE_SIZE 4096u

/* Attempts to open a file that could not be opened, with other pids. */
#define OPEN_ATTEMPTS 4

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debuginfo_find_located, /* local; debuginfod if DEBUGINFOD_URLS */
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

/* Whether the PT_LOAD @ph is executable code whose bytes are not in the file. */
static bool code_without_bytes(const GElf_Phdr *ph)
{
	return ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && !ph->p_filesz && ph->p_memsz;
}

/*
 * The segment table of a separate debug file standing in for the file
 * of @map (locate.h): its headers keep p_vaddr and p_memsz but not the
 * file offsets.  The loader maps a segment at its vaddr's page from its
 * file offset's page, so an executable @map from file offset pgoff
 * holds the one executable segment's page-aligned vaddr at pgoff.  With
 * no executable mapping, or more than one executable segment, no
 * segment (no names: a wrong one would be worse).
 */
static int debug_only_segments(struct elf_file *f, Elf *elf, size_t phnum,
			       const struct bpfprof_mapping *map)
{
	GElf_Phdr mem, *ph, code = { 0 };
	size_t i, nx = 0;

	for (i = 0; i < phnum; i++) {
		ph = gelf_getphdr(elf, (int)i, &mem);
		if (ph && ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && nx++ == 0)
			code = *ph;
	}
	if (nx != 1 || !map || !(map->prot & BPFPROF_PROT_EXEC))
		return 0;
	f->segs = calloc(1, sizeof(*f->segs));
	if (!f->segs)
		return -ENOMEM;
	f->segs[0].off = map->pgoff;
	f->segs[0].vaddr = code.p_vaddr & ~(uint64_t)(ELF_PAGE_SIZE - 1);
	f->segs[0].filesz = code.p_vaddr - f->segs[0].vaddr + code.p_memsz;
	f->nsegs = 1;
	return 0;
}

/*
 * Read the ABI (ELF class, machine) and the PT_LOAD segments of the
 * module's main ELF file (once; for @map, when that is a separate debug
 * file); the load bias at every open.
 */
static int load_segments(struct elf_file *f, const struct bpfprof_mapping *map)
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
	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (ph && code_without_bytes(ph))
			return debug_only_segments(f, elf, phnum, map);
	}
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

/*
 * Open the file of @map for @pid: through the locator of @c when it has
 * one and @pid is 0 (no live process: *@name is then the path found,
 * owned by the locator), else as procmaps_open_file() does (*@name NULL).
 */
static int open_file(struct elf_cache *c, uint32_t pid, const struct bpfprof_mapping *map,
		     const char **name)
{
	*name = NULL;
	if (!c->locator || pid)
		return procmaps_open_file(pid, map);
	if (!map->path || map->path[0] != '/')
		return -ENOENT;
	return locate_open(c->locator, map->path, map->build_id, map->build_id_size, name);
}

/* Report the file of @map, opened for @pid, as the module of f->dwfl. */
static int report_file(struct elf_cache *c, struct elf_file *f, uint32_t pid,
		       const struct bpfprof_mapping *map)
{
	const char *found;
	void **userdata;
	size_t plen;
	char *name;
	int fd;

	fd = open_file(c, pid, map, &found);
	if (fd < 0)
		return fd;
	/*
	 * Debug links are looked for beside the file's name: the path
	 * without " (deleted)", or where the locator found it.
	 */
	procmaps_path_deleted(map->path, &plen);
	name = found ? strdup(found) : strndup(map->path, plen);
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
	/* debuginfo_find_located() searches the locator's places too */
	if (found && dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		*userdata = c->locator;
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
static int open_dwfl(struct elf_cache *c, struct elf_file *f, uint32_t pid,
		     const struct bpfprof_mapping *map)
{
	int err;

	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->dwfl)
		return -ENOMEM;
	dwfl_report_begin(f->dwfl);
	err = f->image ? report_image(f) : report_file(c, f, pid, map);
	if (err)
		return err;
	if (dwfl_report_end(f->dwfl, NULL, NULL) != 0) {
		f->bad_elf = true;
		return -EINVAL;
	}
	if (load_segments(f, map)) {
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
	err = open_dwfl(c, f, pid, map);
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

/* Whether @f is the file of @map: same path and build-id (or neither has one). */
static bool same_file(const struct elf_file *f, const struct bpfprof_mapping *map)
{
	uint32_t n = map->build_id && map->build_id_size <= ELF_FILE_BUILD_ID_MAX ?
		     map->build_id_size : 0;

	return strcmp(f->path, map->path) == 0 && f->build_id_size == n &&
	       (!n || memcmp(f->build_id, map->build_id, n) == 0);
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
		if (same_file(f, map))
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
	if (map->build_id && map->build_id_size <= ELF_FILE_BUILD_ID_MAX) {
		memcpy(f->build_id, map->build_id, map->build_id_size);
		f->build_id_size = map->build_id_size;
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
