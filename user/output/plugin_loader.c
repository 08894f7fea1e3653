// SPDX-License-Identifier: BSD-2-Clause
/*
 * plugin_loader.c - owns finding, vetting and dlopen()ing output plugins
 * (see plugin_loader.h).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin_loader.h"

#define MAX_DIRS 16

/* While listing formats, broken plugins are skipped without a word. */
static bool quiet;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* Directories to search, in order; returns how many (strings malloc'd). */
static int search_dirs(char *dirs[MAX_DIRS])
{
	const char *env = getenv("BPFPROF_PLUGIN_PATH");
	char exe[PATH_MAX];
	ssize_t n;
	int nr = 0;

	if (env && *env) {
		char *copy = strdup(env), *save = NULL;

		for (char *d = strtok_r(copy, ":", &save); d && nr < MAX_DIRS - 2;
		     d = strtok_r(NULL, ":", &save))
			dirs[nr++] = strdup(d);
		free(copy);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if (asprintf(&dirs[nr], "%s/plugins", dirname(exe)) >= 0)
			nr++;
	}
	dirs[nr++] = strdup(BPFPROF_PLUGINDIR);
	return nr;
}

static void free_dirs(char *dirs[], int nr)
{
	for (int i = 0; i < nr; i++)
		free(dirs[i]);
}

/* check_trust() of the file @path (no symlink resolution); messages name @shown. */
static int check_trust_of(const char *shown, const char *path)
{
	char *copy = strdup(path), *dir;
	struct stat st;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	for (int i = 0; i < 2 && !err; i++) {
		const char *what = i ? dir : path;

		if (stat(what, &st)) {
			err = -errno;
			break;
		}
		if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
			say("bpfprof: refusing plugin '%s': %s '%s' is %s; as root bpfprof "
				"only loads plugins that only root can modify (fix the owner/mode, or "
				"pass --allow-untrusted-plugin)\n", shown, i ? "directory" : "file", what,
				st.st_uid != 0 ? "not owned by root" : "writable by group or others");
			err = -EPERM;
		}
	}
	free(copy);
	return err;
}

/* As root, only load code that only root could have written: the file
 * that is loaded, after symlinks, and the directories holding the link
 * and the file. */
static int check_trust(const char *path, bool allow_untrusted)
{
	char *real;
	int err;

	if (geteuid() != 0 || allow_untrusted)
		return 0;
	real = realpath(path, NULL);
	if (!real)
		return -errno;
	err = check_trust_of(path, path);
	if (!err && strcmp(real, path))
		err = check_trust_of(path, real);
	free(real);
	return err;
}

static int check_elf_shared_object(const char *path)
{
	unsigned char hdr[18];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		int err = -errno;

		say("bpfprof: cannot open plugin '%s': %s\n", path, strerror(-err));
		return err;
	}
	n = read(fd, hdr, sizeof(hdr));
	close(fd);
	/* e_type at offset 16: ET_DYN (3) */
	if (n != (ssize_t)sizeof(hdr) || memcmp(hdr, "\177ELF", 4) || hdr[16] != 3) {
		say("bpfprof: plugin '%s' is not an ELF shared object; build it with "
			"cc -shared -fPIC\n", path);
		return -ENOEXEC;
	}
	return 0;
}

static int check_desc(const char *path, const struct bpfprof_plugin *d)
{
	if (!d) {
		say("bpfprof: plugin '%s' declined ABI version %u; rebuild it against this "
			"bpfprof's bpfprof/plugin.h\n", path, BPFPROF_PLUGIN_ABI_VERSION);
		return -EPROTO;
	}
	if (d->abi_version != BPFPROF_PLUGIN_ABI_VERSION) {
		say("bpfprof: plugin '%s' was built for plugin ABI version %u, this bpfprof "
			"speaks version %u; rebuild it against this bpfprof's bpfprof/plugin.h\n",
			path, d->abi_version, BPFPROF_PLUGIN_ABI_VERSION);
		return -EPROTO;
	}
	if (!d->name || !*d->name || !d->open || !d->write || !d->close ||
	    ((d->flags & BPFPROF_PLUGIN_STREAM) && !d->event)) {
		say("bpfprof: plugin '%s' is incomplete: it must set name, open, write and "
			"close (and event for streaming plugins)\n", path);
		return -EPROTO;
	}
	return 0;
}

