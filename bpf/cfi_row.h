/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * cfi_row.h - the unwind table row of `--call-graph auto` (issue 15),
 * shared by the BPF program that walks user stacks and the collector that
 * builds the rows from .eh_frame / .debug_frame (user/unwind/cfi_table.c).
 * Plain fixed-width types only, no libc; the BPF side includes vmlinux.h
 * first, userspace <linux/types.h> through this file.
 *
 * One table per ELF file: an array of struct cfi_row sorted by pc,
 * strictly increasing.  A row holds from its pc up to (not including) the
 * next row's pc; the last row of a table is always a CFI_KIND_STOP_NO_ROW
 * marker at the end of the last FDE, and gaps between FDEs hold such a
 * marker too, so a binary search for "the last row with pc <= address"
 * never lands on the row of another function.  An address below the
 * first row has no row either.
 *
 * Addresses: row pcs are ELF virtual addresses of the file (as in its
 * program headers and symbol table), i.e. runtime address - load bias.
 * 32 bits: the builder leaves out FDEs reaching at or beyond 4 GiB (and
 * counts them); no ELF file we have met comes near that.
 *
 * The walk step (x86-64), for a frame with registers ip, sp, bp, bx, looking
 * up ip (the first frame and a frame reached through a signal frame) or
 * ip - 1 (any other frame: ip is a return address, ip - 1 is inside the
 * call instruction):
 *
 *   CFA  = the kind's rule below (CFA: canonical frame address, the
 *          caller's sp; some kinds read it from the frame)
 *   ra   = *(u64 *)(CFA - 8)    the return address: always there on
 *                               x86-64 (the builder checks every row;
 *                               rows with another rule are
 *                               CFI_KIND_STOP_RA)
 *   bp'  = bp                   if rbp == CFI_RBP_SAME
 *          unknown              if rbp == CFI_RBP_LOST
 *          *(u64 *)(CFA + 8 * rbp)  otherwise (rbp < 0: below the CFA)
 *   bx'  = bx, unknown, or *(u64 *)(CFA - 8 * (k + 1)) by CFI_ROW_RBX()
 *   caller: ip = ra, sp = CFA, bp = bp', bx = bx'
 *
 * ra == 0 ends the walk (outermost frame).  user/unwind/cfi_walk.c is the
 * reference implementation of the whole walk.
 *
 * A leaf without CFI: when the first frame's ip has no row (hand-written
 * assembly built without CFI, such as NASM's x86inc functions in dav1d,
 * x265 and FFmpeg, most of which save no register and keep no frame),
 * the walk takes *(u64 *)sp as its return address (caller: ip = that,
 * sp = sp + 8, bp unchanged), but only if the code before it is a call
 * (E8 rel32, or FF /2 through a register or memory, as DSP tables are
 * called) and the row for it - 1 lets the walk go on: a return address
 * into code with CFI.
 *
 * Any other frame without a row: code built with frame pointers and no
 * CFI (crtstuff's __do_global_dtors_aux, under every library's
 * destructors at exit) keeps its caller's return address at bp + 8 and
 * the caller's rbp at bp.  If rbp is known, not below sp and at most
 * CFI_FP_STEP_RANGE above it, the walk takes those (caller: ip =
 * *(bp + 8), sp = bp + 16, bp = *bp, rbx lost) under the same two
 * conditions.  Otherwise the walk stops (CFI_WALK_NO_ROW).  The first
 * frame is never stepped so: a leaf may not have set up a frame (yet),
 * and its rbp is then its caller's frame pointer, which would drop that
 * caller.
 */
