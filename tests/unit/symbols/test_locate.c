// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_locate.c - unit tests of the offline file locator (user/symbols/
 * locate.c) through the symbolizer with pid 0: a shared object built at
 * test time is loaded, its mappings (with build-ids) recorded as a
 * measurement would, and its functions named through /proc (the names
 * "on the recording machine").  Then the file is moved, replaced or
 * copied elsewhere and the recorded mappings are symbolized with no live
 * process: found at the recorded path, by build-id under a debug
 * directory (also after the original moved away, from DIR/PATH,
 * DIR/BASENAME, a separate debug file only, a stripped file plus its
 * debug file), under a sysroot, and through a real local debuginfod
 * server; also a PIE program run as another process, recorded from its
 * /proc/PID/maps and moved after it ended.  Always the same names and
 * lines as recorded, and none at all from a file with another build-id.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/locate.h"
#include "symbols/symbolize.h"
#include "targets/procmaps.h"

/* Functions of the test library: PREFIX_alpha (exported), PREFIX_beta (static). */
#define NR_FN 2
#define MAX_MAPS 16

/* The library's source: prefix, a constant, prefix x 4. */
static const char lib_src[] =
	"/* test_locate.c's library */\n"
	"void *%s_beta_addr(void);\n"
	"__attribute__((noinline)) static int %s_beta(int x) { return x * %d + 1; }\n"
	"int %s_alpha(int x) { return %s_beta(x) + 2; }\n"
	"void *%s_beta_addr(void) { return (void *)%s_beta; }\n";

struct fixtures {
	bool have_tools;		/* cc and objcopy work */
	char dir[64];			/* every file lives here */
	pid_t server;			/* a debuginfod server running, 0 if none */
	pid_t child;			/* a test program running, 0 if none */
};

/* What was recorded of one loaded library, and what it was named live. */
struct rec {
	char path[256];			/* the recorded path */
	void *handle;
	struct procmaps pm;		/* owns what maps[] point to */
	struct bpfprof_mapping maps[MAX_MAPS];	/* the library's mappings */
	size_t nr;
	char hex[128];			/* its build-id, "xx/rest" */
	uintptr_t ip[NR_FN];
	char fn[NR_FN][64];		/* live names */
	char file[NR_FN][256];
	uint32_t line[NR_FN];
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

/*
 * Build @dir/@sub/libloc.so from lib_src with @prefix and @k (its
 * build-id differs with either), with a build-id.  0 or -1.
 */
static int build_lib(const char *dir, const char *sub, const char *prefix, int k)
{
	char src[256];
	FILE *f;

	if (run("mkdir -p '%s/%s'", dir, sub))
		return -1;
	snprintf(src, sizeof(src), "%s/%s/libloc.c", dir, sub);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fprintf(f, lib_src, prefix, prefix, k, prefix, prefix, prefix, prefix);
	if (fclose(f))
		return -1;
	return run("cd '%s/%s' && cc -shared -fPIC -g -O1 -Wl,--build-id=sha1 -o libloc.so libloc.c",
		   dir, sub);
}

static int setup(void **state)
{
	struct fixtures *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	*state = fx;
	strcpy(fx->dir, "/tmp/bpfprof-locate-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	if (run("command -v cc >/dev/null && command -v objcopy >/dev/null") != 0)
		return 0;	/* every test skips */
	fx->have_tools = build_lib(fx->dir, "probe", "loc", 1) == 0;
	return 0;
}

static void stop_server(struct fixtures *fx)
{
	if (fx->server > 0) {
		kill(fx->server, SIGTERM);
		waitpid(fx->server, NULL, 0);
		fx->server = 0;
	}
}

static int teardown(void **state)
{
	struct fixtures *fx = *state;

	stop_server(fx);
	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, NULL, 0);
	}
	if (fx->dir[0] && strchr(fx->dir, '\'') == NULL)
		run("rm -rf '%s'", fx->dir);
	free(fx);
	return 0;
}

static struct fixtures *fixtures(void **state)
{
	struct fixtures *fx = *state;

	if (!fx->have_tools) {
		print_message("cc or objcopy missing, or they failed: cannot build the library\n");
		skip();
	}
	return fx;
}

