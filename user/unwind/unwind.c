// SPDX-License-Identifier: BSD-2-Clause
/*
 * unwind.c - the userspace DWARF unwinder of `--call-graph dwarf`: per
 * process elfutils Dwfl (modules at their load biases, their ELF files
 * shared between processes by unwind_files.c), thread callbacks that
 * serve the sample's registers and its stack copy, the frame walk with
 * its stop reasons, and the [vdso] module, made from our own vDSO image
 * (vdso.h) when the process's is the same.
 */
#include <errno.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <uthash.h>

#include "bpfprof.h"			/* BPFPROF_RED_ZONE */
#include "symbols/vdso.h"
#include "targets/procmaps.h"
#include "unwind/cfi_walk.h"		/* cfi_walk_call_before() */
#include "unwind.h"
#include "unwind_files.h"

/* DWARF register numbers of x86_64 (System V psABI). */
#define DWARF_RBX 3
#define DWARF_RBP 6
#define DWARF_RSP 7

/* Entries of the per-process "does this pc have CFI" cache (power of 2). */
#define CFI_CACHE_SIZE 1024

/* One cached answer of pc_has_cfi(): key is pc + 1 (0 = empty). */
struct cfi_slot {
	uint64_t key;
	bool has;
};

/* The sample being unwound (lives on unwinder_unwind()'s stack). */
struct sample {
	uint32_t pid;
	const struct unwind_regs *regs;	/* where libdwfl starts (the leaf's
					 * caller after leaf_caller()) */
	uint64_t stack_sp;		/* address of stack[0]: the sample's sp */
	const uint8_t *stack;
	size_t size;
	const struct bpfprof_mapping *maps;
	size_t nr_maps;
	uint64_t *ips;
	size_t max, n;
	enum unwind_stop why;
	bool stopped;		/* why was decided by the frame callback */
	bool read_beyond;	/* a read above the copy failed in this step */
	bool read_failed;	/* any read failed in this step */
	bool started;		/* the initial frame was seen */
	bool leaf_guessed;	/* libdwfl starts at the leaf's caller (leaf_caller()) */
	uint64_t prev_sp;
	uint64_t prev_pc;	/* pc used for the CFI lookup of the last frame */
	uint64_t fp_steps;
};

/* One process: its Dwfl with a module per executable file mapping. */
struct proc {
	UT_hash_handle hh;		/* keyed by pid */
	uint32_t pid;
	Dwfl *dwfl;
	bool attached;
	uint64_t sig;			/* signature of the reported mappings */
	uint64_t last_use;
	size_t nr_modules;		/* modules reported (files held open) */
	struct sample *cur;		/* during unwinder_unwind() */
	struct cfi_slot *cfi_cache;	/* CFI_CACHE_SIZE entries */
};

struct unwinder {
	struct proc *procs;		/* uthash by pid */
	size_t nr_procs;
	size_t nr_modules;		/* sum over procs */
	uint64_t clock;			/* use counter for LRU eviction */
	Elf *arch_elf;			/* an x86_64 ELF header: selects the backend */
	unsigned char arch_ehdr[sizeof(Elf64_Ehdr)];
	struct unwind_files *files;	/* the mapped ELF files, shared by the procs */
	struct vdso_image *vdso;	/* our own vDSO image, NULL if none */
	struct unwind_file *vdso_file;	/* its ELF file (a memfd), NULL if none */
	bool vdso_tried;
	struct unwind_stats stats;
};

static const char *const stop_names[UNWIND_STOP_NR] = {
	[UNWIND_END] = "end",
	[UNWIND_TRUNCATED] = "truncated",
	[UNWIND_NO_STACK] = "no-stack",
	[UNWIND_NO_CFI] = "no-cfi",
	[UNWIND_UNMAPPED] = "unmapped",
	[UNWIND_MAX_DEPTH] = "max-depth",
	[UNWIND_ERROR] = "error",
};