#ifndef BPFPROF_CFI_ROW_H
#define BPFPROF_CFI_ROW_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a row says; values below CFI_KIND_FIRST_STOP let the walk go on. */
enum cfi_kind {
	/* CFA = sp + 8 * cfa */
	CFI_KIND_RSP = 0,
	/* CFA = bp + 8 * cfa (bp must be known) */
	CFI_KIND_RBP = 1,
	/*
	 * A PLT entry (the linker's expression CFA):
	 *   CFA = sp + 8 * cfa + ((ip & 15) >= rbp ? 8 : 0)
	 * where ip is the frame's real ip (not ip - 1) and the rbp field
	 * holds the threshold (11 for the classic 16-byte entries: the
	 * push of the entry's index happens at offset 6, the jmp at 11);
	 * bp is unchanged.
	 */
	CFI_KIND_PLT = 2,
	/*
	 * A signal trampoline (glibc's __restore_rt; sp points at the
	 * kernel's struct ucontext): the interrupted frame's registers are
	 *   sp' = *(u64 *)(sp + 8 * cfa)        (uc_mcontext rsp: 160)
	 *   ip' = *(u64 *)(sp + 8 * cfa + 8)    (uc_mcontext rip: 168)
	 *   bp' = *(u64 *)(sp + 8 * rbp)        (uc_mcontext rbp: 120)
	 * and ip' is looked up as is, not ip' - 1.  No sp monotony check.
	 * The walks read its cfa field through CFI_DEREF_OFF() (the same
	 * value: 20) and CFI_DEREF_ADD() (0), as the *_DEREF kinds' below.
	 */
	CFI_KIND_SIGNAL = 3,
	/*
	 * A CFA saved in the frame, by a function that realigns its stack
	 * (the expression DW_OP_bregN off; DW_OP_deref [; DW_OP_plus_uconst
	 * add]): OpenSSL's and GnuTLS's assembly (perlasm's
	 * ".cfi_cfa_expression %rsp+off,deref,+8"), gcc's DRAP functions
	 * ("*(rbp - off)"):
	 *   CFA = *(u64 *)(sp + 8 * off) + 8 * add     (CFI_KIND_RSP_DEREF)
	 *   CFA = *(u64 *)(bp + 8 * off) + 8 * add     (CFI_KIND_RBP_DEREF,
	 *                                               bp must be known)
	 * with off and add packed in the cfa field (CFI_DEREF_OFF(),
	 * CFI_DEREF_ADD()); the rbp field as for CFI_KIND_RSP.
	 */
	CFI_KIND_RSP_DEREF = 4,
	CFI_KIND_RBP_DEREF = 5,
	/*
	 * gcc's DRAP functions (stack realigned for over-aligned locals:
	 * AVX2 kernels of x265, aom, SVT-AV1, simdutf in node, libgfortran's
	 * matmul): the CFA as CFI_KIND_RBP_DEREF, and the caller's rbp saved
	 * at bp + 8 * rbp (their "DW_CFA_expression: rbp (DW_OP_breg6 0)"),
	 * not CFA-relative: rbp 0 is an offset here, never "same".
	 */
	CFI_KIND_DRAP = 6,
	/*
	 * A frame larger than CFI_KIND_RSP's field holds (256 KiB): rustc's
	 * create_and_enter_global_ctxt keeps its 540,128-byte GlobalCtxt on
	 * the stack, under every stack of a compilation.
	 *   CFA = sp + 8 * ((u16)cfa + CFI_RSP_FAR_BASE)
	 * i.e. 256 KiB to 768 KiB - 8; the rbp field as for CFI_KIND_RSP.
	 */
	CFI_KIND_RSP_FAR = 7,
	/*
	 * CFA = rbx + 8 * cfa (rbx must be known): glibc's lazy-binding
	 * trampolines (_dl_runtime_resolve_xsavec and its siblings in
	 * ld.so) align the stack for xsave and keep their CFA in rbx.
	 * The rbp field as for CFI_KIND_RSP.
	 */
	CFI_KIND_RBX = 8,
	/*
	 * CFA = R + 8 * cfa, R another general register (DWARF number 0 to
	 * 15: rax, rdx, rcx, rsi, rdi, r8 to r15), its number in the row's
	 * high four bits (CFI_ROW_REG()), where the other kinds keep rbx's
	 * slot: the caller's rbx is lost.  R's value is the sample's: in
	 * the first frame any R; in a later one (not past a signal frame)
	 * a caller-saved R only (CFI_CALLER_SAVED), which CFI never says a
	 * callee saved, so that unwinders following libgcc's take it as
	 * unchanged, and only for a CFA at most CFI_FP_STEP_RANGE above
	 * sp; else the walk stops (CFI_WALK_UNSUPPORTED, and
	 * CFI_WALK_BAD_STEP out of range).  OpenSSL's assembly keeps its
	 * caller's sp in a register for a whole function: ChaCha20's
	 * "mov %rsp,%r9", CFA = r9 + 8, a leaf; AES-GCM's aesni_gcm_encrypt
	 * in rax across its calls to _aesni_ctr32_ghash_6x, which leaves
	 * rax alone.  gcc's DRAP prologues keep it in r10.  The rbp field
	 * as for CFI_KIND_RSP.
	 */
	CFI_KIND_REG = 9,

