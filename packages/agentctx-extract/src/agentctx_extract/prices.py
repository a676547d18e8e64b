"""What the Messages API charges, in one table keyed by model id (US$ per million tokens).

Cache writes are the 5-minute-TTL rate (1.25x input), cache reads 0.1x input. A model id
with a date suffix (`claude-haiku-4-5-20251001`) is priced as its alias. A model missing from
the table is priced at the most expensive row, so the monthly cap still holds (too high a
figure stops extraction early; too low a one would let it overspend).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, kw_only=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(
        self, *, input_tokens: int, output_tokens: int, cache_write_tokens: int = 0, cache_read_tokens: int = 0
    ) -> float:
        """US$ for one response's usage."""
        return (
            input_tokens * self.input
            + output_tokens * self.output
            + cache_write_tokens * self.cache_write
            + cache_read_tokens * self.cache_read
        ) / 1_000_000


def _rates(input_price: float, output_price: float) -> Price:
    return Price(input=input_price, output=output_price, cache_write=input_price * 1.25, cache_read=input_price * 0.1)


# model id (alias) -> price; dated ids match their alias by prefix
PRICES: dict[str, Price] = {
    "claude-haiku-4-5": _rates(1.00, 5.00),
    "claude-3-5-haiku": _rates(0.80, 4.00),
    "claude-3-haiku": _rates(0.25, 1.25),
    "claude-sonnet-4-5": _rates(3.00, 15.00),
    "claude-sonnet-4": _rates(3.00, 15.00),
    "claude-3-7-sonnet": _rates(3.00, 15.00),
    "claude-opus-4-5": _rates(5.00, 25.00),
    "claude-opus-4-1": _rates(15.00, 75.00),
    "claude-opus-4": _rates(15.00, 75.00),
}
# its own object (a copy of the dearest row), so `price_for(...) is UNKNOWN_MODEL` tells an unknown id
UNKNOWN_MODEL = replace(max(PRICES.values(), key=lambda price: price.input + price.output))


def price_for(model: str) -> Price:
    """The price of `model`: exact id, else the longest alias it starts with, else the dearest row."""
    name = model.strip().lower()
    if name in PRICES:
        return PRICES[name]
    aliases = [alias for alias in PRICES if name.startswith(alias + "-") or name.startswith(alias + "@")]
    return PRICES[max(aliases, key=len)] if aliases else UNKNOWN_MODEL


def is_known(model: str) -> bool:
    return price_for(model) is not UNKNOWN_MODEL