const char *unwind_stop_name(enum unwind_stop why)
{
	return (unsigned)why < UNWIND_STOP_NR ? stop_names[why] : "?";
}

/* ---- thread callbacks ---------------------------------------------------- */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct proc *p = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return (pid_t)p->pid;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct proc *p = arg;

	if ((uint32_t)tid != p->pid)
		return false;
	*thread_argp = p;
	return true;
}

/* 8 bytes at @addr, only from the stack copy and the red zone below it. */
static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct proc *p = arg;
	struct sample *s = p->cur;
	uint64_t sp = s->stack_sp;

	if (addr >= sp && addr - sp <= s->size && s->size - (addr - sp) >= sizeof(*result)) {
		memcpy(result, s->stack + (addr - sp), sizeof(*result));
		return true;
	}
	if (s->regs->red_zone && addr < sp && sp - addr <= BPFPROF_RED_ZONE &&
	    sp - addr >= sizeof(*result)) {
		memcpy(result, s->regs->red_zone + (BPFPROF_RED_ZONE - (sp - addr)), sizeof(*result));
		return true;
	}
	s->read_failed = true;
	if (addr >= sp)
		s->read_beyond = true;
	return false;
}

void unwind_regs_from_pt_regs(struct unwind_regs *r, const uint64_t *pt, uint64_t gprs[16])
{
	/* struct pt_regs words of rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8 .. r15 */
	static const uint8_t word[16] = { 10, 12, 11, BPFPROF_PT_REGS_BX, 13, 14,
					  BPFPROF_PT_REGS_BP, BPFPROF_PT_REGS_SP,
					  9, 8, 7, 6, 3, 2, 1, 0 };

	for (int i = 0; i < 16; i++)
		gprs[i] = pt[word[i]];
	*r = (struct unwind_regs){ .ip = pt[BPFPROF_PT_REGS_IP], .sp = pt[BPFPROF_PT_REGS_SP],
				   .bp = pt[BPFPROF_PT_REGS_BP], .bx = pt[BPFPROF_PT_REGS_BX],
				   .gprs = gprs };
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct proc *p = arg;
	const struct unwind_regs *r = p->cur->regs;
	Dwarf_Word regs[2] = { r->bp, r->sp };	/* DWARF 6 (rbp), 7 (rsp) */
	Dwarf_Word rbx = r->bx, rip = r->ip, all[16];

	if (r->gprs) {		/* every general register, rsp the sample's sp */
		memcpy(all, r->gprs, sizeof(all));
		all[DWARF_RBP + 1] = r->sp;
		if (!dwfl_thread_state_registers(thread, 0, 16, all))
			return false;
	} else if (!dwfl_thread_state_registers(thread, DWARF_RBP, 2, regs) ||
		   !dwfl_thread_state_registers(thread, DWARF_RBX, 1, &rbx)) {
		return false;
	}
	/*
	 * DWARF 16 is rip on x86_64: CFI expressions read it (the PLT's
	 * CFA is rsp + 8 + ((rip & 15) >= 11) * 8), and
	 * dwfl_thread_state_register_pc() sets only the frame's pc.
	 */
	if (!dwfl_thread_state_registers(thread, 16, 1, &rip))
		return false;
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* ---- modules --------------------------------------------------------------- */

/* Our own vDSO image and its ELF file (a memfd), made on first use. */
static void load_vdso(struct unwinder *u)
{
	int fd;

	u->vdso_tried = true;
	if (vdso_image_own(&u->vdso))
		return;
	fd = vdso_image_memfd(u->vdso);
	if (fd < 0 || unwind_file_from_fd(fd, VDSO_PATH, &u->vdso_file)) {
		vdso_image_free(u->vdso);
		u->vdso = NULL;
	}
}

/*
 * Report the [vdso] mapping @m of @p, a process with ABI @abi, as a
 * module made from our own image if it is the same image; else it is
 * left out (its frames have no CFI then).
 */
static void report_vdso(struct unwinder *u, struct proc *p, const struct bpfprof_mapping *m,
			const struct elf_abi *abi)
{
	if (!u->vdso_tried)
		load_vdso(u);
	if (!u->vdso_file || !vdso_image_matches(u->vdso, m, abi))
		return;
	if (unwind_file_report(u->vdso_file, p->dwfl, VDSO_PATH, m->start, 0))
		u->stats.module_errors++;
	else
		p->nr_modules++;
}

/*
 * Report the file mapping @m of @p, its file from the shared cache; the
 * ABI of the file goes to *@abi (if not NULL).  Returns 0 (also when the
 * file could not be reported: counted in module_errors) or -ENOMEM.
 */
static int report_file(struct unwinder *u, struct proc *p, const struct bpfprof_mapping *m,
		       struct elf_abi *abi)
{
	struct unwind_file *f;
	size_t plen;
	char *name;
	int err;

	err = unwind_files_get(u->files, p->pid, m, &f);
	if (err == -ENOMEM)
		return err;
	if (err) {
		u->stats.module_errors++;
		return 0;
	}
	if (abi)
		*abi = *unwind_file_abi(f);
	/* the path without " (deleted)" is where debug files are looked for */
	procmaps_path_deleted(m->path, &plen);
	name = strndup(m->path, plen);
	if (!name)
		return -ENOMEM;
	if (unwind_file_report(f, p->dwfl, name, m->start, m->pgoff))
		u->stats.module_errors++;
	else
		p->nr_modules++;
	free(name);
	return 0;
}

/* Whether @m is a mapping we report as a module. */
static bool wants_module(const struct unwinder *u, const struct bpfprof_mapping *m)
{
	if (!(m->prot & BPFPROF_PROT_EXEC) || !m->path)
		return false;
	if (m->path[0] == '/')
		return true;
	return strcmp(m->path, VDSO_PATH) == 0;
}

/* Signature of the mappings wants_module() selects. */
static uint64_t maps_signature(const struct unwinder *u, const struct bpfprof_mapping *maps,
			       size_t nr)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = 0; i < nr; i++) {
		const struct bpfprof_mapping *m = &maps[i];
		uint64_t v[4] = { m->start, m->end, m->pgoff, m->inode ^ ((uint64_t)m->dev_major << 40) ^
				  ((uint64_t)m->dev_minor << 20) };
		int k;

		if (!wants_module(u, m))
			continue;
		for (k = 0; k < 4; k++) {
			h ^= v[k];
			h *= 0xff51afd7ed558ccdull;
			h ^= h >> 33;
		}
	}
	return h;
}