	/* Stop rows: the walk ends here, for the reason in the name. */
	CFI_KIND_STOP_NO_ROW = 10,	/* no FDE covers this pc (gap, end) */
	CFI_KIND_STOP_OUTERMOST = 11,	/* return address undefined: _start,
					 * clone()'s child, thread start */
	CFI_KIND_STOP_EXPRESSION = 12,	/* a DWARF expression not recognised */
	CFI_KIND_STOP_REGISTER = 13,	/* CFA from a register that is no
					 * general register */
	CFI_KIND_STOP_RANGE = 14,	/* an offset that is not a multiple
					 * of 8 or does not fit its field */
	CFI_KIND_STOP_RA = 15,		/* return address not at CFA - 8 */
	CFI_KIND_NR = 16,
};

/*
 * struct cfi_row.kind holds two fields: the enum cfi_kind in its low four
 * bits (CFI_ROW_KIND()), and in its high four where the caller's rbx is
 * (CFI_ROW_RBX()), which CFI_KIND_RBX rows need (CFI_KIND_REG rows keep
 * their register there instead, CFI_ROW_REG()):
 *   CFI_RBX_SAME (0)   rbx keeps its value in the caller
 *   1 .. 14 (k)        saved at CFA - 8 * (k + 1), i.e. CFA - 16 down to
 *                      CFA - 120 (compilers push it within the first
 *                      seven slots below the return address)
 *   CFI_RBX_LOST (15)  not known: CFI says undefined or a rule the field
 *                      cannot hold, a frame-pointer or JIT row, a signal
 *                      frame
 * Stop rows have 0 there.
 */
#define CFI_KIND_BITS 4
#define CFI_KIND_MASK ((1u << CFI_KIND_BITS) - 1)
#define CFI_RBX_SAME 0
#define CFI_RBX_LOST 15
#define CFI_ROW_KIND(r) ((unsigned int)(r)->kind & CFI_KIND_MASK)
#define CFI_ROW_RBX(r) ((unsigned int)(r)->kind >> CFI_KIND_BITS)
#define CFI_ROW_KIND_RBX(kind, rbx) ((__u8)((kind) | (rbx) << CFI_KIND_BITS))
/* Where slot @k (1 .. 14) keeps rbx: bytes from the CFA. */
#define CFI_RBX_SLOT_OFF(k) (-8 * ((int)(k) + 1))
/* CFI_KIND_REG rows: the DWARF number of the CFA's register, in the
 * high four bits (rbx is then lost). */
#define CFI_ROW_REG(r) CFI_ROW_RBX(r)
#define CFI_ROW_KIND_REG(reg) CFI_ROW_KIND_RBX(CFI_KIND_REG, reg)

/*
 * Bytes of the user stack the BPF walk reads at once from sp when it
 * starts (bpf/cfi_walk.bpf.h): the return addresses and saved registers
 * that lie there come from this copy instead of a bpf_probe_read_user()
 * each (~0.1 us apiece on the machine of docs/PERFORMANCE.md, "Issue
 * 17"); those beyond it are read one by one.  CFI_STACK_WINDOW_FIRST
 * bytes, or where the thread's walk memo (bpf/cfi_memo.bpf.h) says where
 * its stack ended last time, up to there, at most CFI_STACK_WINDOW.
 * Where the stack ends sooner (an unreadable page), the copy is the rest
 * of sp's page.
 */
