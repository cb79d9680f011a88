"""Every internal link of the built docs lands: the page exists and so does its #anchor.

    python docs/_ext/check_links.py docs/_build/html

Sphinx checks the references it resolves itself (`-n -W`); this checks what it only copies into
the HTML (Markdown links, the theme's own). Links that leave the site are not followed: the
docs are read on clusters without internet, and none of their pages needs one.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """One page's element ids and link targets."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))


def read_page(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(errors="replace"))
    return page


def broken_links(root: Path) -> list[str]:
    """'page: link' for each internal link whose page or anchor is missing."""
    pages: dict[Path, Page] = {}
    for path in sorted(root.rglob("*.html")):
        pages[path.resolve()] = read_page(path)
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("/", "mailto:", "javascript:")):
                continue  # leaves the site (a path from the root: the hub's, which serves it)
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(root.resolve())}: {link} (no such page)")
            elif (
                parts.fragment
                and target in pages
                and unquote(parts.fragment) not in pages[target].ids
            ):
                broken.append(f"{path.relative_to(root.resolve())}: {link} (no such anchor)")
    return broken


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/_build/html")
    broken = broken_links(root)
    for line in broken:
        print(f"broken link: {line}", file=sys.stderr)
    count = len(list(root.rglob("*.html")))
    print(f"{count} pages, {'no broken internal link' if not broken else f'{len(broken)} broken'}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
