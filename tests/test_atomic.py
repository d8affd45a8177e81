"""omlc.io.atomic: a file is written whole or not at all."""
import pytest

from omlc.io.atomic import replaced_on_success


def test_the_temp_file_replaces_the_destination_on_success(tmp_path):
    dest, tmp = tmp_path / "out.txt", tmp_path / ".part-out.txt"
    dest.write_text("old")
    with replaced_on_success(tmp, dest):
        tmp.write_text("new")
    assert dest.read_text() == "new"
    assert not tmp.exists()


@pytest.mark.parametrize("exc", [ValueError, KeyboardInterrupt])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, exc):
    dest, tmp = tmp_path / "out.txt", tmp_path / ".part-out.txt"
    dest.write_text("old")
    with pytest.raises(exc):
        with replaced_on_success(tmp, dest):
            tmp.write_text("half")
            raise exc("stop")
    assert dest.read_text() == "old"
    assert not tmp.exists()


def test_a_failure_before_the_temp_exists_is_raised_as_is(tmp_path):
    with pytest.raises(RuntimeError, match="early"):
        with replaced_on_success(tmp_path / ".part", tmp_path / "out"):
            raise RuntimeError("early")
    assert not (tmp_path / "out").exists()
