// SPDX-License-Identifier: BSD-2-Clause
/*
 * output.c - owns the temporary-file-and-rename discipline of every output
 * and of its companion files (see output.h), and handing results to the
 * sudo user.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"

static char *dir_of(const char *path)
{
	char *copy = strdup(path), *d;

	if (!copy)
		return NULL;
	d = strdup(dirname(copy));
	free(copy);
	return d;
}

static char *base_of(const char *path)
{
	char *copy = strdup(path), *b;

	if (!copy)
		return NULL;
	b = strdup(basename(copy));
	free(copy);
	return b;
}

/*
 * As root: the first component of @path that is a symlink owned by neither
 * us nor the directory's owner in a world-writable sticky directory (the
 * rule of fs.protected_symlinks, which may be off).  Returns it malloc'd,
 * or NULL.
 */
static char *foreign_sticky_symlink(const char *path)
{
	char *copy = strdup(path), *found = NULL;

	if (!copy || geteuid() != 0) {
		free(copy);
		return NULL;
	}
	for (char *p = copy + 1; !found; p++) {
		char saved = *p;
		struct stat lst, dst;

		if (saved != '/' && saved != '\0')
			continue;
		*p = '\0';
		if (lstat(copy, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			char *parent = dir_of(copy);

			if (parent && stat(parent, &dst) == 0 && (dst.st_mode & S_ISVTX) &&
			    (dst.st_mode & S_IWOTH) && lst.st_uid != geteuid() && lst.st_uid != dst.st_uid)
				found = strdup(copy);
			free(parent);
		}
		*p = saved;
		if (!saved)
			break;
	}
	free(copy);
	return found;
}

int output_preflight(const char *path, bool is_dir)
{
	char *link = foreign_sticky_symlink(path);

	if (link) {
		fprintf(stderr, "bpfprof: refusing to write '%s': '%s' is another user's symlink in a "
			"world-writable sticky directory; choose another -o\n", path, link);
		free(link);
		return -EPERM;
	}

	char *dir = dir_of(path);
	struct stat st, dst;
	int err = 0;

	if (!dir)
		return -ENOMEM;
	if (stat(dir, &dst) || !S_ISDIR(dst.st_mode)) {
		fprintf(stderr, "bpfprof: cannot write '%s': directory '%s' does not exist; create it "
			"or choose another -o\n", path, dir);
		err = -ENOENT;
	} else if (access(dir, W_OK | X_OK)) {
		err = -errno;
		fprintf(stderr, "bpfprof: cannot write '%s': %s in '%s'; choose another -o\n", path,
			errno == EROFS ? "read-only file system" : "no write permission", dir);
	} else if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode) && geteuid() == 0 && (dst.st_mode & S_ISVTX) &&
		    (dst.st_mode & S_IWOTH)) {
			fprintf(stderr, "bpfprof: refusing to write '%s': it is a symlink in the "
				"world-writable sticky directory '%s'; remove it or choose another -o\n",
				path, dir);
			err = -EPERM;
		} else if (!is_dir && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
			   !S_ISLNK(st.st_mode)) {
			/* rename() would replace a device or FIFO (think -o /dev/null) */
			fprintf(stderr, "bpfprof: refusing to write '%s': it is not a regular file "
				"(a device, FIFO or socket); give -o a file name\n", path);
			err = -EINVAL;
		} else if (!is_dir && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "bpfprof: cannot write '%s': it is a directory; give -o a file "
				"name\n", path);
			err = -EISDIR;
		} else if (is_dir && !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "bpfprof: cannot write '%s': it exists and is not a directory; "
				"this format writes a directory, choose another -o\n", path);
			err = -ENOTDIR;
		} else if (is_dir && rmdir(path) && errno != ENOENT) {
			/* rmdir succeeds only on an empty directory, which rename replaces anyway */
			fprintf(stderr, "bpfprof: cannot write '%s': the directory exists and is not "
				"empty; remove it or choose another -o\n", path);
			err = -ENOTEMPTY;
		}
	}
	free(dir);
	return err;
}

