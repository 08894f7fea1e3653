/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kallsyms.h - the kernel symbol table from /proc/kallsyms, for turning
 * kernel addresses into function names and module names.
 *
 * Only text symbols (types t, T, w, W) are looked up.  Symbols at address
 * 0 are ignored (unprivileged readers see every address as 0, which makes
 * the table empty).  A text symbol extends up to the next higher address
 * of any symbol in the file (text or not); the highest symbol of the file
 * is taken to extend KALLSYMS_LAST_SIZE bytes.  When several text symbols
 * share an address, a global one (T) wins over a local (t) over weak
 * ones (W, w), then the first in file order.
 */
#ifndef BPFPROF_KALLSYMS_H
#define BPFPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

/* Assumed size of the highest-addressed symbol, bytes. */
#define KALLSYMS_LAST_SIZE 4096u

/* An opaque, immutable symbol table; safe to share between threads. */
struct kallsyms;

/*
 * Parse @len bytes of /proc/kallsyms text at @text (need not be NUL
 * terminated): lines "ADDR TYPE NAME" optionally followed by whitespace
 * and "[MODULE]".  Lines that do not have this form (bad hex address,
 * type not a single character, no name) are skipped; any input is safe.
 * On success *@out is a new table the caller releases with
 * kallsyms_free() (possibly with no symbols).
 * Returns 0, -EINVAL (@out NULL, or @text NULL with @len > 0), -ENOMEM.
 */
int kallsyms_parse(const char *text, size_t len, struct kallsyms **out);

/*
 * Read the file @path (e.g. "/proc/kallsyms") and parse it as above.
 * Returns 0, a negative errno of open()/read(), or -ENOMEM.
 */
int kallsyms_load(const char *path, struct kallsyms **out);

/*
 * The name of the text symbol containing @addr, or NULL if there is none
 * (below the first symbol, past the end of the symbol containing the
 * greatest address, in a gap before a non-text symbol, or an empty
 * table).  On success *@start (if not NULL) is set to the symbol's
 * address and *@module (if not NULL) to its module name without brackets
 * ("ext4", "bpf", ...) or NULL for the core kernel.  Strings belong to
 * @ks and live until kallsyms_free().
 */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *start,
			    const char **module);

/* Number of text symbols in @ks (0 for NULL). */
size_t kallsyms_count(const struct kallsyms *ks);

/* Release @ks and its strings; NULL is allowed. */
void kallsyms_free(struct kallsyms *ks);

#endif /* BPFPROF_KALLSYMS_H */
