// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_symbolize.c - unit tests of the symbolizer (user/symbols/): the
 * test binary's own functions (name, vaddr, DWARF file:line), libc,
 * libstdc++'s C++ names (demangled or not), assembly labels outside and
 * inside functions, a deleted library copy,
 * special mappings, vDSO functions (ours, another process's, and images
 * that are not ours), processes that are gone, kernel addresses, build-ids
 * against readelf and the loaded notes, and malformed ELF files.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf_image.h"
#include "rng.h"
#include "symbols/buildid.h"
#include "symbols/symbolize.h"
#include "targets/procmaps.h"

/* ---- a function with known lines --------------------------------------- */

static volatile uintptr_t caller_ip;
static volatile unsigned call_line;

__attribute__((noinline)) static void record_return_address(void)
{
	caller_ip = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static const unsigned target_line = __LINE__ + 1;
__attribute__((noinline)) int bpfprof_test_target(int x) {
	call_line = __LINE__; record_return_address();
	return x + (int)call_line;
}

/* ---- helpers ------------------------------------------------------------ */

/* Load bias of the object containing @addr (vaddr = addr - bias). */
struct bias_query {
	uintptr_t addr;
	uintptr_t bias;
	const ElfW(Phdr) *phdr;
	size_t phnum;
	int found;
};

static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct bias_query *q = data;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_memsz) {
			q->bias = info->dlpi_addr;
			q->phdr = info->dlpi_phdr;
			q->phnum = info->dlpi_phnum;
			q->found = 1;
			return 1;
		}
	}
	return 0;
}

static uintptr_t load_bias(uintptr_t addr)
{
	struct bias_query q = { .addr = addr };

	dl_iterate_phdr(bias_cb, &q);
	assert_true(q.found);
	return q.bias;
}

/* libc's own qsort, also when a sanitizer runtime interposes it. */
static uintptr_t libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *p;

	assert_non_null(h);
	p = dlsym(h, "qsort");
	assert_non_null(p);
	dlclose(h);
	return (uintptr_t)p;
}

static void read_self_maps(struct procmaps *m)
{
	assert_int_equal(procmaps_read((uint32_t)getpid(), m), 0);
	assert_true(m->nr > 0);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static void self_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	assert_true(n > 0);
	buf[n] = '\0';
}

/* ---- tests -------------------------------------------------------------- */

/*
 * Assembly labels: a local label without a type outside any function (as
 * ld.so's _start and _dl_start_user), named as perf names it; one inside
 * a sized function, which keeps the function's name.
 */
__asm__(".text\n"
	".p2align 4\n"
	"bpfprof_test_label:\n"		/* local, STT_NOTYPE */
	"	nop\n	nop\n	ret\n"
	".p2align 4\n"
	".type bpfprof_test_asm_fn, @function\n"
	"bpfprof_test_asm_fn:\n"
	"	nop\n"
	"bpfprof_test_inner_label:\n"	/* local, inside the function */
	"	nop\n	nop\n	ret\n"
	".size bpfprof_test_asm_fn, . - bpfprof_test_asm_fn\n");
extern const char bpfprof_test_label[], bpfprof_test_asm_fn[];

static void test_local_labels(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	uintptr_t label = (uintptr_t)bpfprof_test_label, fn = (uintptr_t)bpfprof_test_asm_fn;
	uintptr_t bias = load_bias(label);

	assert_non_null(s);
	read_self_maps(&m);
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, label + 1, &sym), 0);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "bpfprof_test_label");
	assert_int_equal(sym.function_start, label - bias);
	/* past the inner label (fn + 1): still the sized function */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, fn + 2, &sym), 0);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "bpfprof_test_asm_fn");
	assert_int_equal(sym.function_start, fn - bias);
	procmaps_free(&m);
	symbolizer_free(s);
}

