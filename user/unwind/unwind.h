/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.h - userspace DWARF stack unwinding for `--call-graph dwarf`:
 * turning one sample's user registers and a copy of the top of its user
 * stack into the list of return addresses, using the CFI (.eh_frame, and
 * .debug_frame of separate debug files when present) of the executable
 * and shared libraries the process has mapped.
 *
 * What the sample must carry (x86_64): the user-mode rip, rsp and rbp at
 * the moment of the sample (struct unwind_regs), and @stack_size bytes of
 * user memory copied from address rsp upward, so that stack[i] is the
 * byte at address rsp + i (no gap, no header; a copy that is shorter than
 * requested because it reached the end of the stack mapping is fine, the
 * caller passes the number of bytes actually copied); optionally the 128
 * bytes below rsp (struct unwind_regs.red_zone), which some CFI reads.
 *
 * Implementation: elfutils libdwfl frame unwinding.  One Dwfl per process
 * holds a module for every executable file mapping, reported at its load
 * bias, and one for [vdso] made from our own vDSO image when
 * vdso_image_matches() (symbols/vdso.h) says the process's is the same:
 * same mapping size, the ELF class and machine of the process's first
 * executable file that reads, the build-id where known.  The Dwfl is
 * attached with our own thread callbacks whose memory reads are served
 * from the copied stack only.  Dwfl, modules and CFI are cached per
 * process and rebuilt when the executable mappings passed in change; the
 * ELF files behind the modules are opened once per file and shared by
 * all processes (unwind_files.h), so a new process costs a Dwfl of
 * modules pointing at files already open, not opening them again.
 * When a frame's pc has no CFI, elfutils falls back to one frame-pointer
 * step (rbp chain); such steps are counted (struct unwind_stats.fp_steps).
 * A leaf without CFI (hand-written assembly) gets the BPF walk's rule
 * instead (bpf/cfi_row.h): its caller is the return address at sp if a
 * call instruction precedes it and its module has CFI for it, and libdwfl
 * starts from there (counted: struct unwind_stats.leaf_guesses).
 *
 * Not thread-safe: one struct unwinder must be used by one thread at a
 * time.  Only x86_64 is supported (other architectures get -ENOTSUP).
 */
#ifndef BPFPROF_UNWIND_H
#define BPFPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include <bpfprof/plugin.h>

/*
 * Processes whose Dwfl is kept at once, and modules (mapped ELF files,
 * each with its own CFI state over a shared ELF handle) over all of
 * them; beyond either, least recently used processes are forgotten.
 */
#define UNWIND_MAX_PROCS 64
#define UNWIND_MAX_MODULES 512

/* x86_64 user registers at the sample (what the BPF program copies). */
struct unwind_regs {
	uint64_t ip;			/* rip: the interrupted instruction */
	uint64_t sp;			/* rsp: address of stack[0] */
	uint64_t bp;			/* rbp (needed by CFI using rbp as CFA, and by
					 * the frame-pointer fallback) */
	uint64_t bx;			/* rbx (ld.so's lazy-binding trampolines
					 * keep their CFA in it) */
	/* The 16 general registers by DWARF number (rax, rdx, rcx, rbx, rsi,
	 * rdi, rbp, rsp, r8 .. r15), or NULL: CFAs from other registers
	 * (OpenSSL's assembly).  With them, ip and sp still count, and bp
	 * and bx are taken from here.  Borrowed for the call. */
	const uint64_t *gprs;
	/* BPFPROF_RED_ZONE (128) bytes copied from sp - 128, or NULL:
	 * what CFI may read below sp (OpenSSL's CFA = *(rsp - 8) + 8).
	 * Borrowed for the call. */
	const uint8_t *red_zone;
};

/*
 * Fill @r from @pt, x86-64's struct pt_regs as BPFPROF_PT_REGS_WORDS
 * 8-byte words (struct dwarf_sample_event.pt_regs of bpf/bpfprof.h; the
 * first members of <sys/user.h>'s struct user_regs_struct too): ip, sp,
 * bp, bx, and gprs pointing at @gprs, which gets the 16 general registers
 * in DWARF order.  red_zone is left NULL.
 */
