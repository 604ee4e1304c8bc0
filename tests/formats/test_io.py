

def test_a_device_or_fifo_target_is_written_through_not_replaced(tmp_path):
    import os
    import stat
    import threading

    from workbench.formats.io import atomic_write

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    with atomic_write(fifo) as f:
        f.write("1 0 d1 1\n")
    reader.join(timeout=10)
    assert got == ["1 0 d1 1\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not a regular file


def test_a_folder_target_is_an_error(tmp_path):
    import pytest

    from workbench.formats.io import atomic_write

    with pytest.raises(IsADirectoryError):
        with atomic_write(tmp_path) as f:
            f.write("x")
