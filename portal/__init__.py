"""The portal: a JupyterHub-managed FastAPI service for live resource profiles (and later jobs)."""
