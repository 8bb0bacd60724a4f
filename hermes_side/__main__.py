"""``python -m hermes_side …``: the operator commands, also where ``hermes recall`` is absent.

Hermes registers ``hermes recall`` only once the plugin has loaded, and ``hermes plugins list``
still says "enabled" for a plugin whose import failed — so this entry point is where an operator
learns what is missing: an import that fails is named with the command that installs it."""

import sys

try:
    from .cli import main
except ImportError as exc:  # a package the plugin needs is not in this Python
    missing = getattr(exc, "name", None) or str(exc)
    print(f"error: project-history-recall cannot start in {sys.executable}: {exc}", file=sys.stderr)
    if getattr(exc, "name", None):
        print(f"Install it into the Python that runs Hermes: {sys.executable} -m pip install {missing}",
              file=sys.stderr)
    sys.exit(1)

main()
