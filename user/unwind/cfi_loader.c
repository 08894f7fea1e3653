// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_loader.c - owns the unwind tables of `--call-graph auto` while they
 * live in the kernel: the cache of built tables by file, their BPF maps
 * and ids, the memory budget, each process's struct cfi_process, and
 * walks of stack copies over those same tables (see cfi_loader.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gelf.h>

#include "cfi_row.h"
#include "kernel/clock.h"
#include "symbols/vdso.h"
#include "targets/procmaps.h"
#include "unwind/cfi_anon.h"
#include "unwind/cfi_cache.h"
#include "unwind/cfi_loader.h"
#include "unwind/cfi_loader_impl.h"
#include "unwind/cfi_table.h"
#include "unwind/cfi_walk.h"

static int add_chunk(struct cfi_loader *l, uint32_t size);

/*
 * Rows of the first chunk, made before sampling: 1 MiB, room for the
 * tables of a Python program with libc and ld.so (~106,000 rows).  A chunk
 * costs the collector each page zeroed and mapped twice (the kernel's
 * mapping, then ours): creating, mapping and closing one took 0.67 ms for
 * 4 MiB against 0.27 for 1 MiB on the PVM test machine (docs/PERFORMANCE.md,
 * session 36).  The later ones, which only big programs or --all need,
 * are CFI_CHUNK_ROWS.
 */
#define CFI_FIRST_CHUNK_ROWS (CFI_CHUNK_ROWS / 4)

/* Rows of a chunk: @rows, or the whole budget if that is less. */
static uint32_t chunk_rows(const struct cfi_loader *l, uint32_t rows)
{
	uint64_t budget_rows = l->budget / sizeof(struct cfi_row);

	return budget_rows < rows ? (uint32_t)budget_rows : rows;
}

struct cfi_loader *cfi_loader_new(int tables_fd, int procs_fd, int requests_fd,
				  uint64_t budget)
{
	struct cfi_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->scratch = calloc(1, sizeof(*l->scratch));
	if (!l->scratch) {
		free(l);
		return NULL;
	}
	l->tables_fd = tables_fd;
	l->procs_fd = procs_fd;
	l->requests_fd = requests_fd;
	l->budget = budget ? budget : CFI_LOADER_DEFAULT_BUDGET;
	elf_version(EV_CURRENT);
	/* The first chunk now, before sampling: its RCU wait is start-up's. */
	add_chunk(l, chunk_rows(l, CFI_FIRST_CHUNK_ROWS));
	return l;
}

/* ---- tables into the kernel --------------------------------------------- */

/*
 * A new chunk of @size rows: a BPF array created mmapable (tables are
 * copied into the mapping, one system call per table: copy_rows()), stored in
 * "cfi_tables" under the next chunk id.  0 or a negative errno.
 */
static int add_chunk(struct cfi_loader *l, uint32_t size)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	size_t bytes = (size_t)size * sizeof(struct cfi_row);
	uint32_t id = l->nr_chunks;
	void *mem;
	int fd, err;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(uint32_t),
			    sizeof(struct cfi_row), size, &opts);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = mem == MAP_FAILED ? -errno : 0;
	if (!err && bpf_map_update_elem(l->tables_fd, &id, &fd, BPF_ANY))
		err = -errno;
	close(fd);			/* the mapping and the outer map hold it */
	if (err) {
		if (mem != MAP_FAILED)
			munmap(mem, bytes);
		return err;
	}
	l->chunks[id] = (struct chunk){ .rows = mem, .size = size };
	l->nr_chunks++;
	l->st.chunk_bytes += bytes;
	return 0;
}

/* Whether a new chunk of @size rows fits the budget; warns once if not. */
static bool chunk_fits(struct cfi_loader *l, uint32_t size, const char *path)
{
	uint64_t bytes = (uint64_t)size * sizeof(struct cfi_row);

	if (l->nr_chunks < CFI_MAX_CHUNKS && l->st.chunk_bytes + bytes <= l->budget)
		return true;
	l->st.files_over_budget++;
	if (!l->budget_warned)
		fprintf(stderr, "bpfprof: unwind tables would exceed --unwind-memory (%llu MiB); "
			"stacks through %s and later files stop there: raise --unwind-memory\n",
			(unsigned long long)(l->budget >> 20), path);
	l->budget_warned = true;
	return false;
}

