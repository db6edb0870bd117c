"""One reply through the app's whole generation path (scheduler → stream → ``generate``), optionally stopped."""

from __future__ import annotations

import asyncio
import time

from app.core.conversation import Conversation, Message, Role
from app.core.streaming.generation import Generation, generate
from app.core.streaming.scheduler import scheduler_for
from app.core.types import GenerationParams
from app.engine.base import Engine


def reply_through_pipeline(engine: Engine, conv: Conversation, params: GenerationParams,
                           stop_after_chunks: int | None = None
                           ) -> tuple[Message, float | None]:
    """Add an assistant message to ``conv`` and generate it with ``engine`` on a fresh loop. With
    ``stop_after_chunks``, Stop (the task cancelled) once that many chunks arrived. Waits until the worker thread
    has exited. Returns the reply and the wall time (``time.time()``, s) of Stop, or None without a Stop."""
    reply = conv.add(Message(Role.ASSISTANT))
    gen = Generation(reply, conv)
    t_stop: float | None = None

    async def main() -> None:
        nonlocal t_stop
        task = asyncio.ensure_future(generate(engine, scheduler_for(engine), conv, reply, params, generation=gen))
        if stop_after_chunks is not None:
            while reply.chunks < stop_after_chunks and not task.done():
                await asyncio.sleep(0.002)
            t_stop = time.time()
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert gen.stream is not None
        await gen.stream.wait_closed()

    asyncio.run(main())
    return reply, t_stop
