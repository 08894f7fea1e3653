// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_py_layout.c - unit tests of user/interp/py_layout.c, the table of
 * CPython struct offsets per minor version, against the DWARF of real
 * interpreters read with libdw (libdwfl finds a separate debug file by
 * build-id, as for Debian's python3.11 with python3.11-dbg installed):
 * every field of the table for 3.6 to 3.13 must be its member's offset (a
 * path through nested and anonymous structs; 3.6's list head, which has
 * no _PyRuntime around it, a variable's), the width the readers use
 * must be the member's size, a field the table says a version lacks
 * (PY_NO_OFFSET, 0xff) must be absent from its DWARF (or, "-", be one the
 * walk of that version does not use), the bits of PyASCIIObject.state
 * pynames.c reads (PY_STR_*) must be where the bitfields are, and the
 * version's kinds (frame_kind, tstate_id_pthread, line_format) must be
 * those its DWARF shows (check_kinds()).  A check per byte of struct
 * py_layout makes a field added to the table without a check here fail.
 *
 * Interpreters looked at: /usr/bin/python3.X (Debian's; DWARF from its
 * debug file if installed) and $PYENV_ROOT/versions/3.X.*  (lib/
 * libpython3.X.so.1.0, libpython3.Xm.so.1.0 for 3.6 and 3.7, or
 * bin/python3.X when built static; pyenv's
 * builds keep their DWARF).  A version with no interpreter that has
 * DWARF is skipped with a message.  Within a minor version CPython keeps
 * these layouts (debuggers and profilers rely on it): one build of 3.X
 * with DWARF validates the table of 3.X, and every build found is
 * checked.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "interp/py_layout.h"
#include "py_minors.h"

/* How a field of the table is found in the DWARF. */
enum how {
	MEMBER,			/* offset of a member: "Type.member.member" */
	SIZEOF,			/* size of a type: "Type" */
	ENUMERATOR,		/* value of an enumerator: "enum_tag.NAME" */
};

struct check {
	const char *field;	/* the table's field, for messages */
	size_t off, width;	/* where it is in struct py_layout */
	enum how how;
	/* For 3.6 to 3.13 (index minor - PY_MINOR_FIRST); "!" first: the version has
	 * none (the table holds PY_NO_OFFSET, or 0xff for a uint8_t); "-":
	 * the table holds none, the walk of that version not using it; "@":
	 * a variable, whose address stands for the struct's (the table
	 * holds 0) */
	const char *path[PY_MINOR_LAST - PY_MINOR_FIRST + 1];
	unsigned size;		/* the member's size the readers assume, 0: any */
	unsigned size_old;	/* ... in 3.6-3.10 if not the same */
};

#define F(name) #name, offsetof(struct py_layout, name), sizeof(((struct py_layout *)0)->name)
#define ALL(p) { p, p, p, p, p, p, p, p }
#define NEW(a, b, c) { "-", "-", "-", "-", "-", a, b, c }	/* 3.11+ only */
#define OLD5(p) p, p, p, p, p				/* 3.6 to 3.10 */

static const struct check checks[] = {
	{ F(bpf.runtime_interpreters_head), MEMBER,
	  { "@interp_head", "_PyRuntimeState.interpreters.head", "_PyRuntimeState.interpreters.head",
	    "_PyRuntimeState.interpreters.head", "_PyRuntimeState.interpreters.head",
	    "_PyRuntimeState.interpreters.head", "_PyRuntimeState.interpreters.head",
	    "_PyRuntimeState.interpreters.head" }, 8, 0 },
	{ F(bpf.interp_threads_head), MEMBER,
	  { OLD5("PyInterpreterState.tstate_head"), "PyInterpreterState.threads.head",
	    "PyInterpreterState.threads.head", "PyInterpreterState.threads.head" }, 8, 0 },
	{ F(bpf.tstate_next), MEMBER, ALL("PyThreadState.next"), 8, 0 },
	{ F(bpf.tstate_native_thread_id), MEMBER,
	  { OLD5("PyThreadState.thread_id"), "PyThreadState.native_thread_id",
	    "PyThreadState.native_thread_id", "PyThreadState.native_thread_id" }, 8, 0 },
	{ F(bpf.tstate_cframe), MEMBER,
	  { "!PyThreadState.cframe", "!PyThreadState.cframe", "!PyThreadState.cframe",
	    "!PyThreadState.cframe", "-", "PyThreadState.cframe",
	    "PyThreadState.cframe", "!PyThreadState.cframe" }, 8, 0 },
	{ F(bpf.current_frame), MEMBER,
	  { OLD5("PyThreadState.frame"), "_PyCFrame.current_frame", "_PyCFrame.current_frame",
	    "PyThreadState.current_frame" }, 8, 0 },
	{ F(bpf.frame_code), MEMBER,
	  { OLD5("PyFrameObject.f_code"), "_PyInterpreterFrame.f_code",
	    "_PyInterpreterFrame.f_code", "_PyInterpreterFrame.f_executable" }, 8, 0 },
	{ F(bpf.frame_previous), MEMBER,
	  { OLD5("PyFrameObject.f_back"), "_PyInterpreterFrame.previous",
	    "_PyInterpreterFrame.previous", "_PyInterpreterFrame.previous" }, 8, 0 },
	{ F(bpf.frame_instr), MEMBER,
	  { OLD5("PyFrameObject.f_lasti"), "_PyInterpreterFrame.prev_instr",
	    "_PyInterpreterFrame.prev_instr", "_PyInterpreterFrame.instr_ptr" }, 8, 4 },
	{ F(bpf.frame_is_entry), MEMBER,
	  NEW("_PyInterpreterFrame.is_entry", "!_PyInterpreterFrame.is_entry",
	      "!_PyInterpreterFrame.is_entry"), 1, 0 },
	{ F(bpf.frame_owner), MEMBER, NEW("_PyInterpreterFrame.owner", "_PyInterpreterFrame.owner",
					  "_PyInterpreterFrame.owner"), 1, 0 },
	{ F(bpf.code_adaptive), MEMBER,
	  NEW("PyCodeObject.co_code_adaptive", "PyCodeObject.co_code_adaptive",
	      "PyCodeObject.co_code_adaptive"), 0, 0 },
	{ F(bpf.code_names), MEMBER,
	  { OLD5("PyCodeObject.co_cell2arg"), "PyCodeObject.co_filename",
	    "PyCodeObject.co_filename", "PyCodeObject.co_filename" }, 8, 0 },
	{ F(bpf.owner_cstack), ENUMERATOR,
	  NEW("!_frameowner.FRAME_OWNED_BY_CSTACK", "_frameowner.FRAME_OWNED_BY_CSTACK",
	      "_frameowner.FRAME_OWNED_BY_CSTACK"), 0, 0 },
	{ F(code_filename), MEMBER, ALL("PyCodeObject.co_filename"), 8, 0 },
	{ F(code_name), MEMBER, ALL("PyCodeObject.co_name"), 8, 0 },
	{ F(code_qualname), MEMBER,
	  { OLD5("PyCodeObject.co_name"), "PyCodeObject.co_qualname", "PyCodeObject.co_qualname",
	    "PyCodeObject.co_qualname" }, 8, 0 },
	{ F(code_firstlineno), MEMBER, ALL("PyCodeObject.co_firstlineno"), 4, 0 },
	{ F(code_linetable), MEMBER,
	  { "PyCodeObject.co_lnotab", "PyCodeObject.co_lnotab", "PyCodeObject.co_lnotab",
	    "PyCodeObject.co_lnotab", "PyCodeObject.co_linetable",
	    "PyCodeObject.co_linetable", "PyCodeObject.co_linetable",
	    "PyCodeObject.co_linetable" }, 8, 0 },
	{ F(str_length), MEMBER, ALL("PyASCIIObject.length"), 8, 0 },
	{ F(str_state), MEMBER, ALL("PyASCIIObject.state"), 4, 0 },
	{ F(ascii_size), SIZEOF, ALL("PyASCIIObject"), 0, 0 },
	{ F(compact_size), SIZEOF, ALL("PyCompactUnicodeObject"), 0, 0 },
	{ F(bytes_size), MEMBER, ALL("PyBytesObject.ob_base.ob_size"), 8, 0 },
	{ F(bytes_data), MEMBER, ALL("PyBytesObject.ob_sval"), 0, 0 },
	{ F(object_type), MEMBER, ALL("PyObject.ob_type"), 8, 0 },
};

/* The bits of PyASCIIObject.state pynames.c reads (a uint32_t). */
static const struct {
	const char *path;
	unsigned shift, bits;
} state_bits[] = {
	{ "PyASCIIObject.state.kind", PY_STR_KIND_SHIFT, 3 },
	{ "PyASCIIObject.state.compact", PY_STR_COMPACT_BIT, 1 },
	{ "PyASCIIObject.state.ascii", PY_STR_ASCII_BIT, 1 },
};

/* ---- DWARF, through libdw ------------------------------------------------- */

/* @die's type with typedefs and qualifiers peeled. */
static bool peel_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die cur = *die;

	for (;;) {
		int tag;

		if (!dwarf_attr(&cur, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return false;
		tag = dwarf_tag(out);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type)
			return true;
		cur = *out;
	}
}

/*
 * The first DIE named @name at the top level of one of @dw's compilation
 * units, not a declaration, for which @match(die, out) is true (it fills
 * *@out).
 */
static bool find_named(Dwarf *dw, const char *name, bool (*match)(Dwarf_Die *, Dwarf_Die *),
		       Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				const char *n = dwarf_diename(&die);

				if (n && !strcmp(n, name) && !dwarf_hasattr(&die, DW_AT_declaration) &&
				    match(&die, out))
					return true;
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	return false;
}

/* A complete struct or union, or a typedef of one. */
static bool is_aggregate(Dwarf_Die *die, Dwarf_Die *out)
{
	int tag = dwarf_tag(die);

	if (tag == DW_TAG_typedef)
		return peel_type(die, out) && !dwarf_hasattr(out, DW_AT_declaration) &&
		       (dwarf_tag(out) == DW_TAG_structure_type ||
			dwarf_tag(out) == DW_TAG_union_type);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
		return false;
	*out = *die;
	return true;
}

/* A complete struct or union named @name (its tag or a typedef's name). */
static bool find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	return find_named(dw, name, is_aggregate, out);
}

