/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * symbolizer_impl.h - the symbolizer's private state, shared by the files
 * that implement symbolize.h: symbolize.c (the object, interned strings,
 * user addresses and their result cache, the [vdso] image), elf_cache.c
 * (ELF files and their Dwfl sessions), elf_symtab.c (function tables and
 * source lines of one file) and kernel_names.c (kernel addresses).  Not
 * for use outside user/symbols/.
 */
#ifndef BPFPROF_SYMBOLIZER_IMPL_H
#define BPFPROF_SYMBOLIZER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>
#include <uthash.h>

#include "fsym.h"
#include "locate.h"
#include "sym_cache.h"
#include "symbolize.h"
#include "vdso.h"

/* An interned string (module names handed out to callers). */
struct istr {
	UT_hash_handle hh;
	char s[];
};

/* A PT_LOAD segment: file range [off, off + filesz) is at vaddr. */
struct seg {
	uint64_t off, filesz, vaddr;
};

struct file_key {
	uint32_t major, minor;
	uint64_t inode;
};

/* Longest build-id an elf_file keeps (bytes; procmaps.h reads at most 64). */
#define ELF_FILE_BUILD_ID_MAX 64

/*
 * One ELF file, identified by (dev, inode, path, build-id) of its
 * mappings (the build-id tells apart files recorded on other machines
 * under the same name and inode), or an ELF image in memory (the vDSO copy: image set, not in the hash).  Its
 * Dwfl (holding one or two file descriptors) may be closed again when
 * too many are open (LRU); the segments, ABI and cached results stay.
 */
struct elf_file {
	UT_hash_handle hh;		/* keyed by key */
	struct file_key key;
	struct elf_file *next_same;	/* same key, other path */
	char *path;
	uint8_t build_id[ELF_FILE_BUILD_ID_MAX];
	uint32_t build_id_size;		/* 0: none recorded */
	void *image;			/* in-memory ELF (a vdso_image's), NULL for files */
	size_t image_size;		/* its bytes */
	int err;			/* < 0: last open failed (see attempts) */
	bool bad_elf;			/* not a usable ELF file: never retried */
	unsigned attempts;		/* failed opens */
	uint32_t failed_pid;		/* pid of the last failed open */
	Dwfl *dwfl;			/* NULL while closed */
	Dwfl_Module *mod;
	GElf_Addr bias;			/* Dwfl address = vaddr + bias */
	struct elf_file *lru_prev, *lru_next; /* open files, most recent first */
	bool segs_loaded;		/* also: abi is set */
	struct elf_abi abi;		/* EI_CLASS and e_machine */
	struct seg *segs;
	size_t nsegs;
	const struct fsym *syms;	/* names point into the Dwfl (malloc()ed
					 * table), or are offsets into strings: */
	size_t nsyms;
	const char *strings;		/* ... the names of syms_cached, NULL for
					 * a table built here */
	struct sym_cache_table syms_cached;	/* a cache file's table, read-only */
	const char **shown;		/* [nsyms], interned: the name to show of
					 * each symbol (demangled unless
					 * s->no_demangle), NULL until asked; the
					 * array calloc()ed at the first */
	bool syms_loaded;
};

/*
 * The ELF files of user mappings, with at most max_open Dwfls open.
 * With a locator, files asked for with pid 0 (no live process) are
 * found through it (locate.h) instead of by their recorded path.
 */
struct elf_cache {
	struct elf_file *files;		/* uthash by file_key */
	struct elf_file *lru_head, *lru_tail; /* files with an open Dwfl */
	size_t nr_open, max_open;
	struct locator *locator;	/* NULL: recorded paths only */
};

/* A cached result for (file, vaddr). */
struct res_key {
	const struct elf_file *file;
	uint64_t vaddr;
};

struct result {
	UT_hash_handle hh;
	struct res_key key;
	const char *function;
	uint64_t function_start;
	const char *file;
	uint32_t line;
};

/* A kernel address named by ksym_lookup() (name NULL: no symbol). */
struct kernel_result {
	uint64_t ip;
	const char *name, *module;	/* interned; module "[MOD]" or SYMBOLIZE_KERNEL_MODULE */
	uint64_t start;
	UT_hash_handle hh;
};

/* Where kernel names come from, and what they said (kernel_names.c). */
struct kernel_names {
	struct kallsyms *kallsyms;
	bool kallsyms_tried;
	struct ksym *ksym;		/* the kernel names addresses (BPF); NULL: kallsyms */
	bool ksym_tried;
	struct kernel_result *results;	/* uthash by ip, for ksym */
};

struct symbolizer {
	struct elf_cache files;
	struct result *results;		/* uthash by res_key */
	struct istr *strings;		/* uthash by content */
	struct kernel_names kernel;
	struct vdso_image *vdso_image;	/* our own vDSO image, NULL if none */
	struct elf_file *vdso;		/* its file entry, NULL if none */
	bool vdso_tried;
	bool no_lines;			/* function names only: no DWARF loaded */
	bool no_demangle;		/* mangled names shown as they are */
	struct sym_cache *sym_cache;	/* function tables by build-id, NULL: none */
};

/* symbolize.c: the interned copy of @str (@len bytes), NULL if out of memory. */
const char *symbolizer_intern(struct symbolizer *s, const char *str, size_t len);

/* ---- elf_cache.c ---- */

/* The cached file of @map, created on first use; NULL if out of memory. */
struct elf_file *elf_cache_get(struct elf_cache *c, const struct bpfprof_mapping *map);

/*
 * A file entry, not in the cache's hash, for the ELF image of @size bytes
 * at @image (not copied: it must outlive the entry), named @path; NULL if
 * out of memory.  Released with elf_cache_free_file().
 */
struct elf_file *elf_cache_new_image(const char *path, void *image, size_t size);

/*
 * Make sure @f has an open Dwfl: the file of @map opened for @pid (see
 * procmaps_open_file(); through c->locator when set and @pid is 0), or
 * @f's image.  Returns 0 or a negative errno:
 * -EINVAL for a file that is not usable ELF (never retried); a file that
 * could not be opened is tried again with other pids, a few times in all.
 * Closes the least recently used files beyond c->max_open.
 */
int elf_cache_open(struct elf_cache *c, struct elf_file *f, uint32_t pid,
		   const struct bpfprof_mapping *map);

/* Close @f (if open) and release it. */
void elf_cache_free_file(struct elf_cache *c, struct elf_file *f);

/* Release every file of @c. */
void elf_cache_clear(struct elf_cache *c);

/*
 * File offset @off -> *@vaddr through the PT_LOAD segment of @f holding
 * it (segments loaded).  0, or -ENOENT when no segment holds it.
 */
int elf_file_vaddr(const struct elf_file *f, uint64_t off, uint64_t *vaddr);

/* ---- elf_symtab.c ---- */

/*
 * Resolve @vaddr of the open file @f into @r: the function symbol holding
 * it (name interned, start) and, unless s->no_lines, its DWARF source
 * file:line.  Loads the file's function table on first use.  Returns 0
 * (also when nothing is found) or -ENOMEM.
 */
int elf_symtab_resolve(struct symbolizer *s, struct elf_file *f, uint64_t vaddr,
		       struct result *r);

/* Forget the function table of @f (its names die with its Dwfl). */
void elf_symtab_drop(struct elf_file *f);

/* ---- kernel_names.c ---- */

/* Release what @k holds. */
void kernel_names_free(struct kernel_names *k);

#endif /* BPFPROF_SYMBOLIZER_IMPL_H */
