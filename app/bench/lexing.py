"""Loop stalls from syntax highlighting: ``python -m app.bench lexing [--backslashes N]``.

pygments' ``rst`` lexer backtracks exponentially on ``:`` followed by backslashes (×1.7 per backslash; 36 took
~7 s here). This benchmark highlights such a segment three ways while a "loop" (the main thread, waking every
5 ms) measures its longest stall:

1. **inline** — lexed on the loop itself (what Brook did before the lexer pool);
2. **thread** — lexed in a thread: Python's ``re`` holds the GIL while it matches, so the loop still stalls;
3. **pool** — :class:`app.core.render.lexer_pool.LexerPool` (a worker process with a deadline): the loop only polls.

Prints readable lines, then one JSON object as the last line: the stalls in ms and
``stall_ratio_pool_vs_inline`` (budget: the pool's longest stall ≤ 50 ms).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable

TICK_S = 0.005


def _stall_while(work_done: Callable[[], bool], poll: Callable[[], None] | None = None) -> float:
    """Longest gap (s) between 5 ms wake-ups of this thread until ``work_done()``."""
    last = time.perf_counter()
    worst = 0.0
    while not work_done():
        time.sleep(TICK_S)
        if poll is not None:
            poll()
        now = time.perf_counter()
        worst = max(worst, now - last - TICK_S)
        last = now
    return worst


def measure(backslashes: int, deadline_s: float) -> dict[str, float]:
    from app.core.render.highlight import format_segment, get_lexer
    from app.core.render.lexer_pool import LexerPool

    code = ":" + "\\" * backslashes + "\n"
    lexer = get_lexer("rst")
    assert lexer is not None
    out: dict[str, float] = {"backslashes": backslashes}

    t0 = time.perf_counter()
    format_segment(code, lexer, "light")          # inline: the loop is blocked for all of it
    out["stall_ms_inline"] = (time.perf_counter() - t0) * 1e3

    done = threading.Event()
    started = threading.Event()

    def work() -> None:
        started.set()
        time.sleep(0.02)
        format_segment(code + " ", lexer, "light")
        done.set()

    th = threading.Thread(target=work)
    th.start()
    started.wait()
    out["stall_ms_thread"] = _stall_while(done.is_set) * 1e3
    th.join()

    pool = LexerPool(deadline_s=deadline_s)
    pool.request("python", "light", "x = 1\n")    # start the worker process outside the measurement
    pool.wait(timeout=120)
    t0 = time.perf_counter()
    pool.request("rst", "light", code + "  ")
    out["stall_ms_pool"] = _stall_while(lambda: pool.result("rst", "light", code + "  ") is not None) * 1e3
    out["pool_wait_ms"] = (time.perf_counter() - t0) * 1e3
    out["pool_fallbacks"] = pool.fallbacks
    pool.close()
    out["stall_ratio_pool_vs_inline"] = out["stall_ms_pool"] / max(out["stall_ms_inline"], 1e-9)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print readable lines then one JSON line. Returns 0, or 1 when the budget is missed."""
    parser = argparse.ArgumentParser(prog="python -m app.bench lexing", description=__doc__.split("\n")[0])
    parser.add_argument("--backslashes", type=int, default=30, help="backslashes after ':' (36 ≈ 7 s inline)")
    parser.add_argument("--deadline", type=float, default=0.5, help="the pool's deadline per segment (s)")
    args = parser.parse_args(argv)
    out = measure(args.backslashes, args.deadline)
    print(f"rst ':' + {args.backslashes} backslashes: longest loop stall inline {out['stall_ms_inline']:.0f} ms, "
          f"in a thread {out['stall_ms_thread']:.0f} ms, with the lexer pool {out['stall_ms_pool']:.1f} ms "
          f"(≤ 50; result after {out['pool_wait_ms']:.0f} ms, fallbacks {out['pool_fallbacks']:.0f})")
    ok = out["stall_ms_pool"] <= 50
    out["within_budget"] = ok
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