static void test_own_function(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym, again;
	struct procmaps m;
	uintptr_t ip = (uintptr_t)&bpfprof_test_target;
	uintptr_t bias = load_bias(ip);
	char exe[4096];
	int n;

	assert_non_null(s);
	n = bpfprof_test_target(1);
	assert_int_equal(n, 1 + (int)call_line);
	self_exe(exe, sizeof(exe));
	read_self_maps(&m);

	/* the entry: the line of the function's opening */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, ip, &sym), 0);
	assert_string_equal(sym.module, exe);
	assert_ptr_equal(sym.mapping, procmaps_find(m.maps, m.nr, ip));
	assert_int_equal(sym.module_offset, ip - bias);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, "bpfprof_test_target");
	assert_int_equal(sym.function_start, ip - bias);
	assert_non_null(sym.file);
	assert_true(ends_with(sym.file, "test_symbolize.c"));
	assert_int_equal(sym.line, target_line);

	/* the call inside it: return address - 1 is in the call's line */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, caller_ip - 1,
					 &sym), 0);
	assert_string_equal(sym.function, "bpfprof_test_target");
	assert_int_equal(sym.function_start, ip - bias);
	assert_int_equal(sym.module_offset, caller_ip - 1 - bias);
	assert_int_equal(sym.line, call_line);
	assert_true(ends_with(sym.file, "test_symbolize.c"));

	/* cached: identical strings */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, caller_ip - 1,
					 &again), 0);
	assert_ptr_equal(again.function, sym.function);
	assert_ptr_equal(again.file, sym.file);
	assert_ptr_equal(again.module, sym.module);

	/* a static function, through pid 0 (path only) */
	ip = (uintptr_t)&record_return_address;
	assert_int_equal(symbolizer_user(s, 0, m.maps, m.nr, ip, &sym), 0);
	assert_string_equal(sym.function, "record_return_address");
	assert_int_equal(sym.function_start, ip - bias);
	procmaps_free(&m);
	/* strings outlive the maps they came from */
	assert_string_equal(sym.module, exe);
	symbolizer_free(s);
}

static void test_libc(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	uintptr_t ip = libc_qsort();
	uintptr_t bias = load_bias(ip);
	const struct bpfprof_mapping *map;
	uint64_t a, resolved = 0, n = 0;
	int fds = count_fds();

	read_self_maps(&m);
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, ip, &sym), 0);
	assert_non_null(strstr(sym.module, "libc.so"));
	assert_string_equal(sym.function, "qsort");
	assert_int_equal(sym.module_offset, ip - bias);
	assert_int_equal(sym.function_start, ip - bias);
	assert_string_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, ip + 3, &sym) ?
			    "err" : sym.function, "qsort");

	/* with libc's separate debug file installed (libc6-dbg), lines too */
	{
		uint8_t bid[64];
		char dbg[256];
		int bn = elf_build_id(sym.mapping->path, bid, sizeof(bid)), i, k;

		assert_true(bn > 1);
		k = snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", bid[0]);
		for (i = 1; i < bn; i++)
			k += snprintf(dbg + k, sizeof(dbg) - (size_t)k, "%02x", bid[i]);
		snprintf(dbg + k, sizeof(dbg) - (size_t)k, ".debug");
		if (access(dbg, R_OK) == 0) {
			assert_non_null(sym.file);
			assert_true(sym.line > 0);
			print_message("qsort+3: %s:%u (debug file %s)\n", sym.file, sym.line, dbg);
		}
	}

	/* every 64th byte of libc's text: consistent answers, no crash */
	map = procmaps_find(m.maps, m.nr, ip);
	assert_non_null(map);
	for (a = map->start; a < map->end; a += 64, n++) {
		assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, a, &sym), 0);
		assert_ptr_equal(sym.mapping, map);
		assert_int_equal(sym.module_offset, a - bias);
		if (sym.function) {
			assert_true(sym.function_start <= sym.module_offset);
			resolved++;
		}
	}
	assert_true(resolved > n / 2);
	procmaps_free(&m);
	symbolizer_free(s);
	assert_int_equal(count_fds(), fds);	/* Dwfl closed every file */
}

/*
 * A C++ function of libstdc++ (loaded here for it: bpfprof links none),
 * demangled by default, as its symbol table has it with
 * symbolizer_set_demangle(false).
 */
static void test_cxx_names(void **state)
{
	static const char raw[] = "_ZNKSt9type_info14__is_pointer_pEv";
	void *h = dlopen("libstdc++.so.6", RTLD_NOW);
	struct symbolizer *s = symbolizer_new(), *r = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	uintptr_t ip;

	(void)state;
	assert_non_null(h);
	ip = (uintptr_t)dlsym(h, raw);
	assert_true(ip != 0);
	read_self_maps(&m);
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, ip, &sym), 0);
	assert_non_null(strstr(sym.module, "libstdc++"));
	assert_string_equal(sym.function, "std::type_info::__is_pointer_p() const");
	symbolizer_set_demangle(r, false);
	assert_int_equal(symbolizer_user(r, (uint32_t)getpid(), m.maps, m.nr, ip, &sym), 0);
	assert_string_equal(sym.function, raw);
	procmaps_free(&m);
	symbolizer_free(s);
	symbolizer_free(r);
	dlclose(h);
}