/*
 * Copy @n bytes of a table's rows, loaded for the first time, from @src
 * to @dst in a chunk's mapping (relayouts, whose pages were mostly written
 * before, use memcpy(): cfi_relayout.c): through
 * the kernel (process_vm_writev() of our own pages), which writes the
 * chunk's pages through its own mapping of them.  Our first write to each
 * page of a mapped BPF array costs a trap on a guest whose page tables are
 * shadowed (the PVM test VM: ~5 us a page, python3.11's seven tables ~1.4
 * ms), the kernel's ~0.4 ms for the same (docs/PERFORMANCE.md, session
 * 40).  What the call did not copy (it is refused, say by a seccomp
 * filter) is copied here.
 */
static void copy_rows(void *dst, const void *src, size_t n)
{
	struct iovec from = { (void *)src, n }, to = { dst, n };
	ssize_t done = process_vm_writev(getpid(), &from, 1, &to, 1, 0);

	if (done < 0)
		done = 0;
	if ((size_t)done < n)
		memcpy((char *)dst + done, (const char *)src + done, n - (size_t)done);
}

/* Room for @n rows in a chunk (a new one if the last has none) into
 * *@r.  0, -ENOSPC (over the budget) or another negative errno. */
int cfi_loader_reserve_rows(struct cfi_loader *l, uint32_t n, const char *path, struct region *r)
{
	struct chunk *c = l->nr_chunks ? &l->chunks[l->nr_chunks - 1] : NULL;
	int err;

	if (!c || c->size - c->used < n) {
		uint32_t size = chunk_rows(l, CFI_CHUNK_ROWS);

		if (n > size)
			size = n;
		if (!chunk_fits(l, size, path))
			return -ENOSPC;
		if ((err = add_chunk(l, size)))
			return err;
		c = &l->chunks[l->nr_chunks - 1];
	}
	*r = (struct region){ (uint32_t)(c - l->chunks), c->used, n, 0 };
	c->used += n;
	return 0;
}

/*
 * Copy @t's rows into a chunk and set @e's place: a region of their own
 * size, or of lazy_room() for a lazy table (@e->lazy), kept as its region
 * 0.  0, or -ENOSPC (over the budget) or another negative errno (a chunk
 * could not be created).
 */
static int load_table(struct cfi_loader *l, struct file_entry *e, const struct cfi_table *t,
		      const char *path)
{
	uint64_t t0 = monotonic_ns();
	struct region r;
	int err;

	if ((err = cfi_loader_reserve_rows(l, e->lazy ? cfi_loader_lazy_room(t->nr) : t->nr, path, &r)))
		return err;
	copy_rows(l->chunks[r.chunk].rows + r.first, t->rows, (size_t)t->nr * sizeof(struct cfi_row));
	e->table = r.chunk;
	e->first = r.first;
	e->rows = t->nr;
	if (e->lazy) {
		r.stale_from = UINT32_MAX;
		e->regions[0] = r;
		e->live = 0;
	}
	l->st.tables++;
	l->st.rows += t->nr;
	l->st.table_bytes += (uint64_t)t->nr * sizeof(struct cfi_row);
	l->st.load_ns += monotonic_ns() - t0;
	return 0;
}

/* Fill @e from the table @t (NULL: none), built since @t0 or, @cached,
 * read from the on-disk cache; takes its segments and frees it. */
static void entry_take_table(struct cfi_loader *l, struct file_entry *e, struct cfi_table *t,
			     uint64_t t0, const char *path, bool cached)
{
	int err;

	e->table = CFI_NO_TABLE;
	if (!t) {
		l->st.files_without_table++;
		return;
	}
	if (cached) {
		l->st.cached_tables++;
	} else {
		l->st.build_ns += monotonic_ns() - t0;
		l->st.cfi_bytes += t->stats.eh_frame_bytes + t->stats.debug_frame_bytes;
	}
	/* set by the builder, or counted by file_entry() in a cached table */
	if (t->stats.fdes_unbuilt) {	/* kept, to build its FDEs */
		e->lazy = t;
		e->path = strdup(path);
		e->grown = !cached;
		l->st.lazy_tables++;
	}
	err = load_table(l, e, t, path);
	if (err && err != -ENOSPC)
		l->st.files_without_table++;	/* the kernel refused a chunk */
	if (err) {
		e->lazy = NULL;
		e->table = CFI_NO_TABLE;
	}
	e->segments = t->segments;
	memset(&t->segments, 0, sizeof(t->segments));
	if (!e->lazy)
		cfi_table_free(t);
	else if (elf_segments_copy(&t->segments, &e->segments))	/* stored with it */
		t->build_id_size = 0;	/* without them: never stored */
}

