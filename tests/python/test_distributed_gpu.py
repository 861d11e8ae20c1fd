"""dlarray.distributed on real GPUs with NCCL: every collective against NumPy on two GPUs
through the launcher, a rank that dies or skips a collective ending the other with an error
(never a hang), and NCCL's clear errors. Skips without GPUs (test_distributed.py covers the
rest on the CPU)."""
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest

import dlarray

HERE = pathlib.Path(__file__).resolve().parent
WORKER = HERE / "dist_gpu_worker.py"
GPUS = [c for c in dlarray.devices() if c.device_type == 2]
needs_gpu = pytest.mark.skipif(not GPUS, reason="no GPU")
needs_two_gpus = pytest.mark.skipif(len(GPUS) < 2, reason="fewer than two GPUs")


def _nccl_or_skip():
    import dlarray.distributed as dist
    try:
        return dist.nccl_library()
    except RuntimeError as e:
        pytest.skip("NCCL is not installed: %s" % e)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(**extra):
    e = dict(os.environ, NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    e.update({k: str(v) for k, v in extra.items()})
    return e


def read(out, rank):
    path = out / ("rank%d.json" % rank)
    assert path.exists(), "rank %d wrote no result" % rank
    return json.loads(path.read_text())


@needs_two_gpus
def test_every_collective_matches_numpy_on_two_gpus(tmp_path):
    path, version = _nccl_or_skip()
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                           "2", str(WORKER), "collectives", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env())
    assert done.returncode == 0, done.stderr[-4000:]
    for rank in (0, 1):
        r = read(tmp_path, rank)
        assert "exception" not in r, r.get("exception")
        assert r["checks"] >= 25 and r["destroyed"]
        assert len(r["errors"]) == 4
        assert r["nccl"][1] == version
    print("\nNCCL %s (%s): collectives on 2 GPUs checked in %.1f s"
          % (version, path, time.monotonic() - start))


@needs_two_gpus
def test_two_nodes_on_one_host_over_nccls_network_transport(tmp_path):
    """Issue 24's several hosts, as far as one machine goes: two launchers (--nnodes 2), one GPU
    each (CUDA_VISIBLE_DEVICES), with NCCL's peer-to-peer and shared-memory transports off, so
    the ranks meet over the TCP rendezvous and NCCL's network transport, as two hosts would."""
    _nccl_or_skip()
    port = free_port()
    nodes = [subprocess.Popen(
        [sys.executable, "-m", "dlarray.distributed.run", "--nnodes", "2", "--node-rank", str(k),
         "--nproc-per-node", "1", "--master-port", str(port), str(WORKER), "collectives",
         str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env(CUDA_VISIBLE_DEVICES=k, NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1,
                NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,NET")) for k in (0, 1)]
    outs = [p.communicate(timeout=300) for p in nodes]
    for p, (out, err) in zip(nodes, outs):
        assert p.returncode == 0, (out + err)[-4000:]
    for rank in (0, 1):
        r = read(tmp_path, rank)
        assert "exception" not in r, r.get("exception")
        assert r["checks"] >= 25 and r["destroyed"]
    logs = "".join(out + err for out, err in outs)
    assert "NET/" in logs and "via P2P" not in logs and "via SHM" not in logs, logs[-3000:]


def run_pair(tmp_path, scenario, timeout=120, **extra):
    port = free_port()
    procs = [subprocess.Popen([sys.executable, str(WORKER), scenario, str(tmp_path)],
                              env=env(RANK=r, LOCAL_RANK=r, WORLD_SIZE=2, MASTER_PORT=port,
                                      **extra),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in (0, 1)]
    outputs = []
    for p in procs:
        try:
            outputs.append(p.communicate(timeout=timeout))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError("a rank hung in %s" % scenario)
    return procs, outputs


@needs_two_gpus
def test_a_rank_that_dies_ends_the_other_with_an_error(tmp_path):
    _nccl_or_skip()
    procs, outputs = run_pair(tmp_path, "peer_exits", DLARRAY_DIST_EXIT_GRACE=30)
    assert procs[1].returncode == 7
    r = read(tmp_path, 0)
    assert r["error"] and "rank 1 (pid" in r["error"] and "exited" in r["error"], r
    assert r["waited"] < 30, r  # the GPU wait ended when rank 1's connection closed
    assert procs[0].returncode == 0, outputs[0][1][-3000:]


@needs_two_gpus
def test_a_skipped_collective_times_out_instead_of_hanging(tmp_path):
    _nccl_or_skip()
    start = time.monotonic()
    procs, outputs = run_pair(tmp_path, "skipped_collective", DLARRAY_DIST_TIMEOUT=15,
                              DLARRAY_DIST_EXIT_GRACE=3)
    r = read(tmp_path, 0)
    assert r["error"] and "a collective has waited" in r["error"], r
    assert procs[1].returncode == 1, outputs[1][1][-3000:]  # ended by its watchdog's grace
    assert "DLARRAY_DIST_EXIT_GRACE" in outputs[1][1]
    assert time.monotonic() - start < 80


@needs_gpu
def test_one_rank_group_on_one_gpu():
    _nccl_or_skip()
    code = """
import numpy as np, dlarray, dlarray.distributed as dist
dist.init_process_group(rank=0, world_size=1, master_port=%d)
x = dlarray.array(np.arange(10, dtype=np.float32), dist.get_device())
dist.all_reduce(x, op="max"); dist.barrier()
assert (x.asnumpy() == np.arange(10)).all()
print(dist.get_rank(), dist.get_world_size(), dist.get_device())
dist.destroy_process_group()
""" % free_port()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env())
    assert done.returncode == 0, done.stderr[-3000:]
    # (the last line: NCCL_DEBUG=INFO or WARN prints NCCL's own lines to stdout)
    assert done.stdout.splitlines()[-1].split() == ["0", "1", "cuda(0)"]