static void test_special_mappings(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	void *anon = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const struct bpfprof_mapping *map;

	assert_true(anon != MAP_FAILED);
	read_self_maps(&m);
	if (vdso) {
		assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, vdso + 16,
						 &sym), 0);
		assert_string_equal(sym.module, "[vdso]");
		assert_null(sym.function);
		assert_null(sym.file);
		assert_int_equal(sym.module_offset, 16);
	}
	map = procmaps_find(m.maps, m.nr, (uintptr_t)anon + 100);
	assert_non_null(map);
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr,
					 (uintptr_t)anon + 100, &sym), 0);
	assert_string_equal(sym.module, map->path);	/* "" unless merged */
	assert_null(sym.function);
	assert_ptr_equal(sym.mapping, map);

	/* no mapping */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, 0x1000, &sym),
			 -ENOENT);
	assert_null(sym.module);
	assert_null(sym.function);
	assert_int_equal(symbolizer_user(s, 1, NULL, 0, 0x1000, &sym), -ENOENT);
	assert_int_equal(symbolizer_user(NULL, 1, m.maps, m.nr, 0x1000, &sym), -EINVAL);
	procmaps_free(&m);
	munmap(anon, 65536);
	symbolizer_free(s);
	symbolizer_free(NULL);
}

/* A copy of libm, loaded and unlinked: "(deleted)" path with spaces. */
static void test_deleted_library(void **state)
{
	static const char *cands[] = {
		"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
		"/lib/aarch64-linux-gnu/libm.so.6", "/usr/lib64/libm.so.6", "/lib64/libm.so.6",
	};
	char dir[] = "/tmp/bpfprof-sym-XXXXXX", path[256], buf[65536];
	const char *src = NULL;
	struct symbolizer *s;
	struct bpfprof_symbol sym;
	struct procmaps m;
	const struct bpfprof_mapping *map;
	uint8_t want[64];
	void *h, *fn;
	int in, out, wn;
	ssize_t r;
	size_t i;

	for (i = 0; i < sizeof(cands) / sizeof(cands[0]) && !src; i++)
		if (access(cands[i], R_OK) == 0)
			src = cands[i];
	if (!src)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib m copy.so", dir);
	in = open(src, O_RDONLY);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(in >= 0 && out >= 0);
	while ((r = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)r), r);
	close(in);
	close(out);
	wn = elf_build_id(path, want, sizeof(want));
	assert_true(wn > 0);

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(h);
	fn = dlsym(h, "cbrt");	/* not an IFUNC: dlsym gives its own address */
	assert_non_null(fn);
	unlink(path);
	rmdir(dir);

	read_self_maps(&m);
	map = procmaps_find(m.maps, m.nr, (uintptr_t)fn);
	assert_non_null(map);
	assert_true(ends_with(map->path, "/lib m copy.so (deleted)"));
	assert_int_equal(procmaps_add_build_ids(&m, (uint32_t)getpid()), 0);
	assert_int_equal(map->build_id_size, (uint32_t)wn);
	assert_memory_equal(map->build_id, want, (size_t)wn);

	s = symbolizer_new();
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, (uintptr_t)fn,
					 &sym), 0);
	assert_string_equal(sym.module, map->path);
	assert_string_equal(sym.function, "cbrt");
	assert_int_equal(sym.module_offset, (uintptr_t)fn - load_bias((uintptr_t)fn));
	symbolizer_free(s);

	/* without the process route the deleted file cannot be opened */
	s = symbolizer_new();
	assert_int_equal(symbolizer_user(s, 0, m.maps, m.nr, (uintptr_t)fn, &sym), 0);
	assert_null(sym.function);
	assert_int_equal(sym.module_offset, (uintptr_t)fn - map->start + map->pgoff);
	symbolizer_free(s);
	procmaps_free(&m);
	dlclose(h);
}

/* The child exited: the file is found by its path. */
static void test_gone_process(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	uintptr_t ip = (uintptr_t)&bpfprof_test_target;
	pid_t pid;
	int st;

	read_self_maps(&m);	/* the child's maps are the same after fork */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	assert_int_equal(symbolizer_user(s, (uint32_t)pid, m.maps, m.nr, ip, &sym), 0);
	assert_string_equal(sym.function, "bpfprof_test_target");
	assert_int_equal(sym.line, target_line);
	procmaps_free(&m);
	symbolizer_free(s);
}

