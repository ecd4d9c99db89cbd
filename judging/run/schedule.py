"""The bounded producer and consumer of a run: batches are read in a thread (loading and
downloading go on meanwhile), each batch's work is prepared on the event loop and its calls are
started at once, at most `ahead` started and not finished (reading the next batch waits for
room), and each result is handed over on the event loop as its call ends.

It knows nothing of claims or judges: the runner hands it the call and the writer as callables
(it never imports the runner, which would close an import circle).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TypeVar

B = TypeVar("B")
T = TypeVar("T")
R = TypeVar("R")


async def schedule(batches: Iterator[B], *, prepare: Callable[[B], Iterable[T]],
                   call: Callable[[T], Awaitable[R]], finish: Callable[[T, R], None],
                   ahead: int) -> None:
    """Run `call` on every item `prepare` gives for each batch of `batches`, and `finish` each
    item with its result as calls end. A failure of reading, preparing or finishing cancels the
    calls in flight and is raised; so is a call's own failure (calls return their errors as
    results: what they raise stops the run)."""
    finished: asyncio.Queue[tuple[T, asyncio.Task[R]] | None] = asyncio.Queue()
    running: set[asyncio.Task[R]] = set()
    room = asyncio.Semaphore(ahead)

    async def produce() -> None:
        while (batch := await asyncio.to_thread(next, batches, None)) is not None:
            items = list(prepare(batch))
            del batch
            for item in items:
                await room.acquire()
                task = asyncio.create_task(call(item))  # type: ignore[arg-type]
                task.add_done_callback(lambda done, item=item: finished.put_nowait((item, done)))
                running.add(task)

    producer = asyncio.create_task(produce())
    producer.add_done_callback(lambda _: finished.put_nowait(None))
    producing = True
    try:
        while producing or running:
            got = await finished.get()
            if got is None:
                producer.result()  # re-raise a loading failure
                producing = False
                continue
            item, task = got
            running.discard(task)
            room.release()
            finish(item, task.result())
    except BaseException:
        producer.cancel()
        for task in running:
            task.cancel()
        raise
