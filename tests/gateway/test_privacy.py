"""One-time codes never reach the disk: one masking rule (phoneuse_runtime/owner/privacy.py) for the
memory, each device's outbox and the chat, checked on a corpus and through the real server, by
reading the SQLite files (and their write-ahead logs) byte for byte."""

from __future__ import annotations

import pytest

from phoneuse_runtime.owner.privacy import MASK_CODE, MASK_PASSWORD, mask_secrets

from ..privacy_corpus import CODE_MESSAGES, ORDINARY_MESSAGES


def digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


@pytest.mark.parametrize(("message", "code"), CODE_MESSAGES)
def test_every_code_message_loses_its_code(message: str, code: str) -> None:
    masked = mask_secrets(message)
    assert code not in masked and digits(code) not in digits(masked), masked
    assert MASK_CODE in masked or MASK_PASSWORD in masked, masked


@pytest.mark.parametrize("message", ORDINARY_MESSAGES)
def test_ordinary_numbers_are_kept(message: str) -> None:
    assert mask_secrets(message) == message


def test_only_the_code_goes_the_rest_stays() -> None:
    assert mask_secrets("Your PIN: 4839 2214 5566") == "Your PIN: [code]"
    assert mask_secrets("Ваш код: 662211") == "Ваш код: [code]"
    assert mask_secrets("Use 839201 to log in to Acme") == "Use [code] to log in to Acme"
    # A code word reaches only within its line.
    assert mask_secrets("your code is below\n\n1234 Main St") == "your code is below\n\n1234 Main St"
