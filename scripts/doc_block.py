# SPDX-License-Identifier: GPL-2.0-only
"""Generated blocks of a Markdown page: the lines between "<!-- BEGIN NAME ... -->" and
"<!-- END NAME -->" that a script writes from saved JSON and a docs test keeps current
(`--check`). Shared by the scripts that write such blocks. Python 3 standard library only.
"""

import difflib
import json
import sys


def die(msg):
    """Bad input: the message (naming the file) on stderr, exit 2."""
    print(msg, file=sys.stderr)
    sys.exit(2)


def load_json(path, what):
    """The JSON document at path; bad input exits 2 naming the file and what it should be."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die(f"{path}: cannot read {what}: {e}")


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().split("\n")
    except OSError as e:
        die(f"{path}: {e}")


def replace_block(lines, marker, block, path):
    """lines with the block NAME's content replaced by block (a list of lines)."""
    head = f"<!-- BEGIN {marker}"
    begin = [i for i, l in enumerate(lines) if l.startswith(head) and l[len(head):][:1] in (" ", ":")]
    end = [i for i, l in enumerate(lines) if l == f"<!-- END {marker} -->"]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        die(f"{path}: needs one '<!-- BEGIN {marker} ...' line and one '<!-- END {marker} -->' "
            "after it")
    return lines[:begin[0] + 1] + block + lines[end[0]:]


def write_or_check(path, old, new, check, how):
    """Writes new to path, or with check compares: 1 (and a diff naming `how` to regenerate)
    if path is stale, else 0."""
    if new == old:
        return 0
    if check:
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(old, new, path, "generated",
                                                                     n=1, lineterm=""))
        sys.stdout.write(f"STALE: {path}; rerun {how}\n")
        return 1
    with open(path, "w") as f:
        f.write("\n".join(new))
    return 0
