"""Idle unload fires only when nothing generates, and restarts on activity (no wall-clock asserts: the timer's
period is tiny and the test waits on conditions)."""

from __future__ import annotations

import asyncio

from app.core.chat.idle import IdleUnloader


def test_unloads_when_idle_and_waits_while_busy() -> None:
    async def main() -> tuple[int, bool]:
        calls: list[int] = []
        busy = [True]

        async def unload() -> None:
            calls.append(1)

        idle = IdleUnloader(0.0005, lambda: busy[0], unload)      # 30 ms
        idle.touch()
        await asyncio.sleep(0.1)
        assert calls == [] and not idle.unloaded                 # busy: it keeps waiting
        busy[0] = False
        while not calls:
            await asyncio.sleep(0.01)
        off = IdleUnloader(0, lambda: False, unload)
        off.touch()
        return len(calls), off._handle is None

    assert asyncio.run(main()) == (1, True)