/* Copy @s (may be NULL: "") into @buf of @size bytes. */
static void copy_str(char *buf, size_t size, const char *s)
{
	snprintf(buf, size, "%s", s ? s : "");
}

/*
 * Build @sub/libloc.so with @prefix and @k, load it, record its mappings
 * (with build-ids, as a measurement keeps them) and the addresses of
 * its two functions, and name them through /proc (live).
 */
static void record(const struct fixtures *fx, const char *sub, const char *prefix, int k,
		   struct rec *r)
{
	struct symbolizer *s = symbolizer_new();
	void *(*beta_addr)(void);
	char name[64];
	size_t i;

	memset(r, 0, sizeof(*r));
	assert_int_equal(build_lib(fx->dir, sub, prefix, k), 0);
	snprintf(r->path, sizeof(r->path), "%s/%s/libloc.so", fx->dir, sub);
	r->handle = dlopen(r->path, RTLD_NOW | RTLD_LOCAL);
	assert_non_null(r->handle);
	snprintf(name, sizeof(name), "%s_alpha", prefix);
	r->ip[0] = (uintptr_t)dlsym(r->handle, name);
	snprintf(name, sizeof(name), "%s_beta_addr", prefix);
	*(void **)&beta_addr = dlsym(r->handle, name);
	assert_true(r->ip[0] && beta_addr);
	r->ip[1] = (uintptr_t)beta_addr();

	assert_int_equal(procmaps_read((uint32_t)getpid(), &r->pm), 0);
	assert_int_equal(procmaps_add_build_ids(&r->pm, (uint32_t)getpid()), 0);
	for (i = 0; i < r->pm.nr; i++)
		if (strcmp(r->pm.maps[i].path, r->path) == 0 && r->nr < MAX_MAPS)
			r->maps[r->nr++] = r->pm.maps[i];
	assert_true(r->nr > 0);
	assert_true(r->maps[0].build_id_size > 1);
	for (i = 0; i < r->maps[0].build_id_size; i++)
		sprintf(r->hex + strlen(r->hex), i == 1 ? "/%02x" : "%02x", r->maps[0].build_id[i]);

	assert_non_null(s);
	for (i = 0; i < NR_FN; i++) {
		struct bpfprof_symbol sym;

		assert_int_equal(symbolizer_user(s, (uint32_t)getpid(), r->maps, r->nr, r->ip[i],
						 &sym), 0);
		assert_non_null(sym.function);
		copy_str(r->fn[i], sizeof(r->fn[i]), sym.function);
		copy_str(r->file[i], sizeof(r->file[i]), sym.file);
		r->line[i] = sym.line;
		print_message("recorded %s: %s at %s:%u\n", r->path, r->fn[i], r->file[i],
			      r->line[i]);
	}
	assert_true(strstr(r->fn[0], "_alpha") && strstr(r->fn[1], "_beta"));
	assert_true(r->line[0] > 0 && r->line[1] > 0);
	symbolizer_free(s);
}

static void rec_free(struct rec *r)
{
	if (r->handle)
		dlclose(r->handle);
	procmaps_free(&r->pm);
}

/* Names found for @r's addresses with pid 0: with a locator of @o unless NULL. */
struct offline {
	int set_err;			/* symbolizer_set_locator()'s */
	char fn[NR_FN][64];		/* "" for none */
	char file[NR_FN][256];
	uint32_t line[NR_FN];
};

static void symbolize_offline(const struct rec *r, const struct locate_opts *o,
			      struct offline *out)
{
	struct symbolizer *s = symbolizer_new();
	size_t i;

	assert_non_null(s);
	memset(out, 0, sizeof(*out));
	if (o)
		out->set_err = symbolizer_set_locator(s, o);
	for (i = 0; i < NR_FN; i++) {
		struct bpfprof_symbol sym;

		assert_int_equal(symbolizer_user(s, 0, r->maps, r->nr, r->ip[i], &sym), 0);
		assert_string_equal(sym.module, r->path);	/* the recorded name */
		copy_str(out->fn[i], sizeof(out->fn[i]), sym.function);
		copy_str(out->file[i], sizeof(out->file[i]), sym.file);
		out->line[i] = sym.line;
		print_message("offline: %s at %s:%u\n", out->fn[i], out->file[i], out->line[i]);
	}
	symbolizer_free(s);
}

