/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cfi_walk.bpf.h - the user stack walk of `--call-graph auto`, included
 * once by profile.bpf.c: from the sampled task's user registers, the
 * process's executable mappings ("cfi_procs") and the unwind tables of
 * their files (one sorted run of struct cfi_row per file, shared by every
 * process that maps it, in the chunks of "cfi_tables"), it writes the
 * callchain, one binary search per frame, into a struct stack_trace.
 *
 * It follows the reference walk user/unwind/cfi_walk.c step by step (the
 * rules are in bpf/cfi_row.h); the unit tests check that one against
 * libdw.  Walks are counted by how they ended in the per-CPU "cfi_vars"
 * value (struct cfi_walk_vars, counts[]); a
 * walk that met a process or mapping the collector has not loaded yet
 * asks for it with a TASK_EVENT_MAPS_NEEDED record (at most once per
 * CFI_REQUEST_INTERVAL_NS per process).
 *
 * Needs from profile.bpf.c: max_depth, task_event_reserve(), the events
 * ring buffer, struct stack_trace.
 */
#ifndef BPFPROF_CFI_WALK_BPF_H
#define BPFPROF_CFI_WALK_BPF_H

#include "cfi_row.h"

/* Ask again for a process's mappings at most this often (ns). */
#define CFI_REQUEST_INTERVAL_NS 20000000ull

const volatile bool cfi_mode = false;		/* --call-graph auto */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);		/* set by the collector */
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* 16 KiB per process: only the live ones */
	__type(key, __u32);			/* tgid */
	__type(value, struct cfi_process);
} cfi_procs SEC(".maps");

/* One chunk of tables (CFI_CHUNK_ROWS rows, or one big table's). */
struct cfi_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);	/* filled through mmap */
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct cfi_row));	/* by size: BTF has only a
							 * forward declaration here */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CFI_MAX_CHUNKS);
	__type(key, __u32);			/* chunk id (struct cfi_mapping.table) */
	__array(values, struct cfi_rows_map);
} cfi_tables SEC(".maps");


/* A row found for (table, address): table + 1 (0: empty), first row, address. */
struct cfi_cached_row {
	__u64 key;		/* the table's first row << 32 | address in its file */
	__u32 table;		/* struct cfi_mapping.table + 1; 0: an empty slot */
	__u32 pad;
	struct cfi_row row;
};

struct cfi_row_cache {
	struct cfi_cached_row slots[CFI_ROW_CACHE_SLOTS];
};

/* Rows found, per CPU (bpf/cfi_row.h): the walk looks here before it
 * searches a table, and stores what it found. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_row_cache);
} cfi_row_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);		/* 1 outside auto, 1,024 for named
						 * targets (set before load) */
	__type(key, __u32);			/* tgid */
	__type(value, __u64);			/* bpf_ktime_get_ns() of the last request */
} cfi_requests SEC(".maps");

/*
 * A frame of a thread's walk memo (bpf/cfi_memo.bpf.h), and the walk's
 * record of a frame stepped by the common rules: its registers and where
 * its step read its caller's rbp.  No rbx: the common steps never take a
 * CFA from it, so it never changes what a memo's frames are.
 */
#define CFI_MEMO_FRAMES 64		/* frames a memo keeps (a power of two) */
#define CFI_MEMO_EXACT 2		/* flags: cfi_walk_vars.exact */
#define CFI_MEMO_CFA_BP 4		/* its row's CFA is from rbp */
#define CFI_MEMO_BP_SAME 8		/* its step leaves rbp as it is */
#define CFI_MEMO_NEEDS_BP 16		/* its rbp makes a memo frame's CFA: its
					 * own, or a caller's through BP_SAME
					 * steps (set when the memo is kept) */

struct cfi_memo_frame {
	__u64 ip, sp, bp;	/* rbp as it was, known or not */
	__u64 bp_at;		/* user address; 0: not read */
	__u32 flags;		/* CFI_MEMO_* */
	__u32 pad;
};

