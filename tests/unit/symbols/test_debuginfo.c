// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_debuginfo.c - unit tests of user/symbols/debuginfo.c through the symbolizer:
 * stripped shared objects built at test time (cc, objcopy) whose separate
 * debug file is found through .gnu_debuglink beside the object and in its
 * .debug/ directory (names of static functions and file:line come back),
 * a debug file with the wrong CRC is refused, and libdebuginfod is loaded
 * only when DEBUGINFOD_URLS is set (checked in forked children's maps).
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "targets/procmaps.h"
#include "symbols/buildid.h"
#include "symbols/symbolize.h"

/* The static function of the test module: on this line of its source. */
#define LOCAL_LINE 4
#define LOCAL_FN "dbg_local_fn"
/* The same module rebuilt from other source: what a wrong debug file names. */
#define OTHER_FN "dbg_other_fn"
/* The name the modules' .gnu_debuglink gives. */
#define DEBUG_NAME "libdbgmod.so.debug"

/* dbg_call() and dbg_local_addr() are exported, the function %s is static. */
static const char module_src[] =
	"/* test_debuginfo.c's module */\n"
	"int dbg_call(int x);\n"
	"void *dbg_local_addr(void);\n"
	"__attribute__((noinline)) static int %s(int x) { return x * 3 + %d; }\n"
	"int dbg_call(int x) { return %s(x) + 1; }\n"
	"void *dbg_local_addr(void) { return (void *)%s; }\n";

/* The fixtures, built once (see setup()). */
struct fixtures {
	bool have_tools;		/* cc and objcopy work */
	char dir[64];			/* all files live here */
};

/* ---- helpers ------------------------------------------------------------ */

/* Run the shell command made from @fmt; its exit status (-1 if none). */
__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(cmd));
	st = system(cmd);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Write the module source with static function @fn adding @k into @path. */
static int write_module_src(const char *path, const char *fn, int k)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, module_src, fn, k, fn, fn);
	return fclose(f);
}

/*
 * In @dir: NAME.c from @fn and @k, built into NAME.full.so with build-id
 * option @bid, its debug part NAME.so.debug and the stripped NAME.so,
 * which gets a .gnu_debuglink to NAME.so.debug if @link.  0 or -1.
 */
static int build_module(const char *dir, const char *name, const char *fn, int k,
			const char *bid, bool link)
{
	char src[128];

	snprintf(src, sizeof(src), "%s/%s.c", dir, name);
	if (write_module_src(src, fn, k))
		return -1;
	if (run("cd '%s' && cc -shared -fPIC -g -O1 -Wl,--build-id=%s -o %s.full.so %s.c && "
		"objcopy --only-keep-debug %s.full.so %s.so.debug && "
		"objcopy --strip-all %s.full.so %s.so", dir, bid, name, name, name, name, name,
		name))
		return -1;
	if (link && run("cd '%s' && objcopy --add-gnu-debuglink=%s.so.debug %s.so %s.linked.so && "
			"mv %s.linked.so %s.so", dir, name, name, name, name, name))
		return -1;
	return 0;
}

/*
 * The modules (in a new temporary directory):
 *   libdbgmod.so     stripped, no build-id, .gnu_debuglink to libdbgmod.so.debug
 *   libdbgmod.so.debug  its debug part (DEBUG_NAME: named by the link, its CRC in it)
 *   other.so.debug   the debug part of the same module built from other source
 *   bid.so           stripped, with a build-id, no debug file anywhere (not
 *                    even bid.so.debug, which elfutils tries without a link)
 */