/* ---- the file cache ----------------------------------------------------- */

static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static void file_key_of(const struct bpfprof_mapping *m, struct file_key *k)
{
	memset(k, 0, sizeof(*k));
	if (m->build_id && m->build_id_size && m->build_id_size <= sizeof(k->build_id)) {
		k->build_id_size = (uint8_t)m->build_id_size;
		memcpy(k->build_id, m->build_id, m->build_id_size);
		return;
	}
	k->dev_major = m->dev_major;
	k->dev_minor = m->dev_minor;
	k->inode = m->inode;
	k->path_hash = hash_path(m->path);
}

/*
 * The entry of @key in *@e: true if it was there already (counted as a
 * hit), false for a new one (key set, not yet in the table; the caller
 * fills and adds it) or, with *@e NULL, when memory ran out.
 */
static bool find_or_new(struct cfi_loader *l, const struct file_key *key, struct file_entry **e)
{
	HASH_FIND(hh, l->files, key, sizeof(*key), *e);
	if (*e) {
		l->st.cache_hits++;
		return true;
	}
	*e = calloc(1, sizeof(**e));
	if (!*e)
		return true;
	(*e)->key = *key;
	return false;
}

/*
 * The table of the file open as @fd, whose key is @key: from the on-disk
 * cache under the file's identity when it has no build-id (a build-id is
 * looked up before the file is opened), else built, and stored under
 * either.  *@cached is set when it came from the cache.  NULL when the
 * file has no usable CFI.
 */
static struct cfi_table *table_of_file(struct cfi_loader *l, int fd, const struct file_key *key,
				       bool *cached)
{
	uint8_t file_id[CFI_CACHE_FILE_ID_SIZE];
	const uint8_t *id = key->build_id;
	size_t id_size = key->build_id_size;
	struct cfi_table *t = NULL;
	bool named;

	if (!id_size && l->cache && cfi_cache_file_id(fd, file_id) == 0) {
		id = file_id;
		id_size = sizeof(file_id);
		if (cfi_cache_get(l->cache, id, id_size, &t) == 0) {
			*cached = true;
			return t;
		}
	}
	if (cfi_table_build_lazy(fd, &t))
		t = NULL;
	if (t && id == file_id && !t->build_id_size) {
		t->build_id_size = (uint8_t)id_size;
		memcpy(t->build_id, id, id_size);
	}
	/* by the build-id of the file read, which the mapping's names; a
	 * lazy table when the run ends (cfi_loader_save()), with the FDEs
	 * its walks met */
	if (!t)
		return NULL;
	named = id_size && t->build_id_size == id_size && !memcmp(t->build_id, id, id_size);
	if (named && !t->stats.fdes_unbuilt)
		cfi_cache_put(l->cache, t);
	else if (!named && t->stats.fdes_unbuilt)
		t->build_id_size = 0;		/* not the file named: never stored */
	return t;
}

/*
 * A lazy table read from the cache (@t, its file open as @fd): the file
 * was met in an earlier run already, so its table is built whole now,
 * once, and stored so.  A table kept lazy would have each later run send
 * copies for the FDEs no earlier run met (pyburn: ~20 wake-ups and ~6 ms
 * of sampling phase per run, against 11 and ~9 ms in all whole).
 */
static void complete_table(struct cfi_loader *l, struct cfi_table *t, int fd)
{
	uint64_t t0 = monotonic_ns();

	if (cfi_table_lazy_open(t, fd) || cfi_table_build_all(t) <= 0)
		return;
	l->st.build_ns += monotonic_ns() - t0;
	l->st.tables_completed++;
	cfi_cache_put(l->cache, t);
}

/* The table of the file mapped by @m in @pid: built on first sight (a
 * big file's lazily), whole on the second (complete_table()). */
static struct file_entry *file_entry(struct cfi_loader *l, uint32_t pid,
				     const struct bpfprof_mapping *m)
{
	struct file_entry *e;
	struct cfi_table *t = NULL;
	struct file_key key;
	uint64_t t0 = monotonic_ns();
	bool cached;
	int fd = -1;

	file_key_of(m, &key);
	if (find_or_new(l, &key, &e))
		return e;
	cached = key.build_id_size &&
		 cfi_cache_get(l->cache, key.build_id, key.build_id_size, &t) == 0;
	if (!cached && (fd = procmaps_open_file(pid, m)) >= 0)
		t = table_of_file(l, fd, &key, &cached);
	/* a lazy table from the cache, by build-id or by the file read */
	if (cached && cfi_table_count_unbuilt(t) &&
	    (fd >= 0 || (fd = procmaps_open_file(pid, m)) >= 0))
		complete_table(l, t, fd);
	if (fd >= 0)
		close(fd);
	entry_take_table(l, e, t, t0, m->path, cached);
	HASH_ADD(hh, l->files, key, sizeof(e->key), e);
	return e;
}

