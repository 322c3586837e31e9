"""``python -m neardup ARGS...`` runs the installed command with the same exit code."""

import os
import sys

from neardup import binary

if __name__ == "__main__":
    command = binary()
    if os.name == "nt":
        import subprocess

        sys.exit(subprocess.call([command, *sys.argv[1:]]))
    os.execv(command, [command, *sys.argv[1:]])
