"""JupyterLab's terminals in a session: bash with the session's environment active.

A .py config file beside the .json ones because the start-up file's path depends on where this
package is installed. Config files of higher priority (the user's ~/.jupyter) still win.
"""

from pathlib import Path

c = get_config()  # type: ignore[name-defined]  # noqa: F821 (given by traitlets' loader)
rc_file = Path(__file__).resolve().parents[1] / "terminal_rc.sh"
c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash", "--rcfile", str(rc_file), "-i"]}