#define CFI_STACK_WINDOW 4096
#define CFI_STACK_WINDOW_FIRST 2048

/*
 * A frame without a row other than the first is stepped by its frame
 * pointer only if bp lies at most this many bytes above its sp (bytes): a
 * frame's own, not a value rbp kept from elsewhere (another stack, data).
 */
#define CFI_FP_STEP_RANGE (64u * 1024)

/* The caller-saved general registers by DWARF number, a bit each: rax,
 * rdx, rcx, rsi, rdi, r8 to r11 (CFI_KIND_REG beyond the first frame). */
#define CFI_CALLER_SAVED 0x0f37u

/* CFI_KIND_RSP_FAR's CFA offset, in 8-byte units, from its cfa field:
 * the units past CFI_KIND_RSP's largest (32767). */
#define CFI_RSP_FAR_BASE 32768
#define CFI_RSP_FAR_UNITS(cfa) ((__u64)(__u16)(cfa) + CFI_RSP_FAR_BASE)

/*
 * The cfa field of the two *_DEREF kinds and CFI_KIND_DRAP: the offset of
 * the saved CFA from the base register in its low 11 bits (signed, 8-byte
 * units: +-8 KiB), the amount added to it in its high 5 (8-byte units: 0
 * to 248 bytes).
 */
#define CFI_DEREF_OFF_BITS 11
#define CFI_DEREF_ADD_MAX 31
#define CFI_DEREF_OFF(cfa) ((__s16)((__u16)(cfa) << (16 - CFI_DEREF_OFF_BITS)) >> \
			    (16 - CFI_DEREF_OFF_BITS))
#define CFI_DEREF_ADD(cfa) ((__u16)(cfa) >> CFI_DEREF_OFF_BITS)
#define CFI_DEREF_CFA(off, add) \
	((__s16)(((__u16)(add) << CFI_DEREF_OFF_BITS) | \
		 ((__u16)(off) & ((1u << CFI_DEREF_OFF_BITS) - 1))))

#define CFI_KIND_FIRST_STOP CFI_KIND_STOP_NO_ROW

/*
 * A lazy table's FDE whose rows are not built yet (user/unwind/cfi_lazy.c):
 * a CFI_KIND_STOP_NO_ROW row at the FDE's start with this cfa (gap markers
 * have 0), holding up to the next row (the FDE's end or the next FDE).
 * Its rbp field says where the FDE is: 0 .eh_frame, 1 .debug_frame.  A
 * walk that meets one stops as in a mapping without a table
 * (CFI_WALK_NO_TABLE, no step guessed) and, on the BPF side, sends the
 * sample's stack as a copy (bpf/stack_copy.bpf.h, cfi_copy_instead()):
 * the collector builds the FDE's rows while it unwinds the copy, and puts
 * them into the table the process's mappings name.
 */
#define CFI_UNBUILT_FDE 1
#define CFI_ROW_UNBUILT(r) (CFI_ROW_KIND(r) == CFI_KIND_STOP_NO_ROW && \
			    (r)->cfa == CFI_UNBUILT_FDE)

/* Special values of struct cfi_row.rbp. */
#define CFI_RBP_SAME 0		/* rbp keeps its value in the caller */
#define CFI_RBP_LOST (-128)	/* the caller's rbp is not known (CFI says
				 * undefined, or a rule rows cannot hold) */

/*
 * One row: 8 bytes, no padding.  Offsets are in units of 8 bytes (every
 * offset in x86-64 compiler output is a multiple of 8; others become
 * CFI_KIND_STOP_RANGE rows), so cfa reaches +-256 KiB and rbp +-1 KiB.
 */
