// SPDX-License-Identifier: BSD-2-Clause
/*
 * dbfile.c - the life of one HPCToolkit database file (meta.db,
 * profile.db, cct.db, trace.db) and the common file header they share:
 * hpc_db_create() makes the file in the database directory and leaves
 * room for the header, the file's writer writes its sections through
 * db->w, and hpc_db_finish() appends the footer, patches the header in
 * at offset 0, flushes and closes, returning the first error of all.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "hpc.h"

/* Common file structure: magic, format, version, then (sz, p) pairs. */
void write_file_header(struct bw *w, const char format[4], uint8_t minor,
		       const uint64_t *sections, int nr_sections)
{
	bw_bytes(w, "HPCTOOLKIT", 10);
	bw_bytes(w, format, 4);
	bw_u8(w, 4);
	bw_u8(w, minor);
	for (int i = 0; i < 2 * nr_sections; i++)
		bw_u64(w, sections[i]);
}

int hpc_db_create(struct hpc_db *db, int dir_fd, const char *name, size_t hdr_size)
{
	db->hdr_size = hdr_size;
	db->fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (db->fd < 0)
		return -errno;
	if (bw_init_fd(&db->w, db->fd)) {
		close(db->fd);
		return -ENOMEM;
	}
	bw_zero(&db->w, hdr_size);
	return 0;
}

/* The file header (format @format, version 4.0) over the zeros at offset 0. */
static void patch_file_header(struct hpc_db *db, const char format[4], const uint64_t *sections,
			      int nr_sections)
{
	struct bw h;

	bw_init_mem(&h);
	write_file_header(&h, format, 0, sections, nr_sections);
	if (h.err || h.len > db->hdr_size)
		bw_fail(&db->w, h.err ? h.err : -EINVAL);
	else
		bw_patch(&db->w, 0, h.buf, h.len);
	bw_free(&h);
}

int hpc_db_finish(struct hpc_db *db, const char format[4], const char footer[8],
		  const uint64_t *sections, int nr_sections)
{
	int err;

	bw_bytes(&db->w, footer, 8);
	patch_file_header(db, format, sections, nr_sections);
	err = bw_finish(&db->w);
	bw_free(&db->w);
	if (close(db->fd) < 0 && !err)
		err = -errno;
	return err;
}
