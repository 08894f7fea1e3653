// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_cfi_fde.c - unit tests of the FDE listing of the unwind table
 * builder (user/unwind/cfi_fde.c):
 *   - for every shared library of this machine's /usr/lib/x86_64-linux-gnu
 *     and a few programs (python3.11, perl), the FDEs of .eh_frame listed
 *     in .eh_frame_hdr's order (cfi_list_fdes_indexed()) are exactly those
 *     listed in the section's order and sorted, and the header's order is
 *     taken for nearly all of them (python3.11 and libc always);
 *   - a header whose table is out of order, short of an FDE, points at a
 *     CIE or has another version is not used: the section's order, with
 *     the same FDEs;
 *   - a whole table built from python3.11 says its FDEs came in the
 *     header's order (stats.fdes_indexed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <gelf.h>

#include "unwind/cfi_build.h"
#include "unwind/cfi_table.h"

#include "elf_image.h"

#define LIB_DIR "/usr/lib/x86_64-linux-gnu"
#define MAX_FILES 400

/* One listing: its FDEs and the counters it moved. */
struct listing {
	struct cfi_table_stats st;
	struct builder b;
};

static void listing_free(struct listing *l)
{
	free(l->b.fdes);
	memset(l, 0, sizeof(*l));
}

/* The FDE order the builder sorts into (cfi_table.c's fde_cmp). */
static int by_start(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->src - (int)y->src;
}

static void sort_fdes(struct builder *b)
{
	if (b->nr_fdes > 1)
		qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), by_start);
}

/* .eh_frame of @elf in *@s; false if it has none with contents. */
static bool eh_frame(Elf *elf, struct section *s)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, ".eh_frame", &sh);

	memset(s, 0, sizeof(*s));
	if (!scn || !(s->data = elf_getdata(scn, NULL)) || !s->data->d_buf)
		return false;
	s->vaddr = sh.sh_addr;
	s->eh = true;
	return true;
}

/* List @elf's .eh_frame FDEs both ways: @seq in the section's order, then
 * sorted; @idx through the header (sorted too where the header was not
 * used, as the builder does).  False if there is no .eh_frame. */
static bool list_both(Elf *elf, struct listing *seq, struct listing *idx)
{
	GElf_Ehdr eh;
	struct section s;

	memset(seq, 0, sizeof(*seq));
	memset(idx, 0, sizeof(*idx));
	if (!gelf_getehdr(elf, &eh) || !eh_frame(elf, &s))
		return false;
	seq->b.st = &seq->st;
	idx->b.st = &idx->st;
	assert_int_equal(cfi_list_fdes(&seq->b, &s, eh.e_ident), 0);
	sort_fdes(&seq->b);
	assert_int_equal(cfi_list_fdes_indexed(&idx->b, &s, elf, eh.e_ident), 0);
	if (!idx->st.fdes_indexed)	/* the section's order: sorted later */
		sort_fdes(&idx->b);
	return true;
}

/* The same FDEs, in the same order, with the same counters. */
static void assert_same(const char *what, const struct listing *seq, const struct listing *idx)
{
	if (seq->b.nr_fdes != idx->b.nr_fdes)
		fail_msg("%s: %zu FDEs in the section, %zu through the header", what,
			 seq->b.nr_fdes, idx->b.nr_fdes);
	for (size_t i = 0; i < seq->b.nr_fdes; i++) {
		const struct fde_range *x = &seq->b.fdes[i], *y = &idx->b.fdes[i];

		if (x->lo != y->lo || x->hi != y->hi || x->src != y->src)
			fail_msg("%s: FDE %zu: [%#lx, %#lx) against [%#lx, %#lx)", what, i,
				 (unsigned long)x->lo, (unsigned long)x->hi,
				 (unsigned long)y->lo, (unsigned long)y->hi);
	}
	assert_int_equal(seq->st.bad_entries, idx->st.bad_entries);
	assert_int_equal(seq->st.fdes_skipped, idx->st.fdes_skipped);
	assert_int_equal(seq->st.fdes_indexed, 0);
}

/* Compare both listings of @path; returns 1 if the header's order was
 * taken, 0 if not, -1 if the file has no .eh_frame or is not ELF. */
static int check_file(const char *path)
{
	struct listing seq, idx;
	int fd = open(path, O_RDONLY | O_CLOEXEC), used = -1;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && list_both(elf, &seq, &idx)) {
		assert_same(path, &seq, &idx);
		used = idx.st.fdes_indexed > 0;
		if (!used)
			printf("# %s: listed in the section's order\n", path);
		else
			assert_int_equal(idx.st.fdes_indexed, idx.b.nr_fdes);
		listing_free(&seq);
		listing_free(&idx);
	}
	elf_end(elf);
	close(fd);
	return used;
}

