#!/usr/bin/env python3
"""Rewrites the `--help` blocks of README.md's CLI reference from the built binary.

Usage: cargo build && python3 scripts/readme-cli.py [path/to/capi-topology]

The block after `## CLI reference` gets the top-level help; the first code block after each
`### \`capi-topology <sub>\`` heading gets that subcommand's help. tests/cli.rs checks they match.
"""
import re
import subprocess
import sys

binary = sys.argv[1] if len(sys.argv) > 1 else "target/debug/capi-topology"


def help_of(args):
    return subprocess.run([binary, *args, "--help"], check=True, capture_output=True, text=True).stdout.strip()


def replace_block_after(text, heading, body):
    start = text.index(heading)
    open_ = text.index("```\n", start)
    close = text.index("\n```", open_ + 3)
    return text[: open_ + 4] + body + text[close:]


readme = open("README.md").read()
readme = replace_block_after(readme, "## CLI reference", help_of([]))
for sub in re.findall(r"^### `capi-topology ([a-z-]+)`", readme, flags=re.M):
    readme = replace_block_after(readme, f"### `capi-topology {sub}`", help_of([sub]))
open("README.md", "w").write(readme)
