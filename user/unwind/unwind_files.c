// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind/unwind_files.c - the unwinder's ELF files (see unwind_files.h):
 * the cache by device and inode, one Elf per file lent to every Dwfl that
 * reports it, and the find_elf / find_debuginfo callbacks of those Dwfls.
 */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>

#include "symbols/debuginfo.h"
#include "symbols/elf_segments.h"
#include "targets/procmaps.h"
#include "unwind_files.h"

/* Whether the file has a separate debug file with a .debug_frame. */
enum debug_frame { DEBUG_UNKNOWN, DEBUG_NONE, DEBUG_FRAME };

struct file_key {
	uint32_t major, minor;
	uint64_t inode;
};

struct unwind_file {
	UT_hash_handle hh;
	struct file_key key;
	char *path;			/* as first mapped, without " (deleted)" */
	int fd;				/* -1 while closed */
	Elf *elf;			/* ELF_C_READ_MMAP of fd, our reference; NULL while closed */
	off_t size;			/* of the open file, to notice a rewrite */
	struct timespec mtime;
	struct elf_segments segs;	/* PT_LOADs: load biases */
	uint64_t vaddr;			/* first PT_LOAD's p_vaddr aligned down to p_align */
	uint64_t vaddr_end;		/* end of the last PT_LOAD (p_vaddr + p_memsz) */
	struct elf_abi abi;
	enum debug_frame debug;
	uint64_t last_use;
	struct unwind_files *cache;	/* NULL: made by unwind_file_from_fd() */
};

struct unwind_files {
	struct unwind_file *files;	/* uthash by key; open or closed */
	size_t nr_open;
	size_t max_open;
	uint64_t clock;			/* use counter for LRU closing */
	struct unwind_files_stats stats;
};

/* ---- one file ------------------------------------------------------------ */

/* The address range of @elf's PT_LOAD segments, as libdwfl computes it. */
static int load_range(Elf *elf, uint64_t *vaddr, uint64_t *vaddr_end)
{
	size_t phnum;
	bool first = true;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			*vaddr = ph.p_vaddr & -(ph.p_align ? ph.p_align : 1);
		first = false;
		if (ph.p_vaddr + ph.p_memsz > 0)
			*vaddr_end = ph.p_vaddr + ph.p_memsz;
	}
	return first ? -EINVAL : 0;
}

/* Open libelf on @fd (consumed) into the closed file @f.  0 or -errno. */
static int file_load(struct unwind_file *f, int fd)
{
	struct stat st;
	int err = -EINVAL;

	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	f->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF && elf_abi_read(f->elf, &f->abi) == 0 &&
	    load_range(f->elf, &f->vaddr, &f->vaddr_end) == 0)
		err = elf_segments_read(f->elf, &f->segs);
	if (err) {
		elf_end(f->elf);
		f->elf = NULL;
		close(fd);
		return err;
	}
	f->fd = fd;
	f->size = st.st_size;
	f->mtime = st.st_mtim;
	f->debug = DEBUG_UNKNOWN;
	return 0;
}

/* Drop our reference to the Elf of @f and close its file. */
static void file_close(struct unwind_file *f)
{
	if (f->elf) {
		/* Dwfls may still hold the Elf: it is mapped whole, so they
		 * keep reading it from memory; the descriptor is ours. */
		elf_cntl(f->elf, ELF_C_FDDONE);
		elf_end(f->elf);
		f->elf = NULL;
		if (f->cache)
			f->cache->nr_open--;
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	elf_segments_free(&f->segs);
}

/* Whether the open file @f still has the size and mtime it was read with. */
static bool file_unchanged(const struct unwind_file *f)
{
	struct stat st;

	return fstat(f->fd, &st) == 0 && st.st_size == f->size &&
	       st.st_mtim.tv_sec == f->mtime.tv_sec && st.st_mtim.tv_nsec == f->mtime.tv_nsec;
}

static void file_free(struct unwind_file *f)
{
	file_close(f);
	free(f->path);
	free(f);
}

/* A new closed file named @path (up to @len bytes). */
static struct unwind_file *file_new(const char *path, size_t len)
{
	struct unwind_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = -1;
	f->path = strndup(path, len);
	if (!f->path) {
		free(f);
		return NULL;
	}
	return f;
}

int unwind_file_from_fd(int fd, const char *name, struct unwind_file **out)
{
	struct unwind_file *f = file_new(name, strlen(name));
	int err;

	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	err = file_load(f, fd);
	if (err) {
		file_free(f);
		return err;
	}
	f->debug = DEBUG_NONE;
	*out = f;
	return 0;
}

void unwind_file_free(struct unwind_file *f)
{
	if (f)
		file_free(f);
}

const struct elf_abi *unwind_file_abi(const struct unwind_file *f)
{
	return &f->abi;
}

int unwind_file_report(struct unwind_file *f, Dwfl *dwfl, const char *name, uint64_t start,
		       uint64_t pgoff)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	void **slot = NULL;

	if (!f->elf || elf_segments_bias(&f->segs, start, pgoff, &bias))
		return -EINVAL;
	mod = dwfl_report_module(dwfl, name, bias + f->vaddr, bias + f->vaddr_end);
	if (!mod || !dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL, NULL, NULL) || !slot)
		return -EINVAL;
	*slot = f;
	/* Take the module's reference now, while the file is surely open. */
	if (!dwfl_module_getelf(mod, &bias))
		return -EINVAL;
	return 0;
}

/* ---- the cache ----------------------------------------------------------- */

