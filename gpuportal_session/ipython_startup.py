# Run by IPython kernels of a session (PYTHONSTARTUP, set by gpuportal_session.singleuser), and
# by plain `python` in its terminals, where it does nothing. The user's own PYTHONSTARTUP runs
# first; then `%tensorboard` gets words that fit the portal (notebook_tensorboard).
import os as _gp_os

_gp_own = _gp_os.environ.get("GPUPORTAL_USER_PYTHONSTARTUP", "")
if _gp_own and _gp_os.path.isfile(_gp_own):
    with open(_gp_own) as _gp_file:
        exec(compile(_gp_file.read(), _gp_own, "exec"))
try:
    # A notebook's Dask scheduler and client speak TLS (gpuportal_adapters.compat).
    from gpuportal_adapters.compat import install as _gp_install

    _gp_install()
except Exception:  # an environment without this package
    pass
try:
    from gpuportal_session.notebook_tensorboard import register as _gp_register

    _gp_register()
except Exception:  # an environment without this package: stock %tensorboard
    pass
del _gp_os, _gp_own
