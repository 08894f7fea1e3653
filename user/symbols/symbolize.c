// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbolize.c - owns the symbolizer object of symbolize.h and its user
 * addresses: settings (the locator of locate.h among them), interned strings, address -> mapping -> ELF file
 * (elf_cache.c) or our own vDSO image (vdso.h) -> vaddr, and the cache
 * of results by (file, vaddr) filled by elf_symtab.c.  Kernel addresses
 * are in kernel_names.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer_impl.h"
#include "targets/procmaps.h"

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (s)
		s->files.max_open = SYMBOLIZE_MAX_OPEN_FILES;
	return s;
}

void symbolizer_set_lines(struct symbolizer *s, bool lines)
{
	s->no_lines = !lines;
}

void symbolizer_set_demangle(struct symbolizer *s, bool demangle)
{
	s->no_demangle = !demangle;
}

int symbolizer_set_max_open(struct symbolizer *s, size_t max_open)
{
	if (!s || !max_open)
		return -EINVAL;
	s->files.max_open = max_open;
	return 0;
}

int symbolizer_set_cache_dir(struct symbolizer *s, const char *dir)
{
	struct sym_cache *c = NULL;
	int err;

	if (!s)
		return -EINVAL;
	if (dir && (err = sym_cache_open(dir, &c)))
		return err;
	sym_cache_close(s->sym_cache);
	s->sym_cache = c;
	return 0;
}

void symbolizer_cache_stats(const struct symbolizer *s, struct sym_cache_stats *st)
{
	sym_cache_stats(s ? s->sym_cache : NULL, st);
}

int symbolizer_set_locator(struct symbolizer *s, const struct locate_opts *o)
{
	struct locator *l;

	if (!s)
		return -EINVAL;
	if (s->files.files)
		return -EBUSY;
	l = locate_new(o);
	if (!l)
		return -errno;
	locate_free(s->files.locator);
	s->files.locator = l;
	return 0;
}

void symbolizer_free(struct symbolizer *s)
{
	struct result *r, *rtmp;
	struct istr *i, *itmp;

	if (!s)
		return;
	HASH_ITER(hh, s->results, r, rtmp) {
		HASH_DEL(s->results, r);
		free(r);
	}
	elf_cache_clear(&s->files);
	locate_free(s->files.locator);
	sym_cache_close(s->sym_cache);
	HASH_ITER(hh, s->strings, i, itmp) {
		HASH_DEL(s->strings, i);
		free(i);
	}
	if (s->vdso)
		elf_cache_free_file(&s->files, s->vdso);
	vdso_image_free(s->vdso_image);
	kernel_names_free(&s->kernel);
	free(s);
}

/* The interned copy of @str (@len bytes), or NULL if out of memory. */
const char *symbolizer_intern(struct symbolizer *s, const char *str, size_t len)
{
	struct istr *i;

	HASH_FIND(hh, s->strings, str, len, i);
	if (i)
		return i->s;
	i = malloc(sizeof(*i) + len + 1);
	if (!i)
		return NULL;
	memcpy(i->s, str, len);
	i->s[len] = '\0';
	HASH_ADD_KEYPTR(hh, s->strings, i->s, len, i);
	return i->s;
}

/* ---- the vDSO ------------------------------------------------------------ */

/*
 * The file entry of our own vDSO image (vdso.h), copied and opened on
 * first use; NULL if this process has none or it cannot be read (tried
 * once).
 */
static struct elf_file *own_vdso(struct symbolizer *s)
{
	struct elf_file *f;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	if (vdso_image_own(&s->vdso_image))
		return NULL;
	f = elf_cache_new_image(VDSO_PATH, s->vdso_image->data, s->vdso_image->size);
	if (!f)
		return NULL;
	if (elf_cache_open(&s->files, f, 0, NULL)) {
		elf_cache_free_file(&s->files, f);
		return NULL;
	}
	s->vdso = f;
	return f;
}

