"""``DLARRAY_LOG``: what dlarray decides, through Python's ``logging`` (logger ``dlarray``).

``DLARRAY_LOG=info`` or ``debug`` adds a handler that writes to stderr and sets the logger's
level; unset (or ``warning``) dlarray adds no handler, so an application that configures
``logging`` itself still gets the records. Any other value is a mistake the user should hear about
before anything runs, so ``import dlarray`` raises ValueError (a typo such as ``DLARRAY_LOG=loud``
would otherwise look like "dlarray has nothing to say").

What is logged uses what the package already knows (``plugins()``, ``show_config()``, the cache
module's callers): no C++ is involved, and with logging off the cost is one ``isEnabledFor``.
This module imports nothing of dlarray at its top: ``dlarray/__init__.py`` imports it first, so a
bad value fails before the plugins load.
"""

import logging
import os
import sys

__all__ = ["ENV", "LEVELS", "logger", "level_from_env", "configure", "log_startup",
           "log_fallback"]

ENV = "DLARRAY_LOG"
LEVELS = {"warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
FORMAT = "dlarray %(levelname)s: %(message)s"

logger = logging.getLogger("dlarray")
_handler = None
_fallbacks_said = set()


def level_from_env(value):
    """The level ``DLARRAY_LOG=value`` asks for: None for no log (unset, empty or ``warning``).

    Raises
    ------
    ValueError
        For any other value than ``info``, ``debug`` or ``warning`` (any case, spaces ignored).
    """
    if value is None or not value.strip():
        return None
    key = value.strip().lower()
    if key not in LEVELS:
        raise ValueError("%s=%r is not a log level: use %s=info or %s=debug (warning, or unset, "
                         "logs nothing)" % (ENV, value, ENV, ENV))
    return None if key == "warning" else LEVELS[key]


def configure(environ=None):
    """Sets up the ``dlarray`` logger from ``DLARRAY_LOG`` (of ``environ``, else os.environ)."""
    global _handler
    environ = os.environ if environ is None else environ
    level = level_from_env(environ.get(ENV))
    if level is None:
        return
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(_handler)
    logger.setLevel(level)


def _plugin_line(p, reason_of):
    where = "%s, %s" % (p["origin"], p["path"] or "no library")
    if p["status"] != "loaded":
        return "plugin %s: %s (%s): %s" % (p["name"], p["status"], where, reason_of(p))
    serves = ("%d %s device(s)" % (p["device_count"], p["device_type"]) if p["device_type"]
              else "ops only")
    return "plugin %s: loaded (%s, %d ops) from %s" % (p["name"], serves, len(p["ops"]), where)


def _cpu_lines(cpu):
    if cpu is None:
        return ["cpu: the CPU plugin is not loaded: no CPU device"]
    blas = cpu["blas"]
    lines = ["cpu: %s, %d threads (%s); idle threads: %s"
             % (cpu["device"], cpu["num_threads"], cpu["num_threads_from"], cpu["wait_policy"]),
             "cpu: instruction set path %s" % cpu["isa"]]
    if cpu["gemm"] == "cblas":
        lines.append("cpu: matrix products through %s (%s), kernel for this CPU: %s"
                     % (blas["name"], blas["library"] or "library path unknown",
                        blas["core"] or "not reported"))
    else:
        lines.append("cpu: matrix products with the built-in blocked SGEMM (no BLAS)")
    return lines


def _missing_kernels(records, op_info):
    """{device type: ops that some plugin serves, but not on that device type}."""
    kinds = [p["device_type"] for p in records
             if p["status"] == "loaded" and p["device_type"] and p["device_count"]]
    names = sorted({op for p in records if p["status"] == "loaded" for op in p["ops"]})
    missing = {}
    for op in names:
        served = op_info(op)["devices"]
        for kind in kinds:
            if kind not in served:
                missing.setdefault(kind, []).append(op)
    return missing


def log_startup():
    """At import: every plugin tried, the CPU backend's choices, ops with no kernel on a device."""
    if not logger.isEnabledFor(logging.INFO):
        return  # show_config() asks the CPU plugin several questions: only when someone listens
    from . import _config, _core, _entry_points
    records = _entry_points.annotate(_core.plugins())
    for p in records:
        logger.info(_plugin_line(p, _config.plugin_reason))
        if p["status"] == "loaded":
            logger.debug("plugin %s ops: %s", p["name"], ", ".join(p["ops"]) or "none")
    for line in _cpu_lines(_config.show_config(mode="dicts")["cpu"]):
        logger.info(line)
    for kind, ops in sorted(_missing_kernels(records, _core.op_info).items()):
        logger.info("no kernel on %s devices for: %s (these ops raise there)", kind,
                    ", ".join(ops))


def log_fallback(what, once_key=None):
    """Logs a fallback at info (once per ``once_key`` when given: a choice made at every call)."""
    if once_key is not None:
        if once_key in _fallbacks_said:
            return
        _fallbacks_said.add(once_key)
    logger.info("fallback: %s", what)


configure()  # at import of the package (see the top): DLARRAY_LOG is read once
