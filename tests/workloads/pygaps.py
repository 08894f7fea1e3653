# SPDX-License-Identifier: BSD-2-Clause
"""pygaps.py - a CPython loop that times itself, for
tests/bench/sample_cost.py: what a sample takes from the thread it
interrupts (the timer interrupt, and in it perf's callchain walk and
ring-buffer output, or bpfprof's BPF program) shows as a gap between two
consecutive clock reads of the loop.

  pygaps.py SECONDS [THRESHOLD_NS]

Prints "pygaps: ready" on stdout and waits for a line on stdin (the
profiler attaches meanwhile); then reads time.perf_counter_ns() (a C
function) in a loop for SECONDS, six Python frames deep in one evaluator
activation (gaps_d1 .. gaps_d5 -> gaps_leaf), as a Python workload's
stacks are; and prints one line:

  pygaps: elapsed_ns E gaps N gap_ns S long L long_ns T

gaps: intervals between consecutive reads longer than THRESHOLD_NS
(default 600; one pass of the loop takes ~0.1 us) and shorter than
500 us, with their sum; long: the longer ones (the host preempting this
virtual CPU, the scheduler), kept apart.  Standard library only; CPython
3.11 to 3.13.
"""
import sys
import time

CAP_NS = 500000


def gaps_leaf(end, threshold):
    clock = time.perf_counter_ns
    n = total = n_long = total_long = 0
    last = start = clock()
    while last < end:
        t = clock()
        d = t - last
        if d > threshold:
            if d < CAP_NS:
                n += 1
                total += d
            else:
                n_long += 1
                total_long += d
        last = t
    return last - start, n, total, n_long, total_long


def gaps_d5(end, threshold):
    return gaps_leaf(end, threshold)


def gaps_d4(end, threshold):
    return gaps_d5(end, threshold)


def gaps_d3(end, threshold):
    return gaps_d4(end, threshold)


def gaps_d2(end, threshold):
    return gaps_d3(end, threshold)


def gaps_d1(end, threshold):
    return gaps_d2(end, threshold)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    threshold = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    print("pygaps: ready", flush=True)
    sys.stdin.readline()
    r = gaps_d1(time.perf_counter_ns() + int(seconds * 1e9), threshold)
    print("pygaps: elapsed_ns %d gaps %d gap_ns %d long %d long_ns %d" % r, flush=True)


if __name__ == "__main__":
    main()
