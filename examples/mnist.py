#!/usr/bin/env python3
"""Train logistic regression or an MLP (784-256-100-10, ReLU) on MNIST with dlarray.autodiff.

    python examples/mnist.py --model mlp --device cpu --epochs 10 --plot curves.png
    python examples/mnist.py --gpus 2          # data-parallel, one process per GPU

Data: the 10,000 digits that ship with dlarray (dlarray.datasets.mnist10k_path(), the
repository's data/mnist10k.npz; the first 8,000 images train, the last 2,000 test), or the full
MNIST in the dlsys format (--data mnist.pkl.gz: its training and test sets). Pixels are
scaled to [0, 1]. Weights start from NumPy with --seed, which also shuffles the batches, so
--device numpy, cpu and gpu take the same path and their losses agree to float32 rounding.

On a device the whole step stays there: each epoch's batches are uploaded once, the SGD
update (w += -lr * grad) is a node of the training executor (ad.sgd_update_op), so that one run
does forward, backward and the update of every weight as one generated kernel, and the loss is
summed on the device and read only every few steps for the progress bar.

With --gpus N (N > 1) the script starts itself through ``python -m dlarray.distributed.run``,
one process per GPU. Every global batch is split across the ranks, each rank computes the
gradients of its part, the gradients are averaged over the ranks with NCCL (by default the
executor's data-parallel mode: buckets of --bucket-mb MB, each all-reduced during the backward
pass as soon as its gradients are ready; --allreduce grouped for all parameters in one NCCL
group after it, per-param for one all-reduce each), and every rank
applies the same update, so the model matches a one-GPU run with the same global batch.
--check-sync compares a checksum of the parameters across the ranks after every step.

Optional packages: tqdm (a progress bar) and matplotlib (--plot); without them the script runs
the same and says what it skips.

--custom-ops does the bias-adds with AOT custom ops (examples/custom_ops, dlarray.custom): C++
and CUDA kernels compiled on first use, differentiated through a MindSpore-style bprop.

--model reorg takes the digits as (N, 1, 28, 28) images, reorganises each into (4, 14, 14)
with YOLO's reorg layer, flattens them and trains the MLP with a softmax cross-entropy layer:
both layers are seed 003's custom layers (examples/rtc_layers), CUDA kernels compiled at run
time with dlarray.rtc on a GPU and NumPy code on the CPU.
"""

import argparse
import gzip
import importlib
import os
import pickle
import sys
import time
import types
import zlib
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import numpy as np
import numpy.typing as npt

import dlarray
from dlarray import autodiff as ad
from dlarray import datasets

# The digits that ship with dlarray (the repository's data/mnist10k.npz, installed in the package),
# so the script runs wherever dlarray is installed.
DEFAULT_DATA = str(datasets.data_dir() / "mnist10k.npz")
LAYERS = {"logreg": (784, 10), "mlp": (784, 256, 100, 10), "reorg": (784, 256, 100, 10)}
DEFAULT_LR = {"logreg": 0.5, "mlp": 0.2, "reorg": 0.2}
IMAGE_SHAPE = {"reorg": (1, 28, 28)}  # the input of each example, by model (default: 784 pixels)
NPZ_TEST_SIZE = 2000
LOG_EVERY = 10  # steps between reads of the running loss (each read waits for the device)

# The trainer's arrays: NumPy arrays with --device numpy (ctx=None), else NDArrays on the device;
# the same code handles both, so their type is only known at run time.
Array = Any
Images = npt.NDArray[np.float32]
Labels = npt.NDArray[np.int64]
BiasAdd = Callable[[ad.Node, ad.Node], ad.Node]  # bias_add(product, b) -> node


def load_data(path: str) -> tuple[Images, Labels, Images, Labels]:
    """(train images, train labels, test images, test labels) from a .npz or .pkl.gz file.

    Images are float32 in [0, 1], one row of 784 pixels each; labels are int64 digits.
    """
    if path.endswith(".npz"):
        with np.load(path) as data:
            images = data["images"].astype(np.float32) / 255
            labels = data["labels"].astype(np.int64)
        split = len(images) - NPZ_TEST_SIZE
        return images[:split], labels[:split], images[split:], labels[split:]
    if path.endswith(".pkl.gz"):
        with gzip.open(path, "rb") as f:
            train, _, test = pickle.load(f, encoding="latin1")
        return (np.asarray(train[0], np.float32), np.asarray(train[1], np.int64),
                np.asarray(test[0], np.float32), np.asarray(test[1], np.int64))
    raise ValueError("--data: expected a .npz or .pkl.gz file, got %r" % path)


