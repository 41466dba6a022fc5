"""The asyncio flavour: the same client, awaited.

Each call runs the synchronous client's in a worker thread
(asyncio.to_thread), so the one implementation of the protocol serves
both; a call's cost is a thread hop, nothing next to a round trip to the
Hub. For an event loop that must not block on a connection's reader.
"""

import asyncio
from typing import Any, AsyncIterator, Callable, Iterable, Optional

from .client import Client, connect as _connect
from .pending import Pending
from .types import Value, WriteResult
from .watch import Watch


async def connect(url: str, token: str, **kwargs: Any) -> "AsyncClient":
    """openhal.connect, awaited (the same arguments)."""
    return AsyncClient(await asyncio.to_thread(_connect, url, token, **kwargs))


class AsyncClient:
    """A Client whose methods are coroutines: ``await c.read("sim.led")``.
    Every method of Client is there, with the same arguments."""

    def __init__(self, client: Client):
        self.sync = client

    @property
    def init(self) -> Any:
        return self.sync.init

    def __getattr__(self, name: str) -> Callable[..., Any]:
        fn = getattr(self.sync, name)
        if not callable(fn):
            return fn

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(fn, *args, **kwargs)
        return call

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.sync.close)


async def watch(connect: Callable[[], Client], devices: Optional[Iterable[str]] = None,
                **kwargs: Any) -> AsyncIterator[Value]:
    """A Watch as an async iterator: ``async for v in aio.watch(...)``."""
    w = await asyncio.to_thread(Watch, connect, devices, **kwargs)
    try:
        while True:
            v = await asyncio.to_thread(w.next)
            if v is None:
                return
            yield v
    finally:
        w.close()


async def wait(pending: Pending, timeout: Optional[float] = None) -> WriteResult:
    """Pending.wait, awaited: ``await aio.wait(await c.write("sim.heater", True), 60)``."""
    return await asyncio.to_thread(pending.wait, timeout)
