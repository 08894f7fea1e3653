// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_demangle.c - unit tests of user/symbols/demangle.c: mangled names
 * (C++ of V8 and libstdc++, with clone suffixes, operators, lambdas)
 * come out as binutils' c++filt prints them, an independent demangler run
 * here as the oracle, but for the standard library's abbreviations, which
 * c++filt expands (binutils asks for DMGL_VERBOSE) and the C++ runtime
 * does not; Rust's, of both schemes, as c++filt prints them without what
 * DMGL_VERBOSE adds (legacy names' hash, v0 names' crate
 * disambiguators), which perf and Rust's backtraces leave out; a name's
 * length bounds what is read (the symbol version after "@" is not part of
 * it); names that are not "_Z..." or "_R...", or not valid, are left
 * alone (NULL).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbols/demangle.h"

static const char *const mangled[] = {
	"_ZN2v88internal10JsonParserIhE14ParseJsonValueILb0EEENS0_11MaybeHandleINS0_6ObjectEEENS0_6HandleIS5_EE.isra.0",
	"_ZN4burn4WorkIiE3runEmm",
	"_ZN4burn4spinEmd",
	"_ZNKSt9type_info14__is_pointer_pEv",
	"_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
	"_ZZ4mainENKUliE_clEi",
	"_ZN12_GLOBAL__N_13fooEv",
	"_Znwm",
};

/* c++filt's answer for @name, in @buf. */
static void cxxfilt(const char *name, char *buf, size_t size)
{
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "c++filt '%s'", name);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(buf, (int)size, p));
	buf[strcspn(buf, "\n")] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* Each of @names (@nr) demangles to what @expected says of it. */
static void check_names(const char *const *names, size_t nr,
			void (*expected)(const char *name, char *buf, size_t size))
{
	char want[1024];

	for (size_t i = 0; i < nr; i++) {
		char *got = demangle_symbol(names[i], strlen(names[i]));

		expected(names[i], want, sizeof(want));
		assert_string_not_equal(want, names[i]);	/* the oracle knew it */
		assert_non_null(got);
		assert_string_equal(got, want);
		print_message("%s\n  -> %s\n", names[i], got);
		free(got);
	}
}

static void test_as_cxxfilt(void **state)
{
	(void)state;
	check_names(mangled, sizeof(mangled) / sizeof(mangled[0]), cxxfilt);
}

/* Rust symbols (rustc 1.95: t.rs with a module, a trait impl; its std's
 * v0 names), legacy and v0 ("-C symbol-mangling-version=v0"). */
static const char *const rust_mangled[] = {
	"_ZN4core3fmt5write17h0123456789abcdefE",
	"_ZN1t5outer7inner_a17h69525295c324f5d5E",
	"_ZN34_$LT$t..Lcg$u20$as$u20$t..Step$GT$9step_many17h182069fca8a768f8E",
	"_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h168e94e611939a97E",
	"_ZN4core3fmt5write17h0123456789abcdefE.llvm.1234567890",
	"_RNvNtCsjMaewn57Afh_1t5outer7inner_a",
	"_RNvXCsjMaewn57Afh_1tNtB2_3LcgNtB2_4Step9step_many",
	"_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal",
};

/* c++filt's answer without the legacy hash ("::h" and 16 hex digits at
 * the end) and the v0 disambiguators ("[hex]" after a crate's name). */
static void rust_expected(const char *name, char *buf, size_t size)
{
	char *p, *q;
	size_t n;

	cxxfilt(name, buf, size);
	n = strlen(buf);
	if (n > 19 && !strncmp(buf + n - 19, "::h", 3) &&
	    strspn(buf + n - 16, "0123456789abcdef") == 16)
		buf[n - 19] = '\0';
	while ((p = strchr(buf, '[')) && (q = strchr(p, ']')) &&
	       strspn(p + 1, "0123456789abcdef") == (size_t)(q - p - 1))
		memmove(p, q + 1, strlen(q + 1) + 1);
}

static void test_rust(void **state)
{
	(void)state;
	check_names(rust_mangled, sizeof(rust_mangled) / sizeof(rust_mangled[0]), rust_expected);
}

/* std::ostream and std::string, as the C++ runtime, gdb and perf print
 * them; c++filt writes std::basic_ostream<char, std::char_traits<char> >. */
static void test_std_abbreviations(void **state)
{
	char *got = demangle_symbol("_ZlsRSoRKSs", 11);

	(void)state;
	assert_non_null(got);
	assert_string_equal(got, "operator<<(std::ostream&, std::string const&)");
	free(got);
}

/* Only the first @len bytes: "name@@VERSION" as symbol tables have it. */
static void test_length(void **state)
{
	const char *versioned = "_ZN4burn4spinEmd@@BURN_1.0";
	char *got = demangle_symbol(versioned, strcspn(versioned, "@"));

	(void)state;
	assert_non_null(got);
	assert_string_equal(got, "burn::spin(unsigned long, double)");
	free(got);
	/* cut inside the name: no longer a valid one */
	assert_null(demangle_symbol("_ZN4burn4spinEmd", 8));
}

/* Not "_Z..." or "_R...", or not valid: shown as they are. */
static void test_left_alone(void **state)
{
	static const char *const plain[] = {
		"main", "qsort", "i", "f", "_Z", "_Zzz", "_ZN4burn", "__libc_start_main",
		"_GLOBAL__sub_I_main", "_R", "_Rzz", "_RNvC", "_Rust_begin_unwind", "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_null(demangle_symbol(plain[i], strlen(plain[i])));
	assert_null(demangle_symbol(NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_as_cxxfilt),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_std_abbreviations),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_left_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
