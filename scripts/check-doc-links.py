#!/usr/bin/env python3
"""Checks every Markdown link of README.md and docs/*.md: the file it names exists, and an
#anchor names a heading of that page (GitHub's spelling: lower case, punctuation but hyphens
dropped, spaces as hyphens). Also checks that no file of the repository names a docs page that
does not exist (`docs/<page>.md` in a comment, a help text, a script).

Usage: check-doc-links.py REPO_ROOT   (exit 1 and one line per broken link)"""
import os
import re
import subprocess
import sys


def slug(heading):
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    found, in_code = set(), False
    with open(path, encoding="utf-8") as page:
        for line in page:
            if line.startswith("```"):
                in_code = not in_code
            heading = None if in_code else re.match(r"^#+ (.*)", line)
            if heading:
                found.add(slug(heading.group(1)))
    return found


def broken_links(root, page):
    with open(os.path.join(root, page), encoding="utf-8") as source:
        text = re.sub(r"```.*?```", "", source.read(), flags=re.S)
    for match in re.finditer(r"\]\(([^)\s]+)\)", text):
        link = match.group(1)
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = os.path.normpath(os.path.join(root, os.path.dirname(page), path)) if path \
            else os.path.join(root, page)
        if not os.path.exists(target):
            yield f"{page}: {link}: no such file"
        elif anchor and target.endswith(".md") and anchor not in anchors(target):
            yield f"{page}: {link}: no such heading"


def broken_mentions(root):
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], capture_output=True,
                            check=False).stdout.decode().split("\0")
    for name in filter(None, listed):
        try:
            with open(os.path.join(root, name), encoding="utf-8") as source:
                text = source.read()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for match in re.finditer(r"(?<![\w.-])docs/([\w-]+\.md)", text):
            if not os.path.exists(os.path.join(root, "docs", match.group(1))):
                yield f"{name}: names docs/{match.group(1)}, which does not exist"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    pages = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs"))
                                   if f.endswith(".md"))
    broken = [line for page in pages for line in broken_links(root, page)]
    broken += list(broken_mentions(root))
    for line in broken:
        print(line)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
