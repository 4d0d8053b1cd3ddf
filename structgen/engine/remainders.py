"""The remainder automaton behind a ``divisible_by_D`` group (``engine.regex``).

A regex construct of the engine's own: the texts whose decimal digits, read as
one integer, are a multiple of ``D``, which no plain regex writes in fewer than
``D`` states. Its automaton runs side by side with the group's body (``dfa``).
"""

from __future__ import annotations

from typing import Final

from structgen.engine.minimize import Part

_EXPONENT_CLASS: Final = 10
_OTHER_CLASS: Final = 11


def remainders(divisor: int) -> Part:
    """The remainder automaton: state ``r`` is the remainder by ``divisor`` of the
    digits read so far (a digit ``k`` leads to ``(10r + k) % divisor``, any other
    byte leaves it); an ``e`` or ``E`` fixes it for good, in state ``divisor`` where
    it is 0 and ``divisor + 1`` where not. Texts end well where it is 0."""
    class_of = [_OTHER_CLASS] * 256
    for k in range(10):
        class_of[0x30 + k] = k
    class_of[ord("e")] = _EXPONENT_CLASS
    class_of[ord("E")] = _EXPONENT_CLASS
    classes = _OTHER_CLASS + 1
    table: list[int] = []
    for remainder in range(divisor):
        for k in range(10):
            table.append((10 * remainder + k) % divisor)
        table.append(divisor if remainder == 0 else divisor + 1)
        table.append(remainder)
    for fixed in (divisor, divisor + 1):
        table.extend([fixed] * classes)
    accepting = [remainder == 0 for remainder in range(divisor)] + [True, False]
    return Part(table, classes, class_of, accepting)
