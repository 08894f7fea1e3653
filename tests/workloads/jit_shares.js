// SPDX-License-Identifier: BSD-2-Clause
//
// jit_shares.js - a JavaScript workload with a known profile, for the
// perf map tests (tests/integration/jit_perfmap.sh): burnA and burnB run
// the same loop body (an int32 LCG step) and get 70% and 30% of the work
// by their iteration counts, in chunks of pseudo-random length (no phase
// locking with the sampling timer, see tests/workloads/README.md).
//
// usage: node --perf-basic-prof jit_shares.js [-s SECONDS] [--wait]
//   prints "ready PID"; with --wait, waits for SIGUSR2 (node keeps SIGUSR1
//   for its inspector); then burns for SECONDS (default 3) of wall time and
//   prints "truth burnA PCT burnB PCT burned PCT": each function's share
//   of the CPU time spent in the two as the program measured it around
//   each call (process.cpuUsage(), so that time the machine gave to others
//   does not count), and that time as a share of all the CPU time the
//   process used, start-up and helper threads included.
'use strict';

function burnA(n, x) {
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345) | 0;
	return x;
}

function burnB(n, x) {
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 1103515245) + 12345) | 0;
	return x;
}

function cpu_us() {
	const u = process.cpuUsage();

	return u.user + u.system;
}

function run(secs) {
	const end = process.hrtime.bigint() + BigInt(Math.round(secs * 1e9));
	let x = 1, seed = 7, ta = 0, tb = 0, now = 0;

	while (process.hrtime.bigint() < end) {
		seed = (Math.imul(seed, 69069) + 1) >>> 0;
		const n = 60000 + (seed % 60000);
		const a0 = cpu_us();
		x = burnA(7 * n, x);
		const a1 = cpu_us();
		x = burnB(3 * n, x);
		now = cpu_us();
		ta += a1 - a0;
		tb += now - a1;
	}
	const both = ta + tb;
	console.log(`truth burnA ${(100 * ta / both).toFixed(2)} ` +
		    `burnB ${(100 * tb / both).toFixed(2)} ` +
		    `burned ${(100 * both / cpu_us()).toFixed(2)} x ${x}`);
}

let secs = 3, wait = false;
for (let i = 2; i < process.argv.length; i++) {
	if (process.argv[i] === '-s')
		secs = Number(process.argv[++i]);
	else if (process.argv[i] === '--wait')
		wait = true;
}
console.log(`ready ${process.pid}`);
if (wait) {
	const keep = setInterval(() => {}, 1 << 30);
	process.on('SIGUSR2', () => { clearInterval(keep); run(secs); });
} else {
	run(secs);
}