def rtc_layers() -> types.ModuleType:
    """The custom layers of examples/rtc_layers (Reorg, Flatten, SoftmaxCrossEntropy)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "rtc_layers"))
    try:
        layers = importlib.import_module("rtc_layers")
    finally:
        sys.path.pop(0)
    return layers


def custom_bias_add() -> BiasAdd:
    """The bias-add as AOT custom ops (examples/custom_ops/mlp_ops.py; dlarray.custom)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "custom_ops"))
    try:
        mlp_ops = importlib.import_module("mlp_ops")
    finally:
        sys.path.pop(0)
    bias_add: BiasAdd = mlp_ops.bias_add_op()
    return bias_add


def one_hot(labels: Labels, classes: int = 10) -> npt.NDArray[np.float32]:
    return np.eye(classes, dtype=np.float32)[labels]


def build_model(model: str, x: ad.Node, bias_add: Optional[BiasAdd] = None
                ) -> tuple[list[ad.Node], ad.Node]:
    """The parameter nodes (W1, b1, W2, ...) and the logits node of ``model`` for input ``x``.

    ``bias_add(product, b)``, when given, makes the bias-add nodes (e.g. an AOT custom op).
    """
    layers = LAYERS[model]
    params: list[ad.Node] = []
    h = x
    if model == "reorg":
        custom = rtc_layers()
        h = custom.Flatten()(custom.Reorg(stride=2)(x))
    for i, _ in enumerate(layers[1:], start=1):
        w, b = ad.Variable("W%d" % i), ad.Variable("b%d" % i)
        product = ad.matmul_op(h, w)
        if bias_add is None:
            h = product + ad.broadcastto_op(b, product)
        else:
            h = bias_add(product, b)
        if i < len(layers) - 1:
            h = ad.relu_op(h)
        params += [w, b]
    return params, h


