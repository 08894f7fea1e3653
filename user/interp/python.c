// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/python.c - finding CPython interpreters in processes (see
 * interp.h): which mapping is one (libpython3.X.so, or a python3.X
 * executable exporting _PyRuntime; 3.6 and 3.7 name them libpython3.Xm
 * and python3.Xm too), its version (the Py_Version symbol of 3.11+, else
 * the file name), where its _PyRuntime (3.6: interp_head), evaluator
 * (_PyEval_EvalFrameDefault and the compiler's .cold part of it) and
 * PyCode_Type are, and the version's layout (py_layout.h); each file is
 * read once, and each process gets one "py_procs" entry in the BPF
 * program (struct py_process, bpf/python.h).
 *
 * Symbols come from the file's .symtab and .dynsym; a stripped file's
 * .cold part is looked for in its debug file under
 * /usr/lib/debug/.build-id when one is installed (without it, samples in
 * the evaluator's cold code keep their native frame and are counted).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "interp_impl.h"
#include "py_cache.h"
#include "symbols/buildid.h"
#include "targets/procmaps.h"

/* The symbols of an interpreter file, as ELF vaddrs (0: not found). */
struct py_syms {
	uint64_t runtime, code_type, version;
	uint64_t eval, eval_size, cold, cold_size;
	uint64_t interp_head, head_fn;	/* 3.6: interp_head, PyInterpreterState_Head */
};

/* The minor version of a python3.X or libpython3.X file name, 0 if none. */
static unsigned minor_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned minor = 0;
	const char *p;

	base = base ? base + 1 : path;
	if (!strncmp(base, "libpython3.", 11))
		p = base + 11;
	else if (!strncmp(base, "python3.", 8))
		p = base + 8;
	else
		return 0;
	while (*p >= '0' && *p <= '9' && minor < 1000)
		minor = minor * 10 + (unsigned)(*p++ - '0');
	if (*p == 'm' && minor <= 7)	/* 3.7m: pymalloc's ABI flag, gone in 3.8 */
		p++;
	/* python3.11d is a debug build: another layout */
	return *p == '\0' || *p == '.' ? minor : 0;
}

static void note_symbol(struct py_syms *s, const char *name, const GElf_Sym *sym)
{
	if (!sym->st_value)
		return;
	if (!strcmp(name, "_PyRuntime"))
		s->runtime = sym->st_value;
	else if (!strcmp(name, "PyCode_Type"))
		s->code_type = sym->st_value;
	else if (!strcmp(name, "Py_Version"))
		s->version = sym->st_value;
	else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
		s->eval = sym->st_value;
		s->eval_size = sym->st_size;
	} else if (!strcmp(name, "_PyEval_EvalFrameDefault.cold")) {
		s->cold = sym->st_value;
		s->cold_size = sym->st_size;
	} else if (!strcmp(name, "interp_head"))
		s->interp_head = sym->st_value;
	else if (!strcmp(name, "PyInterpreterState_Head"))
		s->head_fn = sym->st_value;
}

/* Look for the symbols in @elf's symbol tables. */
static void read_syms(Elf *elf, struct py_syms *s)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) == STT_SECTION)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && (name[0] == '_' || name[0] == 'P' || name[0] == 'i'))
				note_symbol(s, name, &sym);
		}
	}
}

/* The evaluator's .cold part among the local symbols of @elf's .symtab:
 * a symbol table lists those first (before sh_info), and the scan stops
 * at the part. */
static void read_local_cold(Elf *elf, struct py_syms *s)
{
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) && !(gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB))
		;
	data = scn ? elf_getdata(scn, NULL) : NULL;
	for (size_t i = 1; data && sh.sh_entsize && i < sh.sh_info &&
	     i < sh.sh_size / sh.sh_entsize && !s->cold; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (name && name[0] == '_')
			note_symbol(s, name, &sym);
	}
}

/*
 * The .cold part from the debug file of @map's build-id, if installed and
 * its own build-id is @map's (then it describes the same evaluator).  Only
 * its local symbols, up to the part: a Debian -dbg file lists ~10^5
 * symbols, whose whole scan took ~3 ms of start-up.
 */
static void read_debug_cold(const struct bpfprof_mapping *map, struct py_syms *s)
{
	char path[BUILDID_DEBUG_PATH_MAX];
	const void *id;
	Elf *elf;
	int fd;

	if (!map->build_id || buildid_debug_path(map->build_id, map->build_id_size, path, sizeof(path)))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && dwelf_elf_gnu_build_id(elf, &id) == (ssize_t)map->build_id_size &&
	    !memcmp(id, map->build_id, map->build_id_size)) {
		struct py_syms d = { 0 };

		read_local_cold(elf, &d);
		s->cold = d.cold;
		s->cold_size = d.cold_size;
	}
	elf_end(elf);
	close(fd);
}