/* The vDSO's table (from our own image), if @m is a [vdso] it matches. */
static struct file_entry *vdso_entry(struct cfi_loader *l, const struct bpfprof_mapping *m)
{
	struct cfi_table *t = NULL;
	uint64_t t0 = monotonic_ns();

	if (!l->vdso_tried) {
		l->vdso_tried = true;
		if (vdso_image_own(&l->vdso) == 0 && (l->vdso_entry = calloc(1, sizeof(*l->vdso_entry)))) {
			if (cfi_table_build_mem(l->vdso->data, l->vdso->size, &t))
				t = NULL;
			entry_take_table(l, l->vdso_entry, t, t0, VDSO_PATH, false);
		}
	}
	if (!l->vdso_entry || !vdso_image_matches(l->vdso, m, &l->vdso->abi))
		return NULL;
	return l->vdso_entry;
}

/*
 * Whether @m is anonymous executable memory: JIT code (V8, a JVM, CPython
 * 3.12's perf trampolines), which has no CFI.  Named anonymous mappings
 * ([anon:NAME], prctl(PR_SET_VMA)) count; [vdso], [vsyscall], [uprobes]
 * and files do not.
 */
static bool anonymous_code(const struct bpfprof_mapping *m)
{
	return !m->path[0] || !strncmp(m->path, "[anon:", 6);
}

/*
 * The table of JIT code (cfi_anon.h): one row from address 0 (the
 * mapping's start is its bias), the frame-pointer rule, which V8's JIT
 * code keeps.  Shared by every such mapping of every process: built once.
 */
static struct file_entry *jit_entry(struct cfi_loader *l)
{
	struct cfi_row row = cfi_anon_fp_row();
	struct cfi_table t = { .rows = &row, .nr = 1 };

	if (l->jit_entry)
		return l->jit_entry;
	l->jit_entry = calloc(1, sizeof(*l->jit_entry));
	if (l->jit_entry && load_table(l, l->jit_entry, &t, "anonymous code"))
		l->jit_entry->table = CFI_NO_TABLE;
	return l->jit_entry;
}

/*
 * The entry of CPython trampolines' table for the @size bytes at @code
 * whose hash is @hash: equal arenas share one table, built on first sight.
 */
static struct file_entry *trampoline_entry(struct cfi_loader *l, const uint8_t *code,
					   uint64_t size, uint64_t hash)
{
	struct file_key key = { .dev_major = UINT32_MAX, .dev_minor = UINT32_MAX,
				.inode = size, .path_hash = hash };
	struct cfi_table *t = NULL;
	struct file_entry *e;

	if (find_or_new(l, &key, &e))
		return e;
	e->table = CFI_NO_TABLE;
	if (cfi_anon_table_mem(code, size, &t) == 0 && t &&
	    load_table(l, e, t, "CPython's perf trampolines"))
		e->table = CFI_NO_TABLE;
	cfi_table_free(t);
	HASH_ADD(hh, l->files, key, sizeof(e->key), e);
	return e;
}

/* The table of the anonymous code @m of @pid (cfi_anon.h), or NULL. */
static struct file_entry *anon_entry(struct cfi_loader *l, uint32_t pid,
				     const struct bpfprof_mapping *m)
{
	struct file_entry *e;
	uint8_t *code;
	uint64_t hash;

	if (cfi_anon_read(pid, m->start, m->end, &code, &hash))
		return NULL;
	if (!code) {
		l->st.anonymous_mappings++;
		return jit_entry(l);
	}
	l->st.trampoline_mappings++;
	e = trampoline_entry(l, code, m->end - m->start, hash);
	free(code);
	return e;
}

