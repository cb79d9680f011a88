# The JupyterLab terminal's start-up (bash --rcfile THIS -i; jupyter_config sets it up).
#
# A login shell's files first, as a terminal on a login node runs them (modules, the user's own
# PATH additions); they reset PATH, which took the session's environment out of the terminal:
# no `python`, no `jupyter`, the system's pip. So the session's PATH, as the job activated it
# for JupyterLab and its kernels, goes back in front, each folder once.
if [ -f /etc/profile ]; then . /etc/profile; fi
for gpuportal_file in "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.profile"; do
    if [ -f "$gpuportal_file" ]; then . "$gpuportal_file"; break; fi
done
unset gpuportal_file
if [ -n "$GPUPORTAL_SESSION_PATH" ]; then
    PATH=$(printf '%s' "$GPUPORTAL_SESSION_PATH:$PATH" | awk -v RS=: -v ORS=: 'length && !seen[$0]++' | sed 's/:$//')
    export PATH
fi
# Which python this terminal runs, and how to reach the kernels' others (a notebook's PyTorch
# may not be the terminal's): gpuportal_session/terminal_banner.py, with the session's Python.
if [ -n "$GPUPORTAL_SESSION_PYTHON" ]; then
    "$GPUPORTAL_SESSION_PYTHON" -m gpuportal_session.terminal_banner "$(command -v python)" 2>/dev/null
fi
