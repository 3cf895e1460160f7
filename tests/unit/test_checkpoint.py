"""Only the leftovers of an interrupted first offset write are removed from a checkpoint, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from streaming_dq.config.paths import local_path
from streaming_dq.sink.checkpoint import clear_unstarted_offsets

TMP = ".0.5f0c2d7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f.tmp"
CRC = "..0.5f0c2d7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f.tmp.crc"


def offsets_with(tmp_path: Path, *names: str) -> Path:
    offsets = tmp_path / "chk" / "offsets"
    offsets.mkdir(parents=True)
    for name in names:
        (offsets / name).write_text("v1")
    return offsets


@pytest.mark.parametrize("as_uri", [False, True])
def test_leftovers_of_the_first_offset_write_are_removed(tmp_path, as_uri):
    offsets = offsets_with(tmp_path, TMP, CRC)
    location = (tmp_path / "chk").as_uri() if as_uri else str(tmp_path / "chk")

    assert clear_unstarted_offsets(location) == sorted([TMP, CRC])
    assert list(offsets.iterdir()) == []


@pytest.mark.parametrize(
    "names",
    [
        ("0", TMP),  # a batch was planned: Spark recovers from its offset log by itself
        ("0", "1", ".1.5f0c2d7e-1a2b-4c3d-8e9f-0a1b2c3d4e5f.tmp"),
        (TMP, "notes.txt"),  # a file we do not recognise
        (),
    ],
)
def test_anything_else_is_left_alone(tmp_path, names):
    offsets = offsets_with(tmp_path, *names)

    assert clear_unstarted_offsets(str(tmp_path / "chk")) == []
    assert sorted(p.name for p in offsets.iterdir()) == sorted(names)


def test_a_missing_checkpoint_or_a_remote_one_is_not_touched(tmp_path):
    assert clear_unstarted_offsets(str(tmp_path / "nothing-here")) == []
    assert clear_unstarted_offsets("s3a://bucket/checkpoints/orders") == []
    assert local_path("abfss://c@a.dfs.core.windows.net/x") is None
    assert local_path("file:///data/chk") == Path("/data/chk")
    assert local_path("/data/chk") == Path("/data/chk")