void cfi_loader_preload(struct cfi_loader *l)
{
	struct procmaps pm = { 0 };

	if (procmaps_read((uint32_t)getpid(), &pm))
		return;
	procmaps_add_build_ids(&pm, (uint32_t)getpid());
	for (size_t i = 0; i < pm.nr; i++) {
		const struct bpfprof_mapping *m = &pm.maps[i];

		if (!(m->prot & BPFPROF_PROT_EXEC))
			continue;
		if (!strcmp(m->path, VDSO_PATH))
			vdso_entry(l, m);
		else if (strstr(m->path, "/libc.so") || strstr(m->path, "/ld-linux"))
			file_entry(l, (uint32_t)getpid(), m);
	}
	procmaps_free(&pm);
}

/* ---- processes ---------------------------------------------------------- */

/* The walk's view of one executable mapping @m of @pid into @out; its
 * entry (NULL: none) into *@entry. */
static void describe_mapping(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *m,
			     struct cfi_mapping *out, struct file_entry **entry)
{
	struct file_entry *e = NULL;
	uint64_t bias;

	memset(out, 0, sizeof(*out));
	out->start = m->start;
	out->end = m->end;
	out->table = CFI_NO_TABLE;
	if (m->path[0] == '/')
		e = file_entry(l, pid, m);
	else if (!strcmp(m->path, VDSO_PATH))
		e = vdso_entry(l, m);
	else if (anonymous_code(m))
		e = anon_entry(l, pid, m);
	*entry = NULL;
	if (!e || e->table == CFI_NO_TABLE)
		return;
	/* anonymous code's rows start at its mapping's start; a file's at
	 * its load bias */
	if (anonymous_code(m))
		bias = m->start;
	else if (elf_segments_bias(&e->segments, m->start, m->pgoff, &bias))
		return;
	out->bias = bias;
	out->table = e->table;
	out->first = e->first;
	out->rows = e->rows;
	*entry = e;
}

/* A "cfi_procs" value was written or deleted: after it, the generation
 * (cfi_loader_set_generation()). */
void cfi_loader_procs_changed(struct cfi_loader *l)
{
	if (l->generation)
		__atomic_add_fetch(l->generation, 1, __ATOMIC_SEQ_CST);
}

/* The walk's view of @pid's executable mappings @maps (@nr), the first
 * CFI_MAX_MAPPINGS of them, into the scratch value; returns the number of
 * executable mappings left out. */
static size_t describe_process(struct cfi_loader *l, uint32_t pid,
			       const struct bpfprof_mapping *maps, size_t nr)
{
	struct cfi_process *p = l->scratch;
	size_t dropped = 0;

	p->nr = 0;
	for (size_t i = 0; i < nr; i++) {
		if (!(maps[i].prot & BPFPROF_PROT_EXEC))
			continue;
		if (p->nr == CFI_MAX_MAPPINGS) {
			dropped++;
			continue;
		}
		l->sources[p->nr] = &maps[i];
		describe_mapping(l, pid, &maps[i], &p->maps[p->nr], &l->entries[p->nr]);
		p->nr++;
	}
	return dropped;
}

int cfi_loader_update(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *maps,
		      size_t nr)
{
	struct cfi_process *p = l->scratch;
	size_t bytes;
	int err;

	l->st.mappings_dropped += describe_process(l, pid, maps, nr);
	/* Only the used part matters, but the map's value is fixed-size. */
	bytes = sizeof(*p) - sizeof(p->maps) + p->nr * sizeof(p->maps[0]);
	memset((char *)p + bytes, 0, sizeof(*p) - bytes);
	err = bpf_map_update_elem(l->procs_fd, &pid, p, BPF_ANY) ? -errno : 0;
	cfi_loader_procs_changed(l);
	l->st.process_updates++;
	if (err) {
		l->st.process_update_errors++;
		cfi_loader_drop_record(l, pid);
	} else {
		bpf_map_delete_elem(l->requests_fd, &pid);	/* re-arm its requests */
		cfi_loader_keep_record(l, pid);
	}
	return err;
}

/* The walk's view of @pid's executable mappings @maps (@nr), as
 * cfi_loader_update() writes them (describe_process()), each mapping then
 * given a table of its own: its rows where they lie in their chunk.  Uses
 * the scratch value. */
