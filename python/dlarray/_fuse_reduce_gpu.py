"""dlarray.fuse's trailing reduction on a GPU (CUDA and OpenCL, one template; see
``_fuse_reduce``): the kernel's code and its grid.

Groups of ``G`` threads (1, 32 or 256: by ``R``; 1 where the last axis is kept, so a warp reads
neighbouring elements) fold one output over a segment of the reduced range, each thread into
_LANES accumulators, and combine in shared memory; the grid's second dimension splits the range
into segments where there are few outputs (about _GPU_BLOCKS blocks in all). On CUDA the last
block of each column of segments to finish folds their totals in the same launch; OpenCL, and
columns too long for one thread to fold, leave them to a second reduction (``_fuse_reduce.run``).
"""
from __future__ import annotations

import numpy as np

from . import _fuse_codegen as _codegen

THREADS = 256  # CUDA block / OpenCL work-group size
_LANES = 4  # accumulators per GPU thread (a power of 2): their loads are in flight together
_GPU_BLOCKS = 2048  # blocks a GPU reduction aims for (a few waves of 8 per multiprocessor)
_MIN_PER_THREAD = 16  # elements a GPU thread folds at least
_DONE = 2048  # CUDA's per-column counters of finished segments (the grid's columns at most)
_FOLD_PER_THREAD = 64  # partial results a thread of CUDA's last block folds at most


def group_size(red) -> int:
    """Threads folding one output on a GPU: a block for long reductions, a warp for middling
    ones, one thread for a few elements or where neighbouring outputs are neighbours in memory
    (the last axis kept: a warp's threads read neighbouring elements)."""
    if red.columns:
        return 1
    return 256 if red.r >= 4096 else 32 if red.r >= 64 else 1


def _halvings(g: int, comb, sync: str) -> list:
    """The group's values in ``sh`` folded into ``sh[tid]`` of lane 0, in a fixed order: straight
    -line halvings (PoCL runs barriers inside loops slowly)."""
    lines, s = [], g // 2
    while s:
        lines += ["if (lane < %d) sh[tid] = %s;" % (s, comb("sh[tid]", "sh[tid + %d]" % s)), sync]
        s //= 2
    return lines


