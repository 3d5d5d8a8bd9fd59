"""The job lock files (:func:`core.runs._worker.take_lock`) on both of their back-ends.

POSIX runs the real ``fcntl.flock``.  Windows' ``msvcrt.locking`` cannot run here, so its
branch runs against a stand-in with the documented semantics of the Windows C runtime's
``_locking``: a byte-range lock belongs to one open handle, so a second handle on the same
file — in this process or another — is refused; ``LK_NBLCK`` fails at once, ``LK_LOCK``
retries ten times, a second apart, then fails; closing the handle drops its locks.  Both
back-ends must keep the same contract: a held lock refuses ``wait=False``, a released one
is free again, a refused descriptor is closed (no leak).
"""

from __future__ import annotations

import os
import types

import pytest

from core.runs import _worker


class FakeMsvcrt(types.SimpleNamespace):
    """``msvcrt.locking`` as the Windows C runtime documents it (one byte from offset 0)."""

    LK_LOCK, LK_NBLCK = 1, 2

    def __init__(self) -> None:
        super().__init__(held={}, calls=[])  # file identity → descriptor holding it

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, nbytes))
        key = (os.fstat(fd).st_dev, os.fstat(fd).st_ino)
        owner = self.held.get(key)
        if owner is not None and owner != fd:
            try:  # the holder's handle was closed: Windows dropped its lock
                os.fstat(owner)
            except OSError:
                owner = None
        if owner is not None and owner != fd:
            raise OSError(36, "Resource deadlock avoided" if mode == self.LK_LOCK
                          else "Permission denied")  # LK_LOCK: after its 10 retries
        self.held[key] = fd


@pytest.fixture(params=["posix", "windows"])
def backend(request, monkeypatch):
    if request.param == "windows":
        fake = FakeMsvcrt()
        monkeypatch.setattr(_worker, "fcntl", None)
        monkeypatch.setattr(_worker, "msvcrt", fake, raising=False)
        return fake
    if _worker.fcntl is None:  # pragma: no cover - on Windows the real one is msvcrt
        pytest.skip("no fcntl on this system")
    return None


def open_fds() -> int | None:
    """Descriptors this process holds (Linux's /proc); None where it cannot be counted."""
    return len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None


def test_a_held_lock_refuses_a_second_holder_until_released(backend, tmp_path):
    path = tmp_path / "owner.lock"
    first = _worker.take_lock(path, wait=False)
    assert isinstance(first, int) and path.exists()
    before = open_fds()
    assert _worker.take_lock(path, wait=False) is None
    if before is not None:  # the refused descriptor was closed
        assert open_fds() == before
    _worker.release_lock(first)
    again = _worker.take_lock(path, wait=False)
    assert isinstance(again, int)
    _worker.release_lock(again)
    if backend is not None:  # one byte, non-blocking for wait=False
        assert backend.calls == [(backend.LK_NBLCK, 1)] * 3


def test_locks_on_two_files_are_independent(backend, tmp_path):
    a = _worker.take_lock(tmp_path / "a.lock", wait=False)
    b = _worker.take_lock(tmp_path / "b.lock", wait=False)
    assert a is not None and b is not None
    _worker.release_lock(a)
    _worker.release_lock(b)
    _worker.release_lock(None)  # ignored


def test_waiting_on_a_free_lock_takes_it(backend, tmp_path):
    fd = _worker.take_lock(tmp_path / "w.lock")
    assert isinstance(fd, int)
    if backend is not None:
        assert backend.calls == [(backend.LK_LOCK, 1)]
        # Windows gives up after its retries instead of waiting for ever: None, not a hang.
        assert _worker.take_lock(tmp_path / "w.lock") is None
    _worker.release_lock(fd)


def test_a_file_that_cannot_be_opened_gives_none(backend, tmp_path):
    assert _worker.take_lock(tmp_path / "missing-folder" / "x.lock", wait=False) is None