/*
 * The ABI of the process with mappings @maps: that of its first
 * executable ELF file mapping that can be opened.  Class 0 (unknown)
 * when none can.
 */
static struct elf_abi process_abi(struct symbolizer *s, uint32_t pid,
				  const struct bpfprof_mapping *maps, size_t nr)
{
	struct elf_abi none = { 0 };
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct bpfprof_mapping *m = &maps[i];
		struct elf_file *f;

		if (!m->path || m->path[0] != '/' || !(m->prot & BPFPROF_PROT_EXEC))
			continue;
		f = elf_cache_get(&s->files, m);
		if (!f)
			return none;
		/* the ABI is kept while the file is closed */
		if (!f->segs_loaded && elf_cache_open(&s->files, f, pid, m))
			continue;
		return f->abi;
	}
	return none;
}

/*
 * The image in which to look up the [vdso] mapping @map of the process
 * with mappings @maps: our own vDSO when vdso_image_matches() says the
 * process's is the same image (the kernel maps one image per ABI into
 * every process, only at other addresses), else NULL (32-bit and x32
 * processes of a 64-bit collector, a vDSO from elsewhere, e.g. a restored
 * process).
 */
static struct elf_file *vdso_file(struct symbolizer *s, uint32_t pid,
				  const struct bpfprof_mapping *maps, size_t nr,
				  const struct bpfprof_mapping *map)
{
	struct elf_file *img = own_vdso(s);
	struct elf_abi abi;

	/* the size first: no file is opened for a mapping of another size */
	if (!img || map->end - map->start != img->image_size)
		return NULL;
	abi = process_abi(s, pid, maps, nr);
	return vdso_image_matches(s->vdso_image, map, &abi) ? img : NULL;
}

/* ---- user addresses ------------------------------------------------------ */

int symbolizer_user(struct symbolizer *s, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr, uint64_t ip, struct bpfprof_symbol *sym)
{
	const struct bpfprof_mapping *map;
	struct elf_file *f;
	struct result *r;
	struct res_key key;
	uint64_t off, vaddr;
	int err;

	if (!s || !sym || (!maps && nr))
		return -EINVAL;
	memset(sym, 0, sizeof(*sym));
	map = procmaps_find(maps, nr, ip);
	if (!map)
		return -ENOENT;
	off = ip - map->start + map->pgoff;
	sym->mapping = map;
	sym->module_offset = off;
	sym->module = symbolizer_intern(s, map->path ? map->path : "",
			     map->path ? strlen(map->path) : 0);
	if (!sym->module)
		return -ENOMEM;
	if (map->path && strcmp(map->path, VDSO_PATH) == 0) {
		f = vdso_file(s, pid, maps, nr, map);
		if (!f)
			return 0;	/* not our image: the file offset only */
	} else if (map->path && map->path[0] == '/') {
		f = elf_cache_get(&s->files, map);
		if (!f)
			return -ENOMEM;
	} else {
		return 0;	/* anonymous, [heap], [stack], ... */
	}
	/* the segments are kept while the file is closed */
	if (!f->segs_loaded && elf_cache_open(&s->files, f, pid, map))
		return 0;
	if (elf_file_vaddr(f, off, &vaddr))
		return 0;
	sym->module_offset = vaddr;

	memset(&key, 0, sizeof(key));
	key.file = f;
	key.vaddr = vaddr;
	HASH_FIND(hh, s->results, &key, sizeof(key), r);
	if (!r) {
		if (elf_cache_open(&s->files, f, pid, map))
			return 0;	/* unreadable now: not cached */
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		r->key = key;
		err = elf_symtab_resolve(s, f, vaddr, r);
		if (err) {
			free(r);
			return err;
		}
		HASH_ADD(hh, s->results, key, sizeof(key), r);
	}
	sym->function = r->function;
	sym->function_start = r->function_start;
	sym->file = r->file;
	sym->line = r->line;
	return 0;
}