struct cfi_row {
	__u32 pc;	/* first ELF virtual address (bytes) the row holds for */
	__u8 kind;	/* enum cfi_kind | rbx slot << 4 (CFI_ROW_KIND(),
			 * CFI_ROW_RBX()) */
	__s8 rbp;	/* caller's rbp saved at CFA + 8 * rbp; CFI_RBP_SAME,
			 * CFI_RBP_LOST; PLT: the threshold; SIGNAL: offset of
			 * the saved rbp from sp, 8-byte units */
	__s16 cfa;	/* CFA offset from the kind's base, 8-byte units */
};

/*
 * Steps of the binary search over one table: enough for 2^32 rows, so a
 * BPF loop bounded by this constant always finishes the search.
 */
#define CFI_SEARCH_STEPS 32

/* struct cfi_mapping.table of a mapping without a table (yet). */
#define CFI_NO_TABLE 0xffffffffu

/*
 * The kernel side keeps tables in chunks: BPF array maps of rows, each
 * holding the tables of many files one after the other (a table never
 * spans two chunks), in the slots of the "cfi_tables" map.  Creating a
 * chunk costs an RCU grace period (an update of a map of maps), so they
 * are big: CFI_CHUNK_ROWS rows, or one table's rows if that is larger
 * (the collector's first chunk is a quarter of that: cfi_loader.c).
 */
#define CFI_MAX_CHUNKS 1024
#define CFI_CHUNK_ROWS (512u * 1024)	/* 4 MiB */

/*
 * One executable mapping of a process, as the walk sees it: sorted by
 * start and not overlapping in a process's array.  ELF virtual address
 * = runtime address - bias.
 */
struct cfi_mapping {
	__u64 start;	/* first runtime address */
	__u64 end;	/* one past the last runtime address */
	__u64 bias;	/* load bias (bytes, wraps for ET_EXEC below 0) */
	__u32 table;	/* the table: BPF side, the chunk holding it; the
			 * reference walk (cfi_walk.c), an index into its
			 * tables; CFI_NO_TABLE if none */
	__u32 first;	/* BPF side: index of the table's first row in its
			 * chunk (the reference walk ignores it) */
	__u32 rows;	/* rows in the table (0 without one) */
	__u32 pad;
};

/*
 * Executable mappings of one process the walk sees at most (a power of
 * two: the BPF side masks indexes with it), and the steps of the binary
 * search over them (log2 + 1).
 */
#define CFI_MAX_MAPPINGS 512
#define CFI_MAPPING_SEARCH_STEPS 10

/*
 * The value of the BPF "cfi_procs" map, keyed by tgid: the process's
 * executable mappings, maps[0..nr) sorted by start, not overlapping.
 * Written whole by the collector (user/unwind/cfi_loader.c) whenever the
 * process's mappings change.
 */
struct cfi_process {
	__u32 nr;	/* valid entries in maps */
	__u32 pad;
	struct cfi_mapping maps[CFI_MAX_MAPPINGS];
};

/*
 * Why a walk ended: the reference walk's result (user/unwind/cfi_walk.h)
 * and the first slots of the BPF program's per-CPU walk counters (the
 * "cfi_vars" value begins with __u64 counts[CFI_WALK_COUNTERS]).
 */
enum cfi_walk_stop {
	CFI_WALK_END = 0,	/* outermost frame: return address undefined or 0 */
	CFI_WALK_MAX_DEPTH,	/* --max-stack frames written */
	CFI_WALK_UNMAPPED,	/* a pc in no known mapping (table not loaded yet,
				 * or anonymous code such as a JIT's) */
	CFI_WALK_NO_TABLE,	/* a pc in a mapping without a table (yet), or
				 * in an FDE not built yet (CFI_UNBUILT_FDE) */
	CFI_WALK_NO_ROW,	/* a pc no FDE covers */
	CFI_WALK_UNSUPPORTED,	/* a stop row: a rule rows cannot express */
	CFI_WALK_READ_FAULT,	/* CFA or return address not readable */
	CFI_WALK_RBP_UNKNOWN,	/* CFA from rbp, whose value was lost */
	CFI_WALK_BAD_STEP,	/* the stack did not grow toward the caller */
	CFI_WALK_NO_PROCESS,	/* BPF only: no mappings of the process loaded yet */
	CFI_WALK_STOP_NR,
};

