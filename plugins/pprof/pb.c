// SPDX-License-Identifier: BSD-2-Clause
/*
 * pb.c - the protocol buffers wire encoder of the pprof plugin (see pb.h):
 * keys, varints, length-delimited fields and embedded messages, appended
 * to a struct buf (common/buf.h).
 */
#include <string.h>

#include "pb.h"

size_t pb_encode_varint(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void pb_varint(struct buf *b, uint64_t v)
{
	if (b->cap - b->len >= PB_VARINT_MAX || !buf_make_room(b, PB_VARINT_MAX))
		b->len += pb_encode_varint(b->data + b->len, v);
}

void pb_key(struct buf *b, uint32_t field, enum pb_wire_type type)
{
	pb_varint(b, (uint64_t)field << 3 | type);
}

void pb_uint64(struct buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

/* int64 (not sint64): negative values are their two's complement, 10 bytes. */
void pb_int64(struct buf *b, uint32_t field, int64_t v)
{
	pb_uint64(b, field, (uint64_t)v);
}

void pb_bool(struct buf *b, uint32_t field, int v)
{
	pb_uint64(b, field, v ? 1 : 0);
}

void pb_bytes(struct buf *b, uint32_t field, const void *data, size_t len)
{
	pb_len_prefix(b, field, len);
	buf_put(b, data, len);
}

void pb_string(struct buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

void pb_packed_uint64(struct buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t mark;

	if (!n)
		return;
	mark = pb_begin(b, field);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
	pb_end(b, mark);
}

void pb_packed_int64(struct buf *b, uint32_t field, const int64_t *v, size_t n)
{
	size_t mark;

	if (!n)
		return;
	mark = pb_begin(b, field);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, (uint64_t)v[i]);
	pb_end(b, mark);
}

void pb_len_prefix(struct buf *b, uint32_t field, size_t len)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, len);
}

size_t pb_len_field_size(uint32_t field, size_t len)
{
	return pb_varint_size((uint64_t)field << 3 | PB_LEN) + pb_varint_size(len) + len;
}

/* Returns the offset of the reserved length byte. */
size_t pb_begin(struct buf *b, uint32_t field)
{
	uint8_t *len;

	pb_key(b, field, PB_LEN);
	len = buf_reserve(b, 1);
	if (!len)
		return 0;
	*len = 0;
	return b->len - 1;
}

void pb_end(struct buf *b, size_t mark)
{
	uint8_t tmp[PB_VARINT_MAX];
	size_t body, n;

	if (b->err)
		return;
	body = b->len - mark - 1;
	n = pb_encode_varint(tmp, body);
	if (n > 1) {
		if (buf_make_room(b, n - 1))
			return;
		memmove(b->data + mark + n, b->data + mark + 1, body);
		b->len += n - 1;
	}
	memcpy(b->data + mark, tmp, n);
}
