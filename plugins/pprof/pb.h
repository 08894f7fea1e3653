/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pb.h - a minimal protocol buffers *encoder* (wire format only), owned by
 * the pprof plugin.  It knows the two wire types profile.proto needs:
 *
 *   varint (wire type 0)            int64/uint64/bool fields
 *   length-delimited (wire type 2)  strings, bytes, packed repeated
 *                                   varints and embedded messages
 *
 * A field is encoded as its key, varint(field_number << 3 | wire_type),
 * followed by the value.  Embedded messages are written in place:
 * pb_begin() writes the key and reserves one byte for the length,
 * pb_end() patches the length in and, if it needs more than one byte,
 * moves the message body up.  Nesting is unlimited (pb_begin returns a
 * mark, the caller keeps it).
 *
 * A message whose length is known in advance (or whose body was encoded
 * elsewhere) is written without moving bytes: pb_len_prefix() writes the
 * key and the length, the caller appends exactly that many bytes with
 * buf_put().
 *
 * The bytes go to an in-memory struct buf (common/buf.h; pb_end() moves
 * bytes back in it).  Errors are sticky: after an allocation failure
 * b->err stays set (-ENOMEM), so callers check once at the end.
 */
#ifndef BPFPROF_PPROF_PB_H
#define BPFPROF_PPROF_PB_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

enum pb_wire_type {
	PB_VARINT = 0,
	PB_LEN = 2,
};

/* Largest encoding of one varint (10 bytes for 64 bits). */
#define PB_VARINT_MAX 10

/* Encode @v as a varint into @out (room for PB_VARINT_MAX); returns bytes. */
size_t pb_encode_varint(uint8_t *out, uint64_t v);

/* Bytes of the varint encoding of @v (1..PB_VARINT_MAX). */
size_t pb_varint_size(uint64_t v);

void pb_varint(struct buf *b, uint64_t v);
void pb_key(struct buf *b, uint32_t field, enum pb_wire_type type);

/* Scalar fields; zero values are left out (proto3 defaults). */
void pb_uint64(struct buf *b, uint32_t field, uint64_t v);
void pb_int64(struct buf *b, uint32_t field, int64_t v);
void pb_bool(struct buf *b, uint32_t field, int v);

/* Length-delimited fields; always written, also when empty (repeated
 * string fields such as the string table need their empty entries). */
void pb_bytes(struct buf *b, uint32_t field, const void *data, size_t len);
void pb_string(struct buf *b, uint32_t field, const char *s);

/* A packed repeated varint field (left out when n == 0). */
void pb_packed_uint64(struct buf *b, uint32_t field, const uint64_t *v, size_t n);
void pb_packed_int64(struct buf *b, uint32_t field, const int64_t *v, size_t n);

/* The key and length of a length-delimited field of @len bytes, which
 * the caller appends next. */
void pb_len_prefix(struct buf *b, uint32_t field, size_t len);

/* Bytes of a length-delimited field @field of @len bytes, key included. */
size_t pb_len_field_size(uint32_t field, size_t len);

/* An embedded message: pb_begin(), its fields, pb_end(mark). */
size_t pb_begin(struct buf *b, uint32_t field);
void pb_end(struct buf *b, size_t mark);

#endif /* BPFPROF_PPROF_PB_H */
