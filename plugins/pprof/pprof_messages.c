// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_messages.c - the encoders of the messages of profile.proto
 * (github.com/google/pprof, proto/profile.proto, package
 * perftools.profiles), one function per message, named after it, and the
 * writers of the fields of Profile (see pprof.h for their order).  The
 * field numbers are the ones of the .proto file, repeated here next to
 * each field.
 */
#include "pprof.h"

/* The fields of message Profile (see write_profile_header()). */
enum profile_field {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

/* The label field of message Sample. */
#define SAMPLE_LABEL 3

/* message ValueType { int64 type = 1; int64 unit = 2; } */
static void write_value_type(struct buf *b, uint32_t field, const struct pprof_value_type *v)
{
	size_t m = pb_begin(b, field);

	pb_int64(b, 1, v->type);
	pb_int64(b, 2, v->unit);
	pb_end(b, m);
}

/* message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; } */
static void write_label(struct buf *b, uint32_t field, const struct pprof_label *l)
{
	size_t m = pb_begin(b, field);

	pb_int64(b, 1, l->key);
	pb_int64(b, 2, l->str);
	pb_int64(b, 3, l->num);
	pb_int64(b, 4, l->num_unit);
	pb_end(b, m);
}

/* message Sample { repeated uint64 location_id = 1; repeated int64 value = 2;
 *                  repeated Label label = 3; }
 * Its repeated parts come encoded (struct pprof_sample), so its length is
 * known before it is written and no byte moves. */
static void write_sample(struct buf *b, uint32_t field, const struct pprof_sample *s)
{
	size_t ids = s->kernel_len + s->user_len, values = 0, len;

	for (size_t i = 0; i < PPROF_NR_VALUES; i++)
		values += pb_varint_size((uint64_t)s->values[i]);
	len = (ids ? pb_len_field_size(1, ids) : 0) + pb_len_field_size(2, values) +
	      s->labels_len;
	pb_len_prefix(b, field, len);
	if (ids) {
		pb_len_prefix(b, 1, ids);
		buf_put(b, s->kernel_ids, s->kernel_len);
		buf_put(b, s->user_ids, s->user_len);
	}
	pb_len_prefix(b, 2, values);
	for (size_t i = 0; i < PPROF_NR_VALUES; i++)
		pb_varint(b, (uint64_t)s->values[i]);
	buf_put(b, s->labels, s->labels_len);
}

void write_sample_label(struct buf *b, const struct pprof_label *l)
{
	write_label(b, SAMPLE_LABEL, l);
}

/* message Mapping { uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3;
 *   uint64 file_offset = 4; int64 filename = 5; int64 build_id = 6;
 *   bool has_functions = 7; bool has_filenames = 8; bool has_line_numbers = 9;
 *   bool has_inline_frames = 10; } */
static void write_mapping(struct buf *b, uint32_t field, const struct pprof_mapping *mp)
{
	size_t m = pb_begin(b, field);

	pb_uint64(b, 1, mp->id);
	pb_uint64(b, 2, mp->memory_start);
	pb_uint64(b, 3, mp->memory_limit);
	pb_uint64(b, 4, mp->file_offset);
	pb_int64(b, 5, mp->filename);
	pb_int64(b, 6, mp->build_id);
	pb_bool(b, 7, mp->has_functions);
	pb_bool(b, 8, mp->has_filenames);
	pb_bool(b, 9, mp->has_line_numbers);
	pb_bool(b, 10, mp->has_inline_frames);
	pb_end(b, m);
}

/* message Line { uint64 function_id = 1; int64 line = 2; } */
static void write_line(struct buf *b, uint32_t field, const struct pprof_line *l)
{
	size_t m = pb_begin(b, field);

	pb_uint64(b, 1, l->function_id);
	pb_int64(b, 2, l->line);
	pb_end(b, m);
}

/* message Location { uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3;
 *   repeated Line line = 4; bool is_folded = 5; } */
static void write_location(struct buf *b, uint32_t field, const struct pprof_location *l)
{
	size_t m = pb_begin(b, field);

	pb_uint64(b, 1, l->id);
	pb_uint64(b, 2, l->mapping_id);
	pb_uint64(b, 3, l->address);
	if (l->line.function_id)
		write_line(b, 4, &l->line);
	pb_end(b, m);
}

/* message Function { uint64 id = 1; int64 name = 2; int64 system_name = 3;
 *   int64 filename = 4; int64 start_line = 5; } */
static void write_function(struct buf *b, uint32_t field, const struct pprof_function *f)
{
	size_t m = pb_begin(b, field);

	pb_uint64(b, 1, f->id);
	pb_int64(b, 2, f->name);
	pb_int64(b, 3, f->system_name);
	pb_int64(b, 4, f->filename);
	pb_int64(b, 5, f->start_line);
	pb_end(b, m);
}

/* message Profile { repeated ValueType sample_type = 1; repeated Sample sample = 2;
 *   repeated Mapping mapping = 3; repeated Location location = 4;
 *   repeated Function function = 5; repeated string string_table = 6;
 *   int64 drop_frames = 7; int64 keep_frames = 8; int64 time_nanos = 9;
 *   int64 duration_nanos = 10; ValueType period_type = 11; int64 period = 12;
 *   repeated int64 comment = 13; int64 default_sample_type = 14; }
 * The header: every field but the repeated messages and strings. */
void write_profile_header(struct buf *b, const struct pprof_header *h)
{
	for (size_t i = 0; i < PPROF_NR_VALUES; i++)
		write_value_type(b, PROFILE_SAMPLE_TYPE, &h->sample_type[i]);
	pb_int64(b, PROFILE_TIME_NANOS, h->time_nanos);
	pb_int64(b, PROFILE_DURATION_NANOS, h->duration_nanos);
	write_value_type(b, PROFILE_PERIOD_TYPE, &h->period_type);
	pb_int64(b, PROFILE_PERIOD, h->period);
	pb_packed_int64(b, PROFILE_COMMENT, h->comments, h->nr_comments);
	pb_int64(b, PROFILE_DEFAULT_SAMPLE_TYPE, h->default_sample_type);
}

void write_profile_sample(struct buf *b, const struct pprof_sample *s)
{
	write_sample(b, PROFILE_SAMPLE, s);
}

void write_profile_mapping(struct buf *b, const struct pprof_mapping *m)
{
	write_mapping(b, PROFILE_MAPPING, m);
}

void write_profile_location(struct buf *b, const struct pprof_location *l)
{
	write_location(b, PROFILE_LOCATION, l);
}

void write_profile_function(struct buf *b, const struct pprof_function *f)
{
	write_function(b, PROFILE_FUNCTION, f);
}

void write_profile_string(struct buf *b, const char *s)
{
	pb_string(b, PROFILE_STRING_TABLE, s);
}