/*
 * The walk's registers and counters, and the bounds of its binary
 * searches.  They live in a per-CPU map value, not on the stack (like
 * python.bpf.h's py_vars): the verifier does not track what a map value
 * holds, so the states of each bpf_loop() callback below converge at once
 * instead of once per value of a bound or of the frame count, and it
 * checks the searches once per pass over a frame, not once per such value
 * of the walk (docs/PERFORMANCE.md, "Verifier cost of the BPF program").
 * A walk runs with the program, which does not nest on a CPU.
 */
struct cfi_walk_vars {
	/* Not cleared: the walks' counters (CFI_WALK_COUNTERS, bpf/cfi_row.h),
	 * first in the value, where the collector reads them.  Counted
	 * through the value each walk has at hand, they cost the program no
	 * map look-up (each look-up site was ~0.07 ms of the load). */
	__u64 counts[CFI_WALK_COUNTERS];
	/* Cleared at each walk's start, from here to last_map: */
	__u64 ip, sp, bp, bx;
	__u64 regs;		/* the sample's user registers (struct pt_regs *):
				 * CFI_KIND_REG rows read them; 0 past a
				 * signal frame */
	__u64 miss_pc;		/* the pc that met nothing loaded (for the request) */
	__u32 bp_known;
	__u32 bx_known;
	__u32 exact;		/* look ip up as is: first frame, after a signal frame */
	__u32 unbuilt;		/* stopped at an FDE not built yet (CFI_UNBUILT_FDE):
				 * stop CFI_WALK_NO_TABLE, miss_pc its pc */
	__u32 n;		/* frames written */
	__u32 stop;		/* enum cfi_walk_stop */
	/* the binary search under way: */
	__u64 addr;		/* the address looked for */
	__u32 lo, hi;		/* the answer is in [lo, hi) */
	__u32 failed;		/* a lookup failed */
	__u32 guessed;		/* the frame written last is a guessed caller of
				 * a frame without a row, its own row not
				 * checked yet (cfi_row.h): CFI_GUESS_* */
	__u32 leaf_known;	/* the leaf's mapping has a table: the collector
				 * knows it (the leaf may go apart,
				 * BPFPROF_LEAF_APART) */
	__u64 cache_hits, cache_misses;	/* rows from cfi_row_cache, rows searched */
	__u64 reads;		/* 8-byte reads of user memory outside win */
	__u64 map_searches;	/* binary searches of the mappings */
	__u64 guesses;		/* leaves' callers from [sp] the walk went on from */
	__u64 fp_steps;		/* other frames' callers from [bp + 8] */
	__u64 common_steps;	/* steps cfi_step_common() took */
	struct cfi_row row;	/* the current frame's (cfi_frame_row_get()) */
	__u64 win_lo;		/* user address of win[0] */
	__u64 win_len;		/* bytes of win read (0: none) */
	/* the thread's memo (bpf/cfi_memo.bpf.h): */
	__u64 memo_gen;		/* cfi_procs_gen at the walk's start */
	__u64 memo_frames;	/* frames written from it */
	__u64 memo_fails;	/* memo frames met whose words had changed */
	__u32 memo_r;		/* the memo frame met or next to try, + 1 (0: none,
				 * or not to be tried again in this walk) */
	__u32 memo_from;	/* the first frame of the run of common steps
				 * that reaches the frame written last */
	__u32 memo_end;		/* the walk ended at a row's outermost frame */
	__u32 memo_at, memo_h;	/* the memo was taken at walk frame memo_at,
				 * its frame memo_h (0, 0: not taken) */
	/* Not cleared between walks, from here on: */
	/*
	 * Indexes + 1 (0: none) of the two mappings found last, the latest
	 * first, in whichever process this CPU walked last: most frames lie
	 * in the mapping of the frame before, most of the others in the one
	 * before that (an interpreter's binary and libc, one calling the
	 * other and back), and a CPU's next walk is mostly of the same
	 * process.  Only hints: each is checked against the address and the
	 * process's mappings before use, so one from another process or
	 * from mappings since rewritten costs the search it would have cost.
	 */
	__u32 last_map, prev_map;
	/* the window: only win_len bytes count */
	__u8 win[CFI_STACK_WINDOW];
	/* frames the walk stepped by the common rules, by frame index mod
	 * CFI_MEMO_FRAMES (cfi_memo_note()) */
	struct cfi_memo_frame rec[CFI_MEMO_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_walk_vars);
} cfi_vars SEC(".maps");

