// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/pyline.c - CPython's line tables and str characters (see
 * pyline.h).
 *
 * A location table is a run of entries, each starting with a byte whose
 * top bit is set: bits 6..3 say the kind (15: no location; 14: long form,
 * 13: no columns, both with a signed varint line delta; 10..12: one-line
 * forms, line delta 0..2; 0..9: short forms, same line), bits 2..0 the
 * number of code units the entry covers, minus one.  Varints are 6-bit
 * groups, least significant first, bit 6 set while more follow; a signed
 * varint keeps its sign in bit 0.
 *
 * The older tables are runs of byte pairs (CPython's
 * Objects/lnotab_notes.txt of each version).  3.10's co_linetable: an
 * unsigned count of bytecode bytes the pair covers, then a signed line
 * delta applied at the range's start (-128: the range has no line).
 * 3.6-3.9's co_lnotab: an unsigned bytecode delta, then a signed
 * line delta applied once the bytecode offset reaches the new address.
 */
#include <stdlib.h>

#include "pyline.h"

static unsigned read_varint(const uint8_t *p, size_t len, size_t *i)
{
	unsigned v = 0, shift = 0;

	while (*i < len && shift < 32) {
		uint8_t b = p[(*i)++];

		v |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int read_svarint(const uint8_t *p, size_t len, size_t *i)
{
	unsigned u = read_varint(p, len, i);

	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/* The line delta of the entry at p[*i] (its first byte). */
static int entry_line_delta(const uint8_t *p, size_t len, size_t i)
{
	unsigned kind = (p[i] >> 3) & 15;
	size_t j = i + 1;

	if (kind == 13 || kind == 14)
		return read_svarint(p, len, &j);
	if (kind >= 10 && kind <= 12)
		return (int)kind - 10;
	return 0;
}

int py_line_of(const uint8_t *table, size_t len, int firstlineno, uint32_t instr)
{
	/* 64-bit: a table read while its object was freed may hold anything */
	long long line = firstlineno, last = firstlineno;
	uint64_t addr = 0;
	size_t i = 0;

	while (i < len) {
		unsigned kind, n;

		if (!(table[i] & 0x80)) {	/* not an entry's start: resynchronise */
			i++;
			continue;
		}
		kind = (table[i] >> 3) & 15;
		n = (table[i] & 7) + 1;
		line += entry_line_delta(table, len, i);
		if (kind != 15)
			last = line;
		if (instr < addr + n)
			break;
		addr += n;
		for (i++; i < len && !(table[i] & 0x80); i++)
			;
	}
	return last < 0 ? 0 : last > INT32_MAX ? INT32_MAX : (int)last;
}

int py_line_of_310(const uint8_t *table, size_t len, int firstlineno, uint32_t instr)
{
	uint64_t addr = (uint64_t)instr * 2, start = 0;	/* bytes */
	int line = firstlineno, last = firstlineno;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint64_t end = start + table[i];
		int8_t delta = (int8_t)table[i + 1];

		if (delta != -128) {
			line += delta;
			if (end > start)
				last = line;
		}
		if (addr < end)
			break;
		start = end;
	}
	return last < 0 ? 0 : last;
}

int py_line_of_lnotab(const uint8_t *table, size_t len, int firstlineno, uint32_t instr)
{
	uint64_t addr = (uint64_t)instr * 2, at = 0;	/* bytes */
	int line = firstlineno;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += table[i];
		if (at > addr)
			break;
		line += (int8_t)table[i + 1];
	}
	return line < 0 ? 0 : line;
}

/* Append code point @c to @out as UTF-8; returns the bytes written. */
static size_t put_utf8(char *out, uint32_t c)
{
	if (c >= 0xd800 && c <= 0xdfff)
		c = 0xfffd;
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	if (c > 0x10ffff)
		return put_utf8(out, 0xfffd);
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 63));
	out[2] = (char)(0x80 | ((c >> 6) & 63));
	out[3] = (char)(0x80 | (c & 63));
	return 4;
}

char *py_str_utf8(const uint8_t *data, size_t avail, unsigned kind, size_t length)
{
	size_t n = 0;
	char *out;

	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	if (length > avail / kind)
		length = avail / kind;
	out = malloc(length * 4 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < length; i++) {
		const uint8_t *c = data + i * kind;
		uint32_t cp = kind == 1 ? c[0]
			      : kind == 2 ? (uint32_t)(c[0] | c[1] << 8)
					  : (uint32_t)(c[0] | c[1] << 8 | c[2] << 16 | (uint32_t)c[3] << 24);

		n += put_utf8(out + n, cp);
	}
	out[n] = '\0';
	return out;
}