/* Release the Dwfl of @p (its files). */
static void proc_drop_dwfl(struct unwinder *u, struct proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	u->nr_modules -= p->nr_modules;
	p->nr_modules = 0;
	p->dwfl = NULL;
	p->attached = false;
	memset(p->cfi_cache, 0, CFI_CACHE_SIZE * sizeof(*p->cfi_cache));
}

/*
 * (Re)build the Dwfl of @p from @maps.  The process's ABI is that of its
 * first executable file mapping whose ELF header reads; the [vdso] is
 * reported last, once that is known.  Returns 0 or -ENOMEM.
 */
static int proc_build(struct unwinder *u, struct proc *p, const struct bpfprof_mapping *maps,
		      size_t nr)
{
	const struct bpfprof_mapping *vdso = NULL;
	struct elf_abi abi = { 0 };
	size_t i;
	int err;

	proc_drop_dwfl(u, p);
	u->stats.dwfl_builds++;
	p->dwfl = dwfl_begin(&unwind_files_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	dwfl_report_begin(p->dwfl);
	for (i = 0; i < nr; i++) {
		const struct bpfprof_mapping *m = &maps[i];

		if (!wants_module(u, m))
			continue;
		if (m->path[0] != '/') {
			vdso = m;
			continue;
		}
		err = report_file(u, p, m, abi.elf_class ? NULL : &abi);
		if (err)
			return err;
	}
	if (vdso)
		report_vdso(u, p, vdso, &abi);
	u->nr_modules += p->nr_modules;
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0)
		return -ENOMEM;
	p->attached = dwfl_attach_state(p->dwfl, u->arch_elf, (pid_t)p->pid, &thread_callbacks, p);
	return 0;
}

