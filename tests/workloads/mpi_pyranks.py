# SPDX-License-Identifier: BSD-2-Clause
"""mpi_pyranks.py - an mpi4py job whose ranks spend measured CPU time in
Python functions and in NumPy's C code, for tests/integration/
slurm_mpi_python.sh (a Python job profiled by one bpfprof per node and
merged into one database).

  mpi_pyranks.py SECONDS

Each rank r runs, on its main thread, about SECONDS of CPU split in
chunks between

  py_rank_work   a pure Python loop (a 64-bit LCG step), weight r % 4 + 1
  py_numpy_work  NumPy matrix products (C: numpy's multiarray module,
                 then the BLAS library's dgemm), weight 2

and on a helper thread py_helper_work, a pure Python loop, for about a
third of SECONDS.  Chunk lengths vary pseudo-randomly so that the
schedule cannot lock to the sampling timer
(/work/shared/notes/ground-truth-workloads.md).  The truth is measured,
not assumed: each function times itself with time.thread_time_ns()
(this thread's CPU time, what cpu-clock samples).  After a barrier each
rank prints, on stdout:

  rank R pid P host H
  truth R FUNCTION NS      one line per function above

Needs mpi4py and NumPy (Debian: python3-mpi4py, python3-numpy).
"""
import os
import random
import socket
import sys
import threading
import time

import numpy
from mpi4py import MPI

MASK = 0xFFFFFFFFFFFFFFFF
A = 6364136223846793005
C = 1442695040888963407
spent = {}
lock = threading.Lock()


def note(name, ns):
    with lock:
        spent[name] = spent.get(name, 0) + ns


def py_rank_work(n, x):
    t0 = time.thread_time_ns()
    for _ in range(n):
        x = (x * A + C) & MASK
    note("py_rank_work", time.thread_time_ns() - t0)
    return x


def py_numpy_work(n, m):
    t0 = time.thread_time_ns()
    for _ in range(n):
        m = m @ m
        m /= numpy.abs(m).max()
    note("py_numpy_work", time.thread_time_ns() - t0)
    return m


def py_helper_work(seconds, seed):
    rng = random.Random(seed)
    x = seed
    t0 = time.thread_time_ns()
    while time.thread_time_ns() - t0 < seconds * 1e9:
        for _ in range(rng.randint(2000, 20000)):
            x = (x * A + C) & MASK
    note("py_helper_work", time.thread_time_ns() - t0)


def main():
    seconds = float(sys.argv[1])
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    rng = random.Random(1000 + rank)
    helper = threading.Thread(target=py_helper_work, args=(seconds / 3, rank + 7))
    helper.start()
    weight_py, weight_np = rank % 4 + 1, 2
    m = numpy.random.default_rng(rank).random((96, 96))
    x = rank + 1
    t0 = time.thread_time_ns()
    while time.thread_time_ns() - t0 < seconds * 1e9:
        if rng.random() < weight_py / (weight_py + weight_np):
            x = py_rank_work(rng.randint(5000, 40000), x)
        else:
            m = py_numpy_work(rng.randint(1, 4), m)
    helper.join()
    comm.Barrier()
    lines = ["rank %d pid %d host %s" % (rank, os.getpid(), socket.gethostname())]
    lines += ["truth %d %s %d" % (rank, f, ns) for f, ns in sorted(spent.items())]
    for r, text in enumerate(comm.gather("\n".join(lines), root=0) or []):
        print(text, flush=True)


if __name__ == "__main__":
    main()
