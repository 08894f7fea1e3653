// SPDX-License-Identifier: BSD-2-Clause
//
// goburn.go - a Go program for tests/integration/go_stacks.sh: main.main
// calls goTop -> goMid -> goLeaf (none inlined), and goLeaf burns CPU, for
// SECONDS of the process's CPU time (not wall time: on a loaded machine
// the samples the test asks for are still there).  Built by the test with the Go toolchain as Go
// programs ship (`go build -ldflags="-s -w"`: no .symtab, no
// .debug_frame), so the only unwind information left is Go's frame
// pointers.
//
// usage: goburn [-s SECONDS]
//   prints "ready PID", burns, then prints "sum N".
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
)

//go:noinline
func goLeaf(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s = (s*31 + i) & 0xffffffff
	}
	return s
}

//go:noinline
func goMid(n int) int { return goLeaf(n) + 1 }

//go:noinline
func goTop(n int) int { return goMid(n) + 2 }

// The process's CPU time so far (user + system), in seconds.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func main() {
	secs := flag.Float64("s", 3, "seconds of CPU time to burn")
	flag.Parse()
	fmt.Printf("ready %d\n", os.Getpid())
	start := cpuSeconds()
	sum := 0
	for cpuSeconds()-start < *secs {
		sum += goTop(200000)
	}
	fmt.Printf("sum %d\n", sum)
}
