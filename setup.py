"""The one thing pyproject.toml cannot say: the handler folders install under the package's name.

`actions/` and `queries/` stay top-level folders of the repository (the design card), and
install as `phoneuse_runtime.actions` and `phoneuse_runtime.queries`, so nothing named plain
`actions` or `queries` lands in site-packages. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

HANDLERS = {"phoneuse_runtime.actions": "actions", "phoneuse_runtime.queries": "queries"}

setup(
    packages=[*find_packages(include=["phoneuse_runtime", "phoneuse_runtime.*"]), *HANDLERS],
    package_dir=HANDLERS,
)