def init_params(model: str, seed: int) -> list[npt.NDArray[np.float32]]:
    """Initial parameters from NumPy: He-normal weights and zero biases, float32."""
    rng = np.random.default_rng(seed)
    layers = LAYERS[model]
    params: list[npt.NDArray[np.float32]] = []
    for n_in, n_out in zip(layers, layers[1:]):
        params.append((rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(np.float32))
        params.append(np.zeros(n_out, np.float32))
    return params


class Trainer:
    """A model on one device (ctx=None: NumPy): its executors, parameters and SGD steps.

    With ``dist`` (the dlarray.distributed module, initialised) the trainer is one rank of a
    data-parallel group: rank 0's parameters are broadcast at the start and the gradients are
    averaged over the ranks before each update.
    """

    def __init__(self, model: str, ctx: Optional[dlarray.DLContext], lr: float, seed: int,
                 custom_ops: bool = False, dist: Optional[types.ModuleType] = None,
                 allreduce: str = "buckets", bucket_mb: float = 25.0) -> None:
        self.ctx, self.lr, self.dist, self.allreduce = ctx, lr, dist, allreduce
        self.x, self.y_ = ad.Variable("x"), ad.Variable("y_")
        params, logits = build_model(model, self.x, custom_bias_add() if custom_ops else None)
        if model == "reorg":
            loss = rtc_layers().SoftmaxCrossEntropy()(logits, self.y_)
        else:
            loss = ad.softmaxcrossentropy_op(logits, self.y_)
        self.image_shape = IMAGE_SHAPE.get(model)
        grads = ad.gradients(loss, params)
        # Data-parallel mode: the executor averages the gradients over the ranks in buckets,
        # started during the backward pass (the other modes all-reduce after it).
        overlap = dist is not None and allreduce == "buckets" and ctx is not None
        # On a device the update is the executor's last node (after the data-parallel mode's
        # all-reduce); when the gradients are all-reduced after the run, it follows that.
        self.graph_update = ctx is not None and (dist is None or overlap)
        update = [ad.sgd_update_op(params, grads, lr)] if self.graph_update else []
        self.train_executor = ad.Executor([loss] + grads + update, ctx,
                                          data_parallel=grads if overlap else None,
                                          bucket_mb=bucket_mb)
        self.overlap = overlap
        self.eval_executor = ad.Executor([logits], ctx)
        self.weights = [self.to_device(p) for p in init_params(model, seed)]
        self.params: dict[ad.Node, Array] = dict(zip(params, self.weights))
        self.feed: dict[ad.Node, Array] = dict(self.params)
        self.loss_sum = self.to_device(np.zeros(1))
        self.steps = 0  # since the last mean_loss(reset=True)
        self.total_steps = 0
        self.update_graphs: dict[tuple[int, ...], ad.RecordedGraph] = {}
        if dist is not None:
            for w in self.weights:
                dist.broadcast(w, src=0)

    def shape_images(self, images: Images) -> Images:
        """``images`` (rows of 784 pixels) in the model's input shape."""
        if self.image_shape is None:
            return images
        return np.reshape(images, (len(images),) + self.image_shape)

    def to_device(self, values: npt.ArrayLike) -> Array:
        """``values`` as float32 on the trainer's device (a NumPy copy for ctx=None)."""
        array = np.array(values, np.float32)
        return array if self.ctx is None else dlarray.array(array, self.ctx)

    def step(self, images: Array, labels: Array) -> None:
        """One SGD step on a batch (images, one-hot labels; NumPy or on the device)."""
        self.feed[self.x], self.feed[self.y_] = images, labels
        loss, *grads = self.train_executor.run(self.feed)
        if self.graph_update:  # the run updated the weights
            dlarray.ops.matrix_elementwise_add(self.loss_sum, loss, self.loss_sum)
        else:
            self.update(loss, grads)
        self.steps += 1
        self.total_steps += 1

    def _sgd(self, loss: dlarray.NDArray, grads: Sequence[dlarray.NDArray]) -> None:
        # every parameter in one generated kernel (per-tensor ops' results, bit for bit)
        dlarray.sgd_update(self.weights, grads, self.lr)
        dlarray.ops.matrix_elementwise_add(self.loss_sum, loss, self.loss_sum)

    def update(self, loss: Array, grads: Sequence[Array]) -> None:
        """The SGD update after a run without it: with NumPy, or on a device after the
        gradients are all-reduced (outside the executor). On a GPU whose executor replays a
        CUDA graph, the update is recorded once per set of gradient buffers (one per plan) and
        replayed."""
        if self.dist is not None and not self.overlap:  # each rank's mean -> the global batch's
            if self.allreduce in ("grouped", "buckets"):
                self.dist.all_reduce_coalesced(grads, op="mean")
            else:
                for g in grads:
                    self.dist.all_reduce(g, op="mean")
        if self.ctx is None:
            for w, g in zip(self.weights, grads):
                w -= self.lr * g
            self.loss_sum += loss
            return
        graphs = self.train_executor.graph_stats() if dlarray.is_gpu_ctx(self.ctx) else None
        if not graphs or not graphs["captures"]:
            self._sgd(loss, grads)
            return
        key = (id(loss),) + tuple(id(g) for g in grads)  # the plan's own buffers
        graph = self.update_graphs.get(key)
        if graph is None:
            self._sgd(loss, grads)  # once eagerly: the ops' scratch is then cached
            assert self.ctx is not None
            graph = self.update_graphs[key] = ad.record_cuda_graph(
                lambda: self._sgd(loss, grads), self.ctx)
            return
        graph.launch()

    def mean_loss(self, reset: bool = False) -> float:
        """The mean loss of the steps since the last reset (waits for the device)."""
        if self.dist is not None:
            self.dist.all_reduce(self.loss_sum, op="mean")
        total = self.loss_sum if self.ctx is None else self.loss_sum.asnumpy()
        mean = float(total[0]) / max(self.steps, 1)
        if reset:
            self.loss_sum[:] = np.zeros(1, np.float32)
            self.steps = 0
        return mean

    def accuracy(self, images: Array, labels: Labels) -> float:
        """The fraction of ``images`` (NumPy or on the device) classified as ``labels``."""
        feed = dict(self.params)
        feed[self.x] = images
        logits, = self.eval_executor.run(feed, convert_to_numpy_ret_vals=True)
        return float(np.mean(logits.argmax(axis=1) == labels))

    def checksum(self) -> int:
        """CRC-32 of every parameter's bytes (waits for the device)."""
        crc = 0
        for w in self.weights:
            crc = zlib.crc32(np.ascontiguousarray(w if self.ctx is None else w.asnumpy()).tobytes(),
                             crc)
        return crc

    def check_same_parameters(self) -> int:
        """Raises RuntimeError unless every rank holds bit-identical parameters."""
        mine = dlarray.array(np.array([self.checksum()], np.int64), self.ctx, dtype=np.int64)
        assert self.dist is not None
        every = self.dist.all_gather(mine).asnumpy()
        if len(set(every.tolist())) != 1:
            raise RuntimeError("the parameters differ across ranks after step %d: checksums %s"
                               % (self.total_steps, every.tolist()))
        return int(every[0])


class EpochBatches:
    """An epoch's shuffled batches, (images, one-hot labels), on a trainer's device.

    Device arrays are made on the first epoch and refilled in place on the next ones, so
    the steps read their inputs on the device: no copy and no wait inside the step loop.
    With ``rank`` and ``world_size`` each global batch is cut into ``world_size`` equal parts
    and this rank takes part ``rank`` (a last batch is trimmed to a multiple of world_size).
    """

    def __init__(self, trainer: Trainer, images: Images, labels: Labels, batch_size: int,
                 rank: int = 0, world_size: int = 1) -> None:
        self.trainer, self.images, self.labels = trainer, images, labels
        self.batch_size = batch_size
        self.rank, self.world_size = rank, world_size
        self.arrays: list[tuple[Array, Array]] = []

    def __call__(self, order: npt.NDArray[np.int64]) -> list[tuple[Array, Array]]:
        batches: list[tuple[Array, Array]] = []
        for i, start in enumerate(range(0, len(order), self.batch_size)):
            idx = order[start:start + self.batch_size]
            part = len(idx) // self.world_size
            if part == 0:
                break
            idx = idx[self.rank * part:(self.rank + 1) * part]
            x, y = self.trainer.shape_images(self.images[idx]), one_hot(self.labels[idx])
            if self.trainer.ctx is None:
                batches.append((x, y))
            elif i < len(self.arrays):
                self.arrays[i][0][:] = x
                self.arrays[i][1][:] = y
            else:
                self.arrays.append((self.trainer.to_device(x), self.trainer.to_device(y)))
        return batches or self.arrays


def plot_curves(path: str, losses: Sequence[float], accuracies: Sequence[float]) -> None:
    """Saves the training loss and test accuracy per epoch to ``path`` (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = range(1, len(losses) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, losses, marker="o")
    ax_loss.set(xlabel="epoch", ylabel="training loss", title="loss")
    ax_acc.plot(epochs, [100 * a for a in accuracies], marker="o", color="tab:green")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy (%)", title="test accuracy")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


class _NoBar:
    """Stands for a tqdm bar when tqdm is not installed: iterates, shows nothing."""

    def __init__(self, iterable: Iterable[Any]) -> None:
        self.iterable = iterable

    def __iter__(self) -> Iterator[Any]:
        return iter(self.iterable)

    def set_postfix(self, **kwargs: Any) -> None:
        pass


def optional_module(name: str) -> Optional[types.ModuleType]:
    """The module ``name``, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def progress_bar(iterable: Iterable[Any], description: str) -> Any:
    """A tqdm bar over ``iterable`` when tqdm is installed and stdout is a terminal."""
    tqdm = optional_module("tqdm")
    if tqdm is None:
        return _NoBar(iterable)
    return tqdm.tqdm(iterable, desc=description, leave=False, file=sys.stdout,
                     disable=None)  # None: no bar when stdout is not a terminal


def check_plot_path(parser: argparse.ArgumentParser, path: str) -> bool:
    """Fails now, before training, when ``path`` cannot receive the plot; returns whether the
    plot can be drawn (False, with a warning, when matplotlib is not installed)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        parser.error("--plot %s is a folder: give a file name such as curves.png" % path)
    if not os.path.isdir(folder):
        parser.error("--plot %s: the folder %s does not exist" % (path, folder))
    if not os.access(folder, os.W_OK):
        parser.error("--plot %s: the folder %s is not writable" % (path, folder))
    if optional_module("matplotlib") is None:
        print("warning: matplotlib is not installed: --plot %s is skipped "
              "(pip install matplotlib)" % path, file=sys.stderr)
        return False
    from matplotlib.figure import Figure
    formats = Figure().canvas.get_supported_filetypes()
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension not in formats:
        parser.error("--plot %s: unknown image format %r (one of: %s)"
                     % (path, extension, ", ".join(sorted(formats))))
    return True


def start_ranks(args: argparse.Namespace, argv: Optional[Sequence[str]]) -> int:
    """Runs this script through the launcher, one process per GPU; returns its exit code."""
    import subprocess
    script = os.path.abspath(__file__)
    argv = sys.argv[1:] if argv is None else list(argv)
    return subprocess.call([sys.executable, "-m", "dlarray.distributed.run", "--nproc-per-node",
                            str(args.gpus), script] + argv)


def default_device() -> str:
    return "gpu" if any(dlarray.is_gpu_ctx(c) for c in dlarray.devices()) else "cpu"


def device_context(name: str) -> Optional[dlarray.DLContext]:
    contexts: dict[str, Optional[dlarray.DLContext]] = {
        "numpy": None, "cpu": dlarray.cpu(0), "gpu": dlarray.gpu(0), "opencl": dlarray.opencl(0)}
    return contexts[name]


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["numpy", "cpu", "gpu", "opencl"], default=None,
                        help="numpy: the NumPy executor; default: gpu when usable, else cpu")
    parser.add_argument("--model", choices=sorted(LAYERS), default="mlp",
                        help="logreg: 784-10; mlp: 784-256-100-10 with ReLU; reorg: the MLP "
                        "after a reorg layer, with an rtc loss layer (default: mlp)")
    parser.add_argument("--epochs", type=int, default=10, help="passes over the training set "
                        "(default: 10)")
    parser.add_argument("--batch-size", type=int, default=100, help="images per SGD step "
                        "(default: 100)")
    parser.add_argument("--lr", type=float, default=None,
                        help="learning rate (default: %s)" % DEFAULT_LR)
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the initial weights and the batch order (default: 0)")
    parser.add_argument("--data", default=DEFAULT_DATA,
                        help="a .npz (images, labels) or dlsys mnist.pkl.gz file "
                        "(default: dlarray's sample, dlarray.datasets.mnist10k_path())")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="save the loss and accuracy curves (needs matplotlib)")
    parser.add_argument("--custom-ops", action="store_true",
                        help="do the bias-adds with the AOT kernels of examples/custom_ops")
    parser.add_argument("--gpus", type=int, default=1,
                        help="data-parallel over this many GPUs, one process each (started "
                        "through python -m dlarray.distributed.run; default: 1)")
    parser.add_argument("--allreduce", choices=["buckets", "grouped", "per-param"],
                        default="buckets",
                        help="with --gpus: the executor's data-parallel mode, overlapping the "
                        "backward pass (default), the gradients in one NCCL group after it, or "
                        "one all-reduce each")
    parser.add_argument("--bucket-mb", type=float, default=25.0,
                        help="with --allreduce buckets: megabytes per bucket (default 25)")
    parser.add_argument("--check-sync", action="store_true",
                        help="with --gpus: compare a checksum of the parameters across the "
                        "ranks after every step")
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "gpus"):
        if getattr(args, name) < 1:
            parser.error("--%s must be at least 1" % name.replace("_", "-"))
    if args.gpus > 1 and args.device not in (None, "gpu"):
        parser.error("--gpus %d trains on GPUs: leave --device out or say gpu" % args.gpus)
    if args.gpus > 1 and args.batch_size % args.gpus:
        parser.error("--batch-size %d does not split over %d GPUs" % (args.batch_size, args.gpus))
    if args.gpus > 1:
        args.device = "gpu"
    if not os.path.isfile(args.data):
        parser.error("--data %s: no such file" % args.data)
    args.draw_plot = bool(args.plot) and check_plot_path(parser, args.plot)
    args.device = args.device or default_device()
    if args.gpus > 1 and dlarray.gpu(args.gpus - 1) not in dlarray.devices():
        parser.error("--gpus %d: this machine has %d usable GPU(s)"
                     % (args.gpus, sum(dlarray.is_gpu_ctx(c) for c in dlarray.devices())))
    if args.device == "gpu" and dlarray.gpu(0) not in dlarray.devices():
        reasons = ["%s: %s" % (p["name"], p["reason"]) for p in dlarray.plugins() if p["reason"]]
        parser.error("--device gpu: no usable GPU (%s)" % ("; ".join(reasons) or "no GPU plugin"))
    args.lr = DEFAULT_LR[args.model] if args.lr is None else args.lr
    return args


def main(argv: Optional[Sequence[str]] = None) -> tuple[list[float], list[float]]:
    args = parse_args(argv)
    dist: Optional[types.ModuleType] = None
    rank, world = 0, 1
    if args.gpus > 1:
        if "WORLD_SIZE" not in os.environ:  # not started by the launcher yet: start the ranks
            sys.exit(start_ranks(args, argv))
        import dlarray.distributed
        dist = dlarray.distributed
        dist.init_process_group()
        rank, world = dist.get_rank(), dist.get_world_size()
        if world != args.gpus:
            raise SystemExit("--gpus %d but WORLD_SIZE=%d" % (args.gpus, world))
    def say(*args: Any) -> None:
        if rank == 0:
            print(*args)

    train_x, train_y, test_x, test_y = load_data(args.data)
    ctx = dist.get_device() if dist else device_context(args.device)
    trainer = Trainer(args.model, ctx, args.lr, args.seed, custom_ops=args.custom_ops, dist=dist,
                      allreduce=args.allreduce, bucket_mb=args.bucket_mb)
    test_images = trainer.to_device(trainer.shape_images(test_x))
    batches = EpochBatches(trainer, train_x, train_y, args.batch_size, rank, world)
    rng = np.random.default_rng(args.seed)
    where = args.device if world == 1 else "%d GPUs (%d per GPU)" % (world,
                                                                    args.batch_size // world)
    say("%s on %s: %d training and %d test images, batch %d, lr %g%s"
        % (args.model, where, len(train_x), len(test_x), args.batch_size, args.lr,
           ", bias-add by AOT custom ops" if args.custom_ops else ""))
    losses: list[float] = []
    accuracies: list[float] = []
    checks = 0
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        epoch_batches = batches(rng.permutation(len(train_x)))
        bar = progress_bar(epoch_batches, "epoch %d/%d" % (epoch, args.epochs)) if rank == 0 \
            else _NoBar(epoch_batches)
        for images, labels in bar:
            trainer.step(images, labels)
            if dist is not None and args.check_sync:
                trainer.check_same_parameters()
                checks += 1
            if trainer.steps % LOG_EVERY == 0 and dist is None:  # a read: no collective
                bar.set_postfix(loss="%.4f" % trainer.mean_loss())
        losses.append(trainer.mean_loss(reset=True))
        seconds = time.perf_counter() - start
        accuracies.append(trainer.accuracy(test_images, test_y))
        say("epoch %2d: loss %.4f  test accuracy %.2f%%  %.2f s"
            % (epoch, losses[-1], 100 * accuracies[-1], seconds))
    if dist is not None:
        digest = trainer.check_same_parameters()
        say("parameters identical on all %d ranks (crc32 %08x; %d per-step checks)"
            % (world, digest, checks))
        dist.destroy_process_group()
    say("final test accuracy %.2f%%" % (100 * accuracies[-1]))
    if args.draw_plot and rank == 0:
        plot_curves(args.plot, losses, accuracies)
        print("saved", args.plot)
    return losses, accuracies


if __name__ == "__main__":
    main()
