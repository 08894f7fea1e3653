// SPDX-License-Identifier: BSD-2-Clause
/*
 * pprof_messages.c - encodes struct pprof_profile as profile.proto
 * (github.com/google/pprof, proto/profile.proto, package perftools.profiles).
 * One function per message, named after it; the field numbers are the
 * ones of the .proto file, repeated here next to each field.
 */
#include <errno.h>

#include "pprof.h"

/* message ValueType { int64 type = 1; int64 unit = 2; } */
static void write_value_type(struct pb_buf *b, uint32_t field, const struct pprof_value_type *v)
{
	size_t m = pb_begin(b, field);

	pb_int64(b, 1, v->type);
	pb_int64(b, 2, v->unit);
	pb_end(b, m);
}

/* message Label { int64 key = 1; int64 str = 2; int64 num = 3; int64 num_unit = 4; } */
static void write_label(struct pb_buf *b, uint32_t field, const struct pprof_label *l)
{
	size_t m = pb_begin(b, field);

	pb_int64(b, 1, l->key);
	pb_int64(b, 2, l->str);
	pb_int64(b, 3, l->num);
	pb_int64(b, 4, l->num_unit);
	pb_end(b, m);
}

/* message Sample { repeated uint64 location_id = 1; repeated int64 value = 2;
 *                  repeated Label label = 3; } */
static void write_sample(struct pb_buf *b, uint32_t field, const struct pprof_sample *s)
{
	size_t m = pb_begin(b, field);

	pb_packed_uint64(b, 1, s->location_ids, s->nr_locations);
	pb_packed_int64(b, 2, s->values, PPROF_NR_VALUES);
	for (size_t i = 0; i < s->nr_labels; i++)
		write_label(b, 3, &s->labels[i]);
	pb_end(b, m);
}

/* message Mapping { uint64 id = 1; uint64 memory_start = 2; uint64 memory_limit = 3;
 *   uint64 file_offset = 4; int64 filename = 5; int64 build_id = 6;
 *   bool has_functions = 7; bool has_filenames = 8; bool has_line_numbers = 9;
 *   bool has_inline_frames = 10; } */
static void write_mapping(struct pb_buf *b, uint32_t field, const struct pprof_mapping *mp)
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
static void write_line(struct pb_buf *b, uint32_t field, const struct pprof_line *l)
{
	size_t m = pb_begin(b, field);

	pb_uint64(b, 1, l->function_id);
	pb_int64(b, 2, l->line);
	pb_end(b, m);
}

/* message Location { uint64 id = 1; uint64 mapping_id = 2; uint64 address = 3;
 *   repeated Line line = 4; bool is_folded = 5; } */
static void write_location(struct pb_buf *b, uint32_t field, const struct pprof_location *l)
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
static void write_function(struct pb_buf *b, uint32_t field, const struct pprof_function *f)
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
 *   repeated int64 comment = 13; int64 default_sample_type = 14; } */
int write_profile(struct pb_buf *b, const struct pprof_profile *p)
{
	for (size_t i = 0; i < PPROF_NR_VALUES; i++)
		write_value_type(b, 1, &p->sample_type[i]);
	for (size_t i = 0; i < p->nr_samples; i++)
		write_sample(b, 2, &p->samples[i]);
	for (size_t i = 0; i < p->nr_mappings; i++)
		write_mapping(b, 3, &p->mappings[i]);
	for (size_t i = 0; i < p->nr_locations; i++)
		write_location(b, 4, &p->locations[i]);
	for (size_t i = 0; i < p->nr_functions; i++)
		write_function(b, 5, &p->functions[i]);
	for (size_t i = 0; i < p->nr_strings; i++)
		pb_string(b, 6, p->strings[i]);
	pb_int64(b, 9, p->time_nanos);
	pb_int64(b, 10, p->duration_nanos);
	write_value_type(b, 11, &p->period_type);
	pb_int64(b, 12, p->period);
	pb_packed_int64(b, 13, p->comments, p->nr_comments);
	pb_int64(b, 14, p->default_sample_type);
	return b->oom ? -ENOMEM : 0;
}
