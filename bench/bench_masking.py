"""`mask_secrets` on a 200 KB chat message: before (every regex over the whole text, as it ran
until issue 25) and now (the code-word and password regexes only where a code's digits or a
password's word are), CPU time on the same texts in one run, and the ratio.

The texts: `chat`, a long pasted conversation (times, prices, platform numbers) with one
verification code at its end, the shape of issue 25's 200 KB message (goal: 20x); and, for
the record, texts dense with codes, where every window meets the next and the code-word regex
still reads most of the text. Each result is checked equal to the old one.

    python bench/bench_masking.py [--kb 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from _common import table

from phoneuse_runtime.owner import privacy
from phoneuse_runtime.owner.privacy import MASK_CODE, MASK_PASSWORD, mask_secrets


def before(text: str) -> str:
    """The rule as it ran before: each regex over the whole text."""
    if not text or (not any(c.isdigit() for c in text) and privacy._PASSWORD.search(text) is None):
        return text
    out = privacy._PASSWORD.sub(lambda m: m.group(1) + MASK_PASSWORD, text)
    codes = [m.span() for m in privacy._CODE.finditer(out)]
    if not codes:
        return out
    words = [
        w.span()
        for w in privacy._KEYWORD.finditer(out)
        if not privacy._NOT_SECRET_BEFORE.search(out, max(0, w.start() - 16), w.start())
        and not privacy._NOT_SECRET_AFTER.match(out, w.end(), w.end() + 8)
    ]
    starts = [w[0] for w in words]
    pieces: list[str] = []
    last = 0
    for start, end in codes:
        if privacy._announced(out, words, starts, start, end):
            pieces += [out[last:start], MASK_CODE]
            last = end
    return "".join([*pieces, out[last:]]) if pieces else out


def texts(size: int) -> dict[str, str]:
    rng = random.Random(25)
    CODE_LINE = "Your verification code is 839201\n"
    line = "[12:30] alice: see you at the station, platform 4, the 17:05 train costs $12.50\n"
    return {
        "chat (goal 20x)": (line * (size // len(line) + 1))[: size - 40] + CODE_LINE,
        "lorem, a year every 32 chars": ("Lorem ipsum dolor sit amet 2024 " * (size // 32 + 1))[:size],
        "numbers only": " ".join(str(rng.randint(1000, 99_999_999)) for _ in range(size // 5))[:size],
        "code words and numbers": ("please enter the code we sent, call 555 1234 " * (size // 45 + 1))[:size],
    }


def cpu_ms(fn: Callable[[str], str], text: str, repeat: int) -> float:
    started = time.process_time()
    for _ in range(repeat):
        fn(text)
    return (time.process_time() - started) / repeat * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kb", type=int, default=200, help="KB (1000 characters) a text")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for name, text in texts(args.kb * 1000).items():
        assert mask_secrets(text) == before(text), name
        old, new = cpu_ms(before, text, args.repeat), cpu_ms(mask_secrets, text, args.repeat)
        goal = "meets" if old / new >= 20 else "MISSES"
        rows.append([name, f"{old:.1f}", f"{new:.1f}", f"{old / new:.1f}x", goal if "goal" in name else ""])
    print(f"mask_secrets on {args.kb} KB texts, CPU ms a call (mean of {args.repeat})")
    print(table(["text", "before", "now", "before/now", "20x"], rows))


if __name__ == "__main__":
    main()
