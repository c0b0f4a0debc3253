"""The embeddings endpoint squatted (issue 16, finding 15): another app took the configured
loopback port and answers the memory's requests with vectors or bodies meant to fill the phone:
nothing of it is kept, and the dimension the first vectors fixed is never changed by it."""

from __future__ import annotations

import logging

import pytest

from phoneuse_runtime.memory.embeddings import MAX_ANSWER_BYTES

from ..conftest import ServerFactory
from ..memory.test_embeddings import CONCEPTS, FakeEmbeddings, memory_of, names, vector_count


@pytest.mark.parametrize("answer", ["huge vectors", "an endless body"])
async def test_a_squatter_s_answers_are_refused(
    make_client: ServerFactory, fake_embeddings: FakeEmbeddings, answer: str
) -> None:
    """Another app squats the embeddings endpoint's port and answers huge vectors or an endless body.

    What took the endpoint's port answers 200k-dimension vectors, or a body past the cap:
    nothing of it is stored, nor read past the cap, and search stays lexical."""
    if answer == "huge vectors":
        fake_embeddings.padding = 200_000
    else:
        fake_embeddings.junk = MAX_ANSWER_BYTES + 1
    client = await make_client(memory_embeddings_url=fake_embeddings.url)
    await client.ok("REMEMBER", {"name": "Pizza tonight?"})
    await memory_of(client).vectorized()
    assert memory_of(client).vector_failures >= 1
    assert await vector_count(client) == 0
    assert await names(client, {"q": "pizza"}) == ["Pizza tonight?"]
    assert memory_of(client).path.stat().st_size < 1024 * 1024


async def test_the_first_vectors_fix_the_dimension(
    make_client: ServerFactory, fake_embeddings: FakeEmbeddings, caplog: pytest.LogCaptureFixture
) -> None:
    """Another app squats the embeddings endpoint after its first use, with vectors of another size."""
    client = await make_client(memory_embeddings_url=fake_embeddings.url)
    await client.ok("REMEMBER", {"name": "Pizza tonight?"})
    await memory_of(client).vectorized()
    assert await vector_count(client) == 1 and memory_of(client).dimensions == len(CONCEPTS)
    fake_embeddings.padding = 5  # another server on the port, or another model
    with caplog.at_level(logging.WARNING, logger="phoneuse_runtime.memory.component"):
        await client.ok("REMEMBER", {"name": "Sushi friday"})
        await memory_of(client).vectorized()
        assert await vector_count(client) == 1  # the new one's vector is refused
        assert await names(client, {"q": "restaurant"}) == []  # q's vector too: lexical only
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refusals and f"vectors of {len(CONCEPTS) + 5} numbers" in refusals[0], refusals
    assert f"have {len(CONCEPTS)}" in refusals[0]
    assert await names(client, {"q": "sushi"}) == ["Sushi friday"]