def source(trace, red, strided, d, used, comb, ident, acc, dims, outer) -> list:
    """``dl_fused(inputs..., out, part, M, R-segment length, fold, dims...)``: group
    ``get_group_id(0)`` of the outputs, segment ``get_group_id(1)`` of the reduced range.

    Each thread folds its elements into _LANES accumulators in turn (their loads independent, so
    in flight together), then the group folds the threads' values in shared memory. One segment:
    the result goes to out[M]. Several: each segment's to part[segment * M + o]; on CUDA with
    ``fold`` the last block of a column of segments to finish (a counter per column, a fence
    before it: the partial results are visible) folds the column's partial results in segment
    order into out (the same order whichever block is last, so the sum is deterministic) and
    zeroes the counter for the next launch; without ``fold`` (OpenCL, or a column too long for
    one thread to fold) a second reduction folds part."""
    from . import _fuse_reduce as _reduce  # (it imports this module)
    g = group_size(red)
    cuda = red.language == "cuda"
    idx = d["index"]
    if cuda:
        ctype = {k: "b_t" if _codegen.trace_input_dtype(trace, k) == np.bool_
                 else _reduce._ctype(trace, red, k, d) for k in red.inputs}
        params = ["const %s* __restrict__ in%d" % (ctype[k], k) for k in red.inputs]
        out_type = "b_t" if red.acc == np.bool_ else d["types"][_codegen._TYPES[red.acc][1]]
        params += ["%s* __restrict__ out" % out_type, "%s* __restrict__ part" % out_type]
        head = 'extern "C" __global__ void dl_fused(%s) {'
        tid, group, segment = "threadIdx.x", "blockIdx.x", "blockIdx.y"
        shared, sync, oo, po = "__shared__", "__syncthreads();", "", ""
        prefix = ["__device__ unsigned int dl_done[%d];" % _DONE]
    else:
        params = []
        for k in red.inputs:
            params += ["__global const %s* in%d" % (_reduce._ctype(trace, red, k, d), k),
                       "long o%d" % k]
        params += ["__global %s* out" % acc, "long oo", "__global %s* part" % acc, "long po"]
        head = "__kernel void dl_fused(%s) {"
        tid, group, segment = "get_local_id(0)", "get_group_id(0)", "get_group_id(1)"
        shared, sync, oo, po = "__local", "barrier(CLK_LOCAL_MEM_FENCE);", "oo + ", "po + "
        prefix = []
    params += ["%s %s" % (idx, n) for n in ["M", "seg", "fold"] + dims]
    lanes = ["a%d" % j for j in range(_LANES)]
    lines = prefix + [head % ", ".join(params),
                      "%s %s sh[%d];" % (shared, acc, THREADS),
                      "const int tid = (int)%s;" % tid,
                      "const int lane = tid %% %d;" % g,
                      "const %s o = (%s)%s * %d + tid / %d;" % (idx, idx, group, THREADS // g, g),
                      "const %s rb = (%s)%s * seg;" % (idx, idx, segment),
                      "const %s re = R - rb > seg ? rb + seg : R;" % idx,
                      "%s %s;" % (acc, ", ".join("%s = %s" % (a, ident) for a in lanes)),
                      "if (o < M) {"] + outer
    lines += ["%s r0 = rb + lane;" % idx,
              "for (; r0 + %d < re; r0 += %d) {" % ((_LANES - 1) * g, _LANES * g)]
    for j, a in enumerate(lanes):
        lines += ["{", "const %s rr = r0 + %d;" % (idx, j * g)]
        lines += _reduce._element(trace, red, strided, d, used, "%s = %s;" % (a, comb(a, "v")))
        lines.append("}")
    lines += ["}", "for (; r0 < re; r0 += %d) {" % g, "const %s rr = r0;" % idx]
    lines += _reduce._element(trace, red, strided, d, used, "a0 = %s;" % comb("a0", "v"))
    while len(lanes) > 1:  # a fixed tree
        lanes = [comb(lanes[j], lanes[j + 1]) for j in range(0, len(lanes), 2)]
    lines += ["}", "}", "sh[tid] = %s;" % lanes[0], sync]
    lines += _halvings(g, comb, sync)
    single = "%s(%s)%s * M + o" % (po, idx, segment)
    lines += ["if (%s == 1) {" % ("gridDim.y" if cuda else "get_num_groups(1)"),
              "if (lane == 0 && o < M) out[%so] = sh[tid];" % oo,
              "return;", "}",
              "if (lane == 0 && o < M) part[%s] = sh[tid];" % single]
    if not cuda:
        return lines + ["}"]
    lines += ["if (!fold) return;",
              "__shared__ bool last;",
              "__threadfence();",  # this block's partial results before its count
              sync,
              "if (tid == 0) last = atomicAdd(&dl_done[blockIdx.x], 1u) == gridDim.y - 1;",
              sync,
              "if (!last) return;",
              "__threadfence();",  # the other blocks' partial results after their counts
              "%s a = %s;" % (acc, ident),
              "if (o < M) {",
              # through L2 (the other blocks' writes are there, L1 may hold none of them): not
              # volatile, so the unrolled loads are in flight together
              "#pragma unroll 8",
              "for (unsigned int s = lane; s < gridDim.y; s += %d) {" % g,
              "a = %s;" % comb("a", "__ldcg(part + (%s)s * M + o)" % idx),
              "}", "}", "sh[tid] = a;", sync]
    lines += _halvings(g, comb, sync)
    return lines + ["if (lane == 0 && o < M) out[o] = sh[tid];",
                    "if (tid == 0) dl_done[blockIdx.x] = 0;", "}"]


def segments(red) -> tuple:
    """(grid size over outputs, segments of the reduced range, segment length, whether the
    kernel folds the segments itself) on a GPU: about _GPU_BLOCKS blocks (several per
    multiprocessor, so a partly filled last wave costs little), each thread folding at least
    _MIN_PER_THREAD elements. CUDA folds the segments in the kernel where a thread of the last
    block folds at most _FOLD_PER_THREAD of them (a group of one thread folds a whole column)."""
    g = group_size(red)
    blocks = -(-red.m // (THREADS // g))
    most = max(1, min(65535, -(-red.r // (g * _MIN_PER_THREAD))))
    segments = max(1, min(most, -(-_GPU_BLOCKS // blocks)))
    length = -(-red.r // segments)
    segments = -(-red.r // length)
    fold = (segments > 1 and red.language == "cuda" and blocks <= _DONE
            and -(-segments // g) <= _FOLD_PER_THREAD)
    return blocks, segments, length, fold
