// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_pyline.c - unit tests of user/interp/pyline.c's line-table
 * decoders against real interpreters.  py_line_of() (co_linetable of
 * CPython 3.11+) against real
 * interpreters: tests/unit/interp/pyline_truth.py, run by every CPython
 * 3.11, 3.12 and 3.13 found (Debian's /usr/bin/python3.X, pyenv's
 * $PYENV_ROOT/versions/3.X.*), dumps the location tables of about 500
 * code objects (some 55,000 instructions) and the line the interpreter gives each
 * instruction (co_positions()); py_line_of() must give the same line for
 * every instruction, the last line reached for those without a location
 * and past the end, and the same answers on every prefix of a table cut
 * between entries; a table cut inside an entry must not be read past its
 * end (each prefix is copied into a buffer of its size, for ASan).  Each interpreter runs the dump twice, the second time
 * with -X no_debug_ranges (no-column entries), and together the two runs
 * must hold every kind of entry and line jumps of 64 and 2048 lines both
 * ways (multi-byte varints), or the test says what it missed.  A version
 * with no interpreter installed is skipped with a message.  The script is
 * found from BPFPROF_SRC (tests/run sets it), else next to the build
 * directory this program is in, else from the current directory.
 *
 * py_line_of_310() (3.10's co_linetable) and py_line_of_lnotab() (3.6-3.9's
 * co_lnotab) likewise against tests/unit/interp/pyline_truth_old.py,
 * run by every 3.10, 3.9, 3.8, 3.7 and 3.6 found, whose lines
 * come from the interpreter's co_lines() (3.10) or dis.findlinestarts():
 * every instruction and past the end, with line jumps of 128 and 2048
 * lines both ways (several byte pairs), and for 3.10 instructions without
 * a line.
 */
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "interp/pyline.h"
#include "py_minors.h"

#define MAX_REPORTED 8		/* mismatches printed per run */

/* What a run saw, for the coverage checks and the summary. */
struct tally {
	/* the decoder under test: py_line_of() or an older format's */
	int (*line_of)(const uint8_t *table, size_t len, int firstlineno, uint32_t instr);
	unsigned long codes, units, unlocated, prefixes;
	unsigned long kinds[16];		/* entries by kind */
	unsigned long jump_fwd64, jump_back64, jump_fwd2048, jump_back2048;
	unsigned long mismatches;
};

/* One code object of the dump. */
struct code {
	char name[512];
	int firstlineno;
	size_t nunits, tlen;
	uint8_t *table;
	int *lines;			/* per code unit, -1: no location */
	int *expect;			/* what py_line_of() must answer */
};

static char script[PATH_MAX + 64];		/* pyline_truth.py */
static char script_old[PATH_MAX + 64];		/* pyline_truth_old.py */

static int find_script_new(void);

/* Both scripts, next to each other; 0 if found. */
static int find_script(void)
{
	int err = find_script_new();

	snprintf(script_old, sizeof(script_old), "%.*s_old.py", (int)strlen(script) - 3, script);
	return err ? err : access(script_old, R_OK);
}

