/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * py_minors.h - the CPython minor versions bpfprof reads Python frames of
 * (3.PY_MINOR_FIRST to 3.PY_MINOR_LAST), and one cmocka test per version
 * for the unit tests that check each against the interpreters installed
 * (test_py_layout.c, test_pyline.c): PY_MINOR_TESTS(fn) lists a test
 * "test_python_3_N" per version, each calling @fn with a pointer to its N
 * (an unsigned) as its state.
 */
#ifndef BPFPROF_TEST_PY_MINORS_H
#define BPFPROF_TEST_PY_MINORS_H

#include "interp/py_layout.h"

#define PY_MINOR_FIRST PY_LAYOUT_FIRST
#define PY_MINOR_LAST PY_LAYOUT_LAST

static unsigned py_minors[] = { 6, 7, 8, 9, 10, 11, 12, 13 };

_Static_assert(sizeof(py_minors) / sizeof(py_minors[0]) == PY_MINOR_LAST - PY_MINOR_FIRST + 1,
	       "py_minors[] lists every version from PY_MINOR_FIRST to PY_MINOR_LAST");

#define PY_MINOR_TEST(fn, n) \
	{ "test_python_3_" #n, (fn), NULL, NULL, &py_minors[(n) - PY_MINOR_FIRST] }
#define PY_MINOR_TESTS(fn)                                                             \
	PY_MINOR_TEST(fn, 6), PY_MINOR_TEST(fn, 7), PY_MINOR_TEST(fn, 8),              \
	PY_MINOR_TEST(fn, 9), PY_MINOR_TEST(fn, 10), PY_MINOR_TEST(fn, 11),            \
	PY_MINOR_TEST(fn, 12), PY_MINOR_TEST(fn, 13)

#endif /* BPFPROF_TEST_PY_MINORS_H */