/*
 * The BPF walk's per-CPU cache of the rows it found (bpf/cfi_walk.bpf.h,
 * "cfi_row_cache"): direct-mapped by (table, address), CFI_ROW_CACHE_SLOTS
 * slots (a power of two).  A row found stays right: a table's rows never
 * change once a mapping names them, but for a lazy table's markers of
 * FDEs not built yet (CFI_UNBUILT_FDE), which become the FDE's rows when
 * the collector lays the table out again in the same place; so markers
 * are never cached.
 * Lookups are counted in two slots of the walk counters after the stop
 * reasons: frames whose row came from the cache, and those searched.  A
 * third slot counts the walks' reads of user memory outside the copy of
 * the stack they start with (bpf/cfi_walk.bpf.h, CFI_STACK_WINDOW): one
 * bpf_probe_read_user() of 8 bytes each; a fourth their binary searches
 * of the process's mappings (a frame in the mapping of the frame before
 * it needs none); a fifth the callers of leaves without CFI taken from
 * [sp] (CFI_LEAF_CALLER_GUESSES, below); a sixth the callers of other
 * frames without CFI taken by their frame pointer (CFI_FP_STEPS).
 */
#define CFI_ROW_CACHE_SLOTS 1024
#define CFI_ROW_CACHE_HITS CFI_WALK_STOP_NR
#define CFI_ROW_CACHE_MISSES (CFI_WALK_STOP_NR + 1)
#define CFI_STACK_READS (CFI_WALK_STOP_NR + 2)
#define CFI_MAP_SEARCHES (CFI_WALK_STOP_NR + 3)
#define CFI_LEAF_CALLER_GUESSES (CFI_WALK_STOP_NR + 4)
#define CFI_FP_STEPS (CFI_WALK_STOP_NR + 5)
#define CFI_COMMON_STEPS (CFI_WALK_STOP_NR + 6)	/* steps by the common rules
						 * alone (cfi_step_common()) */
#define CFI_MEMO_FRAMES_TAKEN (CFI_WALK_STOP_NR + 7)	/* frames written from a
							 * thread's walk memo
							 * (bpf/cfi_memo.bpf.h) */
#define CFI_MEMO_FAILS (CFI_WALK_STOP_NR + 8)	/* memo frames met whose stack
						 * words had changed */
#define CFI_COPIES_WITHHELD (CFI_WALK_STOP_NR + 9)	/* walks that would have gone
							 * out as stack copies, but
							 * the "samples" ring had no
							 * room for two records
							 * (cfi_copy_instead()) */
#define CFI_WALK_COUNTERS (CFI_WALK_STOP_NR + 10)	/* walk counters, per CPU */

/*
 * Step 3a of the walk (a leaf without CFI, above): whether the last @k
 * bytes of @code, the 8 bytes before a return address as read from
 * memory (little endian), are a call through a register or memory: FF /2
 * whose ModRM, SIB and displacement make it exactly @k bytes long (2, 3,
 * 4, 6 or 7; 1 <= @k <= 7).  A call rel32 is E8 at the fifth byte from
 * the end.  The BPF walk (bpf/cfi_walk.bpf.h) and the reference walk
 * (user/unwind/cfi_walk.c) decode it with this one function.
 */
static inline int cfi_call_indirect_len(__u64 code, __u64 k)
{
	__u64 modrm = (code >> (72 - 8 * k)) & 0xff, mod = modrm >> 6, rm = modrm & 7;
	__u64 sib = k >= 3 ? (code >> (80 - 8 * k)) & 0xff : 0;
	__u64 len = 2;

	if (((code >> (64 - 8 * k)) & 0xff) != 0xff || (modrm & 0x38) != 0x10)
		return 0;
	if (mod != 3 && rm == 4)
		len += 1;
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5) || (mod == 0 && rm == 4 && (sib & 7) == 5))
		len += 4;
	return len == k;
}

#define CFI_CALL_REL32(code) ((((code) >> 24) & 0xff) == 0xe8)

#endif /* BPFPROF_CFI_ROW_H */
