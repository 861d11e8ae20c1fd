"""Writes the seed corpus of dlpack_import_fuzzer (tests/fuzz/corpus/dlpack_import_fuzzer): one
file per tensor, in the fuzzer's field order (see Read in dlpack_import_fuzzer.cc). The crash_*
seeds are tensors that crashed the import or what follows it (the audit's two of issue 26, and
the fuzzer's first find); the others are layouts a producer may legitimately send. Run it after
changing the input format:
    python3 tests/fuzz/dlpack_seeds.py"""
import pathlib
import struct

VERSIONED, STRIDES, READ_ONLY = 1, 2, 4
FLOAT32, FLOAT64, INT8, BOOL = (2, 32, 1), (2, 64, 1), (0, 8, 1), (6, 8, 1)
CPU, CUDA_HOST = (1, 0), (3, 0)


def tensor(shape, strides=None, byte_offset=0, dtype=FLOAT32, device=CPU, data=64,
           versioned=True, read_only=False, version=(1, 1)):
    mode = (VERSIONED if versioned else 0) | (STRIDES if strides is not None else 0) | (
        READ_ONLY if read_only else 0)
    strides = [0] * len(shape) if strides is None else strides
    # The fuzzer reads one (unused) shape and stride entry for a rank-0 tensor.
    entries = lambda v: struct.pack(f"<{max(len(v), 1)}q", *(list(v) or [0]))  # noqa: E731
    return (struct.pack("<BiBBHiiQH", mode, len(shape), *dtype, *device, byte_offset, data) +
            entries(shape) + entries(strides) + struct.pack("<II", *version))


SEEDS = {
    # The audit's crashes: accepted, then asnumpy() read far outside the buffer.
    "crash_strides_2_61": tensor([2, 2], [2**61, 1]),
    "crash_byte_offset_2_63_plus_8": tensor([3], byte_offset=2**63 + 8),
    # Found by this fuzzer: an extent of 1 with a huge stride overflowed the cpu copy kernel.
    "crash_extent_1_huge_stride": tensor([1, 3], [2**62 + 1, 2]),
    "compact_2x3": tensor([2, 3]),
    "byte_offset_12": tensor([4], byte_offset=12),
    "negative_strides": tensor([2, 2], [-2, 1], byte_offset=16),
    "transposed_legacy": tensor([3, 2], [1, 3], versioned=False),
    "read_only_float64": tensor([4], dtype=FLOAT64, read_only=True),
    "broadcast_zero_stride": tensor([5, 3], [0, 1]),
    "zero_size_huge_offset": tensor([0, 4], byte_offset=2**63 - 1),
    "scalar_int8": tensor([], dtype=INT8, data=3),
    "bool_cuda_host": tensor([6], dtype=BOOL, device=CUDA_HOST),
    "misaligned": tensor([2], byte_offset=2),
}


def main():
    folder = pathlib.Path(__file__).resolve().parent / "corpus" / "dlpack_import_fuzzer"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (folder / name).write_bytes(data)


if __name__ == "__main__":
    main()
