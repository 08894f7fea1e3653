// SPDX-License-Identifier: BSD-2-Clause
/*
 * elf_symtab.c - owns what the symbolizer finds at one vaddr of an open
 * ELF file (symbolizer_impl.h): the file's sorted table of function
 * symbols (.symtab, else .dynsym and .gnu_debugdata, as libdwfl gives
 * them; a Go program's .gopclntab where it has none), the lookup of the
 * function holding an address, and its DWARF source file:line.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer_impl.h"
#include "symbols/demangle.h"
#include "symbols/elf_section.h"
#include "symbols/gopclntab.h"

/* How far back a lookup looks for an enclosing sized symbol. */
#define SYM_SCAN_BACK 16

void elf_symtab_drop(struct elf_file *f)
{
	if (f->syms_cached.data)
		sym_cache_table_free(&f->syms_cached);
	else
		free((void *)f->syms);
	free(f->shown);
	f->syms = NULL;
	f->nsyms = 0;
	f->strings = NULL;
	f->shown = NULL;
	f->syms_loaded = false;
}

/*
 * A Go program without a symbol table (`go build -ldflags="-s -w"`, or
 * stripped): its functions from .gopclntab (gopclntab.h), whose names
 * point into the Dwfl's Elf as the symbol table's do.  0 also when there
 * is no such table (no names, as before); -ENOMEM.
 */
static int load_go_functions(struct elf_file *f)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	GElf_Shdr sh, text;
	Elf_Scn *scn = elf_section_by_name(elf, ".gopclntab", &sh);
	Elf_Data *data;
	struct go_func *go;
	struct fsym *syms;
	long n;

	if (!scn || !elf_section_by_name(elf, ".text", &text) || !(data = elf_getdata(scn, NULL)))
		return 0;
	n = gopclntab_funcs(data->d_buf, data->d_size, text.sh_addr, &go);
	if (n <= 0)
		return n == -ENOMEM ? -ENOMEM : 0;
	syms = calloc((size_t)n, sizeof(*syms));
	if (!syms) {
		free(go);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++)
		syms[i] = (struct fsym){ .addr = go[i].start, .end = go[i].end, .name = go[i].name };
	free(go);
	f->syms = syms;
	f->nsyms = (size_t)n;
	return 0;
}

/* Rank of a local label (below): after every other kind at an address. */
#define RANK_LOCAL_LABEL 7

/*
 * A local symbol without a type in an executable section: an assembly
 * label such as ld.so's entry points _start and _dl_start_user, which
 * perf names too.  Not __ehdr_start or _end (other sections), whose
 * extent to the next symbol would name PLT or other unnamed code.
 */
static bool local_code_label(Elf *elf, GElf_Word shndx, int type, int bind)
{
	GElf_Shdr mem, *sh;

	if (type != STT_NOTYPE || bind != STB_LOCAL || !elf)
		return false;
	sh = gelf_getshdr(elf_getscn(elf, shndx), &mem);
	return sh && (sh->sh_flags & SHF_EXECINSTR);
}

/* Whether @f's table was built without a .symtab (of the file or of a
 * separate debug file): a debug file installed later would name more. */
static bool dynsym_only(struct elf_file *f)
{
	const char *debugfile = NULL;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	dwfl_module_info(f->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile)
		return false;
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return false;
	return true;
}

/* Whether @f's table goes through the symbol cache: a file (not an image
 * in memory) with a build-id, and a cache. */
static bool cacheable(const struct symbolizer *s, const struct elf_file *f)
{
	return s->sym_cache && f->build_id_size && !f->image;
}

/*
 * @f's table from the symbol cache (sym_cache.h) when cacheable(): true if
 * found there; else, once load_symbols() built it, stored there
 * (store_symbols()).
 */
static bool cached_symbols(struct symbolizer *s, struct elf_file *f)
{
	if (!cacheable(s, f) ||
	    sym_cache_get(s->sym_cache, f->build_id, f->build_id_size, &f->syms_cached))
		return false;
	f->syms = f->syms_cached.syms;
	f->nsyms = f->syms_cached.nr;
	f->strings = f->syms_cached.strings;
	return true;
}

static void store_symbols(struct symbolizer *s, struct elf_file *f)
{
	if (cacheable(s, f))
		sym_cache_put(s->sym_cache, f->build_id, f->build_id_size, dynsym_only(f),
			      f->syms, f->nsyms);
}