static void test_real_files(void **state)
{
	static const char *const programs[] = {
		"/usr/bin/python3.11", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/perl",
	};
	int files = 0, indexed = 0;
	DIR *d = opendir(LIB_DIR);
	struct dirent *e;

	(void)state;
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		int used = check_file(programs[i]);

		if (used < 0 && i == 2)
			continue;	/* perl is optional */
		assert_int_equal(used, 1);
	}
	assert_non_null(d);
	while ((e = readdir(d)) && files < MAX_FILES) {
		char path[PATH_MAX];
		struct stat st;
		int used;

		if (!strstr(e->d_name, ".so"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", LIB_DIR, e->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		used = check_file(path);
		if (used < 0)
			continue;
		files++;
		indexed += used;
	}
	closedir(d);
	printf("# %d libraries with .eh_frame, %d listed in .eh_frame_hdr's order\n", files,
	       indexed);
	assert_true(files >= 50);
	assert_true(indexed >= files * 9 / 10);
}

/* Where .eh_frame_hdr's table of @img starts (file offset), and its
 * count; fails the test if the header is not the usual one. */
static size_t table_of(uint8_t *img, size_t len, uint32_t *count)
{
	Elf *elf = elf_memory((char *)img, len);
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(elf, ".eh_frame_hdr", &sh);

	assert_non_null(scn);
	elf_end(elf);
	/* version 1, pcrel sdata4 eh_frame_ptr, udata4 count, datarel sdata4 */
	assert_int_equal(img[sh.sh_offset], 1);
	assert_int_equal(img[sh.sh_offset + 1], 0x1b);
	assert_int_equal(img[sh.sh_offset + 2], 0x03);
	assert_int_equal(img[sh.sh_offset + 3], 0x3b);
	memcpy(count, img + sh.sh_offset + 8, 4);
	return sh.sh_offset + 12;
}

/* Both listings of the image @img after @change; the header must not be
 * used, and the FDEs must be the section's. */
static void check_refused(const char *change, uint8_t *img, size_t len)
{
	struct listing seq, idx;
	Elf *elf = elf_memory((char *)img, len);

	assert_true(list_both(elf, &seq, &idx));
	assert_same(change, &seq, &idx);
	if (idx.st.fdes_indexed)
		fail_msg("%s: the header was used", change);
	listing_free(&seq);
	listing_free(&idx);
	elf_end(elf);
}

static void test_refused_headers(void **state)
{
	size_t len, table;
	uint8_t *orig = test_read_file("/lib/x86_64-linux-gnu/libc.so.6", &len);
	uint8_t *img = malloc(len), pair[8];
	uint32_t count, less;

	(void)state;
	assert_non_null(img);
	table = table_of(orig, len, &count);
	assert_true(count > 100);

	memcpy(img, orig, len);		/* two entries swapped */
	memcpy(pair, img + table + 8 * 10, 8);
	memcpy(img + table + 8 * 10, img + table + 8 * 11, 8);
	memcpy(img + table + 8 * 11, pair, 8);
	check_refused("entries out of order", img, len);

	memcpy(img, orig, len);		/* the last FDE left out */
	less = count - 1;
	memcpy(img + table - 4, &less, 4);
	check_refused("an FDE missing", img, len);

	memcpy(img, orig, len);		/* an entry at the CIE at offset 0 */
	{
		/* eh_frame_ptr is pcrel from the header's byte 4: .eh_frame
		 * starts eh_ptr + 4 bytes after the header, the table's base */
		int32_t eh_ptr;

		memcpy(&eh_ptr, img + table - 8, 4);
		eh_ptr += 4;
		memcpy(img + table + 8 * 5 + 4, &eh_ptr, 4);
	}
	check_refused("an entry at a CIE", img, len);

	memcpy(img, orig, len);		/* another version */
	img[table - 12] = 2;
	check_refused("version 2", img, len);

	memcpy(img, orig, len);		/* a count beyond the section */
	less = 0x7fffffff;
	memcpy(img + table - 4, &less, 4);
	check_refused("a count beyond the section", img, len);
	free(img);
	free(orig);
}

static void test_table_build(void **state)
{
	struct cfi_table *t;

	(void)state;
	assert_int_equal(cfi_table_build("/usr/bin/python3.11", NULL, &t), 0);
	printf("# python3.11: %u FDEs, %u listed in .eh_frame_hdr's order\n", t->stats.fdes,
	       t->stats.fdes_indexed);
	assert_true(t->stats.fdes_indexed > 1000);
	assert_true(t->stats.fdes_indexed >= t->stats.fdes);
	cfi_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_files),
		cmocka_unit_test(test_refused_headers),
		cmocka_unit_test(test_table_build),
	};

	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
