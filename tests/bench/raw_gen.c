// SPDX-License-Identifier: BSD-2-Clause
/*
 * raw_gen.c - writes synthetic raw measurements (docs/RAW.md) for the
 * merge benchmark (tests/bench/merge.sh): one file per node, each one
 * process (MPI rank = node, the same pid on every node, so every node's
 * ids collide with the others') with THREADS threads, its binary mapped
 * at another address on each node (ASLR: no stack is shared across
 * nodes), STACKS distinct user stacks of 8..24 frames of real function
 * addresses of that binary, a few kernel stacks with their recorded
 * names, and SAMPLES timestamped samples per thread.  Written from the
 * format's description, independently of plugins/raw/: the merge's
 * reader checks it like any measurement.
 *
 *   raw_gen DIR NODES THREADS SAMPLES STACKS BINARY ADDRS
 *
 * ADDRS is a file of hexadecimal function addresses of BINARY (ELF
 * vaddrs, e.g. from nm), one a line.  Files are DIR/node-NNNNN.raw.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KSTACKS 4
#define PERIOD 1001001ull
#define PID 4242u

static FILE *out;

static void u32(uint32_t v) { fwrite(&v, 4, 1, out); }	/* x86_64: little-endian */
static void u64(uint64_t v) { fwrite(&v, 8, 1, out); }

static void str(const char *s)
{
	u32((uint32_t)strlen(s) + 1);
	fwrite(s, 1, strlen(s) + 1, out);
}

/* Start a section; returns where its length goes. */
static long section(uint32_t type)
{
	long at;

	u32(type);
	u32(0);
	at = ftell(out);
	u64(0);
	return at;
}

