// SPDX-License-Identifier: BSD-2-Clause
/*
 * cfi_relayout.c - lazy unwind tables in the kernel (cfi_table.h): the
 * FDEs built as walks of stack copies meet them, each table laid out
 * again in the room it keeps in its chunk, and the "cfi_procs" values of
 * the processes that map it written again to name the new layout; at the
 * end of a run, the tables with what they gained into the on-disk cache.
 * See cfi_loader.h (cfi_loader_flush(), cfi_loader_save()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/clock.h"
#include "targets/procmaps.h"
#include "unwind/cfi_cache.h"
#include "unwind/cfi_loader_impl.h"

void cfi_loader_drop_record(struct cfi_loader *l, uint32_t pid)
{
	struct proc_record *r;

	HASH_FIND(hh, l->records, &pid, sizeof(pid), r);
	if (!r)
		return;
	HASH_DEL(l->records, r);
	free(r->maps);
	free(r->entries);
	free(r);
}

void cfi_loader_keep_record(struct cfi_loader *l, uint32_t pid)
{
	const struct cfi_process *p = l->scratch;
	struct proc_record *r;
	void *maps, *entries;
	uint32_t i;

	for (i = 0; i < p->nr && !(l->entries[i] && l->entries[i]->lazy); i++)
		;
	if (i == p->nr) {
		cfi_loader_drop_record(l, pid);
		return;
	}
	HASH_FIND(hh, l->records, &pid, sizeof(pid), r);
	if (!r) {
		if (!(r = calloc(1, sizeof(*r))))
			return;		/* its walks keep the markers: copies */
		r->pid = pid;
		HASH_ADD(hh, l->records, pid, sizeof(r->pid), r);
	}
	/* the process's record, new or updated in place */
	maps = realloc(r->maps, p->nr * sizeof(*r->maps));
	if (maps)
		r->maps = maps;
	entries = realloc(r->entries, p->nr * sizeof(*r->entries));
	if (entries)
		r->entries = entries;
	if (!maps || !entries) {
		cfi_loader_drop_record(l, pid);
		return;
	}
	memcpy(r->maps, p->maps, p->nr * sizeof(*r->maps));
	memcpy(r->entries, l->entries, p->nr * sizeof(*r->entries));
	r->nr = p->nr;
}

/* @e's table gained rows from row @row on: to be laid out again, and
 * the walk's views of the file's mappings pointed at its rows (they
 * moved). */
static void table_changed(struct cfi_loader *l, struct file_entry *e, uint32_t row)
{
	for (int k = 0; k < 2; k++)
		if (e->regions[k].stale_from > row)
			e->regions[k].stale_from = row;
	e->grown = true;
	if (!e->dirty) {
		e->dirty = true;
		if (!l->nr_dirty++)
			l->dirty_since_ns = monotonic_ns();
	}
	for (uint32_t j = 0; j < l->scratch->nr; j++)
		if (l->entries[j] == e)
			l->views[j] = (struct cfi_table){ .rows = e->lazy->rows, .nr = e->lazy->nr };
}

int cfi_loader_build_fde(struct cfi_loader *l, uint32_t pid, uint32_t i, uint64_t vaddr)
{
	struct file_entry *e = l->entries[i];
	uint64_t t0 = monotonic_ns();
	const struct cfi_row *at;
	uint32_t row;
	int fd, err;

	if (!e || !e->lazy)
		return 0;
	/* the row the FDE's rows go in place of: a marker, or nothing to do */
	at = cfi_table_find(e->lazy, vaddr);
	if (!at || !CFI_ROW_UNBUILT(at))
		return 0;
	row = (uint32_t)(at - e->lazy->rows);
	if (!e->lazy->lazy) {
		if ((fd = procmaps_open_file(pid, l->sources[i])) < 0)
			return fd;
		err = cfi_table_lazy_open(e->lazy, fd);
		close(fd);
		if (err)
			return err;
	}
	err = cfi_table_build_fde(e->lazy, vaddr);
	l->st.build_ns += monotonic_ns() - t0;
	if (err <= 0)
		return err;
	l->st.fdes_built++;
	table_changed(l, e, row);
	return 1;
}

void cfi_loader_short_copy(struct cfi_loader *l, uint32_t i)
{
	struct file_entry *e = l->entries[i];
	uint64_t t0 = monotonic_ns();

	if (!e || !e->lazy || ++e->short_copies != CFI_LAZY_SHORT_COPIES)
		return;
	if (cfi_table_build_all(e->lazy) <= 0)
		return;
	l->st.build_ns += monotonic_ns() - t0;
	l->st.tables_completed++;
	table_changed(l, e, 0);
}

