// SPDX-License-Identifier: BSD-2-Clause
/*
 * output/summary_python.c - the summary's lines on CPython stacks (see
 * summary.h): how many samples got Python frames, the frames that could
 * not be read by reason, and with -v the costs (frames per sample, the
 * thread-state and code-object caches).
 */
#include <stdio.h>

#include "interp/interp.h"
#include "interp/py_layout.h"
#include "kernel/sampler.h"
#include "summary.h"

/* Names of the reasons Python frames were lost (enum py_stat). */
static const struct {
	enum py_stat stat;
	const char *name;
} lost[] = {
	{ PY_STAT_NO_TSTATE, "no-thread-state" },
	{ PY_STAT_READ_FAULT, "read-fault" },
	{ PY_STAT_EVAL_UNMATCHED, "evaluator-unmatched" },
	{ PY_STAT_FRAMES_LEFT, "frames-left" },
	{ PY_STAT_TRUNCATED, "max-stack" },
	{ PY_STAT_NOT_CODE, "not-code" },
};

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void summary_print_python(FILE *out, const struct sampler_stats *stats,
			  const struct interp *interp, bool verbose)
{
	const uint64_t *py = stats->python;
	struct interp_stats is;
	bool any = false;

	interp_get_stats(interp, &is);
	if (verbose && py[PY_STAT_NOT_PYTHON])	/* bpf/python.bpf.h, py_process_of() */
		fprintf(out, "bpfprof: Python: %llu samples of processes known to run no "
			"interpreter, found so without a look-up\n",
			(unsigned long long)py[PY_STAT_NOT_PYTHON]);
	if (!py[PY_STAT_SAMPLES] && !is.processes)
		return;
	fprintf(out, "bpfprof: Python: %llu samples of %llu CPython processes, %llu with Python "
		"frames; frames lost:", (unsigned long long)py[PY_STAT_SAMPLES],
		(unsigned long long)is.processes, (unsigned long long)py[PY_STAT_SPLICED]);
	for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++) {
		if (!py[lost[i].stat])
			continue;
		fprintf(out, " %s %llu", lost[i].name, (unsigned long long)py[lost[i].stat]);
		any = true;
	}
	if (is.code_failures || is.unnamed) {
		fprintf(out, " unnamed %llu", (unsigned long long)is.unnamed);
		any = true;
	}
	fputs(any ? "\n" : " none\n", out);
	if (py[PY_STAT_AT_ROOT])	/* bpf/python.bpf.h, py_splice_step() */
		fprintf(out, "bpfprof: Python: %llu samples' native stacks ended before their "
			"outer Python frames, which were put at the root\n",
			(unsigned long long)py[PY_STAT_AT_ROOT]);
	if (is.unsupported)
		fprintf(out, "bpfprof: Python: %llu interpreters of a version without a known layout "
			"(3.%d to 3.%d are known): native frames only\n",
			(unsigned long long)is.unsupported, PY_LAYOUT_FIRST, PY_LAYOUT_LAST);
	if (!verbose)
		return;
	fprintf(out, "bpfprof: Python: %.1f frames read per sample with Python frames, in %.1f "
		"reads of the process's memory; thread "
		"states: %llu cache hits, %llu list walks (%.1f%% hits), %llu threads without one; "
		"code objects: %llu named, %llu unreadable, %llu frames in new stacks (%.1f%% "
		"known already), %llu of them named without a read, %llu header reads, %llu "
		"replaced before they were read, %llu copied by the BPF program (%llu named "
		"from its copy, %llu not copied: no room); %llu Python frames put into stacks "
		"unwound from copies; %llu samples of threads without a current frame; "
		"interpreter files: %llu, %llu with the evaluator's .cold part, %llu files' facts "
		"from the cache; frames' code "
		"objects checked: %llu, %.1f%% from the BPF program's cache\n",
		py[PY_STAT_SPLICED] ? (double)py[PY_STAT_FRAMES] / (double)py[PY_STAT_SPLICED] : 0.0,
		py[PY_STAT_SPLICED] ? (double)py[PY_STAT_READS] / (double)py[PY_STAT_SPLICED] : 0.0,
		(unsigned long long)py[PY_STAT_TSTATE_HIT], (unsigned long long)py[PY_STAT_TSTATE_WALK],
		pct(py[PY_STAT_TSTATE_HIT], py[PY_STAT_TSTATE_HIT] + py[PY_STAT_TSTATE_WALK]),
		(unsigned long long)py[PY_STAT_NO_TSTATE], (unsigned long long)is.codes,
		(unsigned long long)is.code_failures, (unsigned long long)is.frames_seen,
		pct(is.frames_cached, is.frames_seen), (unsigned long long)is.frames_unread,
		(unsigned long long)is.header_reads, (unsigned long long)is.replaced,
		(unsigned long long)is.copies, (unsigned long long)is.copies_named,
		(unsigned long long)py[PY_STAT_COPIES_SKIPPED], (unsigned long long)is.copy_frames,
		(unsigned long long)py[PY_STAT_NO_FRAME], (unsigned long long)is.evaluator_files,
		(unsigned long long)is.cold_parts, (unsigned long long)is.files_cached,
		(unsigned long long)py[PY_STAT_CODE_CHECKS],
		pct(py[PY_STAT_CODE_CACHED], py[PY_STAT_CODE_CHECKS]));
}