/* @got names exactly what @r recorded, lines included unless !@lines. */
static void assert_same(const struct rec *r, const struct offline *got, bool lines)
{
	size_t i;

	assert_int_equal(got->set_err, 0);
	for (i = 0; i < NR_FN; i++) {
		assert_string_equal(got->fn[i], r->fn[i]);
		if (!lines)
			continue;
		assert_string_equal(got->file[i], r->file[i]);
		assert_int_equal(got->line[i], r->line[i]);
	}
}

/* @got has no names at all. */
static void assert_none(const struct offline *got)
{
	size_t i;

	for (i = 0; i < NR_FN; i++) {
		assert_string_equal(got->fn[i], "");
		assert_int_equal(got->line[i], 0);
	}
}

/* Options with the one debug directory @dir (NULL: none). */
static struct locate_opts opts_dir(const char **dirs, const char *dir)
{
	struct locate_opts o = { 0 };

	if (dir) {
		dirs[0] = dir;
		o.debug_dirs = dirs;
		o.nr_debug_dirs = 1;
	}
	return o;
}

/* ---- tests -------------------------------------------------------------- */

/* The file where it was: found, the same names and lines. */
static void test_recorded_path(void **state)
{
	struct fixtures *fx = fixtures(state);
	struct locate_opts o = { 0 };
	struct offline got;
	struct rec r;

	record(fx, "here", "loc", 11, &r);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/*
 * The original moved away, a copy in DIR/.build-id/xx/rest: the same
 * names and lines through --debug-dir; none without the locator.
 */
static void test_debug_dir_build_id(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[1];
	char dir[128];
	struct locate_opts o;
	struct offline got;
	struct rec r;

	record(fx, "moved", "loc", 12, &r);
	snprintf(dir, sizeof(dir), "%s/dbg-bid", fx->dir);
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' && mv '%s' '%s/.build-id/%s'", dir,
			     r.hex, r.path, dir, r.hex), 0);
	symbolize_offline(&r, NULL, &got);
	assert_none(&got);
	o = opts_dir(dirs, dir);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/* DIR/<recorded path> (a copied tree) and DIR/<basename>, in the order given. */
static void test_debug_dir_path_and_basename(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[2];
	char tree[128], flat[128];
	struct locate_opts o = { .debug_dirs = dirs, .nr_debug_dirs = 2 };
	struct offline got;
	struct rec r;

	record(fx, "copied", "loc", 13, &r);
	snprintf(tree, sizeof(tree), "%s/dbg-tree", fx->dir);
	snprintf(flat, sizeof(flat), "%s/dbg-flat", fx->dir);
	dirs[0] = tree;
	dirs[1] = flat;
	/* only a flat copy: DIR/BASENAME of the second directory */
	assert_int_equal(run("mkdir -p '%s' && mv '%s' '%s/'", flat, r.path, flat), 0);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	/* the tree copy: DIR/PATH, the flat one gone */
	assert_int_equal(run("mkdir -p \"$(dirname '%s%s')\" && mv '%s/libloc.so' '%s%s'", tree,
			     r.path, flat, tree, r.path), 0);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/*
 * Another build of the library (other names, another build-id) at the
 * recorded path and under a debug directory's BASENAME: never used, no
 * names; the right file later in the search order still is.
 */
static void test_wrong_build_id_refused(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[2];
	char wrong[128], right[128];
	struct locate_opts o = { .debug_dirs = dirs, .nr_debug_dirs = 1 };
	struct offline got;
	struct rec r;

	record(fx, "replaced", "loc", 14, &r);
	snprintf(wrong, sizeof(wrong), "%s/dbg-wrong", fx->dir);
	snprintf(right, sizeof(right), "%s/dbg-right", fx->dir);
	dirs[0] = wrong;
	dirs[1] = right;
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' && mv '%s' '%s/.build-id/%s'", right,
			     r.hex, r.path, right, r.hex), 0);
	/* the other build, at the recorded path and as WRONG/libloc.so */
	assert_int_equal(build_lib(fx->dir, "replaced", "bad", 99), 0);
	assert_int_equal(run("mkdir -p '%s' && cp '%s' '%s/'", wrong, r.path, wrong), 0);
	symbolize_offline(&r, &o, &got);
	assert_int_equal(got.set_err, 0);
	assert_none(&got);
	/* the right file in a later directory */
	o.nr_debug_dirs = 2;
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/* --sysroot: the recorded path under the sysroot, the original gone. */
static void test_sysroot(void **state)
{
	struct fixtures *fx = fixtures(state);
	struct locate_opts o = { 0 };
	char root[128];
	struct offline got;
	struct rec r;

	record(fx, "sys", "loc", 15, &r);
	snprintf(root, sizeof(root), "%s/sysroot", fx->dir);
	assert_int_equal(run("mkdir -p \"$(dirname '%s%s')\" && mv '%s' '%s%s'", root, r.path,
			     r.path, root, r.path), 0);
	symbolize_offline(&r, &o, &got);
	assert_none(&got);
	o.sysroot = root;
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/*
 * Only the separate debug file DIR/.build-id/xx/rest.debug (no loadable
 * bytes): the executable mapping is placed from its one code segment,
 * the same names and lines.
 */
static void test_debug_file_only(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[1];
	char dir[128];
	struct locate_opts o;
	struct offline got;
	struct rec r;

	record(fx, "dbgonly", "loc", 16, &r);
	snprintf(dir, sizeof(dir), "%s/dbg-only", fx->dir);
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' && objcopy --only-keep-debug '%s' "
			     "'%s/.build-id/%s.debug' && rm '%s'", dir, r.hex, r.path, dir, r.hex,
			     r.path), 0);
	o = opts_dir(dirs, dir);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/*
 * A stripped copy found by build-id in one directory, its debug file in
 * another: the static function (named only by the debug file's .symtab)
 * and the lines come back (debuginfo_find_located()).
 */
