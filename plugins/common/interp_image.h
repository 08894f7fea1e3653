/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/interp_image.h - names of interpreted frames (Python functions,
 * BPFPROF_INTERP_FRAME_START .. END of plugin.h) for readers that name
 * addresses only from the files a process maps: perf (plugins/perf/) and
 * google-pprof (plugins/gperftools/).  Such a plugin writes, beside its
 * output, an image: a symbol-only ELF file with one function symbol per
 * interpreted function, at the function's address minus
 * BPFPROF_INTERP_FRAME_START, and tells its reader that the whole range
 * maps that file at offset 0.
 *
 * The image is "OUTPUT.python.so" (INTERP_IMAGE_SUFFIX), a companion file
 * of the output (plugin.h's host->companion()): the host publishes it
 * together with the output, or neither.  A host without companion()
 * (abi_revision 0) gets no image and the frames stay unnamed.  Its
 * build-id is a hash of its symbols, so that a reader that checks
 * build-ids (perf) never names frames from another run's image.
 */
#ifndef BPFPROF_COMMON_INTERP_IMAGE_H
#define BPFPROF_COMMON_INTERP_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "bpfprof/plugin.h"
#include "common/hashtab.h"

#define INTERP_IMAGE_SUFFIX ".python.so"

/* One function of the image: [value, value + size) of the mapping. */
struct interp_image_sym {
	uint64_t value, size;
	const char *name;		/* the host's string */
};

/* The functions collected so far; a zeroed struct is empty. */
struct interp_image {
	struct hashtab index;		/* (function_start, 0) -> syms[] */
	struct interp_image_sym *syms;
	size_t nr, cap;
	uint64_t conflicts;		/* one address, two names (see add_stack) */
};

/* Whether @ip is an interpreted frame's address. */
static inline int interp_image_frame(uint64_t ip)
{
	return ip >= BPFPROF_INTERP_FRAME_START && ip < BPFPROF_INTERP_FRAME_END;
}

/*
 * The image's final path for output @output_path: made absolute (against the
 * working directory), plus INTERP_IMAGE_SUFFIX; malloc'd in *@path.  0,
 * -EINVAL for an empty path, -ENOMEM, or -errno of getcwd().
 */
int interp_image_path(const char *output_path, char **path);

/*
 * Add the interpreted frames of user stack @u of process @pid, named by
 * @host, to @im.  A frame the host cannot name is left out; one whose
 * function_start another name already has keeps that first name (and
 * counts in im->conflicts).  0 or -ENOMEM.
 */
int interp_image_add_stack(struct interp_image *im, const struct bpfprof_host *host,
			   uint32_t pid, const struct bpfprof_stack *u);

/*
 * Write the image of @im into the companion INTERP_IMAGE_SUFFIX of output
 * @out, which @host publishes with @out; its 20-byte build-id in
 * @build_id.  0, -ENOTSUP if @host has no companion(), or another
 * negative errno (companion() or the write failed).
 */
int interp_image_write(const struct interp_image *im, const struct bpfprof_host *host,
		       const struct bpfprof_output *out, uint8_t build_id[20]);

/* Free what @im holds; it is empty again. */
void interp_image_free(struct interp_image *im);

#endif /* BPFPROF_COMMON_INTERP_IMAGE_H */
