"""The README and docs/ as a new user follows them: the quick start works on a python that refuses
pip outside a venv, the test command is CI's, every link (and anchor) stays inside the
repository, the front page links every page of docs/, and every action and event type that
`serve` serves is named on it."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from phoneuse_runtime.app import served_registry
from phoneuse_runtime.config.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
EVERYTHING = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)


def _section(title: str, text: str = README) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```(?:sh|console)?\n(.*?)```", text, flags=re.S)]


def _page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_the_quick_start_makes_a_venv_before_it_installs() -> None:
    blocks = _blocks(_section("Quick start"))
    assert blocks[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert blocks[1] == "python3 -m pip install . && phoneuse-runtime serve"  # one command still


def test_the_readme_test_command_is_what_ci_runs_verbatim() -> None:
    command = _blocks(_section("Quick start"))[2]
    assert command == "python3 -m pip install -q -e '.[dev]' && python3 -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(f"{command} ||") for line in ci)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes."""
    text = heading.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    outside_code = re.sub(r"```.*?```", "", text, flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", outside_code, flags=re.M)}


def test_every_relative_link_is_inside_the_repository() -> None:
    """Every relative link of the README and of every docs/ page names a file of the repository,
    and its anchor, where it has one into a page of ours, a heading of that page."""
    assert {p.name for p in DOCS} >= {"design.md", "protocol_spec.md", "troubleshooting.md"}
    for doc in PAGES:
        text = doc.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if "://" in target:
                continue
            resolved = (doc.parent / target).resolve() if target else doc
            assert resolved.is_relative_to(ROOT), (doc.name, target)
            assert resolved.exists(), (doc.name, target)
            if anchor and resolved.suffix == ".md":
                assert anchor in _anchors(resolved.read_text(encoding="utf-8")), (doc.name, target, anchor)
        assert "../shared" not in text, doc.name


def test_the_front_page_links_every_page_of_the_docs() -> None:
    contents = _section("Documentation")
    for page in DOCS:
        assert f"](docs/{page.name})" in contents, f"the README's table of contents lacks {page.name}"
    assert len(README.splitlines()) < 200, "the README is a front page: the subjects go in docs/"


def test_every_page_says_first_what_it_is_for() -> None:
    """A title, then a paragraph of plain text (not a list, a table or code) before anything else."""
    for page in DOCS:
        if page.name == "protocol_spec.md":
            continue  # generated
        lines = page.read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# "), page.name
        first = next(line for line in lines[1:] if line.strip())
        assert first[0].isalpha(), (page.name, first)


def test_the_readme_names_every_action_and_event_serve_serves() -> None:
    registry = served_registry(Settings())
    missing = [name for name in [*registry.actions, *registry.events] if f"`{name}`" not in README]
    assert missing == []


def test_the_termux_install_is_the_script_not_pypi() -> None:
    assert "then `pip install phoneuse-runtime`" not in EVERYTHING
    assert "[`termux/install.sh`](../termux/install.sh)" in _section("Install", _page("termux.md"))


def test_the_client_example_is_linked_and_timeout_ms_is_called_out() -> None:
    serving = _page("serving.md")
    assert "[`examples/client.py`](../examples/client.py)" in serving
    assert "timeout_ms must be > 0, got 0" in serving


def test_the_client_examples_run_line_is_in_the_docs() -> None:
    """The example had no run line (issue 28 §10): the one tested with --sim is on the serving page."""
    assert "python3 examples/client.py --sim" in _page("serving.md")
