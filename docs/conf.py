"""The course's documentation as a small site (``make docs``): the Markdown of docs/, read by
MyST, built strictly (every warning an error, every internal link and heading anchor
resolved)."""

project = "Transformers as memory: documentation"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_static_path: list[str] = []
nitpicky = True
