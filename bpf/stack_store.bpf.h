/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * stack_store.bpf.h - the "stacks" map, where a stack is stored once by
 * its id (a hash of its frames, hash_stack()), and each CPU's note of the
 * ids it met there.  Included once by bpf/profile.bpf.c.
 *
 * Why the note: most samples' stacks are stored already (pyburn: 96% of
 * the samples' stacks, without their leaves, were among the last 64 a CPU
 * met), and a look-up of the map, its bucket and element most often cold,
 * was ~0.3 us of a ~4.5 us sample (docs/PERFORMANCE.md, "Session 32"):
 * with the note, 0.19-0.27 us against 0.31-0.42 (stamped, interleaved
 * runs), 89-91% of the ids noted.
 * An id noted is never looked up again: the collector removes a stack
 * from the map only after it copied it (sampler_prune_stacks()) and keeps
 * its copy for the whole run, so a sample may name the id either way.
 */
#ifndef BPFPROF_STACK_STORE_BPF_H
#define BPFPROF_STACK_STORE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);		/* --stack-map-size */
	/* elements taken from each CPU's cache, filled before sampling:
	 * user/kernel/map_warm.h */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u64));	/* stack id: hash of the frames */
	/* struct stack_trace with room for max_depth frames (set before load) */
	__uint(value_size, BPFPROF_STACK_TRACE_SIZE(BPFPROF_MAX_FP_DEPTH));
} stacks SEC(".maps");

/* Ids a CPU found or stored in "stacks", by their low bits (a slot is
 * overwritten by the next id that falls in it; 0: empty, never an id). */
#define STACK_IDS_NOTED 1024
struct stack_ids_noted {
	__u64 id[STACK_IDS_NOTED];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_ids_noted);
} stack_ids_noted SEC(".maps");

/*
 * Store @st under @id unless it is stored: 1 when this call stored it,
 * 0 when it was there (or this CPU noted it), -1 after counting the drop
 * of a full map.  STAT_STACK_IDS and STAT_STACK_IDS_NOTED count the ids
 * asked for and those the note answered.
 */
static __always_inline int stack_store(__u64 id, const struct stack_trace *st)
{
	__u32 zero = 0;
	struct stack_ids_noted *noted = bpf_map_lookup_elem(&stack_ids_noted, &zero);
	__u64 *slot = noted ? &noted->id[id & (STACK_IDS_NOTED - 1)] : NULL;
	long err;

	stat_inc(STAT_STACK_IDS);
	if (slot && *slot == id) {
		stat_inc(STAT_STACK_IDS_NOTED);
		return 0;
	}
	if (bpf_map_lookup_elem(&stacks, &id))
		goto stored;
	err = bpf_map_update_elem(&stacks, &id, st, BPF_NOEXIST);
	if (err == -EEXIST)
		goto stored;		/* another CPU stored it meanwhile */
	if (err) {
		drop(DROP_STACK_MAP_FULL);
		return -1;
	}
	__sync_fetch_and_add(&stacks_added, 1);
	if (slot)
		*slot = id;
	return 1;
stored:
	if (slot)
		*slot = id;
	return 0;
}

#endif /* BPFPROF_STACK_STORE_BPF_H */