static int find_script_new(void)
{
	const char *src = getenv("BPFPROF_SRC");
	const char *rel = "tests/unit/interp/pyline_truth.py";
	char exe[PATH_MAX];
	ssize_t n;

	if (src && *src) {
		snprintf(script, sizeof(script), "%s/%s", src, rel);
		return access(script, R_OK);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {		/* SRC/BUILD/tests/unit/interp/test_pyline */
		exe[n] = '\0';
		for (int i = 0; i < 5 && strrchr(exe, '/'); i++)
			*strrchr(exe, '/') = '\0';
		snprintf(script, sizeof(script), "%s/%s", exe, rel);
		if (!access(script, R_OK))
			return 0;
	}
	snprintf(script, sizeof(script), "%s", rel);
	return access(script, R_OK);
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Parse "table HEX" into c->table. */
static void parse_table(struct code *c, const char *hex)
{
	size_t n = strlen(hex);

	while (n && (hex[n - 1] == '\n' || hex[n - 1] == ' '))
		n--;
	assert_int_equal(n % 2, 0);
	c->tlen = n / 2;
	c->table = malloc(c->tlen ? c->tlen : 1);	/* exact: ASan sees overreads */
	assert_non_null(c->table);
	for (size_t i = 0; i < c->tlen; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		assert_true(hi >= 0 && lo >= 0);
		c->table[i] = (uint8_t)(hi << 4 | lo);
	}
}

/*
 * Parse "lines L0 L1 ..." into c->lines and derive c->expect: an
 * instruction with a line has it; one without has the last line before
 * it (the first line at the start).  Counts the jumps between lines.
 */
static void parse_lines(struct code *c, char *text, struct tally *t)
{
	char *save = NULL, *tok;
	int last = c->firstlineno, prev = -1;
	size_t i = 0;

	c->lines = calloc(c->nunits + 1, sizeof(int));
	c->expect = calloc(c->nunits + 1, sizeof(int));
	assert_non_null(c->lines);
	assert_non_null(c->expect);
	for (tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
		assert_true(i < c->nunits);
		c->lines[i] = strcmp(tok, "-") ? atoi(tok) : -1;
		if (c->lines[i] < 0) {
			t->unlocated++;
		} else {
			if (prev >= 0) {
				int d = c->lines[i] - prev;

				t->jump_fwd64 += d >= 64;
				t->jump_back64 += d <= -64;
				t->jump_fwd2048 += d >= 2048;
				t->jump_back2048 += d <= -2048;
			}
			prev = last = c->lines[i];
		}
		c->expect[i] = last;
	}
	assert_int_equal(i, c->nunits);
}

/* The test's own walk of entry starts (top bit set), for kinds and cuts. */
static size_t entry_starts(const struct code *c, size_t *starts, size_t *units_before)
{
	size_t n = 0, units = 0;

	for (size_t i = 0; i < c->tlen; i++) {
		if (!(c->table[i] & 0x80))
			continue;
		starts[n] = i;
		units_before[n++] = units;
		units += (c->table[i] & 7) + 1;
	}
	starts[n] = c->tlen;
	units_before[n] = units;
	return n;
}

static void mismatch(struct tally *t, const char *interp, const struct code *c,
		     const char *what, size_t instr, int want, int got)
{
	if (t->mismatches++ < MAX_REPORTED)
		print_message("%s: %s (first line %d, %zu code units): %s instruction %zu: "
			      "line %d, the decoder says %d\n",
			      interp, c->name, c->firstlineno, c->nunits, what, instr, want, got);
}

/* py_line_of() on the first @len bytes of @c's table, copied into a
 * buffer of that size (so that the ASan build sees a read past it). */
static int line_of_prefix(const struct code *c, size_t len, uint32_t instr)
{
	uint8_t *copy = malloc(len ? len : 1);
	int line;

	assert_non_null(copy);
	memcpy(copy, c->table, len);
	line = py_line_of(copy, len, c->firstlineno, instr);
	free(copy);
	return line;
}

/* Every instruction and past the end, by t->line_of. */
static void check_units(const char *interp, const struct code *c, struct tally *t)
{
	int end = c->nunits ? c->expect[c->nunits - 1] : c->firstlineno, got;

	for (size_t i = 0; i < c->nunits; i++) {
		got = t->line_of(c->table, c->tlen, c->firstlineno, (uint32_t)i);
		if (got != c->expect[i])
			mismatch(t, interp, c, c->lines[i] < 0 ? "unlocated" : "located", i,
				 c->expect[i], got);
	}
	const uint32_t past[] = { (uint32_t)c->nunits, (uint32_t)c->nunits + 1000, UINT32_MAX };
	for (size_t k = 0; k < sizeof(past) / sizeof(past[0]); k++) {
		got = t->line_of(c->table, c->tlen, c->firstlineno, past[k]);
		if (got != end)
			mismatch(t, interp, c, "past the end", past[k], end, got);
	}
}

/* Every instruction, past the end, and the prefixes of the table (3.11+);
 * the older formats: their instructions and past the end. */
static void check_code(const char *interp, const struct code *c, struct tally *t)
{
	size_t *starts, *before;
	size_t n;

	check_units(interp, c, t);
	if (t->line_of != py_line_of)
		return;
	starts = calloc(c->tlen + 1, sizeof(size_t));
	before = calloc(c->tlen + 1, sizeof(size_t));
	assert_non_null(starts);
	assert_non_null(before);
	n = entry_starts(c, starts, before);
	assert_int_equal(before[n], c->nunits);
	for (size_t k = 0; k < n; k++)
		t->kinds[c->table[starts[k]] >> 3 & 15]++;
	/* A table cut after entry k-1: its last instruction, and the next
	 * one (past this table's end) get that instruction's line. */
	for (size_t k = 0; k <= n; k++, t->prefixes++) {
		size_t u = before[k];
		int want = u ? c->expect[u - 1] : c->firstlineno, got;

		if (u) {
			got = line_of_prefix(c, starts[k], (uint32_t)(u - 1));
			if (got != want)
				mismatch(t, interp, c, "prefix, last", u - 1, want, got);
		}
		got = line_of_prefix(c, starts[k], (uint32_t)u);
		if (got != want)
			mismatch(t, interp, c, "prefix, past its end", u, want, got);
		/* Cut inside the entry: any line, but no read past the cut
		 * (the ASan build checks) and never negative. */
		for (size_t cut = starts[k] + 1; k < n && cut < starts[k + 1]; cut++)
			assert_true(line_of_prefix(c, cut, (uint32_t)u) >= 0);
	}
	free(starts);
	free(before);
}

static void free_code(struct code *c)
{
	free(c->table);
	free(c->lines);
	free(c->expect);
	memset(c, 0, sizeof(*c));
}

/* Run @script with @interp (@flags), check everything it dumps. */
static void run_dump(const char *script, const char *interp, const char *flags,
		     struct tally *t)
{
	char cmd[PATH_MAX * 3], *line = NULL;
	size_t cap = 0;
	unsigned long ended = ULONG_MAX;
	struct code c = { 0 };
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s -I %s %s", interp, flags, script);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (getline(&line, &cap, p) > 0) {
		if (!strncmp(line, "code ", 5)) {
			free_code(&c);
			assert_int_equal(sscanf(line + 5, "%511s %d %zu", c.name, &c.firstlineno,
						&c.nunits), 3);
		} else if (!strncmp(line, "table ", 6)) {
			parse_table(&c, line + 6);
		} else if (!strncmp(line, "lines", 5)) {
			parse_lines(&c, line + 5, t);
			check_code(interp, &c, t);
			t->codes++;
			t->units += c.nunits;
		} else if (!strncmp(line, "end ", 4)) {
			ended = strtoul(line + 4, NULL, 10);
		}
	}
	free_code(&c);
	free(line);
	if (pclose(p) != 0)
		fail_msg("%s failed", cmd);
	if (ended == ULONG_MAX)
		fail_msg("%s: the dump has no end line", cmd);
}

/* Both runs of @interp: every instruction agrees, every form was seen. */
static void check_interp(const char *interp)
{
	static const char *const kind_names[16] = {
		"short 0", "short 1", "short 2", "short 3", "short 4", "short 5", "short 6",
		"short 7", "short 8", "short 9", "one-line 0", "one-line 1", "one-line 2",
		"no columns", "long", "no location",
	};
	struct tally t = { .line_of = py_line_of };
	unsigned long codes_plain;

	run_dump(script, interp, "", &t);
	codes_plain = t.codes;
	run_dump(script, interp, "-X no_debug_ranges", &t);
	print_message("%s: %lu code objects (%lu with debug ranges), %lu instructions "
		      "(%lu without a location), %lu table prefixes: %lu disagree\n",
		      interp, t.codes, codes_plain, t.units, t.unlocated, t.prefixes,
		      t.mismatches);
	print_message("%s: entries:", interp);
	for (int k = 0; k < 16; k++)
		print_message(" %s %lu%s", kind_names[k], t.kinds[k], k < 15 ? "," : "\n");
	print_message("%s: line jumps >= 64 forward %lu, backward %lu; >= 2048 forward %lu, "
		      "backward %lu\n", interp, t.jump_fwd64, t.jump_back64, t.jump_fwd2048,
		      t.jump_back2048);
	assert_int_equal(t.mismatches, 0);
	assert_true(t.codes > 2 * 100);
	for (int k = 0; k < 16; k++)
		if (!t.kinds[k])
			fail_msg("%s: no %s entry in the dump: the corpus does not cover it",
				 interp, kind_names[k]);
	assert_true(t.jump_fwd64 && t.jump_back64 && t.jump_fwd2048 && t.jump_back2048);
}

/* @interp of 3.@minor, 3.6-3.10: every instruction agrees, the corpus has
 * big jumps (both ways from 3.8: the compilers of 3.6 and 3.7 never give
 * a later instruction of a statement an earlier line, and 3.8's and
 * 3.9's tables, which go back, have their format) and (3.10)
 * instructions without a line. */
static void check_interp_old(const char *interp, unsigned minor)
{
	struct tally t = { .line_of = minor == 10 ? py_line_of_310 : py_line_of_lnotab };

	run_dump(script_old, interp, "", &t);
	print_message("%s: %lu code objects, %lu instructions (%lu without a line): %lu "
		      "disagree; line jumps >= 64 forward %lu, backward %lu; >= 2048 forward "
		      "%lu, backward %lu\n", interp, t.codes, t.units, t.unlocated, t.mismatches,
		      t.jump_fwd64, t.jump_back64, t.jump_fwd2048, t.jump_back2048);
	assert_int_equal(t.mismatches, 0);
	assert_true(t.codes > 2 * 100);
	assert_true(t.jump_fwd64 && t.jump_fwd2048);
	if (minor >= 8)
		assert_true(t.jump_back64 && t.jump_back2048);
	if (minor == 10 && !t.unlocated)
		fail_msg("%s: no instruction without a line: the corpus does not cover it", interp);
}

/* Every interpreter of CPython 3.@minor on the machine; skip if none. */
static void check_minor(unsigned minor)
{
	char pattern[PATH_MAX], path[64];
	const char *root = getenv("PYENV_ROOT");
	unsigned found = 0;
	glob_t g;

	if (!script[0] && find_script())
		fail_msg("tests/unit/interp/pyline_truth.py not found (set BPFPROF_SRC)");
	snprintf(path, sizeof(path), "/usr/bin/python3.%u", minor);
	if (!access(path, X_OK)) {
		minor >= 11 ? check_interp(path) : check_interp_old(path, minor);
		found++;
	}
	snprintf(pattern, sizeof(pattern), "%s/versions/3.%u.*/bin/python3.%u",
		 root && *root ? root : "/root/.pyenv", minor, minor);
	if (!glob(pattern, 0, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			if (access(g.gl_pathv[i], X_OK))
				continue;
			if (minor >= 11)
				check_interp(g.gl_pathv[i]);
			else
				check_interp_old(g.gl_pathv[i], minor);
			found++;
		}
		globfree(&g);
	}
	if (!found) {
		print_message("skip: no CPython 3.%u here (looked for %s and %s)\n", minor, path,
			      pattern);
		skip();
	}
}

/* One test per minor version (py_minors.h): its number is the state. */
static void test_python(void **state)
{
	check_minor(*(unsigned *)*state);
}

/*
 * A location table read while its object was being freed may hold any
 * bytes: three long-form entries (kind 14) each adding 2^31 - 1 lines
 * give the largest int, not a signed overflow (UBSan in CI) or a
 * wrapped-around line.
 */
static void test_garbage_table(void **state)
{
	static const uint8_t entry[] = { 0xf0, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03 };
	uint8_t table[3 * sizeof(entry)];

	(void)state;
	for (size_t i = 0; i < 3; i++)
		memcpy(table + i * sizeof(entry), entry, sizeof(entry));
	assert_int_equal(py_line_of(table, sizeof(table), 1, 10), INT32_MAX);
	assert_int_equal(py_line_of(table, sizeof(entry), 1, 10), INT32_MAX);
	assert_int_equal(py_line_of(table, 0, 7, 10), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_garbage_table),
		PY_MINOR_TESTS(test_python),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
