"""`python -m phoneuse_runtime`: the command line, as the `phoneuse-runtime` script runs it."""

from phoneuse_runtime.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
