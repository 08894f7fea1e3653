// SPDX-License-Identifier: BSD-2-Clause
//
// js_runtime.js - a JavaScript workload that spends its time in V8's C++
// runtime, for tests/integration/jit_perfmap.sh part 5: callRuntime()
// calls Date.now() in a loop, which optimized code runs through the
// builtin CEntry into Runtime_DateCurrentTime (C++), then gettimeofday in
// the vDSO.  On x86-64 hosts with 4 GiB or more, V8 maps its embedded
// builtins (CEntry among them) a second time next to its JIT code and
// calls them there ("short builtin calls"), so those frames lie in a
// second mapping of node's .text.
//
// usage: node [--perf-basic-prof] js_runtime.js [-s SECONDS]
//   prints "ready PID", burns for SECONDS (default 3) of wall time, then
//   prints "calls N".
'use strict';

function callRuntime(end) {
	let n = 0;

	while (Date.now() < end)
		n++;
	return n;
}

const i = process.argv.indexOf('-s');
const secs = i > 0 ? Number(process.argv[i + 1]) : 3;

console.log('ready ' + process.pid);
console.log('calls ' + callRuntime(Date.now() + secs * 1000));