/* This CPU's cfi_vars value (never NULL in practice: key 0 of a per-CPU
 * array).  A BPF function: see stat_add() (profile.bpf.c). */
static __noinline struct cfi_walk_vars *cfi_vars_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cfi_vars, &zero);
}

/* The walk's state, shared by the frames of one walk (bpf_loop() data). */
struct cfi_walk {
	struct stack_trace *st;
	const struct cfi_process *proc;
	struct cfi_walk_vars *v;
	struct cfi_row_cache *cache;	/* this CPU's */
	struct cfi_memo *memo;		/* the thread's slot (cfi_memo.bpf.h), not NULL */
};

/*
 * The binary searches run as bpf_loop() callbacks too: the verifier checks
 * one step once, where an unrolled or bounded loop costs it a pass per
 * possible iteration (tens of ms of start-up CPU, docs/PERFORMANCE.md).
 */
struct cfi_map_search {
	const struct cfi_process *p;
	struct cfi_walk_vars *v;
};

static long cfi_map_search_step(__u32 i, void *data)
{
	struct cfi_map_search *s = data;
	struct cfi_walk_vars *v = s->v;
	__u32 mid;

	if (v->hi - v->lo <= 1)
		return 1;
	mid = v->lo + (v->hi - v->lo) / 2;
	if (s->p->maps[mid & (CFI_MAX_MAPPINGS - 1)].start <= v->addr)
		v->lo = mid;
	else
		v->hi = mid;
	return 0;
}

/* Whether mapping hint @hint (index + 1, cfi_walk_vars.last_map) of
 * @p holds @addr. */
static __always_inline bool cfi_hint_holds(const struct cfi_process *p, __u32 hint, __u64 addr)
{
	const struct cfi_mapping *m;

	if (!hint || hint > p->nr)
		return false;
	m = &p->maps[(hint - 1) & (CFI_MAX_MAPPINGS - 1)];
	return addr >= m->start && addr < m->end;
}

/*
 * The mapping of @p holding @addr: the last one with start <= addr.  The
 * mappings are sorted and disjoint; the two found last (v->last_map,
 * v->prev_map) are checked first.
 */
static __always_inline const struct cfi_mapping *cfi_find_mapping(const struct cfi_process *p,
								  struct cfi_walk_vars *v,
								  __u64 addr)
{
	struct cfi_map_search s = { .p = p, .v = v };
	__u32 nr = p->nr, last = v->last_map, found;
	const struct cfi_mapping *m;

	if (cfi_hint_holds(p, last, addr))
		return &p->maps[(last - 1) & (CFI_MAX_MAPPINGS - 1)];
	if (cfi_hint_holds(p, v->prev_map, addr)) {
		found = v->prev_map;
	} else {
		if (nr == 0 || nr > CFI_MAX_MAPPINGS || addr < p->maps[0].start)
			return NULL;
		v->map_searches++;
		v->addr = addr;
		v->lo = 0;
		v->hi = nr;
		bpf_loop_cold(CFI_MAPPING_SEARCH_STEPS, cfi_map_search_step, &s);
		m = &p->maps[v->lo & (CFI_MAX_MAPPINGS - 1)];
		if (addr >= m->end)
			return NULL;
		found = (v->lo & (CFI_MAX_MAPPINGS - 1)) + 1;
	}
	v->prev_map = last;
	v->last_map = found;
	return &p->maps[(found - 1) & (CFI_MAX_MAPPINGS - 1)];
}

