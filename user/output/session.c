// SPDX-License-Identifier: BSD-2-Clause
/*
 * output/session.c - the plugin's lifecycle over one output at a time:
 * load and preflight, open, event() for streamed records, write() and
 * close(), then commit or hand the output on for publishing (see
 * session.h; per-process fan-out and publishing are in writer.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "session.h"

const char *session_output_path(const struct session *s)
{
	return s->opts->output ? s->opts->output : s->plugin.desc->default_output;
}

static bool plugin_is_dir(const struct session *s)
{
	return s->plugin.desc->flags & BPFPROF_PLUGIN_DIRECTORY;
}

bool session_output_is_dir_of_files(const struct session *s)
{
	struct stat st;

	return (s->plugin.desc->flags & BPFPROF_PLUGIN_PER_PROCESS) && s->opts->output &&
	       stat(s->opts->output, &st) == 0 && S_ISDIR(st.st_mode);
}

static int check_output_dir(const char *dir)
{
	if (access(dir, W_OK | X_OK)) {
		fprintf(stderr, "bpfprof: cannot write into '%s': %s; choose another -o\n", dir,
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* A streamed record into the plugin; the first failure stops the stream. */
static void take_record(void *ctx, const struct bpfprof_event *ev)
{
	struct session *s = ctx;
	int err;

	if (!s->open || s->failed)
		return;
	err = s->plugin.desc->event(s->state, ev);
	if (err) {
		host_report_failure(&s->host, "take a record", err);
		s->failed = err;
	}
}

int session_load(struct session *s, const struct options *o)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->opts = o;
	s->out.dir_fd = -1;
	err = o->plugin_path ? plugin_load_file(o->plugin_path, o->allow_untrusted_plugin, &s->plugin)
			     : plugin_load_format(o->format, o->allow_untrusted_plugin, &s->plugin);
	if (err)
		return err;
	s->stream = s->plugin.desc->flags & BPFPROF_PLUGIN_STREAM;
	s->sink = (struct record_sink){ .ctx = s, .record = take_record };
	if (session_output_is_dir_of_files(s))
		return check_output_dir(o->output);
	return output_preflight(session_output_path(s), plugin_is_dir(s));
}

void session_attach(struct session *s, struct profile *profile, struct symbolizer *symbolizer,
		    const struct bpfprof_run *run)
{
	host_init(&s->host, profile, symbolizer, s->plugin.desc->name);
	s->host_ready = true;
	s->run = run;
}

void session_set_symbolizer(struct session *s, struct symbolizer *symbolizer)
{
	s->host.symbolizer = symbolizer;
}

const struct record_sink *session_sink(struct session *s)
{
	return s->stream ? &s->sink : NULL;
}

int session_open(struct session *s, const char *path, uint32_t pid)
{
	int err;

	err = output_begin(&s->out, path, plugin_is_dir(s));
	if (err)
		return err;
	output_guard_current(&s->out);
	s->plugin_out = (struct bpfprof_output){ .file = s->out.file, .dir_fd = s->out.dir_fd,
						 .path = s->out.final_path, .pid = pid };
	s->state = NULL;
	host_set_output(&s->host, &s->out, &s->plugin_out);
	err = s->plugin.desc->open(&s->host.api, s->run, &s->plugin_out, &s->state);
	if (err) {
		host_set_output(&s->host, NULL, NULL);
		host_report_failure(&s->host, "open its output", err);
		output_guard_current(NULL);
		output_abort(&s->out);
		return err;
	}
	s->open = true;
	return 0;
}

int session_open_stream(struct session *s)
{
	return s->stream ? session_open(s, session_output_path(s), 0) : 0;
}

/* Move the finished output to @pending, to be published with the others. */
static int finish_pending(struct session *s, struct output *pending)
{
	int err = output_finish(&s->out);

	if (!err) {
		*pending = s->out;
		output_guard_pending_add();
	}
	memset(&s->out, 0, sizeof(s->out));
	s->out.dir_fd = -1;
	output_guard_current(NULL);
	return err;
}

int session_finish(struct session *s, const struct bpfprof_profile *view, struct output *pending)
{
	int err = s->failed ? s->failed : s->plugin.desc->write(s->state, view);

	if (err && !s->failed)
		host_report_failure(&s->host, "write the profile", err);
	s->plugin.desc->close(s->state);
	s->open = false;
	host_set_output(&s->host, NULL, NULL);
	if (!err && s->host.error) {
		host_report_failure(&s->host, "finish", -EIO);
		err = -EIO;
	}
	if (err) {
		output_guard_current(NULL);
		output_abort(&s->out);
		return err;
	}
	if (pending)
		return finish_pending(s, pending);
	output_guard_block_sigint(true);
	err = output_commit(&s->out);
	output_guard_current(NULL);
	output_guard_published(!err);
	output_guard_block_sigint(false);
	return err;
}

void session_fini(struct session *s)
{
	if (s->open)
		s->plugin.desc->close(s->state);
	s->open = false;
	if (s->host_ready)
		host_set_output(&s->host, NULL, NULL);
	output_guard_current(NULL);
	output_abort(&s->out);
	if (s->host_ready)
		host_fini(&s->host);
	s->host_ready = false;
	plugin_unload(&s->plugin);
}
