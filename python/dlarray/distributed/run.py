"""Starts one process per GPU: ``python -m dlarray.distributed.run --nproc-per-node N script.py``.

Like torchrun: each child gets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` (its GPU),
``LOCAL_WORLD_SIZE``, ``GROUP_RANK`` (the node), ``MASTER_ADDR`` and ``MASTER_PORT``, plus
``NCCL_NVLS_ENABLE=0`` unless set (NVLink multicast stays off). When a child fails, the others
are stopped (SIGTERM, then SIGKILL after ``--kill-grace`` seconds) and the launcher exits with
the failed child's code (128 + N for a child ended by signal N). SIGINT or SIGTERM to the
launcher stops every child the same way.

Several hosts: run it on each, with ``--nnodes``, ``--node-rank`` and rank 0's host in
``--master-addr`` (node 0 runs rank 0).

CPU ranks (``--device cpu``, collectives through MPI): each host's ranks are one Open MPI job,
started with ``mpirun -n NPROC --oversubscribe`` (the launcher then watches mpirun); the children
get the same variables plus ``DLARRAY_DIST_DEVICE=cpu``. With several hosts, node 0 also runs
``ompi-server`` and the launchers first meet at the master address to pass its address on, so
that the jobs can join one another (MPI_Comm_connect / accept).
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

_POLL_SECONDS = 0.05


def _free_port(host):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host if host in ("127.0.0.1", "localhost") else "", 0))
        return s.getsockname()[1]


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m dlarray.distributed.run",
        description="Start one process per GPU for dlarray.distributed (torchrun's meaning).")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        help="processes on this host, one per GPU (default 1)")
    parser.add_argument("--nnodes", type=int, default=1, help="hosts (default 1)")
    parser.add_argument("--node-rank", "--node_rank", type=int, default=0,
                        help="this host's index in [0, nnodes) (default 0)")
    parser.add_argument("--master-addr", "--master_addr", default=None,
                        help="rank 0's host (default: MASTER_ADDR or 127.0.0.1)")
    parser.add_argument("--master-port", "--master_port", type=int, default=None,
                        help="rank 0's port (default: MASTER_PORT, else a free port on one host "
                             "or 29500 on several)")
    parser.add_argument("--device", choices=["gpu", "cpu"], default="gpu",
                        help="gpu: one process per GPU, NCCL (default); cpu: CPU ranks, MPI "
                             "(started through Open MPI's mpirun)")
    parser.add_argument("--kill-grace", type=float, default=5.0,
                        help="seconds between SIGTERM and SIGKILL when stopping ranks")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script argument as a module (python -m)")
    parser.add_argument("script", help="the Python script (or module with -m) each rank runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args(argv)
    if args.nproc_per_node < 1:
        parser.error("--nproc-per-node must be at least 1")
    if args.nnodes < 1:
        parser.error("--nnodes must be at least 1")
    if not 0 <= args.node_rank < args.nnodes:
        parser.error("--node-rank must be in [0, --nnodes)")
    if args.kill_grace < 0:
        parser.error("--kill-grace must not be negative")
    args.master_addr = args.master_addr or os.environ.get("MASTER_ADDR") or "127.0.0.1"
    if args.master_port is None:
        env_port = os.environ.get("MASTER_PORT")
        if env_port:
            try:
                args.master_port = int(env_port)
            except ValueError:
                parser.error("MASTER_PORT=%r is not a port number" % env_port)
        elif args.nnodes == 1:
            args.master_port = _free_port(args.master_addr)
        else:
            args.master_port = 29500
    if not 0 < args.master_port < 65536:
        parser.error("the master port must be in [1, 65535]")
    if not args.module and not os.path.isfile(args.script):
        parser.error("no such script: %s" % args.script)
    return args


def child_env(args, local_rank, base=None):
    """The environment of local rank ``local_rank``."""
    env = dict(os.environ if base is None else base)
    world = args.nnodes * args.nproc_per_node
    env.update({
        "RANK": str(args.node_rank * args.nproc_per_node + local_rank),
        "WORLD_SIZE": str(world),
        "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(args.nproc_per_node),
        "GROUP_RANK": str(args.node_rank),
        "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": str(args.master_port),
    })
    env.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off unless asked for
    return env


def _mpi_tool(name):
    path = shutil.which(name)
    if path is None:
        raise SystemExit("dlarray.distributed.run: --device cpu starts the ranks with Open MPI's "
                         "%s, which is not on PATH: install Open MPI (Debian/Ubuntu: apt-get "
                         "install openmpi-bin)" % name)
    return path


def _timeout():
    text = os.environ.get("DLARRAY_DIST_TIMEOUT", "").strip()
    return float(text) if text else 300.0


def _meet_launchers(args, workdir):
    """Several nodes on MPI: node 0 starts ompi-server; every launcher learns its address.
    Returns (the address file for mpirun, the server's process or None)."""
    from .rendezvous import Rendezvous
    uri_file = os.path.join(workdir, "ompi-server.uri")
    server = None
    uri = b""
    if args.node_rank == 0:
        command = [_mpi_tool("ompi-server"), "--no-daemonize", "-r", uri_file]
        server = subprocess.Popen(command, start_new_session=True, env=_mpi_env(os.environ))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and server.poll() is None:
            if os.path.exists(uri_file) and os.path.getsize(uri_file) > 0:
                with open(uri_file, "rb") as f:
                    uri = f.read().strip()
                if uri.endswith(b"\n") or b";" in uri:
                    break
            time.sleep(0.05)
        if not uri:
            _signal_group(server, signal.SIGKILL)
            raise SystemExit("dlarray.distributed.run: ompi-server did not start")
    meeting = Rendezvous(args.node_rank, args.nnodes, args.master_addr, args.master_port,
                         _timeout())
    try:
        uri = meeting.join(uri)
    finally:
        meeting.close()
    if args.node_rank != 0:
        with open(uri_file, "wb") as f:
            f.write(uri + b"\n")
    return uri_file, server


def _mpi_env(base):
    env = dict(base)
    if os.geteuid() == 0:  # Open MPI refuses root unless told; the user chose to run as root
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def mpi_command(args, uri_file=None):
    """The mpirun command line that starts this node's CPU ranks."""
    command = [_mpi_tool("mpirun"), "-n", str(args.nproc_per_node), "--oversubscribe"]
    if uri_file is not None:
        command += ["--ompi-server", "file:" + uri_file]
    command += [sys.executable, "-m", "dlarray.distributed._mpi_child",
                "-m" if args.module else "-s", args.script] + list(args.args)
    return command


def _say(text):
    print("dlarray.distributed.run: " + text, file=sys.stderr, flush=True)


def _signal_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(procs, grace):
    """SIGTERM to every running child's process group, SIGKILL to those left after grace."""
    running = [p for p in procs if p.poll() is None]
    for p in running:
        _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(p.poll() is None for p in running) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    for p in running:
        if p.poll() is None:
            _signal_group(p, signal.SIGKILL)
    for p in running:
        p.wait()


def _exit_code(returncode):
    return 128 - returncode if returncode < 0 else returncode


def main(argv=None):
    """Runs the ranks of this host; returns the exit code (0 when every rank succeeded)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.device == "cpu":
        return _run_mpi(args)
    target = ["-m", args.script] if args.module else [args.script]
    command = [sys.executable] + target + list(args.args)
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    procs = []
    try:
        for local_rank in range(args.nproc_per_node):
            procs.append(subprocess.Popen(command, env=child_env(args, local_rank),
                                          start_new_session=True))
        failed = None
        while failed is None and not interrupted:
            codes = [p.poll() for p in procs]
            if all(c == 0 for c in codes):
                return 0
            for local_rank, c in enumerate(codes):
                if c is not None and c != 0:
                    failed = (local_rank, c)
                    break
            else:
                time.sleep(_POLL_SECONDS)
        if interrupted:
            _say("got signal %d; stopping every rank" % interrupted[0])
            _stop(procs, args.kill_grace)
            return 128 + interrupted[0]
        local_rank, code = failed
        rank = args.node_rank * args.nproc_per_node + local_rank
        how = ("was killed by signal %d" % -code) if code < 0 else "exited with code %d" % code
        others = sum(p.poll() is None for p in procs)
        _say("rank %d (pid %d) %s; stopping the other %d rank(s)"
             % (rank, procs[local_rank].pid, how, others))
        _stop(procs, args.kill_grace)
        return _exit_code(code)
    finally:
        for p in procs:
            if p.poll() is None:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        for s, handler in previous.items():
            signal.signal(s, handler)


def _run_mpi(args):
    """--device cpu: this node's ranks as one mpirun job; returns its exit code."""
    env = _mpi_env(child_env(args, 0))
    for name in ("RANK", "LOCAL_RANK"):  # the job's own ranks say (dlarray.distributed._mpi_child)
        env.pop(name, None)
    env["DLARRAY_DIST_DEVICE"] = "cpu"
    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    server = proc = None
    workdir = tempfile.mkdtemp(prefix="dlarray-run-")
    try:
        uri_file = None
        if args.nnodes > 1:
            uri_file, server = _meet_launchers(args, workdir)
        proc = subprocess.Popen(mpi_command(args, uri_file), env=env, start_new_session=True)
        while proc.poll() is None and not interrupted:
            time.sleep(_POLL_SECONDS)
        if interrupted:
            _say("got signal %d; stopping every rank" % interrupted[0])
            _stop([proc], args.kill_grace)
            return 128 + interrupted[0]
        if proc.returncode != 0:
            first = args.node_rank * args.nproc_per_node
            _say("the MPI job of ranks %d-%d (mpirun, pid %d) exited with code %d"
                 % (first, first + args.nproc_per_node - 1, proc.pid, _exit_code(proc.returncode)))
        return _exit_code(proc.returncode)
    finally:
        for p in (proc, server):
            if p is not None and p.poll() is None:
                _signal_group(p, signal.SIGKILL)
                p.wait()
        shutil.rmtree(workdir, ignore_errors=True)
        for s, handler in previous.items():
            signal.signal(s, handler)


if __name__ == "__main__":
    sys.exit(main())
