// SPDX-License-Identifier: BSD-2-Clause
/*
 * symbolize.c - address -> (module, offset, function, file:line) for user
 * addresses (elfutils libdwfl, one Dwfl per ELF file, with caches of
 * files, per-file sorted function tables and results; [vdso] addresses
 * through a copy of our own vDSO image) and for kernel addresses
 * (kallsyms.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <uthash.h>

#include "debuginfo.h"
#include "kallsyms.h"
#include "ksym_lookup.h"
#include "targets/procmaps.h"
#include "symbolize.h"
#include "vdso.h"

/* How far back a lookup looks for an enclosing sized symbol. */
#define SYM_SCAN_BACK 16
/* Attempts to open a file that could not be opened, with other pids. */
#define OPEN_ATTEMPTS 4

/* An interned string (module names handed out to callers). */
struct istr {
	UT_hash_handle hh;
	char s[];
};

/* A PT_LOAD segment: file range [off, off + filesz) is at vaddr. */
struct seg {
	uint64_t off, filesz, vaddr;
};

/* A function symbol in the file's vaddr space. */
struct fsym {
	uint64_t addr;
	uint64_t end;			/* one past the end */
	const char *name;		/* owned by the Dwfl */
	uint32_t rank;			/* lower is preferred at equal addr */
};

struct file_key {
	uint32_t major, minor;
	uint64_t inode;
};

/*
 * One ELF file, identified by (dev, inode, path) of its mappings, or an
 * ELF image in memory (the vDSO copy: image set, not in the hash).  Its
 * Dwfl (holding one or two file descriptors) may be closed again when
 * too many are open (LRU); the segments, ABI and cached results stay.
 */
struct elf_file {
	UT_hash_handle hh;		/* keyed by key */
	struct file_key key;
	struct elf_file *next_same;	/* same key, other path */
	char *path;
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
	struct fsym *syms;		/* names point into the Dwfl */
	size_t nsyms;
	bool syms_loaded;
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

struct symbolizer {
	struct elf_file *files;		/* uthash by file_key */
	struct elf_file *lru_head, *lru_tail; /* files with an open Dwfl */
	size_t nr_open, max_open;
	struct result *results;		/* uthash by res_key */
	struct istr *strings;		/* uthash by content */
	struct kallsyms *kallsyms;
	bool kallsyms_tried;
	struct ksym *ksym;		/* the kernel names addresses (BPF); NULL: kallsyms */
	bool ksym_tried;
	struct kernel_result *kernel_results; /* uthash by ip, for ksym */
	struct vdso_image *vdso_image;	/* our own vDSO image, NULL if none */
	struct elf_file *vdso;		/* its file entry, NULL if none */
	bool vdso_tried;
	bool no_lines;			/* function names only: no DWARF loaded */
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debuginfo_find,	/* local; debuginfod if DEBUGINFOD_URLS */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,		/* elfutils default: :.debug:/usr/lib/debug */
};

struct symbolizer *symbolizer_new(void)
{
	struct symbolizer *s = calloc(1, sizeof(struct symbolizer));

