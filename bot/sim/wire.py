"""Messages between the pool (bot.sim.pool) and one worker process over their own socket pair.

A message is an 8-byte big-endian length followed by that many bytes of pickle. The worker's end is
blocking (it has nothing else to do). The bot's end is non-blocking and read by `Inbox` from an event
loop callback: each call takes what the kernel already holds (one read, at most one socket buffer,
~200 KB) and returns; a message is decoded only once all of its bytes are in. So a large result (a PNG,
a heatmap) arriving in many pieces, or a worker stopped half-way through writing one, never holds the
loop: the loop goes back to other work between pieces, and the job's time limit still fires.

Why not multiprocessing.Connection.recv on the bot's side: it reads a whole message in blocking calls
once the first byte is there, so a worker that stalls mid-message would stall the bot with it.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import time
from typing import Any

_HEADER = struct.Struct("!Q")


def encode(message: Any) -> bytes:
    """The framed bytes of `message` (pickled: only module-level functions and plain data cross)."""
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload)) + payload


def send(fd: int, message: Any) -> None:
    """Write one message on a blocking fd (the worker's end)."""
    write(fd, encode(message))


def write(fd: int, data: bytes) -> None:
    """Write encoded bytes on a blocking fd, all of them."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_message(fd: int) -> bytearray:
    """The bytes of one message from a blocking fd (the worker's end; `decode` them); EOFError when the
    other end is closed."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return _read_exactly(fd, size)


def decode(payload: bytes | bytearray) -> Any:
    return pickle.loads(payload)


def _read_exactly(fd: int, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        got = os.readv(fd, [view[done:]])
        if got == 0:
            raise EOFError("the other end closed its socket")
        done += got
    return buffer


class Inbox:
    """The bot's side of one worker's socket: assembles one message at a time from non-blocking reads."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray(_HEADER.size)
        self._done = 0
        self._header = True

    def read(self) -> tuple[bool, Any]:
        """One non-blocking read: (True, message) once a whole message is in, else (False, None).
        EOFError when the worker's end is closed (the worker died, or was killed)."""
        try:
            got = os.readv(self.fd, [memoryview(self._buffer)[self._done:]])
        except (BlockingIOError, InterruptedError):
            return False, None
        except ConnectionResetError:
            got = 0
        if got == 0:
            raise EOFError("the worker closed its socket")
        self._done += got
        if self._done < len(self._buffer):
            return False, None
        if self._header:
            (size,) = _HEADER.unpack(self._buffer)
            self._buffer, self._done, self._header = bytearray(size), 0, False
            return self.read()  # the payload (never empty: a pickle has at least a few bytes)
        payload, self._buffer, self._done, self._header = self._buffer, bytearray(_HEADER.size), 0, True
        return True, decode(payload)

    def wait(self, timeout: float) -> Any:
        """Block up to `timeout` s for one whole message (a new worker's first one, read in a thread);
        TimeoutError if it does not come."""
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while True:
            complete, message = self.read()
            if complete:
                return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message within the time limit")
            poller.poll(left * 1000)