static void test_stripped_and_debug_file(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[2];
	char bin[128], dbg[128];
	struct locate_opts o = { .debug_dirs = dirs, .nr_debug_dirs = 1 };
	struct offline got;
	struct rec r;

	record(fx, "stripped", "loc", 17, &r);
	snprintf(bin, sizeof(bin), "%s/dbg-stripped", fx->dir);
	snprintf(dbg, sizeof(dbg), "%s/dbg-debug", fx->dir);
	dirs[0] = bin;
	dirs[1] = dbg;
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' '%s/.build-id/%.2s' && "
			     "objcopy --only-keep-debug '%s' '%s/.build-id/%s.debug' && "
			     "objcopy --strip-all '%s' '%s/.build-id/%s' && rm '%s'", bin, r.hex,
			     dbg, r.hex, r.path, dbg, r.hex, r.path, bin, r.hex, r.path), 0);
	/* the stripped file alone: its .dynsym names alpha, not static beta */
	symbolize_offline(&r, &o, &got);
	assert_string_equal(got.fn[0], r.fn[0]);
	assert_string_not_equal(got.fn[1], r.fn[1]);
	assert_int_equal(got.line[0], 0);
	o.nr_debug_dirs = 2;
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	rec_free(&r);
}

/*
 * A mapping recorded without a build-id is found by its path only (under
 * the sysroot), used as it is, never by its basename in a debug dir.
 */
static void test_no_build_id(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[1];
	char dir[128];
	struct locate_opts o;
	struct offline got;
	struct rec r;
	size_t i;

	record(fx, "nobid", "loc", 18, &r);
	for (i = 0; i < r.nr; i++) {
		r.maps[i].build_id = NULL;
		r.maps[i].build_id_size = 0;
	}
	snprintf(dir, sizeof(dir), "%s/dbg-nobid", fx->dir);
	o = opts_dir(dirs, dir);
	symbolize_offline(&r, &o, &got);
	assert_same(&r, &got, true);
	assert_int_equal(run("mkdir -p '%s' && mv '%s' '%s/'", dir, r.path, dir), 0);
	symbolize_offline(&r, &o, &got);
	assert_none(&got);
	rec_free(&r);
}

