"""How every ``hermes recall`` command talks to the operator, the way ``llm`` and ``sqlite-utils`` do.

- The answer goes to stdout (so ``--json`` and pipes stay clean); ``note:`` and ``warning:`` lines
  and every ``error:`` go to stderr.
- Exit codes: 0 done, 1 the work failed (a broken index, an unreadable projects.db), 2 the command
  line or the setup is wrong (argparse's own usage errors exit 2 as well), 3 consent is missing,
  130 interrupted.
- Values outside their range are refused with the range, never silently clamped.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_FAILED, EXIT_USAGE, EXIT_CONSENT, EXIT_INTERRUPTED = 1, 2, 3, 130


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """``error: …`` on stderr and a non-zero exit: the one way a command fails."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)


def note(message: str) -> None:
    """Something to know that is not the answer: stderr, so stdout stays the result."""
    print(f"note: {message}", file=sys.stderr)


def warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def int_in(low: int, high: int, what: str):
    """An argparse ``type`` taking a whole number from ``low`` to ``high`` and refusing the rest."""

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            number = low - 1
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be {what} from {low} to {high}, not {value!r}")
        return number

    parse.__name__ = what  # argparse names the type in some messages
    return parse