	if (s)
		s->max_open = SYMBOLIZE_MAX_OPEN_FILES;
	return s;
}

void symbolizer_set_lines(struct symbolizer *s, bool lines)
{
	s->no_lines = !lines;
}

int symbolizer_set_max_open(struct symbolizer *s, size_t max_open)
{
	if (!s || !max_open)
		return -EINVAL;
	s->max_open = max_open;
	return 0;
}

/* Close the Dwfl of @f (its fds); symbols are reloaded when reopened. */
static void close_file(struct symbolizer *s, struct elf_file *f)
{
	if (!f->dwfl)
		return;
	dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	free(f->syms);
	f->syms = NULL;
	f->nsyms = 0;
	f->syms_loaded = false;
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	else
		s->lru_head = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else
		s->lru_tail = f->lru_prev;
	f->lru_prev = f->lru_next = NULL;
	s->nr_open--;
}

/* Make the open file @f the most recently used. */
static void lru_touch(struct symbolizer *s, struct elf_file *f)
{
	if (s->lru_head == f)
		return;
	/* unlink (if linked) */
	if (f->lru_prev)
		f->lru_prev->lru_next = f->lru_next;
	if (f->lru_next)
		f->lru_next->lru_prev = f->lru_prev;
	else if (s->lru_tail == f)
		s->lru_tail = f->lru_prev;
	f->lru_prev = NULL;
	f->lru_next = s->lru_head;
	if (s->lru_head)
		s->lru_head->lru_prev = f;
	s->lru_head = f;
	if (!s->lru_tail)
		s->lru_tail = f;
}

static void free_file(struct symbolizer *s, struct elf_file *f)
{
	close_file(s, f);
	free(f->segs);
	free(f->path);
	free(f);
}

void symbolizer_free(struct symbolizer *s)
{
	struct elf_file *f, *ftmp;
	struct result *r, *rtmp;
	struct istr *i, *itmp;
	struct kernel_result *kr, *krtmp;

	if (!s)
		return;
	HASH_ITER(hh, s->results, r, rtmp) {
		HASH_DEL(s->results, r);
		free(r);
	}
	HASH_ITER(hh, s->files, f, ftmp) {
		HASH_DEL(s->files, f);
		while (f) {
			struct elf_file *next = f->next_same;

			free_file(s, f);
			f = next;
		}
	}
	HASH_ITER(hh, s->strings, i, itmp) {
		HASH_DEL(s->strings, i);
		free(i);
	}
	if (s->vdso)
		free_file(s, s->vdso);
	vdso_image_free(s->vdso_image);
	kallsyms_free(s->kallsyms);
	ksym_close(s->ksym);
	HASH_ITER(hh, s->kernel_results, kr, krtmp) {
		HASH_DEL(s->kernel_results, kr);
		free(kr);
	}
	free(s);
}

/* The interned copy of @str (@len bytes), or NULL if out of memory. */
static const char *intern(struct symbolizer *s, const char *str, size_t len)
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

/* ---- ELF files ----------------------------------------------------------- */

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
 * Make sure @f has an open Dwfl.  Returns 0 or a negative errno; a file
 * that is not ELF fails at once, one that could not be opened is tried
 * again with other pids, OPEN_ATTEMPTS times in all.
 */
static int open_file(struct symbolizer *s, struct elf_file *f, uint32_t pid,
		     const struct bpfprof_mapping *map)
{
	int err;

	if (f->dwfl) {
		lru_touch(s, f);
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
	s->nr_open++;
	lru_touch(s, f);
	while (s->nr_open > s->max_open && s->lru_tail && s->lru_tail != f)
		close_file(s, s->lru_tail);
	return 0;
}

/* The cached file of @map, created on first use; NULL if out of memory. */
static struct elf_file *get_file(struct symbolizer *s, const struct bpfprof_mapping *map)
{
	struct file_key key;
	struct elf_file *head, *f;

	memset(&key, 0, sizeof(key));
	key.major = map->dev_major;
	key.minor = map->dev_minor;
	key.inode = map->inode;
	HASH_FIND(hh, s->files, &key, sizeof(key), head);
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
		HASH_ADD(hh, s->files, key, sizeof(key), f);
	}
	return f;
}

/* File offset -> vaddr through the PT_LOAD segment holding it. */
static int offset_to_vaddr(const struct elf_file *f, uint64_t off, uint64_t *vaddr)
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
	f = calloc(1, sizeof(*f));
	if (f)
		f->path = strdup(VDSO_PATH);
	if (!f || !f->path) {
		free(f);
		return NULL;
	}
	f->image = s->vdso_image->data;
	f->image_size = s->vdso_image->size;
	if (open_file(s, f, 0, NULL)) {
		free_file(s, f);
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
		f = get_file(s, m);
		if (!f)
			return none;
		/* the ABI is kept while the file is closed */
		if (!f->segs_loaded && open_file(s, f, pid, m))
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

/* ---- function symbols ---------------------------------------------------- */

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Build the file's sorted table of function symbols (symtab, or dynsym,
 * as elfutils provides them, plus .gnu_debugdata) once.  Zero-sized
 * symbols extend to the next symbol.
 */
static int load_symbols(struct elf_file *f)
{
	int n, i;
	size_t k = 0, j;
	struct fsym *syms;

	f->syms_loaded = true;
	n = dwfl_module_getsymtab(f->mod);
	if (n <= 1)
		return 0;
	syms = calloc((size_t)n, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type, bind;

		name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    shndx == (GElf_Word)-1)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && bind != STB_LOCAL))
			continue;
		/* back to the file's vaddr space */
		syms[k].addr = addr - f->bias;
		syms[k].end = sym.st_size && syms[k].addr <= UINT64_MAX - sym.st_size ?
			      syms[k].addr + sym.st_size : 0;
		syms[k].name = name;
		/* prefer sized, then global over weak over local */
		syms[k].rank = (sym.st_size ? 0 : 4) +
			       (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
		k++;
	}
	if (k > 1)
		qsort(syms, k, sizeof(*syms), cmp_fsym);
	/* one symbol per address; zero sizes reach the next address */
	for (i = 0, j = 0; (size_t)i < k; i++) {
		if (j && syms[j - 1].addr == syms[i].addr)
			continue;
		syms[j++] = syms[i];
	}
	k = j;
	for (j = 0; j < k; j++)
		if (!syms[j].end)
			syms[j].end = j + 1 < k ? syms[j + 1].addr : syms[j].addr + 1;
	f->syms = syms;
	f->nsyms = k;
	return 0;
}

