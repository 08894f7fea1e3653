// SPDX-License-Identifier: BSD-2-Clause
/*
 * profile/ingest.c - the sample sink (see ingest.h): stack copies from the
 * kernel (from new-stack records, or from its map), their leaves put back
 * where the program stored them without (stack_bases.h), the unwinding
 * of copied stacks (dwarf mode's, and auto's copies of young processes'
 * stacks), samples and counts into the profile.
 */
#include <errno.h>
#include <string.h>

#include "ingest.h"
#include "interp/interp.h"
#include "kernel/clock.h"
#include "kernel/sampler.h"
#include "stack_bases.h"
#include "symbols/perfmap.h"
#include "targets/procmaps.h"
#include "unwind/cfi_loader.h"
#include "unwind/cfi_walk.h"

int ingest_init(struct ingest *in, struct profile *profile, struct sampler *sampler,
		struct tracker *tracker, const struct record_sink *sink,
		struct unwinder *unwinder, uint32_t max_stack)
{
	memset(in, 0, sizeof(*in));
	in->bases = stack_bases_new();
	if (!in->bases)
		return -ENOMEM;
	in->profile = profile;
	in->sampler = sampler;
	in->tracker = tracker;
	in->sink = sink;
	in->unwinder = unwinder;
	in->max_stack = max_stack;
	in->last_sample_tgid = UINT32_MAX;
	return 0;
}

void ingest_fini(struct ingest *in)
{
	stack_bases_free(in->bases);
	in->bases = NULL;
}

/* Intern the new stack with kernel id @id, @nr frames at @ips copied
 * from the kernel: the names of a user stack's Python frames of @pid are
 * learned now (which rewrites those frames in @ips; @known: the program
 * saw its code objects before, see interp_learn_stack()).  A user stack
 * stored without its leaf goes to the bases, not the profile: @frames
 * then gets the base, else the interned stack. */
static int intern_copy(struct ingest *in, uint32_t pid, uint64_t id, uint64_t *ips, uint32_t nr,
		       int kernel, bool known, struct bpfprof_stack *frames)
{
	const struct stack_base *base;
	uint32_t index;
	int err;

	in->stacks_copied++;
	if (!kernel)
		interp_learn_stack(in->interp, pid, ips, nr, known);
	if (!kernel && stack_bases_is_base(ips, nr)) {
		if ((err = stack_bases_add(in->bases, id, ips, nr, &base)))
			return err;
		*frames = (struct bpfprof_stack){ .ips = base->ips, .nr = base->nr };
		return 0;
	}
	if ((err = profile_intern_stack(in->profile, id, ips, nr, kernel, &index)))
		return err;
	*frames = *profile_stack(in->profile, index);
	return 0;
}

/* Whether the stack with kernel id @id was copied already, and then its
 * frames: a base, or the interned stack. */
static bool copied_stack(const struct ingest *in, uint64_t id, struct bpfprof_stack *frames)
{
	const struct stack_base *base = stack_bases_find(in->bases, id);
	uint32_t index;

	if (base)
		*frames = (struct bpfprof_stack){ .ips = base->ips, .nr = base->nr };
	else if (profile_find_stack(in->profile, id, &index) == 0)
		*frames = *profile_stack(in->profile, index);
	else
		return false;
	return true;
}

/* The frames of the stack with kernel id @id, copied from the kernel's
 * map if new (@known: as for intern_copy()): interned, or a base. */
static int copy_stack(struct ingest *in, uint32_t pid, uint64_t id, bool known,
		      struct bpfprof_stack *frames)
{
	struct stack_trace st;	/* 32 KiB: room for the deepest stack */
	int err;

	if (copied_stack(in, id, frames))
		return 0;
	err = sampler_stack(in->sampler, id, &st);
	if (err)
		return err;
	in->stacks_looked_up[st.kernel ? 1 : 0]++;
	return intern_copy(in, pid, id, (uint64_t *)st.ips, st.nr, st.kernel, known, frames);
}

/* Index in the profile of the stack with kernel id @id (0: none), copied
 * from the kernel's map if new; with @leaf (a user stack stored without
 * it), of that stack with @leaf in front. */
