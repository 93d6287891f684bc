"""Reading and writing the package's files safely.

Reading: ``.npz`` archives and ``.npy`` arrays are parsed here rather than by ``np.load``, so that
every unreadable file — missing, empty, truncated, not a zip, a text file, an array of Python
objects, a header declaring more data than the file holds or than the machine can hold — is one
ValueError naming the file and what is wrong with it, and nothing is allocated before the
declared size has been checked.

Writing: :func:`check_output` gives the exact path a writer will create (numpy appends ``.npz`` /
``.npy``) and checks its directory before any work; :func:`atomic_write` writes to a temporary
file in the same directory and moves it into place with ``os.replace``, so an error or an
interrupt never leaves a partial file.
"""

from __future__ import annotations

import codecs
import math
import os
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import numpy as np

from ._memory import check_memory, dense_bytes

__all__ = ["atomic_write", "check_output", "output_path", "prepare_directory", "read_npy", "read_npz", "save_npz"]

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")            # a local file header, an empty archive
# what reading a member of a damaged archive raises besides our own ValueError: a bad CRC
# (BadZipFile), a cut or garbled deflate stream (zlib.error, EOFError, OSError)
_READ_ERRORS = (OSError, EOFError, zlib.error, zipfile.BadZipFile)
# what zipfile raises when it opens a member it cannot read at all: an unsupported compression
# method (NotImplementedError), an encrypted member (RuntimeError) — caught only there, so an
# error of our own reader is never reported as a bad file
_OPEN_ERRORS = (NotImplementedError, RuntimeError)


# ------------------------------------------------------------------------------- reading
def _describe(path: Path) -> str:
    """What the file at ``path`` is, from its first bytes: ``"npz"``, ``"npy"`` or a description."""
    with open(path, "rb") as handle:
        head = handle.read(512)
    if not head:
        return "empty (0 bytes)"
    if head.startswith(_ZIP_MAGICS):
        return "npz"
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head.startswith(b"\x80"):
        return "a Python pickle"
    try:   # incremental: a character cut at byte 512 is not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        text = None
    if text is not None and all(ch.isprintable() or ch in "\t\r\n\f" for ch in text):
        return "a text file"
    return f"binary data starting with {head[:8]!r}"


def _open_checked(path: str | os.PathLike, label: str, expected: str) -> Path:
    """``path`` as a Path after checking it is an existing regular file of kind ``expected``."""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"{label} does not exist")
    if file.is_dir():
        raise ValueError(f"{label} is a directory, not {_KINDS[expected]}")
    try:
        kind = _describe(file)
    except OSError as exc:
        raise ValueError(f"{label} cannot be read: {exc.strerror or exc}") from None
    if kind != expected:
        found = _KINDS.get(kind, kind)
        raise ValueError(f"{label} is {found}, not {_KINDS[expected]}{_HINTS[expected]}")
    return file


_KINDS = {"npz": "an .npz archive", "npy": "a single .npy array"}
_HINTS = {"npz": " (a zip of named .npy arrays, written by np.savez)", "npy": " (written by np.save)"}


def _read_header(handle: IO[bytes], label: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """Shape, Fortran order and dtype from a ``.npy`` header."""
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
    except ValueError as exc:                   # numpy's message for a bad magic string or header
        raise ValueError(f"{label} is not a valid .npy array: {exc}") from None
    return tuple(int(s) for s in shape), bool(fortran), np.dtype(dtype)


def _read_array(handle: IO[bytes], size: int, label: str) -> np.ndarray:
    """The array of a ``.npy`` stream of ``size`` bytes, its declared size checked before allocating."""
    shape, fortran, dtype = _read_header(handle, label)
    if dtype.hasobject:
        raise ValueError(f"{label} holds Python objects (dtype {dtype}), which are not allowed (allow_pickle=False): "
                         "use numeric or unicode arrays")
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    available = size - handle.tell()
    if nbytes > available:
        raise ValueError(f"{label} is truncated: its header declares shape {shape} of {dtype} ({nbytes} bytes) but "
                         f"only {max(available, 0)} bytes follow")
    check_memory(dense_bytes(count, itemsize=dtype.itemsize), f"{label} (shape {shape}, {dtype})")
    flat = np.empty(count, dtype=dtype)
    if nbytes:
        buffer, filled = memoryview(flat.view(np.uint8)), 0
        while filled < nbytes:
            read = handle.readinto(buffer[filled:])
            if not read:
                raise ValueError(f"{label} is truncated: {filled} of its {nbytes} bytes of data are present")
            filled += read
    return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)


def _member_name(info: zipfile.ZipInfo, label: str) -> str:
    if not info.filename.endswith(".npy"):
        raise ValueError(f"{label} holds {info.filename!r}, which is not a .npy array: an .npz archive holds only "
                         ".npy arrays")
    return info.filename[: -len(".npy")]