/* Answers are cached per build-id, found or not; options are checked. */
static void test_locate_cache_and_opts(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *rel[] = { "relative/dir" };
	struct locate_opts bad = { .debug_dirs = rel, .nr_debug_dirs = 1 };
	struct locate_opts o = { 0 };
	const uint8_t *bid;
	struct locator *l;
	const char *found;
	char later[300];
	struct rec r;
	size_t n;
	int fd;

	errno = 0;
	assert_null(locate_new(&bad));
	assert_int_equal(errno, EINVAL);
	record(fx, "cached", "loc", 19, &r);
	bid = r.maps[0].build_id;
	n = r.maps[0].build_id_size;
	l = locate_new(&o);
	assert_non_null(l);
	assert_int_equal(locate_open(l, "relative", bid, n, &found), -EINVAL);
	fd = locate_open(l, r.path, bid, n, &found);
	assert_true(fd >= 0);
	close(fd);
	assert_string_equal(found, r.path);
	/* another path, the same build-id: the file already found */
	fd = locate_open(l, "/nonexistent/libloc.so", bid, n, &found);
	assert_true(fd >= 0);
	close(fd);
	assert_string_equal(found, r.path);
	locate_free(l);
	/* not found is remembered: a file put there afterwards is not seen */
	l = locate_new(&o);
	assert_non_null(l);
	snprintf(later, sizeof(later), "%s/later/libloc.so", fx->dir);
	assert_int_equal(locate_open(l, later, NULL, 0, &found), -ENOENT);
	assert_int_equal(run("mkdir -p '%s/later' && cp '%s' '%s'", fx->dir, r.path, later), 0);
	assert_int_equal(locate_open(l, later, NULL, 0, &found), -ENOENT);
	locate_free(l);
	/* a new locator finds it (no build-id recorded: any ELF file there) */
	l = locate_new(&o);
	assert_non_null(l);
	fd = locate_open(l, later, NULL, 0, &found);
	assert_true(fd >= 0);
	close(fd);
	assert_string_equal(found, later);
	locate_free(l);
	rec_free(&r);
}

/* A program that writes the addresses of its two functions, then spins. */
static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) static int prog_spin(volatile int *x) { return *x + 1; }\n"
	"__attribute__((noinline)) int prog_work(volatile int *x) { return prog_spin(x) * 2; }\n"
	"int main(void) {\n"
	"	volatile int x = 0;\n"
	"	printf(\"%p %p\\n\", (void *)prog_work, (void *)prog_spin);\n"
	"	fflush(stdout);\n"
	"	for (;;) { x = prog_work(&x) & 7; pause(); }\n"
	"}\n";

/*
 * Run @prog with its standard output into *@out (the caller closes it);
 * it dies with us (PR_SET_PDEATHSIG) and is killed by stop_prog() or the
 * teardown.  Its pid.
 */
static pid_t start_prog(struct fixtures *fx, const char *prog, FILE **out)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	fx->child = pid;
	*out = fdopen(fds[0], "r");
	assert_non_null(*out);
	return pid;
}

static void stop_prog(struct fixtures *fx)
{
	if (fx->child > 0) {
		kill(fx->child, SIGKILL);
		waitpid(fx->child, NULL, 0);
		fx->child = 0;
	}
}

/*
 * Another process's executable (a PIE) and its libc: recorded live from
 * /proc/PID/maps, named there, then the process ended and the program
 * moved into a debug directory's build-id tree: with pid 0 the same names
 * and lines, libc's too (still at its path).
 */