/*
 * Build the file's sorted table of function symbols (symtab, or dynsym,
 * as elfutils provides them, plus .gnu_debugdata) once.  What this puts
 * in the table is kept in the symbol cache by build-id: the Makefile's
 * SYM_BUILDER_ID hashes this file, so a change here makes old cache
 * files misses.  Zero-sized
 * symbols extend to the next symbol.  Local labels count only outside
 * the sized functions: inside one (a loop's label in hand-written
 * assembly) they would take the function's name from the rest of it.
 */
static int load_symbols(struct elf_file *f)
{
	int n, i;
	size_t k = 0, j;
	uint64_t covered = 0;	/* end of the sized symbols so far */
	struct fsym *syms;

	f->syms_loaded = true;
	n = dwfl_module_getsymtab(f->mod);
	if (n <= 1)
		return load_go_functions(f);
	/* not calloc: only the kept entries are written, and on a guest
	 * whose first touch of a page is dear the rest stay untouched */
	syms = malloc((size_t)n * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		Elf *elf = NULL;
		int type, bind;
		bool label;

		name = dwfl_module_getsym_info(f->mod, i, &sym, &addr, &shndx, &elf, NULL);
		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    shndx == (GElf_Word)-1)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		label = local_code_label(elf, shndx, type, bind);
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && bind != STB_LOCAL) && !label)
			continue;
		/* back to the file's vaddr space */
		syms[k].addr = addr - f->bias;
		syms[k].end = sym.st_size && syms[k].addr <= UINT64_MAX - sym.st_size ?
			      syms[k].addr + sym.st_size : 0;
		syms[k].name = name;
		/* prefer sized, then global over weak over local */
		syms[k].rank = label ? RANK_LOCAL_LABEL :
			       (sym.st_size ? 0 : 4) +
			       (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
		k++;
	}
	if (k == 0) {		/* only imports: a stripped Go program with cgo */
		free(syms);
		return load_go_functions(f);
	}
	fsym_sort(syms, k);
	/* one symbol per address, no local label inside a sized symbol;
	 * zero sizes reach the next address */
	for (i = 0, j = 0; (size_t)i < k; i++) {
		if (j && syms[j - 1].addr == syms[i].addr)
			continue;
		if (syms[i].rank == RANK_LOCAL_LABEL && syms[i].addr < covered)
			continue;
		if (syms[i].end > covered)
			covered = syms[i].end;
		syms[j++] = syms[i];
	}
	k = j;
	for (j = 0; j < k; j++)
		if (!syms[j].end)
			syms[j].end = j + 1 < k ? syms[j + 1].addr : syms[j].addr + 1;
	f->syms = k < (size_t)n ? realloc(syms, k * sizeof(*syms)) : syms;
	if (!f->syms)		/* a shrink that failed: keep the larger block */
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

/*
 * The name to show for @fs of @f, interned (copied: the Dwfl holding
 * fs->name may be closed later) once per symbol: without its version
 * ("__libc_start_main@@GLIBC_2.34" is __libc_start_main), demangled unless
 * the symbolizer says not to (demangle.h).  NULL if out of memory.
 */
static const char *shown_name(struct symbolizer *s, struct elf_file *f, const struct fsym *fs)
{
	const char *name = f->strings ? f->strings + (uintptr_t)fs->name : fs->name;
	size_t i = (size_t)(fs - f->syms), len = strcspn(name, "@");
	char *d;

	if (!f->shown && !(f->shown = calloc(f->nsyms, sizeof(*f->shown))))
		return NULL;
	if (f->shown[i])
		return f->shown[i];
	d = s->no_demangle ? NULL : demangle_symbol(name, len);
	f->shown[i] = d ? symbolizer_intern(s, d, strlen(d)) : symbolizer_intern(s, name, len);
	free(d);
	return f->shown[i];
}

/* Resolve @vaddr of the open file @f (not cached yet) into @r. */
int elf_symtab_resolve(struct symbolizer *s, struct elf_file *f, uint64_t vaddr,
		       struct result *r)
{
	const struct fsym *fs;
	Dwfl_Line *line;
	int err;

	if (!f->syms_loaded && !cached_symbols(s, f)) {
		err = load_symbols(f);
		if (err)
			return err;
		store_symbols(s, f);
	}
	f->syms_loaded = true;
	fs = find_symbol(f, vaddr);
	if (fs) {
		r->function = shown_name(s, f, fs);
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
			r->file = symbolizer_intern(s, src, strlen(src));
			if (!r->file)
				return -ENOMEM;
			r->line = (uint32_t)lineno;
		}
	}
	return 0;
}