static void walk_process(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *maps,
			 size_t nr, struct cfi_walk_process *wp)
{
	struct cfi_process *p = l->scratch;

	describe_process(l, pid, maps, nr);
	for (uint32_t i = 0; i < p->nr; i++) {
		struct cfi_mapping *m = &p->maps[i];

		l->view_ptrs[i] = NULL;
		if (m->table != CFI_NO_TABLE) {
			l->views[i].rows = l->chunks[m->table].rows + m->first;
			l->views[i].nr = m->rows;
			l->view_ptrs[i] = &l->views[i];
		}
		if (l->entries[i] && l->entries[i]->lazy)	/* with rows not laid out yet */
			l->views[i] = (struct cfi_table){ .rows = l->entries[i]->lazy->rows,
							  .nr = l->entries[i]->lazy->nr };
		m->table = i;
	}
	wp->maps = p->maps;
	wp->nr_maps = p->nr;
	wp->tables = l->view_ptrs;
	wp->nr_tables = p->nr;
}

int cfi_loader_walk(struct cfi_loader *l, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr, const struct cfi_walk_regs *regs, const struct cfi_walk_stack *stack,
		    uint64_t unbuilt_pc, uint64_t *ips, uint32_t max, struct cfi_walk_result *res)
{
	const struct cfi_mapping *m, *um = NULL;
	struct cfi_walk_process wp;
	int n;

	if (!l->views) {
		l->views = calloc(CFI_MAX_MAPPINGS, sizeof(*l->views));
		l->view_ptrs = calloc(CFI_MAX_MAPPINGS, sizeof(*l->view_ptrs));
		if (!l->views || !l->view_ptrs) {
			free(l->views);
			free(l->view_ptrs);
			l->views = NULL;
			l->view_ptrs = NULL;
			return -ENOMEM;
		}
	}
	walk_process(l, pid, maps, nr, &wp);
	/* the FDE the BPF walk stopped at: the copy may end below it */
	if (unbuilt_pc && (um = cfi_walk_find_mapping(&wp, unbuilt_pc)))
		cfi_loader_build_fde(l, pid, um->table, unbuilt_pc - um->bias);
	for (int built = 0;; built++) {
		n = cfi_walk(&wp, regs, cfi_walk_read_stack, (void *)stack, ips, max, res);
		if (n < 0 || !res->unbuilt_pc || built == CFI_LOADER_BUILDS_PER_WALK)
			break;
		m = cfi_walk_find_mapping(&wp, res->unbuilt_pc);
		if (!m || cfi_loader_build_fde(l, pid, m->table, res->unbuilt_pc - m->bias) <= 0)
			break;
	}
	if (um && n > 0 && res->stop == CFI_WALK_READ_FAULT)
		cfi_loader_short_copy(l, um->table);
	return n;
}

int cfi_loader_load_pid(struct cfi_loader *l, uint32_t pid)
{
	struct procmaps pm = { 0 };
	int err = procmaps_read(pid, &pm);

	if (err)
		return err;
	procmaps_add_build_ids(&pm, pid);
	err = cfi_loader_update(l, pid, pm.maps, pm.nr);
	procmaps_free(&pm);
	return err;
}

void cfi_loader_forget(struct cfi_loader *l, uint32_t pid)
{
	cfi_loader_drop_record(l, pid);
	bpf_map_delete_elem(l->procs_fd, &pid);
	cfi_loader_procs_changed(l);
}

void cfi_loader_set_generation(struct cfi_loader *l, uint64_t *gen)
{
	l->generation = gen;
}

void cfi_loader_set_cache(struct cfi_loader *l, struct cfi_cache *cache)
{
	l->cache = cache;
}

void cfi_loader_stats(const struct cfi_loader *l, struct cfi_loader_stats *st)
{
	struct cfi_cache_stats cs = { 0 };

	*st = l->st;
	if (l->cache)
		cfi_cache_stats(l->cache, &cs);
	st->cache_read_ns = cs.read_ns;
}

void cfi_loader_free(struct cfi_loader *l)
{
	struct file_entry *e, *tmp;

	if (!l)
		return;
	HASH_ITER(hh, l->files, e, tmp) {
		HASH_DEL(l->files, e);
		elf_segments_free(&e->segments);
		cfi_table_free(e->lazy);
		free(e->path);
		free(e);
	}
	while (l->records)
		cfi_loader_drop_record(l, l->records->pid);
	if (l->vdso_entry)
		elf_segments_free(&l->vdso_entry->segments);
	free(l->vdso_entry);
	free(l->jit_entry);
	vdso_image_free(l->vdso);
	for (uint32_t i = 0; i < l->nr_chunks; i++)
		munmap(l->chunks[i].rows, (size_t)l->chunks[i].size * sizeof(struct cfi_row));
	free(l->views);
	free(l->view_ptrs);
	free(l->scratch);
	free(l);
}