/* The function symbol containing @vaddr, or NULL. */
static const struct fsym *find_symbol(const struct elf_file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->nsyms, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest start below, or an enclosing symbol a little before */
	for (i = lo; i > 0 && lo - i < SYM_SCAN_BACK; i--)
		if (vaddr < f->syms[i - 1].end)
			return &f->syms[i - 1];
	return NULL;
}

/* Resolve @vaddr of the open file @f (not cached yet) into @r. */
static int resolve(struct symbolizer *s, struct elf_file *f, uint64_t vaddr, struct result *r)
{
	const struct fsym *fs;
	Dwfl_Line *line;
	int err;

	if (!f->syms_loaded) {
		err = load_symbols(f);
		if (err)
			return err;
	}
	fs = find_symbol(f, vaddr);
	if (fs) {
		/* copied: the Dwfl holding the name may be closed later */
		/* "__libc_start_main@@GLIBC_2.34": the version is not the name */
		r->function = intern(s, fs->name, strcspn(fs->name, "@"));
		if (!r->function)
			return -ENOMEM;
		r->function_start = fs->addr;
	}
	line = s->no_lines ? NULL : dwfl_module_getsrc(f->mod, vaddr + f->bias);
	if (line) {
		Dwarf_Addr a;
		int lineno = 0;
		const char *src = dwfl_lineinfo(line, &a, &lineno, NULL, NULL, NULL);

		if (src && lineno > 0) {
			r->file = intern(s, src, strlen(src));
			if (!r->file)
				return -ENOMEM;
			r->line = (uint32_t)lineno;
		}
	}
	return 0;
}

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
	sym->module = intern(s, map->path ? map->path : "",
			     map->path ? strlen(map->path) : 0);
	if (!sym->module)
		return -ENOMEM;
	if (map->path && strcmp(map->path, VDSO_PATH) == 0) {
		f = vdso_file(s, pid, maps, nr, map);
		if (!f)
			return 0;	/* not our image: the file offset only */
	} else if (map->path && map->path[0] == '/') {
		f = get_file(s, map);
		if (!f)
			return -ENOMEM;
	} else {
		return 0;	/* anonymous, [heap], [stack], ... */
	}
	/* the segments are kept while the file is closed */
	if (!f->segs_loaded && open_file(s, f, pid, map))
		return 0;
	if (offset_to_vaddr(f, off, &vaddr))
		return 0;
	sym->module_offset = vaddr;

	memset(&key, 0, sizeof(key));
	key.file = f;
	key.vaddr = vaddr;
	HASH_FIND(hh, s->results, &key, sizeof(key), r);
	if (!r) {
		if (open_file(s, f, pid, map))
			return 0;	/* unreadable now: not cached */
		r = calloc(1, sizeof(*r));
		if (!r)
			return -ENOMEM;
		r->key = key;
		err = resolve(s, f, vaddr, r);
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

/* ---- kernel -------------------------------------------------------------- */

int symbolizer_load_kallsyms(struct symbolizer *s, const char *path)
{
	if (!s || !path)
		return -EINVAL;
	if (s->kallsyms_tried || s->ksym_tried)
		return -EINVAL;	/* symbolizer_kernel() already chose a source */
	s->kallsyms_tried = true;
	return kallsyms_load(path, &s->kallsyms);
}

/* "[MODULE]" interned, or SYMBOLIZE_KERNEL_MODULE for NULL/"" (core kernel);
 * NULL if out of memory. */
static const char *kernel_module_name(struct symbolizer *s, const char *module)
{
	/* module names are short (MODULE_NAME_LEN is 56); a kallsyms file may not be */
	size_t n = module ? strlen(module) : 0;
	char small[128], *b;
	const char *name;

	if (!n)
		return SYMBOLIZE_KERNEL_MODULE;
	b = n + 3 <= sizeof(small) ? small : malloc(n + 3);
	if (!b)
		return NULL;
	b[0] = '[';
	memcpy(b + 1, module, n);
	b[n + 1] = ']';
	b[n + 2] = '\0';
	name = intern(s, b, n + 2);
	if (b != small)
		free(b);
	return name;
}

/* @ip named by the kernel (ksym_lookup), once per address. */
static int kernel_by_bpf(struct symbolizer *s, uint64_t ip, struct kernel_result **out)
{
	struct kernel_result *kr;
	struct ksym_symbol ks;
	int err;

	HASH_FIND(hh, s->kernel_results, &ip, sizeof(ip), kr);
	if (kr) {
		*out = kr;
		return 0;
	}
	if ((err = ksym_lookup(s->ksym, &ip, 1, &ks)))
		return err;
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return -ENOMEM;
	kr->ip = ip;
	if (ks.found) {
		kr->name = intern(s, ks.name, strlen(ks.name));
		kr->module = kernel_module_name(s, ks.module);
		kr->start = ks.start;
		if (!kr->name || !kr->module) {
			free(kr);
			return -ENOMEM;
		}
	}
	HASH_ADD(hh, s->kernel_results, ip, sizeof(ip), kr);
	*out = kr;
	return 0;
}

/* Which source names kernel addresses: a table given by
 * symbolizer_load_kallsyms(), else the kernel through BPF, else
 * /proc/kallsyms (loaded once). */
static void choose_kernel_source(struct symbolizer *s)
{
	if (s->kallsyms_tried || s->ksym_tried)
		return;
	s->ksym_tried = true;
	if (ksym_open(&s->ksym) == 0)
		return;
	s->ksym = NULL;
	s->kallsyms_tried = true;
	/* failure (e.g. no /proc) leaves the table NULL: nothing found */
	kallsyms_load("/proc/kallsyms", &s->kallsyms);
}

int symbolizer_kernel(struct symbolizer *s, uint64_t ip, struct bpfprof_symbol *sym)
{
	const char *name, *module = NULL;
	uint64_t start = 0;

	if (!s || !sym)
		return -EINVAL;
	memset(sym, 0, sizeof(*sym));
	choose_kernel_source(s);
	if (s->ksym) {
		struct kernel_result *kr;
		int err = kernel_by_bpf(s, ip, &kr);

		if (err)
			return err == -ENOMEM ? err : -ENOENT;
		if (!kr->name)
			return -ENOENT;
		sym->module = kr->module;
		sym->module_offset = ip;
		sym->function = kr->name;
		sym->function_start = kr->start;
		return 0;
	}
	name = kallsyms_lookup(s->kallsyms, ip, &start, &module);
	if (!name)
		return -ENOENT;
	sym->module = kernel_module_name(s, module);
	if (!sym->module)
		return -ENOMEM;
	sym->module_offset = ip;
	sym->function = name;
	sym->function_start = start;
	return 0;
}