static void test_kernel(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	char line[512], name[256], mod_name[256], mod[300], type;
	uint64_t addr, sched = 0, mod_addr = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	int err;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%" SCNx64 " %c %255s [%255[^]]]", &addr, &type, name,
			       mod_name);

		if (n < 3 || (type != 't' && type != 'T') || !addr)
			continue;
		if (n == 3 && !sched && strcmp(name, "schedule") == 0)
			sched = addr;
		/* not [bpf] or [__builtin__ftrace]...: listed by /proc/kallsyms,
		 * not named by the kernel's kallsyms_lookup() (%pS) */
		if (n == 4 && !mod_addr && strcmp(mod_name, "bpf") != 0 &&
		    strncmp(mod_name, "__builtin", 9) != 0) {
			mod_addr = addr;
			snprintf(mod, sizeof(mod), "[%s]", mod_name);
		}
	}
	fclose(f);
	if (!sched) {
		symbolizer_free(s);
		skip();	/* addresses hidden: not root */
	}
	assert_int_equal(symbolizer_kernel(s, sched + 1, &sym), 0);
	assert_string_equal(sym.module, "[kernel.kallsyms]");
	assert_string_equal(sym.function, "schedule");
	assert_int_equal(sym.function_start, sched);
	assert_int_equal(sym.module_offset, sched + 1);
	assert_null(sym.mapping);
	assert_null(sym.file);
	assert_int_equal(sym.line, 0);
	if (mod_addr) {
		assert_int_equal(symbolizer_kernel(s, mod_addr, &sym), 0);
		assert_string_equal(sym.module, mod);
		assert_int_equal(sym.function_start, mod_addr);
	}
	err = symbolizer_kernel(s, 1, &sym);
	assert_int_equal(err, -ENOENT);
	assert_null(sym.module);
	assert_int_equal(symbolizer_load_kallsyms(s, "/proc/kallsyms"), -EINVAL);
	symbolizer_free(s);
}

static void test_kernel_file(void **state)
{
	char path[] = "/tmp/bpfprof-kallsyms-XXXXXX";
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T my_fn\n"
		"ffffffff82000000 D data\n"
		"ffffffffc0000000 t mod_fn\t[my_mod]\n";
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(symbolizer_load_kallsyms(s, path), 0);
	unlink(path);
	assert_int_equal(symbolizer_kernel(s, 0xffffffff81000180ull, &sym), 0);
	assert_string_equal(sym.module, "[kernel.kallsyms]");
	assert_string_equal(sym.function, "my_fn");
	assert_int_equal(sym.function_start, 0xffffffff81000100ull);
	assert_int_equal(symbolizer_kernel(s, 0xffffffffc0000010ull, &sym), 0);
	assert_string_equal(sym.module, "[my_mod]");
	assert_string_equal(sym.function, "mod_fn");
	assert_int_equal(symbolizer_kernel(s, 0xffffffff82000000ull, &sym), -ENOENT);
	assert_null(sym.module);
	symbolizer_free(s);
}

/* The GNU build-id note of the running program, read from memory. */
struct note_query {
	uint8_t id[64];
	size_t len;
};

