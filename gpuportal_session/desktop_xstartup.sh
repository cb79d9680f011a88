#!/bin/sh
# The session desktop's X start-up: vncserver runs it (jupyter-remote-desktop-proxy's command,
# JUPYTER_REMOTE_DESKTOP_PROXY_XSTARTUP names this file). The user's own ~/.vnc/xstartup wins.
# dbus-run-session, not dbus-launch: its D-Bus daemon is a child that ends with the desktop, where
# dbus-launch's would outlive the session on the node (Slurm's linuxproc tracking loses it).
here=$(cd "$(dirname "$0")" && pwd)
cd "$HOME" || exit 1
# Xfce's defaults for the session (desktop_xdg: no agents that outlive it), then the system's.
export XDG_CONFIG_DIRS="$here/desktop_xdg:${XDG_CONFIG_DIRS:-/etc/xdg}"
if [ -x "$HOME/.vnc/xstartup" ]; then
    exec "$HOME/.vnc/xstartup"
fi
exec dbus-run-session -- xfce4-session