struct cfi_row_search {
	void *rows;		/* the chunk (an inner map) */
	struct cfi_walk_vars *v;
};

static long cfi_row_search_step(__u32 i, void *data)
{
	struct cfi_row_search *s = data;
	struct cfi_walk_vars *v = s->v;
	const struct cfi_row *r;
	__u32 mid;

	if (v->hi - v->lo <= 1)
		return 1;
	mid = v->lo + (v->hi - v->lo) / 2;
	r = bpf_map_lookup_elem(s->rows, &mid);
	if (!r) {
		v->failed = 1;
		return 1;
	}
	if (r->pc <= v->addr)
		v->lo = mid;
	else
		v->hi = mid;
	return 0;
}

/* The row of the table at rows [@first, @first + @nr) of chunk @rows for
 * ELF address @vaddr: the last with pc <= vaddr; NULL below the first row
 * or beyond 32 bits. */
static __always_inline const struct cfi_row *cfi_find_row(void *rows, struct cfi_walk_vars *v,
							  __u32 first, __u32 nr, __u64 vaddr)
{
	struct cfi_row_search s = { .rows = rows, .v = v };
	const struct cfi_row *r;
	__u32 lo = first;

	if (!nr || first + nr < first || vaddr > 0xffffffffull)
		return NULL;
	r = bpf_map_lookup_elem(rows, &lo);
	if (!r || vaddr < r->pc)
		return NULL;
	v->addr = vaddr;
	v->lo = first;
	v->hi = first + nr;
	v->failed = 0;
	bpf_loop(CFI_SEARCH_STEPS, cfi_row_search_step, &s, 0);
	lo = v->lo;
	return v->failed ? NULL : bpf_map_lookup_elem(rows, &lo);
}

/* The slot of cfi_row_cache for address @vaddr of the table of @m. */
static __always_inline struct cfi_cached_row *cfi_cache_slot(struct cfi_row_cache *c,
							     const struct cfi_mapping *m,
							     __u64 vaddr, __u64 *key)
{
	__u64 h;

	*key = (__u64)m->first << 32 | vaddr;
	h = (*key ^ (__u64)m->table << 48) * 0x9e3779b97f4a7c15ull;
	return &c->slots[(h >> 40) & (CFI_ROW_CACHE_SLOTS - 1)];
}

/* The row of the table of @m for @vaddr: from the cache, or searched
 * (and then cached); NULL with v->stop set when there is no table. */
static __always_inline const struct cfi_row *cfi_mapping_row(struct cfi_walk *w,
							     const struct cfi_mapping *m,
							     __u64 vaddr)
{
	struct cfi_walk_vars *v = w->v;
	struct cfi_cached_row *slot = NULL;
	const struct cfi_row *row;
	__u32 table = m->table;
	__u64 key = 0;
	void *rows;

	if (table == CFI_NO_TABLE) {
		v->stop = CFI_WALK_NO_TABLE;
		return NULL;
	}
	if (vaddr <= 0xffffffffull && w->cache) {
		slot = cfi_cache_slot(w->cache, m, vaddr, &key);
		if (slot->table == table + 1 && slot->key == key) {
			v->cache_hits++;
			return &slot->row;
		}
	}
	rows = bpf_map_lookup_elem(&cfi_tables, &table);
	if (!rows) {
		v->stop = CFI_WALK_NO_TABLE;
		return NULL;
	}
	v->cache_misses++;
	row = cfi_find_row(rows, v, m->first, m->rows, vaddr);
	/* no slot: an address beyond 32 bits, no row; a marker is never
	 * cached (bpf/cfi_row.h) */
	if (!row || !slot || CFI_ROW_UNBUILT(row))
		return row;
	slot->key = key;
	slot->table = table + 1;
	slot->row = *row;
	/*
	 * The copy just cached, not the table's row: the walk's step then
	 * reads every row from cfi_row_cache, and the verifier checks it once,
	 * not once for a row in the cache and again for one in a table (a
	 * pointer into another map, a state no other prunes).
	 */
	return &slot->row;
}

