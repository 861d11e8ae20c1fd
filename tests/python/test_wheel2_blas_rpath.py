"""scripts/repair_wheel.py's restore_blas_rpath: auditwheel drops RUNPATH entries that point out
of the wheel, so the one to site-packages/scipy_openblas32/lib (the BLAS the wheel depends on) is
put back afterwards, in every library that needs libscipy_openblas.so and only there, with the
wheel's RECORD rewritten to match. Tested on a small wheel made here (four tiny C libraries)."""
import base64
import hashlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import repair_wheel  # noqa: E402

pytest.importorskip("elftools")


def _library(tmp_path, name, needs_blas, rpath=None):
    """A tiny shared library, linked to a stand-in libscipy_openblas.so when needs_blas."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler")
    blas = tmp_path / repair_wheel.BLAS_SONAME
    if not blas.exists():
        (tmp_path / "blas.c").write_text("int scipy_stub(void) { return 1; }\n")
        subprocess.run([gcc, "-shared", "-fPIC", "-Wl,-soname," + blas.name, "-o", str(blas),
                        str(tmp_path / "blas.c")], check=True)
    source = tmp_path / ("%s.c" % name)
    source.write_text("int %s(void) { return 0; }\n" % name)
    cmd = [gcc, "-shared", "-fPIC", "-o", str(tmp_path / ("%s.so" % name)), str(source)]
    if needs_blas:
        cmd += ["-Wl,--no-as-needed", str(blas)]
    if rpath:
        cmd += ["-Wl,--enable-new-dtags,-rpath," + rpath]
    subprocess.run(cmd, check=True)
    return (tmp_path / ("%s.so" % name)).read_bytes()


def _runpath(data):
    import io

    from elftools.elf.elffile import ELFFile
    dynamic = ELFFile(io.BytesIO(data)).get_section_by_name(".dynamic")
    return [p for t in dynamic.iter_tags() if t.entry.d_tag in ("DT_RUNPATH", "DT_RPATH")
            for p in (t.runpath if t.entry.d_tag == "DT_RUNPATH" else t.rpath).split(":")]


def test_puts_the_blas_folder_back_where_it_is_needed(tmp_path):
    files = {
        "dlarray/plugins/cpu_backend.so": _library(tmp_path, "plug", True, "$ORIGIN"),
        "dlarray/lib/cpu_backend_avx2.so": _library(tmp_path, "avx2", True),
        "dlarray/_other.so": _library(tmp_path, "other", False, "$ORIGIN"),
        "dlarray/__init__.py": b"",
    }
    wheel = tmp_path / "dlarray-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("dlarray-0.dist-info/RECORD", "stale\n")
    changed = repair_wheel.restore_blas_rpath(wheel)
    assert changed == ["dlarray/lib/cpu_backend_avx2.so", "dlarray/plugins/cpu_backend.so"]
    with zipfile.ZipFile(wheel) as z:
        got = {n: z.read(n) for n in z.namelist()}
    assert _runpath(got["dlarray/plugins/cpu_backend.so"]) == [
        "$ORIGIN", "$ORIGIN/../../scipy_openblas32/lib"]
    assert _runpath(got["dlarray/lib/cpu_backend_avx2.so"]) == [
        "$ORIGIN/../../scipy_openblas32/lib"]
    assert got["dlarray/_other.so"] == files["dlarray/_other.so"]
    record = dict(line.split(",", 1) for line in got["dlarray-0.dist-info/RECORD"].decode()
                  .splitlines())
    for name, data in got.items():
        if name.endswith("RECORD"):
            assert record[name] == ","
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert record[name] == "sha256=%s,%d" % (digest, len(data)), name
    # Once there, nothing changes: the wheel is left as it is.
    before = wheel.read_bytes()
    assert repair_wheel.restore_blas_rpath(wheel) == []
    assert wheel.read_bytes() == before
