// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cgroup.c - unit tests of user/targets/cgroup.c against a mount
 * table written by the test (directories under a temporary directory
 * stand for the cgroup mounts): the hierarchy and depth of absolute and
 * relative paths, the /proc/PID/cgroup form, a bind mount of a sub-cgroup
 * (its root counts in the depth), v1 controllers, escaped mount points,
 * and the errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpfprof.h"
#include "targets/cgroup.h"

static char root[PATH_MAX], mountinfo[PATH_MAX + 16];

static void mkdirs(const char *rel)
{
	char path[2 * PATH_MAX], *p;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static int setup(void **unused)
{
	char tmpl[] = "/tmp/bpfprof-cgroup-test.XXXXXX";
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, root));
	mkdirs("v2/slurm/job_5/step_0");
	mkdirs("freezer/slurm/uid_0/job_7");
	mkdirs("named/x");
	mkdirs("bound/job_9");
	mkdirs("with space/a");
	mkdirs("plain/dir");
	snprintf(mountinfo, sizeof(mountinfo), "%s/mountinfo", root);
	f = fopen(mountinfo, "w");
	assert_non_null(f);
	fprintf(f, "22 1 0:21 / /proc rw - proc proc rw\n");
	fprintf(f, "41 31 0:38 / %s/v2 rw,relatime - cgroup2 cgroup2 rw\n", root);
	fprintf(f, "37 31 0:34 / %s/freezer rw,relatime - cgroup cgroup rw,freezer\n", root);
	fprintf(f, "40 31 0:37 / %s/named rw,relatime - cgroup cgroup rw,name=systemd\n", root);
	/* a bind mount of freezer's /node2 (a node of the test's Slurm cluster) */
	fprintf(f, "90 31 0:34 /node2/slurm %s/bound rw - cgroup cgroup rw,freezer\n", root);
	fprintf(f, "91 31 0:38 / %s/with\\040space rw - cgroup2 cgroup2 rw\n", root);
	fclose(f);
	return 0;
}

static int teardown(void **unused)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void expect(const char *arg, uint32_t hierarchy, uint32_t level, const char *rel)
{
	struct cgroup_target t;
	char want[2 * PATH_MAX];
	struct stat st;

	assert_int_equal(cgroup_target_resolve(arg, mountinfo, &t), 0);
	snprintf(want, sizeof(want), "%s/%s", root, rel);
	assert_string_equal(t.path, want);
	assert_int_equal(t.hierarchy, hierarchy);
	assert_int_equal(t.level, level);
	assert_int_equal(stat(want, &st), 0);
	assert_int_equal(t.id, st.st_ino);
}

static void test_v2(void **unused)
{
	char abs[2 * PATH_MAX];

	snprintf(abs, sizeof(abs), "%s/v2/slurm/job_5", root);
	expect(abs, BPFPROF_CGROUP_V2, 2, "v2/slurm/job_5");
	expect("slurm/job_5/step_0", BPFPROF_CGROUP_V2, 3, "v2/slurm/job_5/step_0");
	expect("/slurm/job_5", BPFPROF_CGROUP_V2, 2, "v2/slurm/job_5");	/* /proc/PID/cgroup */
	expect("/", BPFPROF_CGROUP_V2, 0, "v2");
	expect("slurm/../slurm", BPFPROF_CGROUP_V2, 1, "v2/slurm");
}

static void test_v1_and_bind_mounts(void **unused)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/freezer/slurm/uid_0/job_7", root);
	expect(path, BPFPROF_CGROUP_V1_FREEZER, 3, "freezer/slurm/uid_0/job_7");
	/* the mount's own root, /node2/slurm, is two levels down */
	snprintf(path, sizeof(path), "%s/bound/job_9", root);
	expect(path, BPFPROF_CGROUP_V1_FREEZER, 3, "bound/job_9");
	snprintf(path, sizeof(path), "%s/with space/a", root);
	expect(path, BPFPROF_CGROUP_V2, 1, "with space/a");
}

static void test_errors(void **unused)
{
	struct cgroup_target t;
	char path[2 * PATH_MAX];

	assert_int_equal(cgroup_target_resolve("nosuch", mountinfo, &t), -ENOENT);
	assert_int_equal(cgroup_target_resolve("", mountinfo, &t), -ENOENT);
	snprintf(path, sizeof(path), "%s/plain/dir", root);	/* no cgroup mount */
	assert_int_equal(cgroup_target_resolve(path, mountinfo, &t), -ENOENT);
	snprintf(path, sizeof(path), "%s/named/x", root);	/* v1 without a controller */
	assert_int_equal(cgroup_target_resolve(path, mountinfo, &t), -EINVAL);
	/* below the cgroup2 mount, then out of it */
	assert_int_equal(cgroup_target_resolve("/../plain", mountinfo, &t), -ENOTDIR);
	assert_int_equal(cgroup_target_resolve("slurm", "/nonexistent/mountinfo", &t), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_v1_and_bind_mounts),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
