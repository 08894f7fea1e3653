// SPDX-License-Identifier: BSD-2-Clause
//
// goburn.go - a Go program for tests/integration/go_stacks.sh: main.main
// calls goTop -> goMid -> goLeaf (none inlined), and goLeaf burns CPU, for
// SECONDS of wall time.  Built by the test with the Go toolchain as Go
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
	"time"
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

func main() {
	secs := flag.Float64("s", 3, "seconds of work")
	flag.Parse()
	fmt.Printf("ready %d\n", os.Getpid())
	end := time.Now().Add(time.Duration(*secs * float64(time.Second)))
	sum := 0
	for time.Now().Before(end) {
		sum += goTop(200000)
	}
	fmt.Printf("sum %d\n", sum)
}