void unwind_regs_from_pt_regs(struct unwind_regs *r, const uint64_t *pt, uint64_t gprs[16]);

/* Why an unwind stopped. */
enum unwind_stop {
	UNWIND_END = 0,		/* reached the outermost frame (CFI marks the
				 * return address undefined, e.g. _start) */
	UNWIND_TRUNCATED,	/* needed stack bytes beyond the copy */
	UNWIND_NO_CFI,		/* no CFI for a frame's module/pc (anonymous or
				 * unreadable module, or pc without an FDE and
				 * the frame-pointer step failed too) */
	UNWIND_UNMAPPED,	/* pc in no known mapping */
	UNWIND_MAX_DEPTH,	/* @max frames written */
	UNWIND_ERROR,		/* anything else: bad CFI, stack not growing
				 * upward (loop), reads below sp, ... */
	UNWIND_NO_STACK,	/* nothing was copied: sp was not readable (a
				 * sample inside execve() after the old image's
				 * memory went, whose registers are still its) */
	UNWIND_STOP_NR,
};

/* Counters since unwinder_new() (see unwinder_stats()). */
struct unwind_stats {
	uint64_t samples;		/* unwinder_unwind() calls that returned >= 1 */
	uint64_t frames;		/* frames written in all */
	uint64_t fp_steps;		/* steps done by the frame-pointer fallback */
	uint64_t leaf_guesses;		/* leaves without CFI whose caller came from
					 * [sp] (bpf/cfi_row.h's rule) */
	uint64_t stops[UNWIND_STOP_NR];	/* samples by enum unwind_stop */
	uint64_t dwfl_builds;		/* per-process Dwfl (re)builds */
	uint64_t module_errors;		/* mapped files that could not be reported */
	uint64_t files_opened;		/* ELF files opened (each once, then shared) */
};

/*
 * An unwinder (opaque): per-process Dwfls with their open files and CFI,
 * our own vDSO image, and the counters of struct unwind_stats.
 */
struct unwinder;

/* A new unwinder with empty caches, or NULL if out of memory. */
struct unwinder *unwinder_new(void);

/* Release @u, its per-process Dwfls and file descriptors.  NULL allowed. */
void unwinder_free(struct unwinder *u);

/*
 * Unwind one sample of process @pid.  @maps are its mappings (@nr_maps
 * entries sorted by start, as from procmaps_read()); the files of the
 * executable ones are opened through /proc/@pid/map_files or
 * /proc/@pid/root while @pid is alive, else by path (procmaps_open_file();
 * @pid 0: by path only).  @stack holds @stack_size bytes copied from
 * regs->sp upward.
 *
 * Writes the pcs leaf first into @ips (at most @max): ips[0] = regs->ip,
 * then one return address per caller frame (pass ip - 1 to the
 * symbolizer for those).  Returns the number of frames (>= 1) and sets
 * *@why (may be NULL) to why it stopped; UNWIND_MAX_DEPTH is reported
 * whenever @max frames were written, even if the stack ended there.
 * Return addresses that fall in no mapping are not written (stop
 * UNWIND_UNMAPPED); if regs->ip itself is in no mapping, 1 is returned
 * with UNWIND_UNMAPPED.
 * Errors: -EINVAL (NULL @u/@regs/@ips, @max 0, @stack NULL with
 * @stack_size > 0), -ENOMEM, -ENOTSUP (not x86_64); *@why is then
 * UNWIND_ERROR.
 */
int unwinder_unwind(struct unwinder *u, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr_maps, const struct unwind_regs *regs, const void *stack,
		    size_t stack_size, uint64_t *ips, size_t max, enum unwind_stop *why);

/*
 * Forget cached state of process @pid (it exec'd or exited, or its
 * mappings changed): its Dwfl and open files are released.  Changed
 * executable mappings are also detected by unwinder_unwind() itself.
 */
void unwinder_forget(struct unwinder *u, uint32_t pid);

/* Copy the counters of @u into @st. */
void unwinder_stats(const struct unwinder *u, struct unwind_stats *st);

/* A short name of @why ("end", "truncated", ...), "?" if out of range. */
const char *unwind_stop_name(enum unwind_stop why);

#endif /* BPFPROF_UNWIND_H */
