/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interp/py_cache.h - the on-disk cache of what python.c learns from an
 * interpreter file (struct py_file: its version, where _PyRuntime,
 * PyCode_Type and the evaluator are, its load segments), kept by the
 * file's GNU build-id, so that the next run that meets the same python3.X
 * or libpython reads ~200 bytes instead of its symbols and those of its
 * -dbg file (python3.11: 1.5-2.2 ms a run on the test VM;
 * docs/PERFORMANCE.md, session 40).
 *
 * The files live in the unwind-table cache's directory (unwind/cfi_cache.h;
 * its trimming does not count them: ~300 bytes per interpreter build),
 * named by the build-id in hex plus ".py":
 *
 *   struct py_cache_header      magic, builder id, build-id, the facts,
 *                               XXH3-64 checksum (cache_file.h)
 *   struct elf_segment[nr]      the file's PT_LOAD segments
 *
 * in this machine's byte order.  The builder id hashes python.c and this
 * file's sources (the Makefile's PY_BUILDER_ID): another builder's file is
 * a miss and is replaced.  Facts read without the evaluator's .cold part
 * and without a debug file are a miss once a debug file for the build-id
 * is installed (sym_cache_debug_installed()).  A file that fails a check
 * is a miss and is removed.  Files not from a CPython are kept too: their
 * next inspection is a hit that says "not an interpreter".
 */
#ifndef BPFPROF_INTERP_PY_CACHE_H
#define BPFPROF_INTERP_PY_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "interp_impl.h"

#define PY_CACHE_SUFFIX ".py"

/*
 * The facts of the file of the @id_size-byte build-id @id from the cache
 * directory @dir into @f: is_python, minor, layout (py_layout_find() of
 * minor), runtime, code_type, eval and segs (malloc()ed: @f owns them);
 * @f's device and inode are left alone.  0; -ENOENT when there is no
 * usable file (none, or one that failed a check, removed) or @dir is
 * NULL; -ENOMEM.
 */
int py_cache_get(const char *dir, const uint8_t *id, size_t id_size, struct py_file *f);

/*
 * Store the facts of @f (as py_cache_get() returns them) for build-id
 * @id in @dir, written whole or not at all (cache_file_write()).
 * 0; -EINVAL for a NULL @dir or a build-id of 0 or over 64 bytes; the
 * errno of a failed write.
 */
int py_cache_put(const char *dir, const uint8_t *id, size_t id_size, const struct py_file *f);

#endif /* BPFPROF_INTERP_PY_CACHE_H */
