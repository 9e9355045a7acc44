"""An async streaming tool: it yields progress events while it works, then its result."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from typing import Any

from loader import tool


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    return all(n % d for d in range(2, math.isqrt(n) + 1))


@tool(category="math", tags=["streaming", "example"])
async def count_primes(limit: int, chunks: int = 4) -> AsyncIterator[dict[str, Any]]:
    """Count the prime numbers below a limit, reporting progress after each chunk.

    The last event is the result; every earlier one is a progress report a
    console or an agent can show while the tool runs.

    Args:
        limit: Count primes strictly below this number (at most 1,000,000).
        chunks: How many progress reports to send before the result.
    """
    if not 0 <= limit <= 1_000_000:
        raise ValueError("limit must be between 0 and 1,000,000")
    chunks = max(1, chunks)
    found: list[int] = []
    step = math.ceil(limit / chunks) if limit else 1
    for index, start in enumerate(range(0, max(limit, 1), step), 1):
        found.extend(n for n in range(start, min(start + step, limit)) if _is_prime(n))
        await asyncio.sleep(0)  # let other tasks run between chunks
        yield {
            "progress": round(min(1.0, index / chunks), 3),
            "checked": min(start + step, limit),
            "found": len(found),
        }
    yield {"limit": limit, "count": len(found), "largest": found[-1] if found else None}