/* The row for the walk's current frame, or NULL with v->stop set. */
static __always_inline const struct cfi_row *cfi_frame_row(struct cfi_walk *w)
{
	struct cfi_walk_vars *v = w->v;
	__u64 pc = v->exact ? v->ip : v->ip - 1;
	const struct cfi_mapping *m = cfi_find_mapping(w->proc, v, pc);
	const struct cfi_row *row;

	if (!m) {
		v->stop = CFI_WALK_UNMAPPED;
		v->miss_pc = pc;
		return NULL;
	}
	if (v->n == 1)
		v->leaf_known = m->table != CFI_NO_TABLE;
	row = cfi_mapping_row(w, m, pc - m->bias);
	if (!row && v->stop == CFI_WALK_NO_TABLE) {
		v->miss_pc = pc;
		return NULL;
	}
	if (row && CFI_ROW_UNBUILT(row)) {	/* the collector builds it */
		v->stop = CFI_WALK_NO_TABLE;
		v->unbuilt = 1;
		v->miss_pc = pc;
	} else if (!row || CFI_ROW_KIND(row) == CFI_KIND_STOP_NO_ROW)
		v->stop = CFI_WALK_NO_ROW;
	else if (CFI_ROW_KIND(row) == CFI_KIND_STOP_OUTERMOST)
		v->stop = CFI_WALK_END;
	else if (CFI_ROW_KIND(row) >= CFI_KIND_FIRST_STOP)
		v->stop = CFI_WALK_UNSUPPORTED;
	else
		return row;
	return NULL;
}

/*
 * The row for the walk's current frame (cfi_frame_row()) into v->row: 1,
 * or 0 with v->stop set.  @proc: the process's mappings; @cache: this
 * CPU's row cache, or NULL.  A global function: the verifier checks the
 * lookup, with its two binary searches' bpf_loop() callbacks, once on its
 * own, and the frame callback goes on from one state after it, where it
 * checked the rest of the frame once for each way the lookup ended (auto:
 * 8,627 -> 8,299 instructions processed).  A call and a row's copy per
 * frame.
 */
__noinline int cfi_frame_row_get(struct cfi_walk_vars *v, const struct cfi_process *proc,
				 struct cfi_row_cache *cache)
{
	struct cfi_walk w = { .proc = proc, .v = v, .cache = cache };
	const struct cfi_row *row;

	if (!v || !proc)
		return 0;
	row = cfi_frame_row(&w);
	if (!row)
		return 0;
	v->row = *row;
	return 1;
}

/* The 8 bytes at @addr into @val from the window: 1, or 0 when the
 * window does not hold them. */
static __always_inline int cfi_window_get(const struct cfi_walk_vars *v, __u64 addr, __u64 *val)
{
	__u64 off = addr - v->win_lo;

	if (addr < v->win_lo || off >= v->win_len || v->win_len - off < 8)
		return 0;
	barrier_var(off);
	if (off > CFI_STACK_WINDOW - 8)
		return 0;
	*val = *(const __u64 *)(v->win + off);
	return 1;
}

/* The 8 bytes of user memory at @addr: from the window when it holds
 * them (cfi_window_get()), else read.  0, or a negative errno (-1 for a
 * NULL argument).  A global function: the verifier checks its two ways
 * once, not in every state of each of its seven callers (auto: 16,463 ->
 * 13,041 instructions processed, docs/PERFORMANCE.md). */
__noinline int cfi_read(struct cfi_walk_vars *v, __u64 addr, __u64 *val)
{
	if (!v || !val)
		return -1;
	if (cfi_window_get(v, addr, val))
		return 0;
	v->reads++;
	return bpf_probe_read_user(val, sizeof(*val), (const void *)addr);
}