/* ---- processes ------------------------------------------------------------- */

static void proc_free(struct unwinder *u, struct proc *p)
{
	HASH_DEL(u->procs, p);
	u->nr_procs--;
	proc_drop_dwfl(u, p);
	free(p->cfi_cache);
	free(p);
}

/* Free the least recently used process other than @keep; false if none. */
static bool evict_one(struct unwinder *u, const struct proc *keep)
{
	struct proc *p, *tmp, *oldest = NULL;

	HASH_ITER(hh, u->procs, p, tmp)
		if (p != keep && (!oldest || p->last_use < oldest->last_use))
			oldest = p;
	if (!oldest)
		return false;
	proc_free(u, oldest);
	return true;
}

/* The entry of @pid, created (evicting the least recently used) if new. */
static struct proc *proc_get(struct unwinder *u, uint32_t pid)
{
	struct proc *p;

	HASH_FIND(hh, u->procs, &pid, sizeof(pid), p);
	if (p)
		return p;
	if (u->nr_procs >= UNWIND_MAX_PROCS)
		evict_one(u, NULL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->cfi_cache = calloc(CFI_CACHE_SIZE, sizeof(*p->cfi_cache));
	if (!p->cfi_cache) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->sig = 0;
	HASH_ADD(hh, u->procs, pid, sizeof(p->pid), p);
	u->nr_procs++;
	return p;
}

struct unwinder *unwinder_new(void)
{
	static const unsigned char ident[EI_NIDENT] = {
		ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
	};
	struct unwinder *u = calloc(1, sizeof(*u));
	Elf64_Ehdr eh;

	if (!u)
		return NULL;
	elf_version(EV_CURRENT);
	u->files = unwind_files_new(0);
	if (!u->files) {
		free(u);
		return NULL;
	}
	/* a bare header is all ebl_openbackend() needs to pick x86_64 */
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ident, EI_NIDENT);
	eh.e_type = ET_CORE;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	memcpy(u->arch_ehdr, &eh, sizeof(eh));
	u->arch_elf = elf_memory((char *)u->arch_ehdr, sizeof(u->arch_ehdr));
	if (!u->arch_elf) {
		unwind_files_free(u->files);
		free(u);
		return NULL;
	}
	return u;
}

void unwinder_free(struct unwinder *u)
{
	struct proc *p, *tmp;

	if (!u)
		return;
	HASH_ITER(hh, u->procs, p, tmp)
		proc_free(u, p);
	elf_end(u->arch_elf);
	unwind_file_free(u->vdso_file);
	unwind_files_free(u->files);
	vdso_image_free(u->vdso);
	free(u);
}

void unwinder_forget(struct unwinder *u, uint32_t pid)
{
	struct proc *p;

	if (!u)
		return;
	HASH_FIND(hh, u->procs, &pid, sizeof(pid), p);
	if (p)
		proc_free(u, p);
}

void unwinder_stats(const struct unwinder *u, struct unwind_stats *st)
{
	struct unwind_files_stats fs;

	if (!u || !st)
		return;
	*st = u->stats;
	unwind_files_stats(u->files, &fs);
	st->files_opened = fs.opened;
}

/* ---- the walk --------------------------------------------------------------- */

