/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * counts.bpf.h - the in-kernel counts of count mode, included by
 * profile.bpf.c: each CPU's pending counts, the batches of counts they give
 * up, sent to the collector through the "samples" ring buffer, and the two
 * count maps those go to when the ring is full (count_sample()).
 */
#ifndef BPFPROF_COUNTS_BPF_H
#define BPFPROF_COUNTS_BPF_H

/*
 * Two count maps: the program counts into counts[active_counts]; the
 * collector flips active_counts, lets in-flight programs finish, and drains
 * the other one, so long runs never fill a map and no sample is lost.
 */
struct count_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);		/* --count-map-size */
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* as "stacks": user/kernel/map_warm.h */
	__type(key, struct count_key);
	__type(value, __u64);			/* samples */
};
struct count_map counts0 SEC(".maps");
struct count_map counts1 SEC(".maps");

volatile __u32 active_counts = 0;		/* written by the collector */

/* Add @n samples of @key to count map @counts. */
static __always_inline int count_sample_in(void *counts, const struct count_key *key, __u64 n)
{
	__u64 *v;
	long err;

	v = bpf_map_lookup_elem(counts, key);
	if (v) {
		__sync_fetch_and_add(v, n);
		return 0;
	}
	err = bpf_map_update_elem(counts, key, &n, BPF_NOEXIST);
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(counts, key);
		if (v) {
			__sync_fetch_and_add(v, n);
			return 0;
		}
	}
	if (err) {
		drop_n(DROP_COUNT_MAP_FULL, n);
		return -1;
	}
	__sync_fetch_and_add(&counts_added, 1);
	if (counts_added >= counts_fill_at)
		maps_filling_wake();
	return 0;
}

/* A BPF function: see stat_add() (profile.bpf.c). */
static __noinline int count_sample_in_maps(const struct count_key *key, __u64 n)
{
	/* Separate call sites: each lookup/update instruction sees one map. */
	if (active_counts)
		return count_sample_in(&counts1, key, n);
	return count_sample_in(&counts0, key, n);
}

/*
 * Each CPU's pending counts (struct pending_count, held in groups of
 * BPFPROF_PENDING_GROUP_SLOTS; bpfprof.h): a sample adds one to
 * its key's slot, chosen by a hash of the key; a sample of another key
 * takes the slot, and the count it held joins the CPU's moved counts,
 * which go to the collector BPFPROF_MOVED_BATCH at a time in one
 * "samples" record (struct moved_counts_event); where the ring has no
 * room, into the count map as before.  The collector reads the slots and
 * the moved counts not sent yet at the end, after the program has
 * stopped (sampler_drain_counts()).  A count map insert for each key new
 * to the map (24% of pyburn's samples) was the dearest part of counting,
 * and a ring record per moved count not much cheaper
 * (docs/PERFORMANCE.md, "Session 34").
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFPROF_PENDING_GROUPS);	/* 1 in stream mode */
	__type(key, __u32);				/* slot >> BPFPROF_PENDING_GROUP_BITS */
	__type(value, struct pending_count_group);
} pending_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct moved_counts_event);
} moved_counts SEC(".maps");

static __always_inline __u32 pending_count_slot(const struct count_key *key)
{
	__u64 h = key->user_stack ^ key->kernel_stack * 0xc2b2ae3d27d4eb4full ^
		  key->user_leaf * 0xff51afd7ed558ccdull ^ ((__u64)key->tid << 32 | key->tgid);

	return (__u32)((h * 0x9e3779b97f4a7c15ull) >> (64 - BPFPROF_PENDING_COUNT_BITS));
}

static __always_inline bool same_count_key(const struct count_key *a, const struct count_key *b)
{
	return a->user_stack == b->user_stack && a->user_leaf == b->user_leaf &&
	       a->kernel_stack == b->kernel_stack && a->tid == b->tid && a->tgid == b->tgid;
}

/* Moved count @pc into the count map; dropped there, its samples were
 * counted kept when they came, and are not. */
static __always_inline void moved_count_to_map(const struct pending_count *pc)
{
	if (count_sample_in_maps(&pc->key, pc->samples))
		stat_add(STAT_KEPT, -pc->samples);
}

/* Moved count @i of the batch @data points to into the count map (a
 * bpf_loop() callback, whose data lives on the stack). */
static long moved_count_to_map_step(__u32 i, void *data)
{
	struct moved_counts_event *b = *(struct moved_counts_event **)data;
	__u64 idx = i;

	barrier_var(idx);
	if (idx >= BPFPROF_MOVED_BATCH || !b)
		return 1;
	moved_count_to_map(&b->counts[idx]);
	return 0;
}

/* Send this CPU's full batch of moved counts @b to the collector, or put
 * them into the count map when the ring has no room. */
static __noinline void moved_counts_flush(struct moved_counts_event *b)
{
	if (!b)
		return;
	b->head.time_ns = bpf_ktime_get_ns();
	b->head.cpu = bpf_get_smp_processor_id();
	b->head.kind = SAMPLE_KIND_MOVED_COUNTS;
	b->nr = BPFPROF_MOVED_BATCH;
	if (bpf_ringbuf_output(&samples, b, sizeof(*b), sample_wakeup_flags()))
		bpf_loop_cold(BPFPROF_MOVED_BATCH, moved_count_to_map_step, &b);
	b->nr = 0;
}

/* The count of slot @pc joins this CPU's moved counts. */
static __always_inline void pending_count_out(struct pending_count *pc)
{
	__u32 zero = 0, i;
	struct moved_counts_event *b = bpf_map_lookup_elem(&moved_counts, &zero);

	if (!b) {
		moved_count_to_map(pc);
		return;
	}
	i = b->nr;
	if (i >= BPFPROF_MOVED_BATCH)
		i = 0;
	b->counts[i] = *pc;
	b->nr = ++i;
	if (i == BPFPROF_MOVED_BATCH)
		moved_counts_flush(b);
}

static __always_inline int count_sample(struct count_key *key)
{
	__u32 slot = pending_count_slot(key), group = slot >> BPFPROF_PENDING_GROUP_BITS;
	struct pending_count_group *g = bpf_map_lookup_elem(&pending_counts, &group);
	struct pending_count *pc;

	if (!g)
		return count_sample_in_maps(key, 1);
	pc = &g->slot[slot & (BPFPROF_PENDING_GROUP_SLOTS - 1)];
	if (pc->samples && same_count_key(&pc->key, key)) {
		pc->samples++;		/* per-CPU: no other writer */
		return 0;
	}
	if (pc->samples)
		pending_count_out(pc);
	pc->key = *key;
	pc->samples = 1;
	return 0;
}

#endif /* BPFPROF_COUNTS_BPF_H */
