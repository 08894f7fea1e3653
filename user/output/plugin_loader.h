/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * plugin_loader.h - finds output plugins, checks that they are trustworthy
 * and speak our ABI, and loads them with dlopen().
 *
 * Search order for --format NAME (file NAME.so): each directory of
 * $BPFPROF_PLUGIN_PATH (colon-separated), the build tree (plugins/ beside
 * the bpfprof executable), then the install directory BPFPROF_PLUGINDIR.
 */
#ifndef BPFPROF_PLUGIN_LOADER_H
#define BPFPROF_PLUGIN_LOADER_H

#include <stdbool.h>
#include <stdio.h>

#include "bpfprof/plugin.h"

struct plugin {
	void *handle;				/* dlopen() handle */
	const struct bpfprof_plugin *desc;	/* what the plugin exported */
	char *path;				/* the file loaded */
};

/*
 * Load the plugin file @path.  Refuses (one line on stderr, negative errno)
 * a missing file, a file that is not an ELF shared object, one without
 * bpfprof_plugin_entry, one built for another ABI version or with missing
 * callbacks, and, when running as root, a file or directory writable by
 * group/others or not owned by root unless @allow_untrusted.
 */
int plugin_load_file(const char *path, bool allow_untrusted, struct plugin *out);

/* Find and load the plugin for --format @name. -ENOENT (listing the known
 * formats) if there is none. */
int plugin_load_format(const char *name, bool allow_untrusted, struct plugin *out);

/* Print "NAME  DESCRIPTION" for every plugin found, first of a name wins. */
void plugin_list_formats(FILE *out, bool allow_untrusted);

/* dlclose and free. Safe on a zeroed struct. */
void plugin_unload(struct plugin *p);

#endif /* BPFPROF_PLUGIN_LOADER_H */