/* Whether @pc (already adjusted for return addresses) has an FDE. */
static bool pc_has_cfi(struct proc *p, uint64_t pc)
{
	struct cfi_slot *slot = &p->cfi_cache[(pc ^ (pc >> 12)) & (CFI_CACHE_SIZE - 1)];
	Dwfl_Module *mod;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	Dwarf_Frame *fr;
	bool has = false;

	if (slot->key == pc + 1)
		return slot->has;
	mod = dwfl_addrmodule(p->dwfl, pc);
	if (mod) {
		cfi = dwfl_module_eh_cfi(mod, &bias);
		if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
			free(fr);
			has = true;
		}
		if (!has) {
			cfi = dwfl_module_dwarf_cfi(mod, &bias);
			if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
				free(fr);
				has = true;
			}
		}
	}
	slot->key = pc + 1;
	slot->has = has;
	return has;
}

/*
 * The 8 bytes of @p's code at @addr, from the ELF file of its module: the
 * section libdwfl finds for it, whose data libelf maps from the file (no
 * copy for code).  False when no section's file bytes hold all 8.
 */
static bool read_code(struct proc *p, uint64_t addr, uint64_t *val)
{
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, addr);
	Dwarf_Addr off = addr, bias;
	Elf_Scn *scn = mod ? dwfl_module_address_section(mod, &off, &bias) : NULL;
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_buf || off > d->d_size || d->d_size - off < sizeof(*val))
		return false;
	memcpy(val, (const char *)d->d_buf + off, sizeof(*val));
	return true;
}

/* Whether @pc is in a module (an ELF file) with CFI that does not cover it:
 * the BPF walk's "no-row" (not JIT code, not a file without any CFI). */
static bool pc_in_cfi_gap(struct proc *p, uint64_t pc)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;

	/* the per-process cache first: almost every sampled pc has CFI */
	if (pc_has_cfi(p, pc))
		return false;
	mod = dwfl_addrmodule(p->dwfl, pc);
	return mod && (dwfl_module_eh_cfi(mod, &bias) || dwfl_module_dwarf_cfi(mod, &bias));
}

/*
 * A leaf in a module's code without CFI (hand-written assembly: NASM's
 * x86inc kernels), the rule of the BPF walk (bpf/cfi_row.h): its caller
 * is the return address at [sp] if a call instruction precedes it
 * (cfi_walk_call_before()) and its module has CFI for it.  True with
 * *@caller set to the caller's registers (sp + 8, rbp unchanged); libdwfl
 * would step by frame pointer there instead, which such code does not
 * keep.
 */
static bool leaf_caller(struct proc *p, const struct sample *s, struct unwind_regs *caller)
{
	uint64_t ra, code;

	if (s->size < sizeof(ra) || !pc_in_cfi_gap(p, s->regs->ip))
		return false;
	memcpy(&ra, s->stack, sizeof(ra));
	if (ra < 4096 || !procmaps_find(s->maps, s->nr_maps, ra) || !pc_has_cfi(p, ra - 1) ||
	    !read_code(p, ra - 8, &code) || !cfi_walk_call_before(code))
		return false;
	*caller = *s->regs;
	caller->ip = ra;
	caller->sp += sizeof(ra);
	return true;
}

static int stop(struct sample *s, enum unwind_stop why)
{
	s->why = why;
	s->stopped = true;
	return DWARF_CB_ABORT;
}

/* Called by libdwfl for every frame, the initial one first. */
static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct proc *p = arg;
	struct sample *s = p->cur;
	Dwarf_Addr pc;
	Dwarf_Word sp;
	bool activation;

	/*
	 * Asking for @activation makes libdwfl unwind this frame's caller
	 * right now (it needs to know whether that is a signal frame), so
	 * the reads of that step happen from here on.
	 */
	s->read_beyond = false;
	s->read_failed = false;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return stop(s, UNWIND_ERROR);
	if (dwfl_frame_reg(state, DWARF_RSP, &sp) != 0)
		return stop(s, UNWIND_ERROR);
	if (!s->started && s->leaf_guessed) {	/* the leaf's caller, from [sp] */
		s->ips[s->n++] = pc;
		activation = false;	/* a return address: its CFI at pc - 1 */
	} else if (s->started) {	/* a caller frame: check the step that produced it */
		if (sp <= s->prev_sp)
			return stop(s, UNWIND_ERROR);
		if (!procmaps_find(s->maps, s->nr_maps, pc))
			return stop(s, UNWIND_UNMAPPED);
		if (!pc_has_cfi(p, s->prev_pc))
			s->fp_steps++;
		s->ips[s->n++] = pc;
	}
	s->started = true;
	s->prev_sp = sp;
	s->prev_pc = activation ? pc : pc - 1;
	if (s->n >= s->max)
		return stop(s, UNWIND_MAX_DEPTH);
	return DWARF_CB_OK;
}