static int intern_stack(struct ingest *in, uint32_t pid, uint64_t id, uint64_t leaf,
			uint32_t *index)
{
	uint64_t ips[BPFPROF_MAX_STACK_DEPTH];	/* 32 KiB */
	struct bpfprof_stack frames;
	uint64_t whole = leaf ? stack_bases_leaf_id(id, leaf) : id;
	int err;

	if (profile_find_stack(in->profile, whole, index) == 0)
		return 0;
	if ((err = copy_stack(in, pid, id, false, &frames)))
		return err;
	if (!leaf)
		return profile_find_stack(in->profile, id, index);
	if (!stack_bases_is_base(frames.ips, frames.nr) || frames.nr > BPFPROF_MAX_STACK_DEPTH)
		return -EINVAL;		/* a leaf for a whole stack: cannot happen */
	memcpy(ips, frames.ips, frames.nr * sizeof(ips[0]));
	ips[0] = leaf;
	in->leaves_put_back++;
	return profile_intern_stack(in->profile, whole, ips, frames.nr, 0, index);
}

/* The frames of the new user stack that record @e of @size bytes
 * announces (interned, or a base): they come with it when it is a struct
 * new_stack_event, else from the map. */
static int intern_new_stack(struct ingest *in, const struct task_event *e, size_t size,
			    struct bpfprof_stack *frames)
{
	const struct new_stack_event *ne = (const struct new_stack_event *)e;
	uint64_t ips[BPFPROF_NEW_STACK_FRAMES];	/* the ring is read-only: a copy to name */
	bool known = size >= sizeof(*ne) && (ne->flags & BPFPROF_NEW_STACK_CODES_KNOWN);

	if (copied_stack(in, e->stack_id, frames))
		return 0;
	if (size < sizeof(*ne) || ne->nr == 0 || ne->nr > BPFPROF_NEW_STACK_FRAMES)
		return copy_stack(in, e->tgid, e->stack_id, known, frames);
	memcpy(ips, ne->ips, ne->nr * sizeof(ips[0]));
	in->stacks_in_records++;
	return intern_copy(in, e->tgid, e->stack_id, ips, ne->nr, 0, known, frames);
}

bool ingest_stack_copied(const struct ingest *in, uint64_t id)
{
	struct bpfprof_stack frames;

	return copied_stack(in, id, &frames);
}

void ingest_new_stack(struct ingest *in, const struct task_event *e, size_t size)
{
	struct proc *proc = tracker_snapshot(in->tracker, e->tgid, e->time_ns);
	struct bpfprof_stack st;
	uint32_t i = 0;

	if (!proc || intern_new_stack(in, e, size, &st))
		return;
	if (stack_bases_is_base(st.ips, st.nr))
		i = 1;		/* the program knew the leaf's mapping */
	for (; i < st.nr; i++) {
		const struct bpfprof_mapping *m = proc_find_map(proc, st.ips[i]);

		/* JIT code: read the perf map while the process lives (first
		 * need, then misses; rate-limited in proc_jit_symbol()) */
		if (m && perfmap_covers_mapping(m->path, m->prot))
			proc_jit_symbol(proc, i ? st.ips[i] - 1 : st.ips[i]);
		if (m || interp_is_frame(st.ips[i]))
			continue;
		tracker_refresh_maps(in->tracker, proc, e->time_ns, i == 0);
		return;
	}
}