static int setup(void **state)
{
	struct fixtures *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	*state = fx;
	strcpy(fx->dir, "/tmp/bpfprof-debuginfo-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	if (run("command -v cc >/dev/null && command -v objcopy >/dev/null") != 0)
		return 0;	/* every test skips */
	fx->have_tools = build_module(fx->dir, "libdbgmod", LOCAL_FN, 1, "none", true) == 0 &&
			 build_module(fx->dir, "other", OTHER_FN, 2, "none", false) == 0 &&
			 build_module(fx->dir, "bid", "dbg_bid_fn", 3, "sha1", false) == 0 &&
			 run("rm '%s/bid.so.debug'", fx->dir) == 0;
	return 0;
}

static int teardown(void **state)
{
	struct fixtures *fx = *state;

	if (fx->dir[0] && strchr(fx->dir, '\'') == NULL)
		run("rm -rf '%s'", fx->dir);
	free(fx);
	return 0;
}

static struct fixtures *fixtures(void **state)
{
	struct fixtures *fx = *state;

	if (!fx->have_tools) {
		print_message("cc or objcopy missing, or they failed: cannot build the modules\n");
		skip();
	}
	return fx;
}

/*
 * Copy the stripped module into @dir/@sub/ and the debug file @debug
 * (a name in the fixtures directory) to @dir/@sub/@debug_dir/DEBUG_NAME.
 * The module's path goes into @lib.
 */
static void place(const struct fixtures *fx, const char *sub, const char *debug,
		  const char *debug_dir, char *lib, size_t size)
{
	assert_int_equal(run("cd '%s' && mkdir -p %s/%s && cp libdbgmod.so %s/ && "
			     "cp %s %s/%s/%s", fx->dir, sub, debug_dir, sub, debug, sub,
			     debug_dir, DEBUG_NAME), 0);
	snprintf(lib, size, "%s/%s/libdbgmod.so", fx->dir, sub);
}

/*
 * Load the module @lib, symbolize the address of its static function
 * with a new symbolizer and return what came back in @sym (strings
 * copied into @fn and @file, "" for none).
 */
static void symbolize_local(const char *lib, struct bpfprof_symbol *sym, char *fn, char *file,
			    size_t size)
{
	struct symbolizer *s = symbolizer_new();
	struct procmaps m;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	void *(*local_addr)(void);
	uintptr_t ip;

	assert_non_null(s);
	assert_non_null(h);
	*(void **)&local_addr = dlsym(h, "dbg_local_addr");
	assert_non_null(local_addr);
	ip = (uintptr_t)local_addr();
	assert_int_equal(procmaps_read((uint32_t)getpid(), &m), 0);
	assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, ip, sym), 0);
	assert_string_equal(sym->module, lib);
	snprintf(fn, size, "%s", sym->function ? sym->function : "");
	snprintf(file, size, "%s", sym->file ? sym->file : "");
	print_message("%s: %s at %s:%u\n", lib, fn, file, sym->line);
	symbolizer_free(s);
	procmaps_free(&m);
	dlclose(h);
}

/* The debug file at @sub/@debug_dir: the static function and its line. */
static void check_found(void **state, const char *sub, const char *debug_dir)
{
	struct fixtures *fx = fixtures(state);
	struct bpfprof_symbol sym;
	char lib[256], fn[256], file[256];

	place(fx, sub, DEBUG_NAME, debug_dir, lib, sizeof(lib));
	symbolize_local(lib, &sym, fn, file, sizeof(fn));
	assert_string_equal(fn, LOCAL_FN);
	assert_true(ends_with(file, "/libdbgmod.c"));
	assert_int_equal(sym.line, LOCAL_LINE);
}

/* Whether /proc/self/maps names a file containing @what. */
static bool maps_have(const char *what)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

/*
 * In a child process: symbolize dbg_call() of @lib.  Exits 0 if
 * libdebuginfod was loaded by then, 1 if not; 2 if it was loaded before,
 * 3 if the module did not load, 4 if dbg_call was not named.
 */
static void child_symbolize(const char *lib)
{
	struct symbolizer *s;
	struct bpfprof_symbol sym;
	struct procmaps m;
	void *h, *fn;

	if (maps_have("libdebuginfod"))
		_exit(2);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	fn = h ? dlsym(h, "dbg_call") : NULL;
	if (!fn)
		_exit(3);
	s = symbolizer_new();
	if (!s || procmaps_read((uint32_t)getpid(), &m) ||
	    symbolizer_user(s, (uint32_t)getpid(), m.maps, m.nr, (uintptr_t)fn, &sym) ||
	    !sym.function || strcmp(sym.function, "dbg_call") != 0)
		_exit(4);
	_exit(maps_have("libdebuginfod") ? 0 : 1);
}

/*
 * The exit status of child_symbolize(@lib) in a child with
 * DEBUGINFOD_URLS=@urls (unset if NULL) and its cache in @cache.
 */
static int symbolize_in_child(const char *lib, const char *urls, const char *cache)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		if (urls) {
			setenv("DEBUGINFOD_URLS", urls, 1);
			setenv("DEBUGINFOD_TIMEOUT", "1", 1);
			setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
		} else {
			unsetenv("DEBUGINFOD_URLS");
		}
		child_symbolize(lib);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Whether libdebuginfod.so.1 can be loaded at all (tried in a child). */
