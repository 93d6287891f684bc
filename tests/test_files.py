"""The package's own .npz reader (sdpembed._files): a member zipfile cannot open is one clear
ValueError, and our own reader's errors are never relabelled as a bad file."""

import io

import numpy as np
import pytest

from sdpembed import _files


def _archive(tmp_path, *, flag_bits=None, method=None):
    buffer = io.BytesIO()
    np.savez(buffer, a=np.arange(6.0))
    data = bytearray(buffer.getvalue())
    header = data.index(b"PK\x01\x02")                      # the member's central directory record
    if flag_bits is not None:
        data[header + 8:header + 10] = flag_bits.to_bytes(2, "little")
    if method is not None:
        data[header + 10:header + 12] = method.to_bytes(2, "little")
    path = tmp_path / "x.npz"
    path.write_bytes(bytes(data))
    return path


def test_a_good_archive_reads(tmp_path):
    assert np.array_equal(_files.read_npz(_archive(tmp_path))["a"], np.arange(6.0))


@pytest.mark.parametrize("change", [{"flag_bits": 0x1}, {"method": 99}], ids=["encrypted", "unknown-method"])
def test_a_member_zipfile_cannot_open_is_a_value_error(tmp_path, change):
    with pytest.raises(ValueError, match="array 'a' cannot be read"):
        _files.read_npz(_archive(tmp_path, **change))


def test_an_error_of_our_own_reader_is_not_called_a_bad_file(tmp_path, monkeypatch):
    def broken(*args):
        raise RuntimeError("a bug in the reader")

    monkeypatch.setattr(_files, "_read_array", broken)
    with pytest.raises(RuntimeError, match="a bug in the reader"):
        _files.read_npz(_archive(tmp_path))
