"""Build backend for the hone client (PEP 517, standard library only).

``pip install ./clients/python`` builds the client's wheel with this module
instead of a build tool from a package index, so it installs offline. The
wheel holds the one module, ``hone.py``, and its metadata; the version is
``__version__`` in ``hone.py``, which is hone's version.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NAME = "hone"
_SUMMARY = "Client for training scripts run by hone, the hyperparameter tuner"
_REQUIRES_PYTHON = ">=3.8"
# A fixed time for the files of the archives, so that builds repeat.
_EPOCH = (2020, 1, 1, 0, 0, 0)
_EPOCH_SECONDS = 1577836800


def _version():
    with open(os.path.join(_HERE, "hone.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise RuntimeError("hone.py has no __version__ line")
    return m.group(1)


def _metadata(version):
    return (
        "Metadata-Version: 2.1\n"
        "Name: %s\n"
        "Version: %s\n"
        "Summary: %s\n"
        "Requires-Python: %s\n"
        "License: see the hone repository\n" % (_NAME, version, _SUMMARY, _REQUIRES_PYTHON)
    )


def _digest(data):
    d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + d.decode("ascii")


def _wheel(wheel_directory, files):
    """Writes a wheel holding files (name -> bytes) and its metadata."""
    version = _version()
    dist = "%s-%s.dist-info" % (_NAME, version)
    files = dict(files)
    files[dist + "/METADATA"] = _metadata(version).encode("utf-8")
    files[dist + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: hone_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode("utf-8")
    record = "".join("%s,%s,%d\n" % (n, _digest(b), len(b)) for n, b in files.items())
    files[dist + "/RECORD"] = (record + dist + "/RECORD,,\n").encode("utf-8")
    name = "%s-%s-py3-none-any.whl" % (_NAME, version)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            info = zipfile.ZipInfo(n, _EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 517: a wheel with hone.py."""
    with open(os.path.join(_HERE, "hone.py"), "rb") as f:
        return _wheel(wheel_directory, {"hone.py": f.read()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """PEP 660: a wheel whose .pth file puts this directory on sys.path."""
    return _wheel(wheel_directory, {"hone_client.pth": (_HERE + "\n").encode("utf-8")})


def build_sdist(sdist_directory, config_settings=None):
    """PEP 517: a source archive of the client and this backend."""
    version = _version()
    base = "%s-%s" % (_NAME, version)
    name = base + ".tar.gz"
    members = ["pyproject.toml", "hone.py", "backend/hone_build.py"]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        pkg = _metadata(version).encode("utf-8")
        for n, data in [("PKG-INFO", pkg)] + [(m, open(os.path.join(_HERE, m), "rb").read()) for m in members]:
            info = tarfile.TarInfo(base + "/" + n)
            info.size, info.mode, info.mtime = len(data), 0o644, _EPOCH_SECONDS
            tar.addfile(info, io.BytesIO(data))
    return name