/* output_begin() without the message. */
static int begin(struct output *o, const char *path, bool is_dir)
{
	char *dir = dir_of(path), *base = base_of(path);
	int err = 0;

	memset(o, 0, sizeof(*o));
	o->dir_fd = -1;
	o->is_dir = is_dir;
	o->final_path = strdup(path);
	if (!dir || !base || !o->final_path ||
	    asprintf(&o->tmp_path, "%s/.%s.tmp.XXXXXX", dir, base) < 0) {
		o->tmp_path = NULL;
		err = -ENOMEM;
		goto out;
	}
	/* mkstemp/mkdtemp create 0600/0700; outputs get the usual umask'd modes. */
	mode_t mask = umask(0);

	umask(mask);
	if (is_dir) {
		if (!mkdtemp(o->tmp_path) ||
		    (o->dir_fd = open(o->tmp_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    fchmod(o->dir_fd, 0777 & ~mask))
			err = -errno;
	} else {
		int fd = mkostemp(o->tmp_path, O_CLOEXEC);

		if (fd < 0 || fchmod(fd, 0666 & ~mask))
			err = -errno;
		else if (!(o->file = fdopen(fd, "w+b"))) {
			err = -errno;
			close(fd);
			unlink(o->tmp_path);
		} else if ((o->file_buffer = malloc(OUTPUT_BUFFER_BYTES))) {
			/* glibc ignores the size unless it is given the buffer */
			setvbuf(o->file, o->file_buffer, _IOFBF, OUTPUT_BUFFER_BYTES);
		}		/* no memory for it: stdio's default buffer, slower */
	}
	if (err) {
		free(o->tmp_path);
		o->tmp_path = NULL;
	}
out:
	free(dir);
	free(base);
	return err;
}

int output_begin(struct output *o, const char *path, bool is_dir)
{
	int err = begin(o, path, is_dir);

	if (err)
		fprintf(stderr, "bpfprof: cannot create a temporary output beside '%s': %s\n", path,
			strerror(-err));
	return err;
}

static bool valid_suffix(const char *suffix)
{
	size_t n = suffix ? strnlen(suffix, OUTPUT_SUFFIX_MAX + 1) : 0;

	return n >= 1 && n <= OUTPUT_SUFFIX_MAX && !memchr(suffix, '/', n);
}

int output_add_companion(struct output *o, const char *suffix, FILE **file)
{
	size_t len = o->final_path ? strlen(o->final_path) : 0;
	struct output *c;
	char *path = NULL;
	int err;

	*file = NULL;
	if (!valid_suffix(suffix) || !o->tmp_path || o->published)
		return -EINVAL;
	for (unsigned i = 0; i < o->nr_companions; i++)
		if (!strcmp(o->companions[i]->final_path + len, suffix))
			return -EEXIST;
	if (o->nr_companions == OUTPUT_COMPANIONS_MAX)
		return -EMFILE;
	c = calloc(1, sizeof(*c));
	if (!c || asprintf(&path, "%s%s", o->final_path, suffix) < 0) {
		free(c);
		return -ENOMEM;
	}
	err = begin(c, path, false);
	free(path);
	if (err) {
		output_abort(c);
		free(c);
		return err;
	}
	o->companions[o->nr_companions] = c;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* the slot before the count */
	o->nr_companions++;
	*file = c->file;
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static uid_t sudo_uid, sudo_gid;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return lchown(path, sudo_uid, sudo_gid);
}

/* Under sudo, give the output to the user who ran sudo. */
static void give_to_sudo_user(const char *path)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	if (geteuid() != 0 || !u || !g)
		return;
	sudo_uid = (uid_t)strtoul(u, NULL, 10);
	sudo_gid = (gid_t)strtoul(g, NULL, 10);
	nftw(path, chown_entry, 16, FTW_PHYS);
}

static int finish_file(struct output *o)
{
	int err = 0;

	if (fflush(o->file) || ferror(o->file) || fsync(fileno(o->file)))
		err = errno ? -errno : -EIO;
	if (fclose(o->file) && !err)
		err = -errno;
	o->file = NULL;
	free(o->file_buffer);
	o->file_buffer = NULL;
	return err;
}

static int finish_dir(struct output *o)
{
	int err = syncfs(o->dir_fd) ? -errno : 0;

	close(o->dir_fd);
	o->dir_fd = -1;
	return err;
}

static int finish_one(struct output *o)
{
	int err = o->is_dir ? finish_dir(o) : finish_file(o);

	if (!err)
		give_to_sudo_user(o->tmp_path);
	return err;
}

/* Print why @failed (@o itself or one of its companions) was not written,
 * then remove @o's temporaries. */
static void fail_output(struct output *o, const char *failed, int err)
{
	if (failed == o->final_path)
		fprintf(stderr, "bpfprof: cannot write '%s': %s; nothing was written there\n",
			failed, strerror(-err));
	else
		fprintf(stderr, "bpfprof: cannot write '%s': %s; nothing was written there nor "
			"at '%s'\n", failed, strerror(-err), o->final_path);
	output_abort(o);
}

int output_finish(struct output *o)
{
	const char *failed = o->final_path;
	int err = finish_one(o);

	for (unsigned i = 0; i < o->nr_companions && !err; i++) {
		err = finish_one(o->companions[i]);
		failed = o->companions[i]->final_path;
	}
	if (err)
		fail_output(o, failed, err);
	return err;
}

/* The temporaries are in place: keep only the final paths. */
static void mark_published(struct output *o)
{
	free(o->tmp_path);
	o->tmp_path = NULL;
	o->published = true;
	for (unsigned i = 0; i < o->nr_companions; i++)
		mark_published(o->companions[i]);
}

int output_publish(struct output *o)
{
	const char *failed = o->final_path;
	unsigned done = 0;
	int err = 0;

	/* Companions first: whoever finds the output finds them too. */
	for (; done < o->nr_companions; done++) {
		struct output *c = o->companions[done];

		if (rename(c->tmp_path, c->final_path)) {
			err = -errno;
			failed = c->final_path;
			break;
		}
	}
	if (!err && rename(o->tmp_path, o->final_path))
		err = -errno;
	if (err) {
		for (unsigned i = 0; i < done; i++)	/* the ones renamed: none or all */
			unlink(o->companions[i]->final_path);
		fail_output(o, failed, err);
		return err;
	}
	mark_published(o);
	return 0;
}

int output_commit(struct output *o)
{
	int err = output_finish(o) ?: output_publish(o);

	if (!err)
		output_abort(o);	/* published: only frees */
	return err;
}

void output_unpublish(struct output *o)
{
	for (unsigned i = 0; o->published && i < o->nr_companions; i++)
		unlink(o->companions[i]->final_path);
	if (o->published && o->is_dir)
		nftw(o->final_path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	else if (o->published)
		unlink(o->final_path);
	output_abort(o);
}

void output_abort(struct output *o)
{
	for (unsigned i = 0; i < o->nr_companions; i++) {
		output_abort(o->companions[i]);
		free(o->companions[i]);
	}
	if (o->file)
		fclose(o->file);
	free(o->file_buffer);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	if (o->tmp_path) {
		if (o->is_dir)
			nftw(o->tmp_path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		else
			unlink(o->tmp_path);
	}
	free(o->tmp_path);
	free(o->final_path);
	memset(o, 0, sizeof(*o));
	o->dir_fd = -1;
}

void output_abort_signal_safe(const struct output *o)
{
	for (unsigned i = 0; i < o->nr_companions; i++)
		output_abort_signal_safe(o->companions[i]);
	if (o->tmp_path && !o->is_dir)
		unlink(o->tmp_path);
	else if (o->tmp_path)
		rmdir(o->tmp_path);
}
