#!/usr/bin/env python3
"""The layout's limits (docs/architecture.md): no Swift file in Sources/ over 400 lines and
no function, initializer or closure-bodied property over 80. A function's lines run from its
declaration to its closing brace, found by counting braces outside strings and comments.
Prints the longest file and function either way; exits 1 when a limit is passed.
Usage: scripts/layout-check.py [root]
"""
import os
import re
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80
DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|private|fileprivate|internal|static|final|override|mutating|nonisolated|convenience|required|@inlinable)\s+)*(?:func\s+\w+|init[?!]?\s*[(<]|subscript\s*[(<])")


def code_of(line, in_block_comment):
    """The line without strings and comments, and whether a block comment is still open."""
    out = []
    i = 0
    in_string = False
    while i < len(line):
        if in_block_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block_comment = end + 2, False
            continue
        if in_string:
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                in_string = False
            i += 1
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block_comment = True
            i += 2
            continue
        if line[i] == '"':
            in_string = True
        else:
            out.append(line[i])
        i += 1
    return "".join(out), in_block_comment


def functions(lines):
    """(first line, line count, declaration) of each function in `lines`."""
    found = []
    in_block = False
    in_multiline_string = False
    open_functions = []  # (start line, depth at which its body opened, declaration)
    waiting = None  # a declaration whose body's brace has not come yet
    depth = 0
    for number, line in enumerate(lines, 1):
        if line.count('"""') % 2 == 1:
            in_multiline_string = not in_multiline_string
            continue
        if in_multiline_string:
            continue
        code, in_block = code_of(line, in_block)
        if DECLARATION.match(code) and waiting is None:
            waiting = (number, code.strip())
        for char in code:
            if char == "{":
                depth += 1
                if waiting is not None:
                    open_functions.append((waiting[0], depth, waiting[1]))
                    waiting = None
            elif char == "}":
                if open_functions and open_functions[-1][1] == depth:
                    start, _, declaration = open_functions.pop()
                    found.append((start, number - start + 1, declaration))
                depth -= 1
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    sources = os.path.join(root, "Sources")
    files, longest, failures = [], [], []
    for directory, _, names in os.walk(sources):
        for name in names:
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8") as text:
                lines = text.read().split("\n")
            relative = os.path.relpath(path, root)
            count = len(lines) - (lines[-1] == "")
            files.append((count, relative))
            if count > MAX_FILE_LINES:
                failures.append(f"{relative}: {count} lines (at most {MAX_FILE_LINES})")
            for start, length, declaration in functions(lines):
                longest.append((length, f"{relative}:{start}", declaration))
                if length > MAX_FUNCTION_LINES:
                    failures.append(f"{relative}:{start}: {declaration[:80]}: {length} lines (at most {MAX_FUNCTION_LINES})")
    files.sort(reverse=True)
    longest.sort(reverse=True)
    print(f"layout-check: {len(files)} files; longest {files[0][1]} ({files[0][0]} lines); "
          f"longest function {longest[0][1]} ({longest[0][0]} lines)", flush=True)
    for failure in failures:
        print(f"layout-check: FAIL: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
