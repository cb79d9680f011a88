"""Sphinx configuration of the docs site (`make docs`): MyST pages, the PyData theme (as
JupyterHub's own docs), and a reference generated from the code: the traits with
autodoc-traits, the command lines with sphinx-click and sphinx-argparse, the PORTAL_* settings
and the REST API written by this folder's extension (_ext/gpuportal_reference.py)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "GPU portal"
author = "The GPU portal team"
copyright = "2026, the GPU portal team"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "autodoc_traits",
    "sphinx_click",
    "sphinxarg.ext",
    "gpuportal_reference",
]
myst_enable_extensions = ["colon_fence", "deflist", "fieldlist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_ext", "reference/generated"]
# Every cross reference must resolve: `make docs` builds with warnings as errors (-W -n).
nitpicky = True
# Except Python objects: the help of traits inherited from JupyterHub names its methods
# (`refresh_user`), whose docs are JupyterHub's, not fetched (a cluster has no internet).
nitpick_ignore_regex = [(r"py:.*", r".*")]
# batchspawner's traits have no help; autodoc-traits documents them and says so, each time.
warnings.filterwarnings("ignore", category=FutureWarning, module="autodoc_traits")
autodoc_typehints = "none"
autodoc_member_order = "bysource"

# Drawn at build time by Graphviz's dot (install.sh installs it), as SVG in the page.
graphviz_output_format = "svg"

html_theme = "pydata_sphinx_theme"
html_title = "GPU portal"
html_static_path: list[str] = []
html_theme_options = {
    # Served by the portal to clusters without internet: nothing may come from elsewhere.
    "navigation_with_keys": False,
    "show_prev_next": True,
    "footer_start": ["copyright"],
    "footer_end": [],
    # The hub serves these pages (/services/portal/manual/): the way back to it.
    "external_links": [{"name": "Back to the portal", "url": "/hub/home"}],
}
# The reader's system setting until they choose (the theme reads it from the page context;
# without it, its script logged "Got invalid theme mode" on every page).
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
html_copy_source = False