static void test_other_process_executable(void **state)
{
	struct fixtures *fx = fixtures(state);
	const char *dirs[1];
	char dir[128], prog[128], src[128], hex[128] = "", line[128];
	struct locate_opts o;
	struct procmaps pm;
	struct symbolizer *live;
	struct bpfprof_symbol sym;
	struct offline got = { 0 };
	struct rec r;
	uintptr_t ip[3] = { 0 };
	FILE *f, *out;
	pid_t pid;
	size_t i;

	snprintf(src, sizeof(src), "%s/prog.c", fx->dir);
	snprintf(prog, sizeof(prog), "%s/prog", fx->dir);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(prog_src, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run("cc -g -O1 -fPIE -pie -Wl,--build-id=sha1 -o '%s' '%s'", prog, src), 0);
	pid = start_prog(fx, prog, &out);
	assert_non_null(fgets(line, sizeof(line), out));
	fclose(out);
	assert_int_equal(sscanf(line, "%" SCNxPTR " %" SCNxPTR, &ip[0], &ip[1]), 2);
	assert_int_equal(procmaps_read((uint32_t)pid, &pm), 0);
	assert_int_equal(procmaps_add_build_ids(&pm, (uint32_t)pid), 0);
	/* a libc function: the one holding printf's address in the child's libc */
	for (i = 0; i < pm.nr && !ip[2]; i++)
		if (strstr(pm.maps[i].path, "/libc.so") && (pm.maps[i].prot & BPFPROF_PROT_EXEC))
			ip[2] = pm.maps[i].start + (pm.maps[i].end - pm.maps[i].start) / 2;
	assert_true(ip[2] != 0);

	/* live names, as the recording machine gives them */
	memset(&r, 0, sizeof(r));
	live = symbolizer_new();
	assert_non_null(live);
	for (i = 0; i < 3; i++) {
		assert_int_equal(symbolizer_user(live, (uint32_t)pid, pm.maps, pm.nr, ip[i], &sym),
				 0);
		assert_non_null(sym.function);
		if (i < NR_FN) {
			copy_str(r.fn[i], sizeof(r.fn[i]), sym.function);
			copy_str(r.file[i], sizeof(r.file[i]), sym.file);
			r.line[i] = sym.line;
		} else {
			copy_str(line, sizeof(line), sym.function);
		}
		if (i == 0 && sym.mapping->build_id_size > 1) {
			size_t k;

			for (k = 0; k < sym.mapping->build_id_size; k++)
				sprintf(hex + strlen(hex), k == 1 ? "/%02x" : "%02x",
					sym.mapping->build_id[k]);
		}
		print_message("live: %s at %s:%u\n", sym.function, sym.file ? sym.file : "",
			      sym.line);
	}
	symbolizer_free(live);
	assert_string_equal(r.fn[0], "prog_work");
	assert_string_equal(r.fn[1], "prog_spin");
	assert_true(hex[0] != '\0');
	stop_prog(fx);

	/* the program moved away, its process gone */
	snprintf(dir, sizeof(dir), "%s/dbg-prog", fx->dir);
	assert_int_equal(run("mkdir -p '%s/.build-id/%.2s' && mv '%s' '%s/.build-id/%s'", dir, hex,
			     prog, dir, hex), 0);
	o = opts_dir(dirs, dir);
	live = symbolizer_new();
	assert_non_null(live);
	assert_int_equal(symbolizer_set_locator(live, &o), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(symbolizer_user(live, 0, pm.maps, pm.nr, ip[i], &sym), 0);
		print_message("offline: %s at %s:%u\n", sym.function ? sym.function : "",
			      sym.file ? sym.file : "", sym.line);
		if (i < NR_FN) {
			copy_str(got.fn[i], sizeof(got.fn[i]), sym.function);
			copy_str(got.file[i], sizeof(got.file[i]), sym.file);
			got.line[i] = sym.line;
		} else {
			assert_non_null(sym.function);
			assert_string_equal(sym.function, line);
		}
	}
	assert_int_equal(symbolizer_set_locator(live, &o), -EBUSY);
	symbolizer_free(live);
	assert_same(&r, &got, true);
	procmaps_free(&pm);
}

/* ---- debuginfod ---------------------------------------------------------- */

/* A TCP port on 127.0.0.1 that was free a moment ago, or 0. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = 0;

	if (fd < 0)
		return 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Start `debuginfod -F @srv` on @port (log and database in the fixtures dir). */
static void start_server(struct fixtures *fx, const char *srv, int port)
{
	char portstr[16], db[128], log[128];
	pid_t pid;

	snprintf(portstr, sizeof(portstr), "%d", port);
	snprintf(db, sizeof(db), "%s/debuginfod.sqlite", fx->dir);
	snprintf(log, sizeof(log), "%s/debuginfod.log", fx->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp("debuginfod", "debuginfod", "-F", srv, "-p", portstr, "-d", db, "-v",
		       (char *)NULL);
		_exit(127);
	}
	fx->server = pid;
}

/*
 * Wait until the server at @url serves the @what ("executable",
 * "debuginfo") of build-id @hex ("xx/rest"): it indexes its directory
 * after it starts.  Each try uses a new client cache (the client
 * remembers misses).  Bounded: 240 tries a quarter of a second apart.
 * Whether it did.
 */