/* Read the window at v->sp: @len bytes (8 to CFI_STACK_WINDOW), or where
 * those are not all mapped (a stack's top), the rest of sp's page. */
static __always_inline void cfi_read_window(struct cfi_walk_vars *v, __u64 len)
{
	__u64 sp = v->sp, n;

	v->win_len = 0;
	barrier_var(len);
	if (len >= 8 && len <= CFI_STACK_WINDOW &&
	    !bpf_probe_read_user(v->win, len, (const void *)sp)) {
		v->win_lo = sp;
		v->win_len = len;
		return;
	}
	n = 4096 - (sp & 4095);
	barrier_var(n);
	if (n < 8 || n > CFI_STACK_WINDOW)
		return;
	if (!bpf_probe_read_user(v->win, n, (const void *)sp)) {
		v->win_lo = sp;
		v->win_len = n;
	}
}

/* the thread's last walk: cfi_memo_take(), cfi_memo_keep() */
#include "cfi_memo.bpf.h"

/* a step to the caller: cfi_step_common(), cfi_step() */
#include "cfi_step.bpf.h"

/* frames without a row: cfi_no_row() */
#include "cfi_guess.bpf.h"

/*
 * One frame (a bpf_loop() callback: verified once, not once per frame):
 * the row of the frame written last, then a step to its caller, whose
 * return address is written at once and taken back by the next call if
 * no mapping holds it.  So each frame costs one mapping search, which
 * also finds its row, not one to check the address and one for the row.
 * The step's and the guess's callers are written by the one store at the
 * end, which the verifier checks once for both.
 */
static long cfi_walk_frame(__u32 i, void *data)
{
	struct cfi_walk *w = data;
	struct cfi_walk_vars *v = w->v;
	__u32 n = v->n;

	if (v->memo_r && cfi_memo_take(v, w->memo))
		return 1;
	if (cfi_frame_row_get(v, w->proc, w->cache)) {
		if (v->guessed == CFI_GUESS_LEAF)
			v->guesses++;
		else if (v->guessed == CFI_GUESS_FP)
			v->fp_steps++;
		v->guessed = CFI_GUESS_NONE;
		if (n >= max_depth || n >= BPFPROF_MAX_STACK_DEPTH) {
			v->stop = CFI_WALK_MAX_DEPTH;
			return 1;
		}
		if (!cfi_step_common(v)) {
			if (cfi_step(v, &v->row))
				return 1;
			v->memo_from = n;	/* not a step a memo keeps */
		}
	} else {
		v->memo_end = v->stop == CFI_WALK_END;	/* by the row: outermost */
		if (!cfi_no_row(v))
			return 1;
		v->memo_from = n;
	}
	if (n >= max_depth || n >= BPFPROF_MAX_STACK_DEPTH)	/* checked: for the verifier */
		return 1;
	w->st->ips[n] = v->ip;
	v->n = n + 1;
	return 0;
}

/* The walk met something not loaded: ask the collector for @tgid's
 * mappings, at most every CFI_REQUEST_INTERVAL_NS. */
static __always_inline void cfi_request_maps(__u32 tgid, __u32 tid, __u64 pc)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&cfi_requests, &tgid);
	struct task_event *e;

	if (last && now - *last < CFI_REQUEST_INTERVAL_NS)
		return;
	bpf_map_update_elem(&cfi_requests, &tgid, &now, BPF_ANY);
	e = task_event_reserve(TASK_EVENT_MAPS_NEEDED, tgid, tid);
	if (!e)
		return;
	e->stack_id = pc;
	task_event_submit(e);
}

/*
 * Walk the current task's user stack into @st (at most max_depth frames,
 * leaf first).  Returns the bytes written to st->ips (0 for a task
 * without user space), like bpf_get_stack().
 */
