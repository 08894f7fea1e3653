// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_vdso.c - unit tests of user/symbols/vdso.c: our own vDSO image is
 * copied whole (as large as its [vdso] mapping, with our ELF class,
 * machine and build-id), and vdso_image_matches() accepts a target's
 * [vdso] only with our size, our ABI and, where the mapping carries one,
 * our build-id: another size, a 32-bit or other-machine process, an
 * unknown ABI or another build-id are refused.  Also images that are not
 * ours (ELF32, garbage) and the memfd copy the unwinder reports.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf_image.h"
#include "symbols/buildid.h"
#include "symbols/vdso.h"
#include "targets/procmaps.h"

/* This program's ABI, from its own executable file. */
static struct elf_abi own_abi(void)
{
	struct elf_abi abi = { 0 };
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	Elf *elf;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_int_equal(elf_abi_read(elf, &abi), 0);
	elf_end(elf);
	close(fd);
	return abi;
}

/* Our own image, or skip when this process has no vDSO. */
static struct vdso_image *own_image(void)
{
	struct vdso_image *img = NULL;
	int err = vdso_image_own(&img);

	if (err == -ENOENT)
		skip();
	assert_int_equal(err, 0);
	assert_non_null(img);
	return img;
}

/* The copy is our [vdso] mapping, byte for byte, with our ABI. */
static void test_own_image(void **state)
{
	struct vdso_image *img = own_image();
	struct elf_abi abi = own_abi();
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	const struct bpfprof_mapping *map;
	struct procmaps m;
	uint8_t bid[VDSO_BUILD_ID_MAX];
	int n;

	assert_int_equal(procmaps_read((uint32_t)getpid(), &m), 0);
	map = procmaps_find(m.maps, m.nr, base);
	assert_non_null(map);
	assert_string_equal(map->path, "[vdso]");
	assert_int_equal(img->size, map->end - map->start);
	assert_memory_equal(img->data, (const void *)base, img->size);
	assert_int_equal(img->abi.elf_class, abi.elf_class);
	assert_int_equal(img->abi.machine, abi.machine);
	n = elf_build_id_mem(img->data, img->size, bid, sizeof(bid));
	if (n > 0) {
		assert_int_equal(img->build_id_size, (size_t)n);
		assert_memory_equal(img->build_id, bid, (size_t)n);
	} else {
		assert_int_equal(img->build_id_size, 0);
	}
	assert_true(vdso_image_matches(img, map, &abi));
	procmaps_free(&m);
	vdso_image_free(img);
}

/* Size, class, machine, unknown ABI and build-id each refuse a target. */
static void test_matches(void **state)
{
	struct vdso_image *img = own_image();
	struct elf_abi abi = own_abi(), other;
	const uint64_t start = 0x7f0000000000ull;
	struct bpfprof_mapping map = {
		.start = start, .end = start + img->size,
		.prot = BPFPROF_PROT_READ | BPFPROF_PROT_EXEC, .path = "[vdso]",
	};
	uint8_t bid[VDSO_BUILD_ID_MAX];

	assert_true(vdso_image_matches(img, &map, &abi));
	/* another size */
	map.end = start + img->size + 4096;
	assert_false(vdso_image_matches(img, &map, &abi));
	map.end = start + img->size - 4096;
	assert_false(vdso_image_matches(img, &map, &abi));
	map.end = start + img->size;
	/* another class (a 32-bit process of a 64-bit kernel), machine */
	other = abi;
	other.elf_class = abi.elf_class == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64;
	assert_false(vdso_image_matches(img, &map, &other));
	other = abi;
	other.machine = abi.machine == EM_386 ? EM_X86_64 : EM_386;
	assert_false(vdso_image_matches(img, &map, &other));
	/* the process's ABI unknown */
	memset(&other, 0, sizeof(other));
	assert_false(vdso_image_matches(img, &map, &other));
	/* build-ids: compared only when both are known */
	if (img->build_id_size) {
		memcpy(bid, img->build_id, img->build_id_size);
		map.build_id = bid;
		map.build_id_size = (uint32_t)img->build_id_size;
		assert_true(vdso_image_matches(img, &map, &abi));
		bid[0] ^= 0xff;
		assert_false(vdso_image_matches(img, &map, &abi));
		bid[0] ^= 0xff;
		map.build_id_size--;
		assert_false(vdso_image_matches(img, &map, &abi));
		map.build_id = NULL;
		map.build_id_size = 0;
	}
	assert_true(vdso_image_matches(img, &map, &abi));
	assert_false(vdso_image_matches(NULL, &map, &abi));
	assert_false(vdso_image_matches(img, NULL, &abi));
	assert_false(vdso_image_matches(img, &map, NULL));
	vdso_image_free(img);
}

/* An i386 image has that ABI and never matches a process of ours. */
static void test_other_images(void **state)
{
	static unsigned char img32[ELF32_IMAGE_SIZE], junk[64];
	struct elf_abi abi = own_abi();
	struct vdso_image *img = NULL;
	struct bpfprof_mapping map = {
		.start = 0x10000, .end = 0x10000 + ELF32_IMAGE_SIZE, .path = "[vdso]",
	};

	elf32_image(img32);
	assert_int_equal(vdso_image_new(img32, sizeof(img32), &img), 0);
	assert_int_equal(img->abi.elf_class, ELFCLASS32);
	assert_int_equal(img->abi.machine, EM_386);
	assert_int_equal(img->build_id_size, 0);
	assert_int_equal(img->size, sizeof(img32));
	if (abi.elf_class != ELFCLASS32 || abi.machine != EM_386)
		assert_false(vdso_image_matches(img, &map, &abi));
	abi.elf_class = ELFCLASS32;
	abi.machine = EM_386;
	assert_true(vdso_image_matches(img, &map, &abi));
	vdso_image_free(img);

	memset(junk, 0x5a, sizeof(junk));
	img = NULL;
	assert_int_equal(vdso_image_new(junk, sizeof(junk), &img), -EINVAL);
	assert_null(img);
	assert_int_equal(vdso_image_new(img32, 0, &img), -E2BIG);
	assert_int_equal(vdso_image_new(img32, VDSO_MAX_SIZE + 1, &img), -E2BIG);
	assert_int_equal(vdso_image_new(NULL, 16, &img), -EINVAL);
	assert_int_equal(vdso_image_new(img32, sizeof(img32), NULL), -EINVAL);
	vdso_image_free(NULL);
}

/* The memfd holds the image: same bytes, same build-id. */
static void test_memfd(void **state)
{
	struct vdso_image *img = own_image();
	uint8_t *copy = malloc(img->size + 1), bid[VDSO_BUILD_ID_MAX];
	int fd = vdso_image_memfd(img);

	assert_non_null(copy);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, copy, img->size + 1, 0), (ssize_t)img->size);
	assert_memory_equal(copy, img->data, img->size);
	if (img->build_id_size) {
		assert_int_equal(elf_build_id_fd(fd, bid, sizeof(bid)), (int)img->build_id_size);
		assert_memory_equal(bid, img->build_id, img->build_id_size);
	}
	close(fd);
	free(copy);
	assert_int_equal(vdso_image_memfd(NULL), -EINVAL);
	vdso_image_free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_image),
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_other_images),
		cmocka_unit_test(test_memfd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