static bool server_ready(const struct fixtures *fx, const char *url, const char *what,
			 const char *hex)
{
	char id[256];
	int i;

	snprintf(id, sizeof(id), "%.2s%.128s", hex, hex + 3);
	for (i = 0; i < 240; i++) {
		if (run("DEBUGINFOD_URLS='%s' DEBUGINFOD_CACHE_PATH='%s/probe-cache-%s-%d' "
			"debuginfod-find %s %s >/dev/null 2>&1", url, fx->dir, what, i, what,
			id) == 0)
			return true;
		usleep(250 * 1000);
	}
	return false;
}

/* With DEBUGINFOD_URLS set, @r's file comes from debuginfod's executables. */
static void check_served_executable(const struct rec *r)
{
	struct locate_opts o = { .debuginfod = true };
	struct locator *l = locate_new(&o);
	const char *found;
	size_t n;
	int fd;

	assert_non_null(l);
	fd = locate_open(l, r->path, r->maps[0].build_id, r->maps[0].build_id_size, &found);
	assert_true(fd >= 0);
	close(fd);
	n = strlen(found);
	print_message("debuginfod gave %s\n", found);
	assert_true(n > 11 && strcmp(found + n - 11, "/executable") == 0);
	locate_free(l);
}

/*
 * The library stripped, it and its debug file moved into a directory a
 * real debuginfod server indexes, nowhere else: with DEBUGINFOD_URLS
 * (and a cache of the test's own) the executable comes from the server
 * (locate.c) and the debug file too (debuginfo.c, through elfutils), so
 * the same names (the static one only in the debug file) and lines come
 * back; nothing when the locator may not ask, nor without
 * DEBUGINFOD_URLS.
 */
static void test_debuginfod(void **state)
{
	struct fixtures *fx = fixtures(state);
	struct locate_opts o = { 0 };
	char srv[128], url[64], cache[128];
	struct offline got;
	struct rec r;
	int port;

	if (run("command -v debuginfod >/dev/null && command -v debuginfod-find >/dev/null")) {
		print_message("debuginfod (Debian package debuginfod) is not installed\n");
		skip();
	}
	record(fx, "served", "loc", 20, &r);
	snprintf(srv, sizeof(srv), "%s/srv", fx->dir);
	assert_int_equal(run("mkdir -p '%s' && objcopy --only-keep-debug '%s' '%s/libloc.so.debug' "
			     "&& objcopy --strip-all '%s' '%s/libloc.so' && rm '%s'", srv, r.path,
			     srv, r.path, srv, r.path), 0);
	port = free_port();
	assert_true(port > 0);
	start_server(fx, srv, port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	if (!server_ready(fx, url, "executable", r.hex) ||
	    !server_ready(fx, url, "debuginfo", r.hex)) {
		run("tail -n 20 '%s/debuginfod.log' >&2", fx->dir);
		fail_msg("debuginfod never served the library");
	}

	snprintf(cache, sizeof(cache), "%s/client-cache", fx->dir);
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	symbolize_offline(&r, &o, &got);	/* debuginfod not allowed */
	assert_none(&got);
	o.debuginfod = true;
	symbolize_offline(&r, &o, &got);
	check_served_executable(&r);
	unsetenv("DEBUGINFOD_URLS");
	assert_same(&r, &got, true);
	/* and without DEBUGINFOD_URLS (the cache dir is no place of ours) */
	symbolize_offline(&r, &o, &got);
	assert_none(&got);
	stop_server(fx);
	rec_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_path),
		cmocka_unit_test(test_debug_dir_build_id),
		cmocka_unit_test(test_debug_dir_path_and_basename),
		cmocka_unit_test(test_wrong_build_id_refused),
		cmocka_unit_test(test_sysroot),
		cmocka_unit_test(test_debug_file_only),
		cmocka_unit_test(test_stripped_and_debug_file),
		cmocka_unit_test(test_no_build_id),
		cmocka_unit_test(test_locate_cache_and_opts),
		cmocka_unit_test(test_other_process_executable),
		cmocka_unit_test(test_debuginfod),
	};

	/* debuginfod only where a test asks for it */
	unsetenv("DEBUGINFOD_URLS");
	return cmocka_run_group_tests(tests, setup, teardown);
}