/* 64-bit id of an unwound stack (its own seed: never equal to a BPF id in practice). */
static uint64_t unwound_stack_id(const uint64_t *ips, int n)
{
	uint64_t h = 0x84222325cbf29ce4ull ^ (uint64_t)n;

	for (int i = 0; i < n; i++) {
		h ^= ips[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h ? h : 1;
}

static void count_unwind(struct ingest *in, enum unwind_stop why, uint64_t time_ns)
{
	uint64_t lag = monotonic_ns() - time_ns;

	in->unwind.samples++;
	in->unwind.stops[why < UNWIND_STOP_NR ? why : UNWIND_ERROR]++;
	if (lag > in->unwind.lag_max_ns && lag < (1ull << 62))
		in->unwind.lag_max_ns = lag;
}

/*
 * The mappings a copied stack is unwound with: the process's, or those of
 * an image it executed away from when only that one mapped the pc (a copy
 * taken before the exec, read after it; address space randomization keeps
 * the two images apart).  True for the current image's.
 */
static bool stack_image(const struct proc *proc, uint64_t ip, const struct bpfprof_mapping **maps,
			size_t *nr)
{
	bool past = !procmaps_find(proc->maps, proc->nr_maps, ip) &&
		    procmaps_find(proc->past_maps, proc->nr_past_maps, ip);

	*maps = past ? proc->past_maps : proc->maps;
	*nr = past ? proc->nr_past_maps : proc->nr_maps;
	return !past;
}

/* The unwinder's stop for the reference walk's @stop. */
static enum unwind_stop unwind_stop_of_walk(unsigned int stop)
{
	switch (stop) {
	case CFI_WALK_END:		return UNWIND_END;
	case CFI_WALK_MAX_DEPTH:	return UNWIND_MAX_DEPTH;
	case CFI_WALK_UNMAPPED:		return UNWIND_UNMAPPED;
	case CFI_WALK_NO_TABLE:
	case CFI_WALK_NO_ROW:		return UNWIND_NO_CFI;
	case CFI_WALK_READ_FAULT:	return UNWIND_TRUNCATED;
	default:			return UNWIND_ERROR;
	}
}

/*
 * Unwind copy @d (@len bytes of stack) of @pid's stack, with registers
 * @regs and mappings @maps: auto's copies with the tables the BPF walk
 * uses (cfi_loader_walk()), dwarf mode's through libdwfl.  Frames, or a
 * negative errno; *@why says how it ended (UNWIND_NO_STACK, as
 * unwinder_unwind() says, when nothing was copied).
 */
static int unwind_copy(struct ingest *in, uint32_t pid, const struct bpfprof_mapping *maps,
		       size_t nr_maps, const struct unwind_regs *regs,
		       const struct dwarf_sample_event *d, size_t len, uint64_t *ips, size_t max,
		       enum unwind_stop *why)
{
	struct cfi_walk_regs wr = { .ip = regs->ip, .sp = regs->sp, .bp = regs->bp,
				    .bx = regs->bx, .gprs = regs->gprs };
	struct cfi_walk_stack stack = { .sp = regs->sp, .data = d->stack, .size = len };
	struct cfi_walk_result res = { 0 };
	int n;

	if (!in->cfi)
		return unwinder_unwind(in->unwinder, pid, maps, nr_maps, regs, d->stack, len, ips,
				       max, why);
	n = cfi_loader_walk(in->cfi, pid, maps, nr_maps, &wr, &stack, d->unbuilt_pc, ips,
			    (uint32_t)max, &res);
	if (n <= 0)
		*why = UNWIND_ERROR;
	else if (!len && res.stop != CFI_WALK_UNMAPPED)
		*why = UNWIND_NO_STACK;
	else
		*why = unwind_stop_of_walk(res.stop);
	in->unwind.leaf_guesses += res.leaf_guessed;
	return n;
}

/* --call-graph dwarf, or auto's copy of a young process's stack: unwind
 * the copied user stack into an interned stack, with its Python frames. */
static int unwind_sample(struct ingest *in, const struct dwarf_sample_event *d, size_t size,
			 uint32_t *user)
{
	uint64_t ips[BPFPROF_MAX_STACK_DEPTH];	/* 32 KiB */
	size_t max = in->max_stack < BPFPROF_MAX_STACK_DEPTH ? in->max_stack : BPFPROF_MAX_STACK_DEPTH;
	uint64_t gprs[16];
	struct unwind_regs regs;
	enum unwind_stop why = UNWIND_ERROR;
	size_t avail = size - sizeof(*d), len = d->stack_size < avail ? d->stack_size : avail;
	struct proc *proc = profile_find_proc(in->profile, d->sample.tgid);
	int n = -ENOENT;

	*user = 0;
	if (!d->has_regs || !proc)
		return 0;
	unwind_regs_from_pt_regs(&regs, (const uint64_t *)d->pt_regs, gprs);
	regs.red_zone = d->red_zone_ok ? d->red_zone : NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		const struct bpfprof_mapping *maps;
		size_t nr_maps;
		bool current = stack_image(proc, regs.ip, &maps, &nr_maps);

		n = unwind_copy(in, proc->pid, maps, nr_maps, &regs, d, len, ips, max, &why);
		/* A pc outside the known mappings: a library appeared since we looked. */
		if (attempt || !current || why != UNWIND_UNMAPPED ||
		    !tracker_refresh_maps(in->tracker, proc, d->sample.time_ns, true))
			break;
	}
	if (n <= 0) {
		ips[0] = regs.ip;
		n = 1;
		why = UNWIND_ERROR;
	}
	count_unwind(in, why, d->sample.time_ns);
	if (d->py_nr)		/* a copy of a CPython process's stack */
		n = (int)interp_splice_copy(in->interp, proc->pid, ips, (size_t)n, max,
					    (const uint64_t *)d->py_ips,
					    d->py_nr < BPFPROF_COPY_PY_FRAMES ? d->py_nr
									   : BPFPROF_COPY_PY_FRAMES,
					    why != UNWIND_END,
					    (d->py_flags & BPFPROF_NEW_STACK_CODES_KNOWN) != 0);
	return profile_intern_stack(in->profile, unwound_stack_id(ips, n), ips, (uint32_t)n, 0,
				    user);
}

/* Counts a CPU's pending-count slots gave up to other keys (count mode:
 * bpf/counts.bpf.h, count_sample()). */
static int ingest_moved_counts(struct ingest *in, const struct moved_counts_event *b)
{
	uint32_t nr = b->nr < BPFPROF_MOVED_BATCH ? b->nr : BPFPROF_MOVED_BATCH;
	int err = 0;

	for (uint32_t i = 0; i < nr && !err; i++) {
		in->samples_moved += b->counts[i].samples;
		err = ingest_count(in, &b->counts[i].key, b->counts[i].samples);
	}
	in->counts_moved += nr;
	return err;
}

int ingest_sample(struct ingest *in, const struct sample_event *e, size_t size)
{
	struct bpfprof_event ev = { .type = BPFPROF_EVENT_SAMPLE, .cpu = e->cpu,
				    .time_ns = e->time_ns, .pid = e->tgid, .tid = e->tid };
	uint32_t user, kernel;
	int err;

	if (e->kind == SAMPLE_KIND_MOVED_COUNTS)
		return size >= sizeof(struct moved_counts_event) ?
			ingest_moved_counts(in, (const struct moved_counts_event *)e) : 0;
	if (e->tgid != in->last_sample_tgid) {
		/* first sample of a process: read /proc while it is alive */
		if (!profile_find_proc(in->profile, e->tgid))
			tracker_snapshot(in->tracker, e->tgid, e->time_ns);
		in->last_sample_tgid = e->tgid;
	}
	if ((in->unwinder || in->cfi) && size >= sizeof(struct dwarf_sample_event))
		err = unwind_sample(in, (const struct dwarf_sample_event *)e, size, &user);
	else
		err = intern_stack(in, e->tgid, e->user_stack, e->user_leaf, &user);
	if (err || intern_stack(in, e->tgid, e->kernel_stack, 0, &kernel)) {
		/* The stack was stored before the sample was sent; cannot happen. */
		in->drops[DROP_STACK_MAP_FULL]++;
		return 0;
	}
	if (profile_add_samples(in->profile, e->tgid, e->tid, user, kernel, 1))
		return -ENOMEM;
	ev.sample.user_stack = user;
	ev.sample.kernel_stack = kernel;
	ev.sample.period = e->period;
	record_sink_put(in->sink, &ev);
	return 0;
}

int ingest_count(struct ingest *in, const struct count_key *k, uint64_t samples)
{
	uint32_t user, kernel;

	if (intern_stack(in, k->tgid, k->user_stack, k->user_leaf, &user) ||
	    intern_stack(in, k->tgid, k->kernel_stack, 0, &kernel)) {
		in->drops[DROP_STACK_MAP_FULL] += samples;
		return 0;
	}
	if (!profile_find_proc(in->profile, k->tgid))
		tracker_snapshot(in->tracker, k->tgid, in->counts_time_ns);
	return profile_add_samples(in->profile, k->tgid, k->tid, user, kernel, samples);
}