/*
 * Lay @e's lazy table out again, in the region the processes' entries do
 * not name (made, or made anew when too small), and name it.  Only the
 * rows from the first that changed since that region was written are
 * copied.  False when no chunk had room: the entries keep the old layout
 * (its markers send copies, and the walks of those copies see the rows).
 */
static bool relayout(struct cfi_loader *l, struct file_entry *e)
{
	struct region *r = &e->regions[e->live ^ 1];
	const struct cfi_table *t = e->lazy;
	uint64_t t0 = monotonic_ns();
	uint32_t from;

	if (r->cap < t->nr &&
	    cfi_loader_reserve_rows(l, cfi_loader_lazy_room(t->nr),
				    e->path ? e->path : "a lazy table", r)) {
		r->cap = 0;
		return false;
	}
	from = r->stale_from < t->nr ? r->stale_from : t->nr;
	/* memcpy(), not cfi_loader.c's copy_rows(): a table's two regions are
	 * written again and again, mostly through pages this process wrote
	 * before; a cold pyburn run's ~50 relayouts (~4 MB) took 1.2-1.3 ms
	 * so, 1.6-1.9 through the kernel (docs/PERFORMANCE.md, session 47) */
	memcpy(l->chunks[r->chunk].rows + r->first + from, t->rows + from,
	       (size_t)(t->nr - from) * sizeof(*t->rows));
	r->stale_from = UINT32_MAX;
	e->live ^= 1;
	e->table = r->chunk;
	e->first = r->first;
	l->st.rows += t->nr - e->rows;
	l->st.table_bytes += (uint64_t)(t->nr - e->rows) * sizeof(*t->rows);
	e->rows = t->nr;
	l->st.relayouts++;
	l->st.load_ns += monotonic_ns() - t0;
	return true;
}

/* Write @r's value again, its mappings pointed at their entries' tables;
 * only if the process still has one (not after an exec: its new image's
 * value is the collector's to write).  Drops @r when it has none. */
static void rewrite_record(struct cfi_loader *l, struct proc_record *r)
{
	struct cfi_process *p = l->scratch;
	size_t bytes = sizeof(*p) - sizeof(p->maps) + r->nr * sizeof(p->maps[0]);

	for (uint32_t i = 0; i < r->nr; i++) {
		const struct file_entry *e = r->entries[i];

		if (e && e->lazy) {
			r->maps[i].table = e->table;
			r->maps[i].first = e->first;
			r->maps[i].rows = e->rows;
		}
	}
	p->nr = r->nr;
	memcpy(p->maps, r->maps, r->nr * sizeof(*r->maps));
	memset((char *)p + bytes, 0, sizeof(*p) - bytes);
	l->st.process_updates++;
	if (bpf_map_update_elem(l->procs_fd, &r->pid, p, BPF_EXIST) == 0)
		return;
	if (errno != ENOENT)
		l->st.process_update_errors++;
	cfi_loader_drop_record(l, r->pid);
}

/* Whether @r names a table laid out again just now. */
static bool record_moved(const struct proc_record *r)
{
	for (uint32_t i = 0; i < r->nr; i++)
		if (r->entries[i] && r->entries[i]->lazy && r->entries[i]->dirty)
			return true;
	return false;
}

void cfi_loader_flush(struct cfi_loader *l)
{
	struct proc_record *r, *rtmp;
	struct file_entry *e, *tmp;
	bool moved = false;

	if (!l || !l->nr_dirty)
		return;
	HASH_ITER(hh, l->files, e, tmp)
		if (e->dirty && !relayout(l, e))
			e->dirty = false;	/* names the old layout still */
	HASH_ITER(hh, l->records, r, rtmp) {
		if (record_moved(r)) {
			rewrite_record(l, r);
			moved = true;
		}
	}
	HASH_ITER(hh, l->files, e, tmp)
		e->dirty = false;
	l->nr_dirty = 0;
	l->dirty_since_ns = 0;
	if (moved)
		cfi_loader_procs_changed(l);
}

uint64_t cfi_loader_dirty_since(const struct cfi_loader *l)
{
	return l ? l->dirty_since_ns : 0;
}

void cfi_loader_save(struct cfi_loader *l)
{
	struct file_entry *e, *tmp;

	if (!l || !l->cache)
		return;
	HASH_ITER(hh, l->files, e, tmp) {
		if (!e->lazy || !e->grown || !e->lazy->build_id_size)
			continue;
		if (cfi_cache_put(l->cache, e->lazy) == 0)
			e->grown = false;
	}
}