/* The 8 bytes at vaddr @addr of the file @fd through its segments. */
static int read_vaddr(int fd, const struct elf_segments *segs, uint64_t addr, uint64_t *val)
{
	for (size_t i = 0; i < segs->nr; i++) {
		const struct elf_segment *g = &segs->segs[i];

		if (addr >= g->vaddr && addr + 8 <= g->vaddr + g->filesz)
			return pread(fd, val, 8, (off_t)(addr - g->vaddr + g->offset)) == 8 ? 0 : -EIO;
	}
	return -ENOENT;
}

/*
 * 3.6's list of interpreters has no _PyRuntime around it: its head is
 * pystate.c's static interp_head, in the .symtab of builds that keep it,
 * else found in the code of PyInterpreterState_Head(), which returns it:
 * "mov interp_head(%rip), %rax; ret", after an endbr64 in CET builds.
 * The vaddr of interp_head, 0 if neither tells.
 */
static uint64_t interp_head_of(int fd, const struct elf_segments *segs, const struct py_syms *s)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint64_t at = s->head_fn, w[2];
	const uint8_t *code = (const uint8_t *)w;
	int32_t disp;

	if (s->interp_head)
		return s->interp_head;
	if (!at || read_vaddr(fd, segs, at, &w[0]) || read_vaddr(fd, segs, at + 8, &w[1]))
		return 0;
	if (!memcmp(code, endbr64, sizeof(endbr64))) {
		code += sizeof(endbr64);
		at += sizeof(endbr64);
	}
	if (code[0] != 0x48 || code[1] != 0x8b || code[2] != 0x05 || code[7] != 0xc3)
		return 0;
	memcpy(&disp, code + 3, sizeof(disp));
	return at + 7 + (uint64_t)(int64_t)disp;
}

/* Fill @f from the file of @map (open as @fd). */
static void inspect_file(struct py_file *f, int fd, const struct bpfprof_mapping *map)
{
	struct py_syms s = { 0 };
	unsigned minor = minor_from_name(map->path);
	uint64_t version = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (!elf)
		return;
	read_syms(elf, &s);
	if (s.eval && (s.runtime || minor == 6) && elf_segments_read(elf, &f->segs) == 0 &&
	    (s.runtime || (s.runtime = interp_head_of(fd, &f->segs, &s)))) {	/* 3.6: head 0 */
		if (!s.cold)
			read_debug_cold(map, &s);
		/* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final */
		if (s.version && read_vaddr(fd, &f->segs, s.version, &version) == 0 &&
		    (version >> 24 & 0xff) == 3)
			minor = (unsigned)(version >> 16 & 0xff);
		f->layout = py_layout_find(minor);
		f->runtime = s.runtime;
		f->code_type = s.code_type;
		f->eval[0][0] = s.eval;
		f->eval[0][1] = s.eval + s.eval_size;
		f->eval[1][0] = s.cold;
		f->eval[1][1] = s.cold ? s.cold + s.cold_size : 0;
		f->is_python = f->layout && s.code_type && s.eval_size;
		f->minor = minor;
	}
	elf_end(elf);
}

/* The facts of the file of @map, read the first time it is seen. */
static struct py_file *file_of(struct interp *it, uint32_t pid, const struct bpfprof_mapping *map)
{
	struct py_file *f;
	int fd;

	for (size_t i = 0; i < it->nr_files; i++) {
		f = &it->files[i];
		if (f->inode == map->inode && f->dev_major == map->dev_major &&
		    f->dev_minor == map->dev_minor)
			return f;
	}
	if (it->nr_files == it->cap_files) {
		size_t cap = it->cap_files ? 2 * it->cap_files : 4;
		struct py_file *n = realloc(it->files, cap * sizeof(*n));

		if (!n)
			return NULL;
		it->files = n;
		it->cap_files = cap;
	}
	f = &it->files[it->nr_files];
	memset(f, 0, sizeof(*f));
	if (py_cache_get(it->cache_dir, map->build_id, map->build_id_size, f) == 0) {
		it->stats.files_cached++;
	} else {
		fd = procmaps_open_file(pid, map);
		if (fd < 0)
			return NULL;	/* not remembered: another process may open it */
		inspect_file(f, fd, map);
		close(fd);
		py_cache_put(it->cache_dir, map->build_id, map->build_id_size, f);
	}
	f->dev_major = map->dev_major;
	f->dev_minor = map->dev_minor;
	f->inode = map->inode;
	if (!f->is_python && f->runtime)
		it->stats.unsupported++;
	if (f->is_python) {
		it->stats.evaluator_files++;
		it->stats.cold_parts += f->eval[1][0] != 0;
	}
	it->nr_files++;
	return f;
}

