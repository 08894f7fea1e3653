// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/py_layout.c - the table of CPython struct offsets per minor
 * version (see py_layout.h for where it comes from and what checks it).
 */
#include <stddef.h>

#include "py_layout.h"

/*
 * 3.6 to 3.10: heap PyFrameObjects, thread states known by thread_id
 * (pthread_self()), no co_qualname (co_name stands for it), no
 * co_code_adaptive; code_names at co_cell2arg, so that the four pointers
 * read hold co_filename, co_name and the line table but not
 * co_zombieframe, which changes as the code runs.  They differ in where
 * the interpreters' list head is (@head: in _PyRuntime, or 3.6's
 * interp_head itself, which python.c gives as the "runtime"), thread_id
 * (@thread_id), f_lasti (@lasti; code units or bytes: @kind), the code
 * object's pointers (3.8 added co_posonlyargcount: @names, the offset of
 * co_cell2arg, and @firstlineno) and the line table's format (@lines).
 */
#define PY_LAYOUT_FRAME_OBJECTS(minor_, head, thread_id, lasti, kind, names, firstlineno, lines) \
	{                                                                                 \
		.minor = (minor_),                                                        \
		.bpf = {                                                                  \
			.runtime_interpreters_head = (head),                              \
			.interp_threads_head = 8,		/* tstate_head */         \
			.tstate_next = 8,                                                 \
			.tstate_native_thread_id = (thread_id),	/* thread_id */           \
			.tstate_cframe = PY_NO_OFFSET,                                    \
			.current_frame = 24,			/* PyThreadState.frame */ \
			.frame_code = 32,                                                 \
			.frame_previous = 24,			/* f_back */              \
			.frame_instr = (lasti),		/* f_lasti */             \
			.frame_is_entry = PY_NO_OFFSET,                                   \
			.frame_owner = PY_NO_OFFSET,                                      \
			.code_adaptive = PY_NO_OFFSET,                                    \
			.code_names = (names),			/* co_cell2arg */         \
			.owner_cstack = 0xff,                                             \
			.frame_kind = (kind),                                             \
			.tstate_id_pthread = 1,                                           \
		},                                                                        \
		.code_filename = (names) + 8, .code_name = (names) + 16,                  \
		.code_qualname = (names) + 16, .code_firstlineno = (firstlineno),         \
		.code_linetable = (names) + 24, .line_format = (lines),                   \
		.str_length = 16, .str_state = 32, .ascii_size = 48, .compact_size = 72,  \
		.bytes_size = 16, .bytes_data = 32, .object_type = 8,                     \
	}

static const struct py_layout layouts[] = {
	PY_LAYOUT_FRAME_OBJECTS(6, 0, 152, 120, PY_FRAME_OBJECT_BYTES, 88, 36, PY_LINES_LNOTAB),
	PY_LAYOUT_FRAME_OBJECTS(7, 24, 176, 104, PY_FRAME_OBJECT_BYTES, 88, 36, PY_LINES_LNOTAB),
	PY_LAYOUT_FRAME_OBJECTS(8, 32, 176, 104, PY_FRAME_OBJECT_BYTES, 96, 40, PY_LINES_LNOTAB),
	PY_LAYOUT_FRAME_OBJECTS(9, 32, 176, 104, PY_FRAME_OBJECT_BYTES, 96, 40, PY_LINES_LNOTAB),
	PY_LAYOUT_FRAME_OBJECTS(10, 32, 176, 96, PY_FRAME_OBJECT_INDEX, 96, 40, PY_LINES_310),
	{
		.minor = 11,
		.bpf = {
			.runtime_interpreters_head = 40,
			.interp_threads_head = 16,
			.tstate_next = 8,
			.tstate_native_thread_id = 160,
			.tstate_cframe = 56,
			.current_frame = 8,		/* _PyCFrame */
			.frame_code = 32,
			.frame_previous = 48,
			.frame_instr = 56,		/* prev_instr */
			.frame_is_entry = 68,
			.frame_owner = 69,
			.code_adaptive = 184,
			.code_names = 112,		/* co_filename */
			.owner_cstack = 0xff,
		},
		.code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_firstlineno = 72, .code_linetable = 136,
		.str_length = 16, .str_state = 32, .ascii_size = 48, .compact_size = 72,
		.bytes_size = 16, .bytes_data = 32, .object_type = 8,
	},
	{
		.minor = 12,
		.bpf = {
			.runtime_interpreters_head = 40,
			.interp_threads_head = 72,
			.tstate_next = 8,
			.tstate_native_thread_id = 144,
			.tstate_cframe = 56,
			.current_frame = 0,		/* _PyCFrame */
			.frame_code = 0,
			.frame_previous = 8,
			.frame_instr = 56,		/* prev_instr */
			.frame_is_entry = PY_NO_OFFSET,
			.frame_owner = 70,
			.code_adaptive = 192,
			.code_names = 112,		/* co_filename */
			.owner_cstack = 3,
		},
		.code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_firstlineno = 68, .code_linetable = 136,
		.str_length = 16, .str_state = 32, .ascii_size = 40, .compact_size = 56,
		.bytes_size = 16, .bytes_data = 32, .object_type = 8,
	},
	{
		.minor = 13,
		.bpf = {
			.runtime_interpreters_head = 632,
			.interp_threads_head = 7344,
			.tstate_next = 8,
			.tstate_native_thread_id = 160,
			.tstate_cframe = PY_NO_OFFSET,
			.current_frame = 72,		/* PyThreadState */
			.frame_code = 0,		/* f_executable */
			.frame_previous = 8,
			.frame_instr = 56,		/* instr_ptr */
			.frame_is_entry = PY_NO_OFFSET,
			.frame_owner = 70,
			.code_adaptive = 200,
			.code_names = 112,		/* co_filename */
			.owner_cstack = 3,
		},
		.code_filename = 112, .code_name = 120, .code_qualname = 128,
		.code_firstlineno = 68, .code_linetable = 136,
		.str_length = 16, .str_state = 32, .ascii_size = 40, .compact_size = 56,
		.bytes_size = 16, .bytes_data = 32, .object_type = 8,
	},
};

const struct py_layout *py_layout_find(unsigned minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}
