/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * core_btf_data.S - embeds BUILD/profile.min.btf (CORE_BTF_FILE, set by the
 * Makefile) as core_btf_data[] .. core_btf_data_end[] (see core_btf.h).
 */
	.section .rodata
	.global core_btf_data
	.global core_btf_data_end
	.balign 8
core_btf_data:
	.incbin CORE_BTF_FILE
core_btf_data_end:
	.section .note.GNU-stack,"",@progbits