def read_npz(path: str | os.PathLike, what: str = "instance") -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` archive (never unpickling), or one clear ValueError.

    Parameters
    ----------
    path : path
        The archive.
    what : str
        What the file is (``"instance"``, ``"solution"``); error messages start with
        ``"<what> file '<path>'"``.

    Returns
    -------
    dict of str to ndarray
        The arrays by name (the member names without ``.npy``).

    Raises
    ------
    ValueError
        If the file is missing, a directory, empty, not a zip archive (a plain ``.npy``, a text
        file, a pickle), truncated or corrupt, holds a member that is not a ``.npy`` array, an
        array of Python objects, or an array larger than its data or than the machine's memory.
    """
    label = f"{what} file {os.fspath(path)!r}"
    file = _open_checked(path, label, "npz")
    arrays: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(file) as archive:
            for info in archive.infolist():
                name = _member_name(info, label)
                member = f"{label}: array {name!r}"
                try:
                    handle = archive.open(info)
                except _OPEN_ERRORS as exc:
                    raise ValueError(f"{member} cannot be read: {exc}") from None
                except _READ_ERRORS as exc:
                    raise ValueError(f"{member} is corrupt: {exc}") from None
                try:
                    with handle:
                        arrays[name] = _read_array(handle, info.file_size, member)
                except ValueError:
                    raise                                   # already says what is wrong
                except _READ_ERRORS as exc:                 # bad CRC, a cut deflate stream, ...
                    raise ValueError(f"{member} is corrupt: {exc}") from None
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{label} is a truncated or corrupt zip archive ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{label} cannot be read: {exc}") from None
    return arrays


def read_npy(path: str | os.PathLike, what: str) -> np.ndarray:
    """The array of a ``.npy`` file (never unpickling), or one clear ValueError naming ``what``.

    Raises
    ------
    ValueError
        As :func:`read_npz`, for a file that is not a single ``.npy`` array (an ``.npz`` archive
        included) or whose header declares more data than it holds.
    """
    label = f"{what} file {os.fspath(path)!r}"
    file = _open_checked(path, label, "npy")
    try:
        with open(file, "rb") as handle:
            return _read_array(handle, file.stat().st_size, label)
    except OSError as exc:
        raise ValueError(f"{label} cannot be read: {exc}") from None


# ------------------------------------------------------------------------------- writing
def output_path(path: str | os.PathLike, suffix: str = "") -> Path:
    """The path a writer creates for ``path``: numpy's ``savez`` appends ``.npz`` and ``save``
    appends ``.npy`` to a name that does not end with it (give that ``suffix``)."""
    name = os.fspath(path)
    return Path(name if not suffix or name.endswith(suffix) else name + suffix)


def check_output(path: str | os.PathLike, what: str, suffix: str = "") -> Path:
    """:func:`output_path` of ``path``, after checking that it can be written: its directory exists
    and it is not itself a directory. Call it before any work, so that none is lost.

    Raises
    ------
    ValueError
        Naming ``what`` (e.g. ``"--out"``) and the path.
    """
    target = output_path(path, suffix)
    directory = target.parent
    if target.is_dir():
        raise ValueError(f"{what} {os.fspath(target)!r} is a directory; give a file name")
    if not directory.is_dir():
        state = "is not a directory" if directory.exists() else "does not exist"
        raise ValueError(f"{what} {os.fspath(target)!r}: the directory {os.fspath(directory)!r} {state}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {os.fspath(target)!r}: the directory {os.fspath(directory)!r} is not writable")
    return target


def prepare_directory(path: str | os.PathLike, what: str) -> Path:
    """The directory ``path``, created (with its parents) if missing; ValueError naming ``what`` if
    it is a file or cannot be created."""
    directory = Path(path)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"{what} {os.fspath(directory)!r} exists and is not a directory") from None
    except OSError as exc:
        raise ValueError(f"{what} {os.fspath(directory)!r} cannot be created: {exc.strerror or exc}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {os.fspath(directory)!r} is not writable")
    return directory


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """Write ``path`` all at once: yields a temporary path in the same directory (with the same
    suffix, so numpy appends nothing) that replaces ``path`` when the block succeeds and is removed
    when it raises (an interrupt included).

    Examples
    --------
    >>> with atomic_write("sol.npz") as tmp:            # doctest: +SKIP
    ...     np.savez_compressed(tmp, P=P)
    """
    target = Path(path)
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=f".part{target.suffix}")
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_umask())        # mkstemp's 0600 would hide the file from others
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def save_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray], what: str) -> Path:
    """Write ``arrays`` as a compressed ``.npz`` file at ``path``, atomically; returns the path written.

    ``.npz`` is appended when the name does not end with it (as numpy does); ValueError naming
    ``what`` if the directory of ``path`` does not exist or ``path`` is a directory (:func:`check_output`).
    """
    target = check_output(path, what, ".npz")
    with atomic_write(target) as temporary:
        np.savez_compressed(temporary, **arrays)
    return target