static int note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct note_query *q = data;
	int i;

	if (info->dlpi_name && info->dlpi_name[0])
		return 0;	/* the main program comes first, with an empty name */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end;

		if (ph->p_type != PT_NOTE)
			continue;
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= sizeof(q->id)) {
				memcpy(q->id, desc, n->n_descsz);
				q->len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static void test_build_id(void **state)
{
	struct note_query q = { .len = 0 };
	uint8_t bid[64];
	char exe[4096], cmd[4200], line[512], hex[200] = "", mine[200];
	int n, i;
	FILE *p;

	self_exe(exe, sizeof(exe));
	n = elf_build_id(exe, bid, sizeof(bid));
	assert_true(n > 0);
	for (i = 0; i < n; i++)
		sprintf(mine + 2 * i, "%02x", bid[i]);

	/* the note as the dynamic loader mapped it */
	dl_iterate_phdr(note_cb, &q);
	assert_int_equal(q.len, (size_t)n);
	assert_memory_equal(q.id, bid, (size_t)n);

	/* what readelf -n says, when binutils is installed */
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", exe);
	p = popen(cmd, "r");
	if (p) {
		while (fgets(line, sizeof(line), p))
			if (sscanf(line, " Build ID: %199s", hex) == 1)
				break;
		pclose(p);
	}
	if (hex[0])
		assert_string_equal(hex, mine);
	else
		print_message("readelf not available, compared with the loaded note only\n");

	assert_int_equal(elf_build_id(exe, bid, (size_t)n - 1), -ENOSPC);
	assert_int_equal(elf_build_id("/nonexistent/file", bid, sizeof(bid)), -ENOENT);
	assert_int_equal(elf_build_id("/proc/self/status", bid, sizeof(bid)), -EINVAL);
}

/* An ELF file without a build-id note (made with objcopy if present). */
static void test_build_id_missing(void **state)
{
	char exe[4096], path[] = "/tmp/bpfprof-nobid-XXXXXX", cmd[8400];
	uint8_t bid[64];
	int fd;

	self_exe(exe, sizeof(exe));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section .note.gnu.build-id '%s' '%s' 2>/dev/null", exe, path);
	if (system(cmd) != 0) {
		unlink(path);
		skip();
	}
	assert_int_equal(elf_build_id(path, bid, sizeof(bid)), -ENODATA);
	unlink(path);
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
	return test_rng_next(&rng_state);
}

/* Symbolize one address in a fake executable mapping of @path. */
static int symbolize_file(const char *path, struct bpfprof_symbol *sym)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_mapping map = {
		.start = 0x10000000, .end = 0x10100000, .pgoff = 0,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = path,
	};
	int err;

	assert_non_null(s);
	err = symbolizer_user(s, 0, &map, 1, 0x10001100, sym);
	assert_string_equal(sym->module, path);
	assert_ptr_equal(sym->mapping, &map);
	if (sym->function)	/* touch the strings before they are freed */
		assert_true(strlen(sym->function) < 100000);
	if (sym->file)
		assert_true(strlen(sym->file) < 100000);
	symbolizer_free(s);
	/* the strings died with the symbolizer: keep only what can be checked */
	sym->module = sym->file = NULL;
	sym->mapping = NULL;
	sym->function = sym->function ? "" : NULL;
	return err;
}

static void test_malformed_elf(void **state)
{
	char dir[] = "/tmp/bpfprof-bad-XXXXXX", path[128], exe[4096];
	static const size_t cuts[] = { 4, 16, 52, 64, 200, 1000, 4096 };
	struct bpfprof_symbol sym;
	uint8_t bid[64], *img, *mut;
	unsigned char junk[256];
	struct stat st;
	size_t i, j;
	int fd, fds = count_fds();

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad", dir);
	self_exe(exe, sizeof(exe));
	fd = open(exe, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	img = malloc((size_t)st.st_size);
	mut = malloc((size_t)st.st_size);
	assert_true(img && mut);
	assert_int_equal(read(fd, img, (size_t)st.st_size), st.st_size);
	close(fd);

	/* empty, text, ELF magic followed by junk */
	test_write_file(path, "", 0);
	assert_true(elf_build_id(path, bid, sizeof(bid)) < 0);
	assert_int_equal(symbolize_file(path, &sym), 0);
	assert_null(sym.function);
	test_write_file(path, "this is not an ELF file\n", 24);
	assert_int_equal(elf_build_id(path, bid, sizeof(bid)), -EINVAL);
	assert_int_equal(symbolize_file(path, &sym), 0);
	assert_null(sym.function);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rnd();
	memcpy(junk, "\177ELF\2\1\1", 7);
	test_write_file(path, junk, sizeof(junk));
	assert_true(elf_build_id(path, bid, sizeof(bid)) < 0);
	assert_int_equal(symbolize_file(path, &sym), 0);
	assert_null(sym.function);

	/* truncated copies of a real executable */
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		test_write_file(path, img, cuts[i]);
		/* the note sits behind the program headers: a short file has none */
		if (cuts[i] <= 200)
			assert_true(elf_build_id(path, bid, sizeof(bid)) < 0);
		else
			(void)elf_build_id(path, bid, sizeof(bid));
		assert_int_equal(symbolize_file(path, &sym), 0);
		assert_null(sym.function);
	}
	test_write_file(path, img, (size_t)st.st_size / 2);
	(void)elf_build_id(path, bid, sizeof(bid));	/* may still find the note */
	assert_int_equal(symbolize_file(path, &sym), 0);

	/* random corruption of headers, program and section headers */
	for (i = 0; i < 300; i++) {
		size_t len = (size_t)st.st_size;

		memcpy(mut, img, len);
		for (j = 0; j < 1 + rnd() % 16; j++) {
			size_t at = rnd() % 4 == 0 ? len - 1 - rnd() % 4096 : rnd() % 1024;

			mut[at] = (uint8_t)rnd();
		}
		if (rnd() % 4 == 0)
			len = rnd() % len;
		test_write_file(path, mut, len);
		(void)elf_build_id(path, bid, sizeof(bid));
		assert_true(symbolize_file(path, &sym) <= 0);
	}
	unlink(path);
	rmdir(dir);
	free(img);
	free(mut);
	assert_int_equal(count_fds(), fds);
}

