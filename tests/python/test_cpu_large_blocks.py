"""The CPU backend keeps freed blocks of 1 MiB and more for reuse (backends/cpu/large_blocks.cc):
a fresh large block costs its page faults at first touch, as long as a memory-bound op over it.

Checked: a block comes back for an array of the same size class (and not for another class), a
reused block holds no stale data in any result, the counters of memory_stats and empty_cache,
the budget (DLARRAY_CPU_CACHE_MB) with its least-recently-kept eviction, and threads that
allocate and free at once. AddressSanitizer builds keep no blocks (so ASan still sees a use after
free): the tests that need a kept block skip there, saying so.
"""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import dlarray as dl

MIB = 1 << 20
CPU = dl.cpu(0)


def cache_limit():
    return int(dl._core.get_option(CPU, "cache_limit"))


needs_cache = pytest.mark.skipif(
    cache_limit() == 0,
    reason="this build or environment keeps no CPU blocks (AddressSanitizer, or "
           "DLARRAY_CPU_CACHE_MB=0)")


def address(x):
    return np.from_dlpack(x).ctypes.data


def empty_bytes(nbytes):
    return dl.empty((nbytes,), dtype=dl.uint8, device=CPU)


def kept():
    s = dl.memory_stats(CPU)
    return s["bytes_reserved"] - s["bytes_in_use"]


@pytest.fixture(autouse=True)
def no_kept_blocks():
    dl.empty_cache(CPU)
    yield
    dl.empty_cache(CPU)


def test_cache_limit_default_is_an_eighth_of_ram_at_most_4_gib():
    if os.environ.get("DLARRAY_CPU_CACHE_MB") or cache_limit() == 0:
        pytest.skip("the limit is set by DLARRAY_CPU_CACHE_MB or off in this build")
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert cache_limit() == min(ram // 8, 4 << 30)


@needs_cache
@pytest.mark.parametrize("first,second,same", [
    (MIB, MIB, True),
    (4 * MIB + 64 * 1024, 4 * MIB + 300 * 1024, True),  # sizes round up to eighths of 4 MiB
    (4 * MIB + 1, 4 * MIB + 512 * 1024, True),
    (4 * MIB, 4 * MIB + 64 * 1024, False),
    (4 * MIB, 5 * MIB, False),
    (8 * MIB, 4 * MIB, False),
])
def test_a_freed_block_serves_its_size_class(first, second, same):
    a = empty_bytes(first)
    p = address(a)
    del a
    b = empty_bytes(second)
    assert (address(b) == p) is same


def test_small_blocks_are_not_kept_here():
    before = kept()
    a = empty_bytes(MIB - 64)
    del a
    assert kept() == before


@needs_cache
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "bool", "complex64"])
def test_a_reused_block_shows_no_stale_data(dtype):
    n = (MIB // np.dtype(dtype).itemsize) + 3  # odd, past 1 MiB
    junk = dl.full((n,), 7, dtype=getattr(dl, dtype), device=CPU)
    p = address(junk)
    del junk
    z = dl.zeros((n,), dtype=getattr(dl, dtype), device=CPU)
    assert address(z) == p
    np.testing.assert_array_equal(z.asnumpy(), np.zeros(n, dtype))
    del z
    o = dl.ones((n,), dtype=getattr(dl, dtype), device=CPU)
    np.testing.assert_array_equal(o.asnumpy(), np.ones(n, dtype))


@needs_cache
def test_results_in_reused_blocks_match_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((517, 1031)).astype(np.float32)  # about 2 MiB
    b = rng.standard_normal((517, 1031)).astype(np.float32)
    x, y = dl.asarray(a, device=CPU), dl.asarray(b, device=CPU)
    for _ in range(4):  # each result takes the block the last one gave back
        np.testing.assert_array_equal((x + y).asnumpy(), a + b)
        np.testing.assert_array_equal((x * y - x).asnumpy(), a * b - a)
        np.testing.assert_array_equal(dl.astype(x, dl.float64).asnumpy(), a.astype(np.float64))
        np.testing.assert_array_equal(dl.arange(517 * 1031, device=CPU).asnumpy(),
                                      np.arange(517 * 1031))


@needs_cache
def test_memory_stats_count_kept_blocks_and_empty_cache_frees_them():
    r0 = dl.memory_stats(CPU)["bytes_reserved"]
    a = empty_bytes(8 * MIB)
    r1 = dl.memory_stats(CPU)["bytes_reserved"]
    assert r1 - r0 == 8 * MIB
    in_use = dl.memory_stats(CPU)["bytes_in_use"]
    del a
    s = dl.memory_stats(CPU)
    assert s["bytes_reserved"] == r1  # kept
    assert s["bytes_in_use"] == in_use - 8 * MIB
    dl.empty_cache("cpu")
    assert dl.memory_stats(CPU)["bytes_reserved"] == r0


@needs_cache
def test_threads_allocating_and_freeing_at_once_get_their_own_data():
    errors = []

    def work(seed):
        try:
            for i in range(40):
                v = (seed * 100 + i) % 251
                x = dl.full((MIB + 4096 * seed,), v, dtype=dl.uint8, device=CPU)
                got = x.asnumpy()
                if not (got == v).all():
                    errors.append((seed, i))
                del x
        except Exception as e:  # noqa: BLE001: reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def run_child(env_value, code):
    env = dict(os.environ, DLARRAY_CPU_CACHE_MB=env_value)
    script = "import dlarray as dl, numpy as np\nCPU = dl.cpu(0)\n" + textwrap.dedent(code[0]) + \
        textwrap.dedent(code[1])
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


KEPT = """
def kept():
    s = dl.memory_stats(CPU)
    return s["bytes_reserved"] - s["bytes_in_use"]
def block(mb):
    return dl.empty((mb << 20,), dtype=dl.uint8, device=CPU)
def address(x):
    return np.from_dlpack(x).ctypes.data
"""


@needs_cache
def test_budget_evicts_the_least_recently_kept_and_never_keeps_a_larger_block():
    out = run_child("8", (KEPT, """
    print(dl._core.get_option(CPU, "cache_limit"))
    base = kept()
    a, b = block(4), block(4)
    pa, pb = address(a), address(b)
    del a, b                       # both kept: 8 MiB
    print(kept() - base)
    c = block(2)
    del c                          # over budget: a (kept first) goes back
    print(kept() - base)
    x, y = block(4), block(4)      # b is still here; the second is fresh
    print(int(address(x) == pb), int(address(y) == pa))
    del x, y
    big = block(16)
    before = kept()
    del big                        # larger than the whole budget: freed at once
    print(kept() - before)
    """))
    assert out == [str(8 * MIB), str(8 * MIB), str(6 * MIB), "1", "0", "0"]


def test_zero_budget_keeps_nothing():
    out = run_child("0", (KEPT, """
    print(dl._core.get_option(CPU, "cache_limit"))
    base = kept()
    a = block(4)
    del a
    print(kept() - base)
    """))
    assert out == ["0", "0"]


@pytest.mark.parametrize("value", ["abc", "-5", "1.5"])
def test_a_value_that_is_not_a_whole_number_keeps_the_default(value):
    default = run_child("", ("", 'print(dl._core.get_option(CPU, "cache_limit"))'))
    assert run_child(value, ("", 'print(dl._core.get_option(CPU, "cache_limit"))')) == default