struct unwind_files *unwind_files_new(size_t max_open)
{
	struct unwind_files *c = calloc(1, sizeof(*c));

	if (c)
		c->max_open = max_open ? max_open : UNWIND_FILES_MAX;
	return c;
}

void unwind_files_free(struct unwind_files *c)
{
	struct unwind_file *f, *tmp;

	if (!c)
		return;
	HASH_ITER(hh, c->files, f, tmp) {
		HASH_DEL(c->files, f);
		file_free(f);
	}
	free(c);
}

/* Close the least recently used open file other than @keep. */
static void close_oldest(struct unwind_files *c, const struct unwind_file *keep)
{
	struct unwind_file *f, *tmp, *oldest = NULL;

	HASH_ITER(hh, c->files, f, tmp)
		if (f != keep && f->elf && (!oldest || f->last_use < oldest->last_use))
			oldest = f;
	if (oldest)
		file_close(oldest);
}

int unwind_files_get(struct unwind_files *c, uint32_t pid, const struct bpfprof_mapping *m,
		     struct unwind_file **out)
{
	struct file_key key = { m->dev_major, m->dev_minor, m->inode };
	struct unwind_file *f;
	size_t len;
	int fd, err;

	HASH_FIND(hh, c->files, &key, sizeof(key), f);
	if (f && f->elf && file_unchanged(f)) {
		c->stats.shared++;
		f->last_use = ++c->clock;
		*out = f;
		return 0;
	}
	if (f)
		file_close(f);		/* closed, or rewritten in place */
	fd = procmaps_open_file(pid, m);
	if (fd < 0)
		return fd;
	if (!f) {
		procmaps_path_deleted(m->path, &len);
		f = file_new(m->path, len);
		if (!f) {
			close(fd);
			return -ENOMEM;
		}
		f->key = key;
		f->cache = c;
		HASH_ADD(hh, c->files, key, sizeof(f->key), f);
	}
	err = file_load(f, fd);
	if (err)
		return err;
	c->stats.opened++;
	c->nr_open++;
	f->last_use = ++c->clock;
	while (c->nr_open > c->max_open)
		close_oldest(c, f);
	*out = f;
	return 0;
}

void unwind_files_stats(const struct unwind_files *c, struct unwind_files_stats *st)
{
	if (c && st)
		*st = c->stats;
}

/* ---- libdwfl callbacks ---------------------------------------------------- */

/* The Elf of the module's file: one more reference to the cached one. */
static int cb_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	struct unwind_file *f = userdata ? *userdata : NULL;

	*elfp = NULL;
	if (!f || !f->elf)
		return -1;
	*elfp = elf_begin(f->fd, ELF_C_READ_MMAP, f->elf);
	if (*elfp && !*file_name)
		*file_name = strdup(f->path);	/* where debug links are looked for */
	return -1;				/* no descriptor of its own */
}

/* Whether the ELF file open as @fd has a .debug_frame (compressed or not);
 * reads section headers and names only. */
static bool has_debug_frame(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		elf_end(elf);
		return false;
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		found = name && (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"));
	}
	elf_end(elf);
	return found;
}

static const Dwfl_Callbacks probe_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debuginfo_find,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};

/*
 * Whether the separate debug file of @f (main file @file, debug link
 * @link with CRC @crc) has a .debug_frame.  Looked up for a module of a
 * Dwfl of its own: libdwfl keeps the debug file its build-id lookup
 * opened in the module it was asked for, and would load all of its DWARF
 * there even if we said no.
 */
static enum debug_frame probe_debug_frame(struct unwind_file *f, const char *file,
					  const char *link, GElf_Word crc)
{
	Dwfl *dwfl = dwfl_begin(&probe_callbacks);
	Dwfl_Module *mod = NULL;
	char *name = NULL;
	bool found = false;
	int fd = dup(f->fd);

	if (dwfl && fd >= 0 && (mod = dwfl_report_elf(dwfl, f->path, f->path, fd, 0, false)))
		fd = -1;	/* the module's now */
	if (mod) {
		int dfd = debuginfo_find(mod, NULL, f->path, 0, file, link, crc, &name);

		found = dfd >= 0 && has_debug_frame(dfd);
		if (dfd >= 0)
			close(dfd);
	}
	if (fd >= 0)
		close(fd);
	free(name);
	dwfl_end(dwfl);
	return found ? DEBUG_FRAME : DEBUG_NONE;
}

/*
 * debuginfo_find(), but only for files whose separate debug file has a
 * .debug_frame, the one part of it the unwinder reads: libdw would
 * otherwise decompress and index the whole debug file of every module in
 * every process whose eh_frame misses a pc (ld.so's entry point does).
 */
static int cb_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			     Dwarf_Addr base, const char *file, const char *debuglink_file,
			     GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct unwind_file *f = userdata ? *userdata : NULL;

	if (f && f->debug == DEBUG_UNKNOWN && f->fd >= 0) {
		f->debug = probe_debug_frame(f, file, debuglink_file, debuglink_crc);
		if (f->cache)
			f->cache->stats.debug_checked++;
	}
	if (f && f->debug != DEBUG_FRAME) {
		errno = 0;
		return -1;
	}
	return debuginfo_find(mod, userdata, modname, base, file, debuglink_file, debuglink_crc,
			      debuginfo_file_name);
}

const Dwfl_Callbacks unwind_files_callbacks = {
	.find_elf = cb_find_elf,
	.find_debuginfo = cb_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};
