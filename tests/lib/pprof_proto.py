#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""pprof_proto.py - a reader of pprof's profile.proto (gzipped or not), with
the few fields the tests ask for: each sample's values, its labels (string
and numeric) and its stack as function names, leaf first.  It decodes the
protobuf wire format itself (standard library only), so a test needs
neither Go nor a protobuf package.

  pprof_proto.py samples PROFILE   print "VALUE0 key=value... ;leaf;...;root"

As a module: load(path) -> list of Sample (values, labels, frames, lines:
each frame's source line, 0 if none); functions(path) -> list of (name,
filename, start_line), one per Function.
"""
import gzip
import sys


class Sample:
    __slots__ = ("values", "labels", "frames", "lines")

    def __init__(self, values, labels, frames, lines):
        self.values, self.labels, self.frames, self.lines = values, labels, frames, lines


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of one message; value is an int
    (varint, fixed) or bytes (length-delimited)."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def _ints(wt, v):
    """A repeated integer field: one varint, or a packed run of them."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def load(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, raw_samples, locations, functions = [], [], {}, {}
    for num, wt, v in _fields(data):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 2:
            raw_samples.append(v)
        elif num == 4:
            lid, funcs = 0, []
            for n, w, x in _fields(v):
                if n == 1:
                    lid = x
                elif n == 4:            # Line: function_id = 1, line = 2
                    line = dict((m, y) for m, _, y in _fields(x))
                    funcs.append((line.get(1, 0), line.get(2, 0)))
            locations[lid] = funcs      # innermost (inlined) first
        elif num == 5:
            fid, name = 0, 0
            for n, w, x in _fields(v):
                if n == 1:
                    fid = x
                elif n == 2:
                    name = x
            functions[fid] = name
    samples = []
    for raw in raw_samples:
        locs, values, labels = [], [], {}
        for n, w, x in _fields(raw):
            if n == 1:
                locs += _ints(w, x)
            elif n == 2:
                values += _ints(w, x)
            elif n == 3:
                key = sval = nval = 0
                for m, _, y in _fields(x):
                    if m == 1:
                        key = y
                    elif m == 2:
                        sval = y
                    elif m == 3:
                        nval = y
                labels[strings[key]] = strings[sval] if sval else nval
        lines = [f for loc in locs for f in locations.get(loc, [])]
        frames = [strings[functions.get(f, 0)] for f, _ in lines]
        samples.append(Sample(values, labels, frames, [n for _, n in lines]))
    return samples


def _data(path):
    data = open(path, "rb").read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def functions(path):
    """Every Function of the profile as (name, filename, start_line)."""
    data = _data(path)
    strings, funcs = [], []
    for num, wt, v in _fields(data):
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 5:
            f = {2: 0, 4: 0, 5: 0}
            for n, w, x in _fields(v):
                f[n] = x
            funcs.append(f)
    return [(strings[f[2]], strings[f[4]], f[5]) for f in funcs]


def main(argv):
    if len(argv) != 3 or argv[1] != "samples":
        print(__doc__, file=sys.stderr)
        return 2
    for s in load(argv[2]):
        labels = " ".join("%s=%s" % kv for kv in sorted(s.labels.items()))
        print("%d %s ;%s" % (s.values[0] if s.values else 0, labels, ";".join(s.frames)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
