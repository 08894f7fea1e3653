// SPDX-License-Identifier: BSD-2-Clause
/*
 * core_btf.c - owns the minimal BTF embedded at build time (see
 * core_btf.h): the check that the running kernel is the one it was cut
 * from, and the memfd that hands it to libbpf.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core_btf.h"
#include "core_btf_kernel.h"	/* generated: CORE_BTF_RELEASE, _VERSION, _VMLINUX_SIZE */

/* user/core_btf_data.S: the bytes of BUILD/profile.min.btf */
extern const unsigned char core_btf_data[], core_btf_data_end[];

/* True if the embedded BTF was made on the running kernel (uname release
 * and version, and the size of /sys/kernel/btf/vmlinux, all equal). */
static int fits_kernel(void)
{
	struct utsname u;
	struct stat st;

	if (uname(&u) || strcmp(u.release, CORE_BTF_RELEASE) || strcmp(u.version, CORE_BTF_VERSION))
		return 0;
	return stat("/sys/kernel/btf/vmlinux", &st) == 0 &&
	       (unsigned long long)st.st_size == CORE_BTF_VMLINUX_SIZE;
}

/* Write all of @data to @fd. */
static int write_all(int fd, const unsigned char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *core_btf_open(struct core_btf *cb)
{
	size_t len = (size_t)(core_btf_data_end - core_btf_data);

	cb->fd = -1;
	cb->path[0] = '\0';
	if (getenv("BPFPROF_VMLINUX_BTF") || !len || !fits_kernel())
		return NULL;
	cb->fd = memfd_create("bpfprof-core-btf", MFD_CLOEXEC);
	if (cb->fd < 0)
		return NULL;
	if (write_all(cb->fd, core_btf_data, len)) {
		core_btf_close(cb);
		return NULL;
	}
	snprintf(cb->path, sizeof(cb->path), "/proc/self/fd/%d", cb->fd);
	return cb->path;
}

void core_btf_close(struct core_btf *cb)
{
	if (cb->fd >= 0)
		close(cb->fd);
	cb->fd = -1;
	cb->path[0] = '\0';
}