/* ---- the vDSO ----------------------------------------------------------- */

/* A function of our vDSO: its runtime address and its vaddr in the image. */
struct vdso_fn {
	const char *name;
	uintptr_t addr;
	uint64_t vaddr;
};

/*
 * Find the first of @names in our vDSO's .dynsym, walking its section
 * headers with plain <elf.h> structs (independent of the symbolizer).
 * Returns 0, or -1 when there is no vDSO or none of the names.
 */
static int find_vdso_fn(const char *const *names, struct vdso_fn *fn)
{
	const char *base = (const char *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
	const ElfW(Phdr) *ph;
	const ElfW(Shdr) *sh;
	uint64_t load_vaddr = 0, load_off = 0;
	int i, k;

	if (!base)
		return -1;
	ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			load_vaddr = ph[i].p_vaddr;
			load_off = ph[i].p_offset;
			break;
		}
	sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	for (k = 0; names[k]; k++) {
		for (i = 0; i < eh->e_shnum; i++) {
			const ElfW(Sym) *syms = (const ElfW(Sym) *)(base + sh[i].sh_offset);
			const char *strs = base + sh[sh[i].sh_link].sh_offset;
			size_t j;

			if (sh[i].sh_type != SHT_DYNSYM || !sh[i].sh_entsize)
				continue;
			for (j = 1; j < sh[i].sh_size / sh[i].sh_entsize; j++) {
				if (strcmp(strs + syms[j].st_name, names[k]) != 0 ||
				    syms[j].st_shndx == SHN_UNDEF)
					continue;
				fn->name = names[k];
				fn->vaddr = syms[j].st_value;
				fn->addr = (uintptr_t)base + (uintptr_t)(load_off + fn->vaddr -
									 load_vaddr);
				return 0;
			}
		}
	}
	return -1;
}

/* Our vDSO's clock_gettime by its global name (the weak alias is not it). */
static void vdso_clock_gettime(struct vdso_fn *fn)
{
	static const char *const names[] = {
		"__vdso_clock_gettime", "__kernel_clock_gettime", NULL,
	};

	if (find_vdso_fn(names, fn))
		skip();
}

static const struct bpfprof_mapping *find_vdso_map(const struct procmaps *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (strcmp(m->maps[i].path, "[vdso]") == 0)
			return &m->maps[i];
	return NULL;
}

/* Addresses in our own [vdso] are named, by pid and by maps only. */
static void test_vdso_own(void **state)
{
	static const char *const gtod[] = { "__vdso_gettimeofday", NULL };
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym, again;
	struct vdso_fn fn, fn2;
	struct procmaps m;
	const struct bpfprof_mapping *vdso;
	uint32_t pids[] = { (uint32_t)getpid(), 0 };
	size_t i;

	vdso_clock_gettime(&fn);
	read_self_maps(&m);
	vdso = find_vdso_map(&m);
	assert_non_null(vdso);
	for (i = 0; i < 2; i++) {
		assert_int_equal(symbolizer_user(s, pids[i], m.maps, m.nr, fn.addr + 1, &sym), 0);
		assert_string_equal(sym.module, "[vdso]");
		assert_ptr_equal(sym.mapping, vdso);
		assert_non_null(sym.function);
		assert_string_equal(sym.function, fn.name);
		assert_int_equal(sym.function_start, fn.vaddr);
		assert_int_equal(sym.module_offset, fn.vaddr + 1);
	}
	assert_int_equal(symbolizer_user(s, pids[0], m.maps, m.nr, fn.addr + 1, &again), 0);
	assert_ptr_equal(again.function, sym.function);	/* cached */
	if (find_vdso_fn(gtod, &fn2) == 0) {
		assert_int_equal(symbolizer_user(s, pids[0], m.maps, m.nr, fn2.addr, &sym), 0);
		assert_string_equal(sym.function, "__vdso_gettimeofday");
		assert_int_equal(sym.function_start, fn2.vaddr);
	}
	/* the ELF header is no function */
	assert_int_equal(symbolizer_user(s, pids[0], m.maps, m.nr, vdso->start + 16, &sym), 0);
	assert_null(sym.function);
	procmaps_free(&m);
	symbolizer_free(s);
}