static Dwarf_Word member_location(Dwarf_Die *m)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;

	if (dwarf_attr(m, DW_AT_data_member_location, &a))
		assert_int_equal(dwarf_formudata(&a, &v), 0);	/* constant form */
	return v;
}

/*
 * The member @name of struct/union @type, looked for through anonymous
 * members too: its DIE in *@m, its offset from @type's start in *@off.
 */
static bool find_member(Dwarf_Die *type, const char *name, Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Die child;

	if (dwarf_child(type, &child) != 0)
		return false;
	do {
		Dwarf_Die inner;
		Dwarf_Word o;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		if (dwarf_diename(&child)) {
			if (strcmp(dwarf_diename(&child), name))
				continue;
			*m = child;
			*off = member_location(&child);
			return true;
		}
		if (peel_type(&child, &inner) && find_member(&inner, name, m, &o)) {
			*off = member_location(&child) + o;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * Resolve "Type.member...": offset in *@off, the last member's DIE in
 * *@m.  False, with the part not found in @why, when absent.
 */
static bool resolve(Dwarf *dw, const char *path, Dwarf_Die *m, Dwarf_Word *off, char *why,
		    size_t whylen)
{
	char buf[256], *save = NULL, *part;
	Dwarf_Die type;
	Dwarf_Word o;

	snprintf(buf, sizeof(buf), "%s", path);
	part = strtok_r(buf, ".", &save);
	if (!find_type(dw, part, &type)) {
		snprintf(why, whylen, "no type %s", part);
		return false;
	}
	*off = 0;
	while ((part = strtok_r(NULL, ".", &save))) {
		if (!find_member(&type, part, m, &o)) {
			snprintf(why, whylen, "no member %s", part);
			return false;
		}
		*off += o;
		if (!peel_type(m, &type) && strtok_r(NULL, ".", &save)) {
			snprintf(why, whylen, "%s has no type", part);
			return false;
		}
	}
	return true;
}

/*
 * The value of the enumerator "TAG.NAME" (@path) of enum TAG.  False,
 * with why in @why, if the enum or its enumerator is absent.
 */
static bool find_enumerator(Dwarf *dw, const char *path, Dwarf_Sword *value, char *why,
			    size_t whylen)
{
	const char *name = strchr(path, '.') + 1;
	size_t taglen = (size_t)(name - 1 - path);
	Dwarf_Off off = 0, next;
	bool seen = false;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die, e;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				const char *tag = dwarf_diename(&die);

				if (dwarf_tag(&die) != DW_TAG_enumeration_type || !tag ||
				    strncmp(tag, path, taglen) || tag[taglen] ||
				    dwarf_child(&die, &e) != 0)
					continue;
				seen = true;
				do {
					Dwarf_Attribute a;

					if (dwarf_tag(&e) == DW_TAG_enumerator &&
					    !strcmp(dwarf_diename(&e), name) &&
					    dwarf_attr(&e, DW_AT_const_value, &a))
						return dwarf_formsdata(&a, value) == 0;
				} while (dwarf_siblingof(&e, &e) == 0);
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	if (seen)
		snprintf(why, whylen, "no enumerator %s", name);
	else
		snprintf(why, whylen, "no enum %.*s", (int)taglen, path);
	return false;
}

static bool is_variable(Dwarf_Die *die, Dwarf_Die *out)
{
	if (dwarf_tag(die) != DW_TAG_variable)
		return false;
	*out = *die;
	return true;
}

/* A variable named @name defined in @dw (not a declaration): *@out. */
static bool find_variable(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	return find_named(dw, name, is_variable, out);
}

/* A member's first bit from its struct's start (DWARF 4+ or 2/3 forms). */
static bool member_bits(Dwarf_Die *m, Dwarf_Word base, Dwarf_Word *first, Dwarf_Word *bits)
{
	Dwarf_Attribute a;
	Dwarf_Word v, bytes;

	if (!dwarf_attr(m, DW_AT_bit_size, &a) || dwarf_formudata(&a, bits))
		return false;
	if (dwarf_attr(m, DW_AT_data_bit_offset, &a))
		return dwarf_formudata(&a, first) == 0 && (*first += (base - member_location(m)) * 8, 1);
	/* DW_AT_bit_offset counts from the storage unit's most significant
	 * bit: on little-endian, first = unit * 8 + size * 8 - offset - bits */
	if (!dwarf_attr(m, DW_AT_bit_offset, &a) || dwarf_formudata(&a, &v) ||
	    !dwarf_attr(m, DW_AT_byte_size, &a) || dwarf_formudata(&a, &bytes))
		return false;
	*first = base * 8 + bytes * 8 - v - *bits;
	return true;
}

/* ---- the checks ------------------------------------------------------------- */

static unsigned table_value(const struct py_layout *l, const struct check *c)
{
	const uint8_t *p = (const uint8_t *)l + c->off;
	uint16_t v16;

	if (c->width == 1)
		return *p;
	memcpy(&v16, p, sizeof(v16));
	return v16;
}

/* One field against @dw; 0 if right, else 1 with a message. */
static int check_field(Dwarf *dw, const char *file, const struct py_layout *l,
		       const struct check *c)
{
	const char *path = c->path[l->minor - PY_MINOR_FIRST];
	bool absent = path[0] == '!';
	unsigned want_none = c->width == 1 ? 0xff : PY_NO_OFFSET, have = table_value(l, c);
	unsigned want_size = l->minor < 11 && c->size_old ? c->size_old : c->size;
	char why[128] = "";
	Dwarf_Die m, type;
	Dwarf_Word off = 0, size = 0;
	Dwarf_Sword value;
	bool found;

	if (path[0] == '-') {		/* not used by this version's walk */
		if (have == want_none)
			return 0;
		print_message("3.%u %s: %s is %u, want %u (not used by 3.%u)\n", l->minor, file,
			      c->field, have, want_none, l->minor);
		return 1;
	}
	if (absent)
		path++;
	switch (c->how) {
	case ENUMERATOR:
		found = find_enumerator(dw, path, &value, why, sizeof(why));
		off = (Dwarf_Word)value;
		break;
	case SIZEOF:
		found = find_type(dw, path, &type) && dwarf_aggregate_size(&type, &off) == 0;
		break;
	default:
		if (path[0] == '@') {	/* the variable's own address: offset 0 */
			found = find_variable(dw, path + 1, &m);
			snprintf(why, sizeof(why), "no variable %s", path + 1);
			break;
		}
		found = resolve(dw, path, &m, &off, why, sizeof(why));
	}
	if (absent) {
		/* absent from a type that is there, not from a DWARF without it */
		if (!found && have == want_none &&
		    (!strncmp(why, "no member", 9) || !strncmp(why, "no enumerator", 13)))
			return 0;
		print_message("3.%u %s: %s is %u, want %u as %s is not in this version: %s\n",
			      l->minor, file, c->field, have, want_none, path,
			      found ? "but it is" : why);
		return 1;
	}
	if (!found) {
		print_message("3.%u %s: %s: %s not in the DWARF (%s)\n", l->minor, file, c->field,
			      path, why[0] ? why : "not found");
		return 1;
	}
	if (off != have) {
		print_message("3.%u %s: %s is %u, the DWARF says %s is %lu\n", l->minor, file,
			      c->field, have, path, (unsigned long)off);
		return 1;
	}
	if (want_size && (!peel_type(&m, &type) || dwarf_aggregate_size(&type, &size) ||
			  size != want_size)) {
		print_message("3.%u %s: %s (%s) is read as %u bytes, the DWARF says %lu\n", l->minor,
			      file, c->field, path, want_size, (unsigned long)size);
		return 1;
	}
	return 0;
}

static int check_state_bits(Dwarf *dw, const char *file, unsigned minor, unsigned *checked)
{
	Dwarf_Die m, state;
	Dwarf_Word off, state_off, first, bits;
	char why[128];
	int wrong = 0;

	if (!resolve(dw, "PyASCIIObject.state", &state, &state_off, why, sizeof(why)))
		fail_msg("3.%u %s: PyASCIIObject.state: %s", minor, file, why);
	for (size_t i = 0; i < sizeof(state_bits) / sizeof(state_bits[0]); i++, (*checked)++) {
		if (!resolve(dw, state_bits[i].path, &m, &off, why, sizeof(why)) ||
		    !member_bits(&m, off, &first, &bits)) {
			print_message("3.%u %s: %s: no bitfield (%s)\n", minor, file,
				      state_bits[i].path, why);
			wrong++;
		} else if (first - state_off * 8 != state_bits[i].shift || bits != state_bits[i].bits) {
			print_message("3.%u %s: %s is read at bit %u (%u bits), the DWARF says bit "
				      "%lu (%lu bits)\n", minor, file, state_bits[i].path,
				      state_bits[i].shift, state_bits[i].bits,
				      (unsigned long)(first - state_off * 8), (unsigned long)bits);
			wrong++;
		}
	}
	return wrong;
}

/* Whether "Type.member" (or the type, without a member) is in @dw. */
static bool has(Dwarf *dw, const char *path)
{
	Dwarf_Die m;
	Dwarf_Word off;
	char why[128];

	if (!strchr(path, '.'))
		return find_type(dw, path, &m);
	return resolve(dw, path, &m, &off, why, sizeof(why));
}

/*
 * The version's kinds against what its DWARF shows: frames are
 * _PyInterpreterFrames (3.11+) or PyFrameObjects whose f_lasti counts
 * code units when the code object has co_linetable (3.10: both came with
 * bpo-27129) and bytes with co_lnotab; thread states know their thread
 * by native_thread_id, else by pthread_self(); the line table is the
 * location table where co_qualname is (both 3.11), else 3.10's
 * co_linetable or co_lnotab.  And what the BPF program reads at once
 * from a thread state or frame object lies within the struct.
 */
static int check_kinds(Dwarf *dw, const char *file, const struct py_layout *l)
{
	const struct py_offsets *o = &l->bpf;
	bool interp_frame = has(dw, "_PyInterpreterFrame");
	bool linetable = has(dw, "PyCodeObject.co_linetable");
	bool lnotab = has(dw, "PyCodeObject.co_lnotab");
	unsigned kind = interp_frame ? PY_FRAME_INTERP
		      : linetable ? PY_FRAME_OBJECT_INDEX : PY_FRAME_OBJECT_BYTES;
	unsigned lines = has(dw, "PyCodeObject.co_qualname") ? PY_LINES_LOCATIONS
		       : linetable ? PY_LINES_310 : PY_LINES_LNOTAB;
	unsigned pthread = !has(dw, "PyThreadState.native_thread_id");
	unsigned id = o->tstate_native_thread_id;
	unsigned frame = o->tstate_cframe != PY_NO_OFFSET ? o->tstate_cframe : o->current_frame;
	unsigned lo = id < frame ? id : frame;
	Dwarf_Die type;
	Dwarf_Word size = 0;
	int wrong = 0;

	if (o->frame_kind != kind || (!interp_frame && !has(dw, "PyFrameObject.f_lasti"))) {
		print_message("3.%u %s: frame_kind is %u, the DWARF says %u\n", l->minor, file,
			      o->frame_kind, kind);
		wrong++;
	}
	if (o->tstate_id_pthread != pthread) {
		print_message("3.%u %s: tstate_id_pthread is %u, the DWARF says %u\n", l->minor,
			      file, o->tstate_id_pthread, pthread);
		wrong++;
	}
	if (l->line_format != lines || (lines == PY_LINES_LNOTAB && !lnotab)) {
		print_message("3.%u %s: line_format is %u, the DWARF says %u\n", l->minor, file,
			      l->line_format, lines);
		wrong++;
	}
	if (!find_type(dw, "PyThreadState", &type) || dwarf_aggregate_size(&type, &size) ||
	    lo + PY_TSTATE_READ > size) {
		print_message("3.%u %s: %d bytes read from PyThreadState offset %u: it has %lu\n",
			      l->minor, file, PY_TSTATE_READ, lo, (unsigned long)size);
		wrong++;
	}
	if (!interp_frame && (!find_type(dw, "PyFrameObject", &type) ||
			      dwarf_aggregate_size(&type, &size) || size < PY_FRAME_OBJECT_READ)) {
		print_message("3.%u %s: %d bytes read from a PyFrameObject: it has %lu\n", l->minor,
			      file, PY_FRAME_OBJECT_READ, (unsigned long)size);
		wrong++;
	}
	/* the fields the walk takes from those bytes, 8 bytes each (py_buf_u64()) */
	if (!interp_frame && (o->frame_code + 8 > PY_FRAME_OBJECT_READ ||
			      o->frame_previous + 8 > PY_FRAME_OBJECT_READ ||
			      o->frame_instr + 8 > PY_FRAME_OBJECT_READ)) {
		print_message("3.%u %s: a frame field lies beyond the %d bytes read\n", l->minor,
			      file, PY_FRAME_OBJECT_READ);
		wrong++;
	}
	return wrong;
}

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Check the table of 3.@minor against @file; false if it has no DWARF. */
static bool check_file(const char *file, unsigned minor)
{
	const struct py_layout *l = py_layout_find(minor);
	Dwfl *dwfl = dwfl_begin(&offline);
	const char *debug = NULL;
	unsigned bits = 0;
	int wrong = 0;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf *dw;

	assert_non_null(l);
	assert_non_null(dwfl);
	mod = dwfl_report_offline(dwfl, "", file, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	if (!dw) {
		print_message("3.%u %s: no DWARF (%s)\n", minor, file, dwfl_errmsg(-1));
		dwfl_end(dwfl);
		return false;
	}
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		wrong += check_field(dw, file, l, &checks[i]);
	wrong += check_state_bits(dw, file, minor, &bits);
	wrong += check_kinds(dw, file, l);
	print_message("3.%u %s (DWARF of %s): %zu table fields and %u state bits checked, "
		      "%d wrong\n", minor, file, debug ? debug : file,
		      sizeof(checks) / sizeof(checks[0]), bits, wrong);
	dwfl_end(dwfl);
	if (wrong)
		fail_msg("3.%u %s: %d field(s) of py_layout.c disagree with the DWARF", minor, file,
			 wrong);
	return true;
}

/* Every build of 3.@minor found; skip if none has DWARF. */
static void check_minor(unsigned minor)
{
	const char *root = getenv("PYENV_ROOT");
	char path[PATH_MAX], pattern[PATH_MAX];
	unsigned checked = 0;
	glob_t g;

	snprintf(path, sizeof(path), "/usr/bin/python3.%u", minor);
	if (!access(path, R_OK))
		checked += check_file(path, minor);
	snprintf(pattern, sizeof(pattern), "%s/versions/3.%u.*",
		 root && *root ? root : "/root/.pyenv", minor);
	if (!glob(pattern, GLOB_ONLYDIR, NULL, &g)) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			snprintf(path, sizeof(path), "%s/lib/libpython3.%u.so.1.0", g.gl_pathv[i],
				 minor);
			if (access(path, R_OK))		/* 3.6, 3.7 */
				snprintf(path, sizeof(path), "%s/lib/libpython3.%um.so.1.0",
					 g.gl_pathv[i], minor);
			if (access(path, R_OK))
				snprintf(path, sizeof(path), "%s/bin/python3.%u", g.gl_pathv[i],
					 minor);
			if (!access(path, R_OK))
				checked += check_file(path, minor);
		}
		globfree(&g);
	}
	if (!checked) {
		print_message("skip: no CPython 3.%u with DWARF here (looked at "
			      "/usr/bin/python3.%u and %s)\n", minor, minor, pattern);
		skip();
	}
}

/* Every byte of struct py_layout is checked (or is the version, padding). */
static void test_every_field_checked(void **state)
{
	uint8_t covered[sizeof(struct py_layout)] = { 0 };

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		memset(covered + checks[i].off, 1, checks[i].width);
	memset(covered + offsetof(struct py_layout, minor), 1, sizeof(unsigned));
	memset(covered + offsetof(struct py_layout, bpf.pad), 1,
	       sizeof(((struct py_offsets *)0)->pad));
	memset(covered + offsetof(struct py_layout, pad), 1, sizeof(((struct py_layout *)0)->pad));
	/* check_kinds() */
	memset(covered + offsetof(struct py_layout, bpf.frame_kind), 1, 1);
	memset(covered + offsetof(struct py_layout, bpf.tstate_id_pthread), 1, 1);
	memset(covered + offsetof(struct py_layout, line_format), 1,
	       sizeof(((struct py_layout *)0)->line_format));
	for (size_t i = 0; i < sizeof(covered); i++)
		if (!covered[i])
			fail_msg("byte %zu of struct py_layout has no DWARF check: a new field? "
				 "add it to checks[]", i);
	for (unsigned minor = PY_MINOR_FIRST; minor <= PY_MINOR_LAST; minor++)
		assert_non_null(py_layout_find(minor));
	assert_null(py_layout_find(PY_MINOR_FIRST - 1));
	assert_null(py_layout_find(PY_MINOR_LAST + 1));
}

/* The BPF walk reads a frame's first PY_FRAME_READ bytes at once
 * (bpf/python.bpf.h, py_frame_read()), PY_FRAME_OBJECT_READ of a
 * PyFrameObject: every frame field must lie in them. */
static void test_frame_fields_in_one_read(void **state)
{
	for (unsigned minor = PY_MINOR_FIRST; minor <= PY_MINOR_LAST; minor++) {
		const struct py_offsets *o = &py_layout_find(minor)->bpf;
		const unsigned read = minor >= 11 ? PY_FRAME_READ : PY_FRAME_OBJECT_READ;
		const struct { const char *name; unsigned off, size; } f[] = {
			{ "frame_code", o->frame_code, 8 },
			{ "frame_previous", o->frame_previous, 8 },
			{ "frame_instr", o->frame_instr, 8 },	/* f_lasti read as 8 too */
			{ "frame_is_entry", o->frame_is_entry, 1 },
			{ "frame_owner", o->frame_owner, 1 },
		};

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (f[i].off != PY_NO_OFFSET && f[i].off + f[i].size > read)
				fail_msg("3.%u: %s at %u is beyond the %u bytes read at once",
					 minor, f[i].name, f[i].off, read);
	}
}

/* The BPF program reads PY_CODE_NAMES_READ bytes at code_names to tell a
 * code object from another at its address (bpf/new_stack.bpf.h): the
 * pointers the collector names it by must lie in them, so that a change
 * of any of them is seen. */
static void test_code_names_in_one_read(void **state)
{
	for (unsigned minor = PY_MINOR_FIRST; minor <= PY_MINOR_LAST; minor++) {
		const struct py_layout *l = py_layout_find(minor);
		const unsigned start = l->bpf.code_names;
		const struct { const char *name; unsigned off; } f[] = {
			{ "code_filename", l->code_filename },
			{ "code_name", l->code_name },
			{ "code_qualname", l->code_qualname },
			{ "code_linetable", l->code_linetable },
		};

		assert_int_not_equal(start, PY_NO_OFFSET);
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
			if (f[i].off < start || f[i].off + 8 > start + PY_CODE_NAMES_READ)
				fail_msg("3.%u: %s at %u is outside the %d bytes read at %u", minor,
					 f[i].name, f[i].off, PY_CODE_NAMES_READ, start);
	}
}

/* The BPF program reads PY_TSTATE_READ bytes of a thread state from the
 * first of the two fields each sample needs (bpf/python.bpf.h,
 * py_tstate_still()): the other must lie in them too. */
static void test_tstate_fields_in_one_read(void **state)
{
	for (unsigned minor = PY_MINOR_FIRST; minor <= PY_MINOR_LAST; minor++) {
		const struct py_offsets *o = &py_layout_find(minor)->bpf;
		unsigned id = o->tstate_native_thread_id;
		unsigned frame = o->tstate_cframe != PY_NO_OFFSET ? o->tstate_cframe
								  : o->current_frame;
		unsigned lo = id < frame ? id : frame, hi = id < frame ? frame : id;

		assert_int_not_equal(frame, PY_NO_OFFSET);
		if (hi + 8 - lo > PY_TSTATE_READ)
			fail_msg("3.%u: native_thread_id at %u and the frame's field at %u are "
				 "more than the %d bytes read at once apart", minor, id, frame,
				 PY_TSTATE_READ);
	}
}

/* One test per minor version (py_minors.h): its number is the state. */
static void test_python(void **state)
{
	check_minor(*(unsigned *)*state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_field_checked),
		cmocka_unit_test(test_frame_fields_in_one_read),
		cmocka_unit_test(test_code_names_in_one_read),
		cmocka_unit_test(test_tstate_fields_in_one_read),
		PY_MINOR_TESTS(test_python),
	};

	/* Debug files from the machine only, never from the network. */
	unsetenv("DEBUGINFOD_URLS");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
