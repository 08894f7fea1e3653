// SPDX-License-Identifier: BSD-2-Clause
/*
 * interp/pysplice.c - the Python frames of stack copies (--call-graph
 * dwarf's samples, and auto's of young processes, bpf/stack_copy.bpf.h):
 * the BPF program reads them by activation of the interpreter, as for a
 * stack it walks, and the collector puts each activation in place of an
 * evaluator frame that libdwfl unwound from the copy (see interp.h).
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof.h"
#include "interp_impl.h"

/* Whether @pc (a leaf's, or a caller's return address - 1) lies in @p's
 * evaluator. */
static bool in_eval(const struct py_proc *p, uint64_t pc)
{
	for (int i = 0; i < 2; i++)
		if (pc >= p->eval[i][0] && pc < p->eval[i][1])
			return true;
	return false;
}

/* Where the activation that starts at @py[@a] ends: its END, or @py_nr. */
static size_t activation_end(const uint64_t *py, size_t py_nr, size_t a)
{
	while (a < py_nr && py[a] != BPFPROF_PY_ACTIVATION_END)
		a++;
	return a;
}

/* Append the Python frames among @py[@a..@end) to @out, which holds @k
 * of at most @max; the new count.  *@written counts those appended. */
static size_t put_frames(uint64_t *out, size_t k, size_t max, const uint64_t *py, size_t a,
			 size_t end, size_t *written)
{
	for (; a < end && k < max; a++) {
		if (!interp_is_frame(py[a]))
			continue;
		out[k++] = py[a];
		(*written)++;
	}
	return k;
}

size_t interp_splice_copy(struct interp *it, uint32_t pid, uint64_t *ips, size_t nr, size_t max,
			  const uint64_t *py, size_t py_nr, bool cut, bool known)
{
	const struct py_proc *p = it ? interp_proc(it, pid) : NULL;
	size_t k = 0, a = 0, i, written = 0;
	uint64_t *out;

	if (!p || !py_nr || !nr || !(out = malloc(max * sizeof(*out))))
		return nr;
	for (i = 0; i < nr && k < max; i++) {
		size_t end, before = written;

		if (a >= py_nr || !in_eval(p, i ? ips[i] - 1 : ips[i])) {
			out[k++] = ips[i];
			continue;
		}
		end = activation_end(py, py_nr, a);
		k = put_frames(out, k, max, py, a, end, &written);
		if (written == before && k < max)
			out[k++] = ips[i];	/* no Python frame: the evaluator's stays */
		a = end + 1;
	}
	if (cut && i == nr && a < py_nr)
		k = put_frames(out, k, max, py, a, py_nr, &written);
	memcpy(ips, out, k * sizeof(*out));
	free(out);
	it->stats.copy_frames += written;
	interp_learn_stack(it, pid, ips, k, known);
	return k;
}