static __always_inline long cfi_walk_user_stack(struct stack_trace *st, __u32 tgid, __u32 tid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cfi_walk w = { .st = st };
	struct cfi_walk_vars *v;
	struct pt_regs *regs;
	__u32 zero = 0;

	v = cfi_vars_here();
	/* read, not dereferenced: the verifier checks a dereference of a
	 * task pointer with a search of the kernel's BTF by name (~2 ms) */
	if (!v || !BPF_CORE_READ(task, mm))
		return 0;
	/* never NULL (key 0 of a per-CPU array); checked here, the verifier
	 * knows it is not in each frame (cfi_mapping_row()) */
	w.cache = bpf_map_lookup_elem(&cfi_row_cache, &zero);
	w.memo = cfi_memo_slot(tid);
	if (!w.cache || !w.memo)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__builtin_memset(&v->ip, 0, offsetof(struct cfi_walk_vars, last_map) -
				    offsetof(struct cfi_walk_vars, ip));
	v->regs = (__u64)regs;
	v->ip = BPF_CORE_READ(regs, ip);
	v->sp = BPF_CORE_READ(regs, sp);
	v->bp = BPF_CORE_READ(regs, bp);
	v->bx = BPF_CORE_READ(regs, bx);
	v->bp_known = 1;
	v->bx_known = 1;
	v->exact = 1;
	v->n = 1;
	st->ips[0] = v->ip;
	w.v = v;
	w.proc = process_entry(&cfi_procs, tgid);	/* a forked child's: its parent's */
	if (!w.proc) {
		v->stop = CFI_WALK_NO_PROCESS;
		v->miss_pc = v->ip;
	} else {
		cfi_memo_start(v, w.memo, tgid, tid, cfi_procs_gen);
		cfi_read_window(v, cfi_memo_window(v, w.memo));
		bpf_loop(max_depth, cfi_walk_frame, &w, 0);
		if (v->memo_at)
			cfi_memo_write(v, w.memo, st);
		if (v->memo_end && v->stop == CFI_WALK_END)
			cfi_memo_keep(v, w.memo, tgid, tid);
	}
	v->counts[v->stop < CFI_WALK_STOP_NR ? v->stop : CFI_WALK_BAD_STEP]++;
	v->counts[CFI_ROW_CACHE_HITS] += v->cache_hits;
	v->counts[CFI_ROW_CACHE_MISSES] += v->cache_misses;
	v->counts[CFI_STACK_READS] += v->reads;
	v->counts[CFI_MAP_SEARCHES] += v->map_searches;
	v->counts[CFI_COMMON_STEPS] += v->common_steps;
	v->counts[CFI_LEAF_CALLER_GUESSES] += v->guesses;
	v->counts[CFI_FP_STEPS] += v->fp_steps;
	v->counts[CFI_MEMO_FRAMES_TAKEN] += v->memo_frames;
	v->counts[CFI_MEMO_FAILS] += v->memo_fails;
	/* CFI_WALK_NO_TABLE is a mapping the collector knows has no table
	 * (anonymous code, no CFI): asking again would not help. */
	if (v->stop == CFI_WALK_NO_PROCESS || v->stop == CFI_WALK_UNMAPPED)
		cfi_request_maps(tgid, tid, v->miss_pc);
	return (long)v->n * sizeof(__u64);
}

/*
 * @tgid exec()ed: its mappings are the old image's, and a walk over them
 * would look the new image's addresses up in the wrong files.  Until the
 * collector writes the new ones, walks stop at once (no-process) and ask.
 */
static __always_inline void cfi_forget_process(__u32 tgid)
{
	bpf_map_delete_elem(&cfi_procs, &tgid);
	bpf_map_delete_elem(&cfi_requests, &tgid);
	__sync_fetch_and_add(&cfi_procs_gen, 1);	/* the memos of its walks */
}

#endif /* BPFPROF_CFI_WALK_BPF_H */