/*
 * Wait until @pid has exec'd a program whose path ends in @suffix and its
 * maps, read into @m, list the new image's [vdso].  The exe link changes
 * early in execve(), before the vDSO is mapped, so the link alone races.
 */
static void wait_exec_maps(pid_t pid, const char *suffix, struct procmaps *m)
{
	char link[64], exe[4096];
	ssize_t n;
	int i;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (i = 0; i < 500; i++) {
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (ends_with(exe, suffix) && procmaps_read((uint32_t)pid, m) == 0) {
				if (find_vdso_map(m))
					return;
				procmaps_free(m);
			}
		}
		usleep(10000);
	}
	fail_msg("process %d did not exec %s with a [vdso]", (int)pid, suffix);
}

/*
 * Another process (its own vDSO address) is named the same, while it runs
 * and after it is gone (its files found by path then).
 */
static void test_vdso_other_process(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	const struct bpfprof_mapping *vdso, *own;
	struct procmaps m, self;
	struct vdso_fn fn;
	uintptr_t ip;
	pid_t pid;
	int st, round;

	vdso_clock_gettime(&fn);
	read_self_maps(&self);
	own = find_vdso_map(&self);
	assert_non_null(own);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	wait_exec_maps(pid, "/sleep", &m);
	vdso = find_vdso_map(&m);
	assert_non_null(vdso);
	ip = vdso->start + (fn.addr - own->start);
	for (round = 0; round < 2; round++) {
		if (round == 1) {	/* gone: a fresh symbolizer, no cached opens */
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			symbolizer_free(s);
			s = symbolizer_new();
		}
		assert_int_equal(symbolizer_user(s, (uint32_t)pid, m.maps, m.nr, ip, &sym), 0);
		assert_string_equal(sym.module, "[vdso]");
		assert_ptr_equal(sym.mapping, vdso);
		assert_non_null(sym.function);
		assert_string_equal(sym.function, fn.name);
		assert_int_equal(sym.function_start, fn.vaddr);
		assert_int_equal(sym.module_offset, fn.vaddr);
	}
	procmaps_free(&m);
	procmaps_free(&self);
	symbolizer_free(s);
}

/*
 * A [vdso] that is not our image gets no name, but its module and file
 * offset: another size, a 32-bit process (its first executable file is
 * ELF32; listed before a 64-bit one, so only the ABI check refuses it),
 * a process without readable ELF files.  The same fake maps with a 64-bit
 * executable first are named (the control).
 */