struct py_proc *interp_proc(struct interp *it, uint32_t pid)
{
	for (size_t i = 0; i < it->nr_procs; i++)
		if (it->procs[i].pid == pid)
			return &it->procs[i];
	return NULL;
}

/* Remember @pid's interpreter (for reading its code objects and splicing
 * stack copies): its entry, NULL on ENOMEM. */
static const struct py_proc *remember(struct interp *it, uint32_t pid, const struct py_file *f,
				      uint64_t bias)
{
	struct py_proc *p = interp_proc(it, pid);

	if (!p) {
		if (it->nr_procs == it->cap_procs) {
			size_t cap = it->cap_procs ? 2 * it->cap_procs : 8;
			struct py_proc *n = realloc(it->procs, cap * sizeof(*n));

			if (!n)
				return NULL;
			it->procs = n;
			it->cap_procs = cap;
		}
		p = &it->procs[it->nr_procs++];
		it->stats.processes++;
	}
	p->pid = pid;
	p->layout = f->layout;
	p->code_type = f->code_type + bias;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			p->eval[i][j] = f->eval[i][0] == f->eval[i][1] ? 0 : f->eval[i][j] + bias;
	return p;
}

/* Tell the BPF program where @f is in @pid (loaded with @bias): true if
 * it was told. */
static bool write_process(struct interp *it, uint32_t pid, const struct py_file *f, uint64_t bias,
			  bool tell)
{
	const struct py_proc *p = remember(it, pid, f, bias);
	struct py_process v;

	if (!p || it->procs_fd < 0 || !tell)
		return false;
	memset(&v, 0, sizeof(v));
	v.runtime = f->runtime + bias;
	for (int i = 0; i < 2; i++) {
		v.eval_start[i] = p->eval[i][0];
		v.eval_end[i] = p->eval[i][1];
	}
	v.code_type = f->layout->minor >= 13 ? p->code_type : 0;
	v.version = 0x0300 | f->layout->minor;
	v.off = f->layout->bpf;
	return bpf_map_update_elem(it->procs_fd, &pid, &v, BPF_ANY) == 0;
}

bool interp_update(struct interp *it, uint32_t pid, const struct bpfprof_mapping *maps, size_t nr,
		   bool tell)
{
	for (size_t i = 0; it && i < nr; i++) {
		const struct bpfprof_mapping *m = &maps[i];
		struct py_file *f;
		uint64_t bias;

		if (!(m->prot & BPFPROF_PROT_EXEC) || !m->path || !minor_from_name(m->path))
			continue;
		f = file_of(it, pid, m);
		if (!f || !f->is_python || elf_segments_bias(&f->segs, m->start, m->pgoff, &bias))
			continue;
		return write_process(it, pid, f, bias, tell);
	}
	if (it && interp_proc(it, pid))	/* else it was never told of @pid */
		interp_forget(it, pid);
	return false;
}

void interp_forget(struct interp *it, uint32_t pid)
{
	if (it && it->procs_fd >= 0)
		bpf_map_delete_elem(it->procs_fd, &pid);
}

struct interp *interp_new(int procs_fd, int codes_fd)
{
	struct interp *it = calloc(1, sizeof(*it));

	if (!it)
		return NULL;
	elf_version(EV_CURRENT);
	it->procs_fd = procs_fd;
	it->codes_fd = codes_fd;
	it->batch = 1;			/* a slot's checked 0: never */
	return it;
}

int interp_set_cache_dir(struct interp *it, const char *dir)
{
	char *copy = dir ? strdup(dir) : NULL;

	if (dir && !copy)
		return -ENOMEM;
	free(it->cache_dir);
	it->cache_dir = copy;
	return 0;
}

void interp_free(struct interp *it)
{
	if (!it)
		return;
	free(it->cache_dir);
	for (size_t i = 0; i < it->nr_files; i++)
		elf_segments_free(&it->files[i].segs);
	free(it->files);
	free(it->procs);
	interp_free_codes(it);
	free(it);
}

void interp_get_stats(const struct interp *it, struct interp_stats *st)
{
	if (it)
		*st = it->stats;
	else
		memset(st, 0, sizeof(*st));
}