static void end_section(long at)
{
	long now = ftell(out);
	uint64_t len = (uint64_t)(now - at - 8);

	fseek(out, at, SEEK_SET);
	u64(len);
	fseek(out, now, SEEK_SET);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

struct node {
	unsigned n, threads, samples, stacks;
	uint64_t base, start;
	const char *binary;
	uint64_t bin_size;
	const uint64_t *addrs;
	size_t nr_addrs;
	uint64_t *counts;	/* [thread][stack][kernel stack + 1] */
};

static void mapping(uint64_t start, uint64_t end, uint32_t prot, const char *path)
{
	u64(start), u64(end), u64(0), u64(0);
	u32(prot), u32(0), u32(0), u32(0), u32(0), u32(0);
	str(path);
}

static void event_header(uint32_t type, uint32_t size, uint64_t t, uint32_t tid)
{
	u32(type), u32(size), u64(t), u32(tid % 64), u32(PID), u32(tid);
}

static void events(struct node *nd)
{
	long at = section(1);
	char comm[32];

	for (unsigned t = 0; t < nd->threads; t++) {
		snprintf(comm, sizeof(comm), "rank%u-%u", nd->n, t);
		event_header(1, 28 + 4 + (uint32_t)strlen(comm) + 1, nd->start, PID + t);
		str(comm);
	}
	for (unsigned s = 0; s < nd->samples; s++)
		for (unsigned t = 0; t < nd->threads; t++) {
			unsigned us = (t * 7 + s * 13) % nd->stacks, ks = (s + t) % 10 < 1 ? 1 + s % KSTACKS : 0;

			event_header(0, 44, nd->start + (uint64_t)s * PERIOD + t * 1000, PID + t);
			u32(1 + us), u32(ks ? 1 + nd->stacks + ks - 1 : 0), u64(PERIOD);
			nd->counts[((size_t)t * nd->stacks + us) * (KSTACKS + 1) + ks]++;
		}
	end_section(at);
}

static void run(struct node *nd)
{
	long at = section(2);
	char host[32];

	snprintf(host, sizeof(host), "node%05u", nd->n);
	u64(999), u64(PERIOD), u64(nd->start), u64(nd->start + nd->samples * PERIOD);
	u64(1700000000000000000ull + nd->n * 1000ull);	/* anchors: 1 us apart */
	u64((uint64_t)nd->samples * nd->threads), u64((uint64_t)nd->samples * nd->threads);
	for (int i = 0; i < 15; i++)
		u64(0);
	u32(64), u32(64), u32(127), u32(nd->n + 1), u32(1), u32(0);
	str("0.2.0"), str("cpu-clock"), str(host), str("6.1.0"), str("x86_64");
	str("synthetic"), str("auto"), str("raw_gen");
	end_section(at);
}

static void tables(struct node *nd)
{
	long at = section(3);
	uint64_t rs = nd->n * 977u + 1;
	char comm[32];

	u32(1), u32(0);
	u32(PID), u32(1), u32(nd->n), u32(0), u32(2), u32(0), u64((uint64_t)nd->samples * nd->threads);
	str("rank"), str(nd->binary), str(nd->binary);
	mapping(nd->base, nd->base + nd->bin_size, 5, nd->binary);
	mapping(0x7fff00000000ull, 0x7fff00002000ull, 5, "[vdso]");
	end_section(at);

	at = section(4);
	u32(nd->threads), u32(0);
	for (unsigned t = 0; t < nd->threads; t++) {
		snprintf(comm, sizeof(comm), "rank%u-%u", nd->n, t);
		u32(PID + t), u32(PID), u32(0), u32(t), u64(nd->samples), str(comm);
	}
	end_section(at);

	at = section(5);
	u32(1 + nd->stacks + KSTACKS), u32(0);
	u32(0), u32(0);
	for (unsigned s = 0; s < nd->stacks; s++) {
		unsigned depth = 8 + (unsigned)(rnd(&rs) % 17);

		u32(depth), u32(0);
		for (unsigned f = 0; f < depth; f++)
			u64(nd->base + nd->addrs[rnd(&rs) % nd->nr_addrs] + (f ? 5 : 0));
	}
	for (unsigned k = 0; k < KSTACKS; k++) {
		u32(3), u32(1);
		for (unsigned f = 0; f < 3; f++)
			u64(0xffffffff81000000ull + (k * 3 + f) * 0x100 + 0x10);
	}
	end_section(at);

	at = section(6);
	{
		size_t n = 0, all = (size_t)nd->threads * nd->stacks * (KSTACKS + 1);

		for (size_t i = 0; i < all; i++)
			n += nd->counts[i] != 0;
		u32((uint32_t)n), u32(0);
		for (size_t i = 0; i < all; i++) {
			size_t t = i / ((size_t)nd->stacks * (KSTACKS + 1));
			size_t us = i / (KSTACKS + 1) % nd->stacks, ks = i % (KSTACKS + 1);

			if (!nd->counts[i])
				continue;
			u32((uint32_t)t), u32(1 + (uint32_t)us), u32(ks ? 1 + nd->stacks + (uint32_t)ks - 1 : 0);
			u32(0), u64(nd->counts[i]);
		}
	}
	end_section(at);

	at = section(7);
	u32(KSTACKS * 3), u32(0);
	for (unsigned k = 0; k < KSTACKS * 3; k++) {
		char fn[32];

		snprintf(fn, sizeof(fn), "kernel_fn_%u", k);
		u64(0xffffffff81000000ull + k * 0x100 + 0x10), u64(0xffffffff81000000ull + k * 0x100);
		str(fn), str("[kernel.kallsyms]");
	}
	end_section(at);
	at = section(8);
	u32(0), u32(0);
	end_section(at);
	u32(0x454e4421), u32(0), u64(0);
}

static int write_node(struct node *nd, const char *dir)
{
	char path[4096];
	static const char magic[8] = "BPFPRAW\n";

	snprintf(path, sizeof(path), "%s/node-%05u.raw", dir, nd->n);
	out = fopen(path, "wb");
	if (!out)
		return -1;
	nd->counts = calloc((size_t)nd->threads * nd->stacks * (KSTACKS + 1), sizeof(*nd->counts));
	if (!nd->counts)
		return -1;
	fwrite(magic, 1, 8, out);
	u32(1);
	fputc(2, out), fputc(1, out), fputc(62, out), fputc(0, out);
	u32(32), u32(0), u64(0);
	events(nd);
	run(nd);
	tables(nd);
	free(nd->counts);
	return fclose(out);
}

int main(int argc, char **argv)
{
	uint64_t addrs[65536];
	size_t nr = 0;
	struct stat st;
	FILE *a;

	if (argc != 8 || stat(argv[6], &st) || !(a = fopen(argv[7], "r"))) {
		fprintf(stderr, "usage: raw_gen DIR NODES THREADS SAMPLES STACKS BINARY ADDRS\n");
		return 2;
	}
	while (nr < 65536 && fscanf(a, "%lx", &addrs[nr]) == 1)
		nr++;
	fclose(a);
	if (!nr)
		return 2;
	for (unsigned n = 0; n < (unsigned)atoi(argv[2]); n++) {
		struct node nd = {
			.n = n, .threads = (unsigned)atoi(argv[3]), .samples = (unsigned)atoi(argv[4]),
			.stacks = (unsigned)atoi(argv[5]), .binary = argv[6],
			.bin_size = ((uint64_t)st.st_size + 4095) & ~4095ull,
			.base = 0x555500000000ull + (uint64_t)n * 0x10000000ull,
			.start = 1000000000000ull + n * 7000000ull, .addrs = addrs, .nr_addrs = nr,
		};

		if (write_node(&nd, argv[1])) {
			perror(argv[1]);
			return 1;
		}
	}
	return 0;
}