int unwinder_unwind(struct unwinder *u, uint32_t pid, const struct bpfprof_mapping *maps,
		    size_t nr_maps, const struct unwind_regs *regs, const void *stack,
		    size_t stack_size, uint64_t *ips, size_t max, enum unwind_stop *why)
{
	struct unwind_regs caller;
	struct sample s;
	struct proc *p;
	uint64_t sig;
	int err, rc;

	if (why)
		*why = UNWIND_ERROR;
	if (!u || !regs || !ips || !max || (!stack && stack_size) || (!maps && nr_maps))
		return -EINVAL;
#if !defined(__x86_64__)
	return -ENOTSUP;
#endif
	memset(&s, 0, sizeof(s));
	s.pid = pid;
	s.regs = regs;
	s.stack_sp = regs->sp;
	s.stack = stack;
	s.size = regs->sp > UINT64_MAX - stack_size ? UINT64_MAX - regs->sp : stack_size;
	s.maps = maps;
	s.nr_maps = nr_maps;
	s.ips = ips;
	s.max = max;
	s.why = UNWIND_ERROR;
	ips[0] = regs->ip;
	s.n = 1;

	if (!procmaps_find(maps, nr_maps, regs->ip)) {
		s.why = UNWIND_UNMAPPED;
		goto out;
	}
	if (max == 1) {
		s.why = UNWIND_MAX_DEPTH;
		goto out;
	}
	if (!stack_size) {	/* every return address is beyond the copy */
		s.why = UNWIND_NO_STACK;
		goto out;
	}
	p = proc_get(u, pid);
	if (!p)
		return -ENOMEM;
	p->last_use = ++u->clock;
	sig = maps_signature(u, maps, nr_maps);
	if (!p->dwfl || sig != p->sig) {
		err = proc_build(u, p, maps, nr_maps);
		if (err) {
			proc_free(u, p);
			return err;
		}
		p->sig = sig;
		while (u->nr_modules > UNWIND_MAX_MODULES && evict_one(u, p))
			;
	}
	if (!p->attached) {
		s.why = UNWIND_ERROR;
		goto out;
	}
	if (leaf_caller(p, &s, &caller)) {
		s.regs = &caller;
		s.leaf_guessed = true;
		u->stats.leaf_guesses++;
	}
	p->cur = &s;
	rc = dwfl_getthread_frames(p->dwfl, (pid_t)pid, frame_cb, p);
	p->cur = NULL;
	if (s.stopped)
		;
	else if (rc == 0 && !s.read_failed)
		s.why = UNWIND_END;
	else if (rc == 0)
		/*
		 * elfutils (0.188) treats a return address it could not read
		 * like an undefined one, i.e. as the outermost frame.
		 */
		s.why = s.read_beyond ? UNWIND_TRUNCATED : UNWIND_ERROR;
	else if (s.started && !pc_has_cfi(p, s.prev_pc))
		s.why = UNWIND_NO_CFI;
	else if (s.read_beyond)
		s.why = UNWIND_TRUNCATED;
	else
		s.why = UNWIND_ERROR;
	u->stats.fp_steps += s.fp_steps;
out:
	u->stats.samples++;
	u->stats.frames += s.n;
	u->stats.stops[s.why]++;
	if (why)
		*why = s.why;
	return (int)s.n;
}