static bool debuginfod_installed(void)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(dlopen("libdebuginfod.so.1", RTLD_LAZY) ? 0 : 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The stripped module with a build-id, checked to have one. */
static void bid_module(const struct fixtures *fx, char *lib, size_t size)
{
	uint8_t bid[64];

	snprintf(lib, size, "%s/bid.so", fx->dir);
	assert_true(elf_build_id(lib, bid, sizeof(bid)) > 0);
}

/* ---- tests -------------------------------------------------------------- */

/* .gnu_debuglink to a file beside the module (no build-id to find it by). */
static void test_debuglink_beside(void **state)
{
	check_found(state, "beside", ".");
}

/* .gnu_debuglink to a file in the module's .debug/ directory. */
static void test_debuglink_dot_debug(void **state)
{
	check_found(state, "dotdebug", ".debug");
}

/*
 * The name of the link, but the debug part of other source (another CRC):
 * not used, so neither its function names nor its lines come back.
 */
static void test_debuglink_wrong_crc(void **state)
{
	struct fixtures *fx = fixtures(state);
	struct bpfprof_symbol sym;
	char lib[256], fn[256], file[256];

	place(fx, "wrong", "other.so.debug", ".", lib, sizeof(lib));
	symbolize_local(lib, &sym, fn, file, sizeof(fn));
	assert_string_not_equal(fn, OTHER_FN);
	assert_string_not_equal(fn, LOCAL_FN);	/* only the debug files name it */
	assert_string_equal(file, "");
	assert_int_equal(sym.line, 0);
}

/* No local debug file, DEBUGINFOD_URLS unset: libdebuginfod stays out. */
static void test_no_debuginfod_by_default(void **state)
{
	struct fixtures *fx = fixtures(state);
	char lib[256];

	bid_module(fx, lib, sizeof(lib));
	assert_int_equal(symbolize_in_child(lib, NULL, NULL), 1);
}

/* With DEBUGINFOD_URLS set (a closed port), debuginfod is asked. */
static void test_debuginfod_opt_in(void **state)
{
	struct fixtures *fx = fixtures(state);
	char lib[256], cache[256];

	if (!debuginfod_installed()) {
		print_message("libdebuginfod.so.1 is not installed: nothing to load\n");
		skip();
	}
	bid_module(fx, lib, sizeof(lib));
	snprintf(cache, sizeof(cache), "%s/debuginfod-cache", fx->dir);
	assert_int_equal(symbolize_in_child(lib, "http://127.0.0.1:9", cache), 0);
}

/*
 * A build-id's debug file in the system's tree: XX/REST.debug in hex, the
 * room it needs exactly, and the lengths refused; and the path of libc's
 * own build-id names libc6-dbg's file (a test dependency).
 */
static void test_buildid_debug_path(void **state)
{
	static const uint8_t id[4] = { 0x0a, 0xbc, 0x00, 0xff };
	static const char want[] = "/usr/lib/debug/.build-id/0a/bc00ff.debug";
	uint8_t libc_id[BUILDID_DEBUG_MAX], long_id[BUILDID_DEBUG_MAX + 1] = { 0 };
	char path[BUILDID_DEBUG_PATH_MAX];
	int n;

	(void)state;
	assert_int_equal(buildid_debug_path(id, sizeof(id), path, sizeof(path)), 0);
	assert_string_equal(path, want);
	assert_int_equal(buildid_debug_path(id, sizeof(id), path, sizeof(want)), 0);
	assert_string_equal(path, want);
	assert_int_equal(buildid_debug_path(id, sizeof(id), path, sizeof(want) - 1), -ENOSPC);
	assert_int_equal(buildid_debug_path(id, 1, path, sizeof(path)), -EINVAL);
	assert_int_equal(buildid_debug_path(long_id, sizeof(long_id), path, sizeof(path)), -EINVAL);
	assert_int_equal(buildid_debug_path(long_id, BUILDID_DEBUG_MAX, path, sizeof(path)), 0);

	n = elf_build_id("/lib/x86_64-linux-gnu/libc.so.6", libc_id, sizeof(libc_id));
	assert_true(n >= 2);
	assert_int_equal(buildid_debug_path(libc_id, (size_t)n, path, sizeof(path)), 0);
	assert_int_equal(access(path, R_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buildid_debug_path),
		cmocka_unit_test(test_debuglink_beside),
		cmocka_unit_test(test_debuglink_dot_debug),
		cmocka_unit_test(test_debuglink_wrong_crc),
		cmocka_unit_test(test_no_debuginfod_by_default),
		cmocka_unit_test(test_debuginfod_opt_in),
	};

	/* local debug files only in this process, whatever the caller's environment */
	unsetenv("DEBUGINFOD_URLS");
	return cmocka_run_group_tests(tests, setup, teardown);
}