int plugin_load_file(const char *path, bool allow_untrusted, struct plugin *out)
{
	bpfprof_plugin_entry_fn entry;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = check_elf_shared_object(path)) || (err = check_trust(path, allow_untrusted)))
		return err;
	out->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!out->handle) {
		say("bpfprof: cannot load plugin '%s': %s\n", path, dlerror());
		return -ENOEXEC;
	}
	*(void **)&entry = dlsym(out->handle, BPFPROF_PLUGIN_ENTRY);
	if (!entry) {
		say("bpfprof: plugin '%s' does not export %s(); is it a bpfprof output "
			"plugin?\n", path, BPFPROF_PLUGIN_ENTRY);
		plugin_unload(out);
		return -ENOEXEC;
	}
	out->desc = entry(BPFPROF_PLUGIN_ABI_VERSION);
	if ((err = check_desc(path, out->desc))) {
		plugin_unload(out);
		return err;
	}
	out->path = strdup(path);
	return 0;
}

int plugin_load_format(const char *name, bool allow_untrusted, struct plugin *out)
{
	char *dirs[MAX_DIRS], *path = NULL;
	int nr = search_dirs(dirs), err = -ENOENT;

	if (strchr(name, '/') || !*name) {
		fprintf(stderr, "bpfprof: invalid format name '%s'; use --plugin PATH.so for a file\n",
			name);
		free_dirs(dirs, nr);
		return -EINVAL;
	}
	for (int i = 0; i < nr && err == -ENOENT; i++) {
		if (asprintf(&path, "%s/%s.so", dirs[i], name) < 0)
			break;
		if (access(path, F_OK) == 0)
			err = plugin_load_file(path, allow_untrusted, out);
		free(path);
	}
	free_dirs(dirs, nr);
	if (err == -ENOENT) {
		fprintf(stderr, "bpfprof: unknown format '%s'; known formats:", name);
		plugin_list_formats(stderr, allow_untrusted);
	}
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void plugin_list_formats(FILE *out, bool allow_untrusted)
{
	char *dirs[MAX_DIRS], *seen[256];
	int nr = search_dirs(dirs), nseen = 0;
	bool inline_list = out == stderr;

	for (int i = 0; i < nr; i++) {
		DIR *d = opendir(dirs[i]);
		char *names[256];
		int nn = 0;
		struct dirent *de;

		while (d && (de = readdir(d)) && nn < 256) {
			size_t len = strlen(de->d_name);

			if (len > 3 && !strcmp(de->d_name + len - 3, ".so"))
				names[nn++] = strndup(de->d_name, len - 3);
		}
		if (d)
			closedir(d);
		qsort(names, nn, sizeof(*names), cmp_str);
		for (int j = 0; j < nn; j++) {
			struct plugin p;
			char *path = NULL;
			bool dup = false;

			for (int k = 0; k < nseen; k++)
				dup = dup || !strcmp(seen[k], names[j]);
			if (dup || nseen >= 256 || asprintf(&path, "%s/%s.so", dirs[i], names[j]) < 0) {
				free(names[j]);
				continue;
			}
			quiet = true;
			if (plugin_load_file(path, allow_untrusted, &p) == 0) {
				if (inline_list)
					fprintf(out, " %s", p.desc->name);
				else
					fprintf(out, "%-12s %s\n", p.desc->name,
						p.desc->description ? p.desc->description : "");
				plugin_unload(&p);
				seen[nseen++] = names[j];
			} else {
				free(names[j]);
			}
			quiet = false;
			free(path);
		}
	}
	if (inline_list)
		fprintf(out, "%s\n", nseen ? "" : " (none found)");
	for (int k = 0; k < nseen; k++)
		free(seen[k]);
	free_dirs(dirs, nr);
}

void plugin_unload(struct plugin *p)
{
	if (p->handle)
		dlclose(p->handle);
	free(p->path);
	memset(p, 0, sizeof(*p));
}