static void test_vdso_not_ours(void **state)
{
	char exe[4096], elf32[] = "/tmp/bpfprof-elf32-XXXXXX";
	struct symbolizer *s;
	struct bpfprof_symbol sym;
	struct procmaps self;
	struct vdso_fn fn;
	struct bpfprof_mapping maps[3];
	const struct bpfprof_mapping *own;
	const uint64_t start = 0x7f0000000000ull;
	uint64_t size, ip;
	int fd;

	vdso_clock_gettime(&fn);
	self_exe(exe, sizeof(exe));
	fd = mkstemp(elf32);	/* written only for the 32-bit case */
	assert_true(fd >= 0);
	close(fd);
	unlink(elf32);
	read_self_maps(&self);
	own = find_vdso_map(&self);
	assert_non_null(own);
	size = own->end - own->start;
	ip = start + (fn.addr - own->start);
	memset(maps, 0, sizeof(maps));
	maps[0] = (struct bpfprof_mapping){ .start = 0x400000, .end = 0x500000,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = exe };
	maps[1] = (struct bpfprof_mapping){ .start = 0x600000, .end = 0x601000,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = elf32 };
	maps[2] = (struct bpfprof_mapping){ .start = start, .end = start + size,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = "[vdso]" };

	/* the control: a 64-bit executable first */
	s = symbolizer_new();
	assert_int_equal(symbolizer_user(s, 0, maps, 3, ip, &sym), 0);
	assert_non_null(sym.function);
	assert_string_equal(sym.function, fn.name);
	symbolizer_free(s);

	/* another size */
	s = symbolizer_new();
	maps[2].end = start + size + 4096;
	assert_int_equal(symbolizer_user(s, 0, maps, 3, ip, &sym), 0);
	assert_string_equal(sym.module, "[vdso]");
	assert_ptr_equal(sym.mapping, &maps[2]);
	assert_null(sym.function);
	assert_int_equal(sym.module_offset, ip - start);
	maps[2].end = start + size;
	symbolizer_free(s);

	/* 32-bit: the ELF32 file comes first */
	elf32_file(elf32);
	s = symbolizer_new();
	maps[0].path = elf32;
	maps[1].path = exe;
	assert_int_equal(symbolizer_user(s, 0, maps, 3, ip, &sym), 0);
	assert_string_equal(sym.module, "[vdso]");
	assert_null(sym.function);
	assert_int_equal(sym.module_offset, ip - start);
	/* ... and its own file is still symbolized (no function there) */
	assert_int_equal(symbolizer_user(s, 0, maps, 3, 0x400100, &sym), 0);
	assert_int_equal(sym.module_offset, ELF32_IMAGE_VADDR + 0x100);
	symbolizer_free(s);
	unlink(elf32);

	/* no ELF file that opens: unknown ABI, no name */
	s = symbolizer_new();
	maps[0].path = "/nonexistent/a.out";
	maps[1].path = "";
	assert_int_equal(symbolizer_user(s, 0, maps, 3, ip, &sym), 0);
	assert_null(sym.function);
	/* ... nor with the [vdso] alone */
	assert_int_equal(symbolizer_user(s, 0, &maps[2], 1, ip, &sym), 0);
	assert_string_equal(sym.module, "[vdso]");
	assert_null(sym.function);
	symbolizer_free(s);
	procmaps_free(&self);
}

/* With one open file at a time, files are closed and reopened. */
static void test_reopen(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol a, b, c;
	struct procmaps m;
	uintptr_t own = (uintptr_t)&bpfprof_test_target, lib = libc_qsort();
	int fds;

	assert_int_equal(symbolizer_set_max_open(s, 1), 0);
	assert_int_equal(symbolizer_set_max_open(s, 0), -EINVAL);
	read_self_maps(&m);
	fds = count_fds();
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, own, &a), 0);
	assert_string_equal(a.function, "bpfprof_test_target");
	/* libc evicts the executable */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, lib + 1, &b), 0);
	assert_string_equal(b.function, "qsort");
	assert_true(count_fds() - fds <= 2);	/* libc and its debug file at most */
	/* cached result of the closed file: same strings, still valid */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, own, &c), 0);
	assert_ptr_equal(c.function, a.function);
	assert_ptr_equal(c.file, a.file);
	assert_int_equal(c.line, target_line);
	/* not cached: the executable is reopened */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, caller_ip - 1, &c),
			 0);
	assert_string_equal(c.function, "bpfprof_test_target");
	assert_int_equal(c.line, call_line);
	assert_string_equal(b.function, "qsort");	/* evicted file's strings live */
	assert_true(count_fds() - fds <= 2);
	procmaps_free(&m);
	symbolizer_free(s);
	assert_int_equal(count_fds(), fds);
}

/* Distinct addresses per second, for information (not asserted). */
static void test_speed(void **state)
{
	struct symbolizer *s = symbolizer_new();
	struct bpfprof_symbol sym;
	struct procmaps m;
	const struct bpfprof_mapping *map;
	struct timespec t0, t1;
	uint64_t a, n = 0;
	double secs;

	read_self_maps(&m);
	map = procmaps_find(m.maps, m.nr, libc_qsort());
	assert_non_null(map);
	/* warm up: the file is opened and its tables loaded once */
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, map->start, &sym), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (a = map->start; a < map->end; a += 13, n++)
		assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, a, &sym), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("libc: %" PRIu64 " distinct addresses in %.3f s (%.0f/s)\n", n, secs,
		      (double)n / secs);
	procmaps_free(&m);
	symbolizer_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_function),
		cmocka_unit_test(test_local_labels),
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_cxx_names),
		cmocka_unit_test(test_special_mappings),
		cmocka_unit_test(test_vdso_own),
		cmocka_unit_test(test_vdso_other_process),
		cmocka_unit_test(test_vdso_not_ours),
		cmocka_unit_test(test_deleted_library),
		cmocka_unit_test(test_gone_process),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_file),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_build_id_missing),
		cmocka_unit_test(test_malformed_elf),
		cmocka_unit_test(test_reopen),
		cmocka_unit_test(test_speed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
