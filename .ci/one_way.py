#!/usr/bin/env python3
"""Fails when files of src/ import each other, directly or through others (docs/ARCHITECTURE.md, "One direction between
files"). A file imports another when it names a path into it: `crate::a::b`, `super::b`,
`self::b`, or a child module it declares (`mod b;` then `b::x`). What both files need goes into a
file below both. Allowed: a child module using its parent's items (`super::Context`) while the
parent declares and re-exports the child. Not checked: test files and `#[cfg(test)]` tails, which
may drive a module through its neighbours to build fixtures."""
import os
import re
import sys

ROOT = "src"
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH = re.compile(r"\b(?:crate|super|self)(?:::" + IDENT + r")+")
USE = re.compile(r"\buse\s+([^;]+);", re.S)


def module_of(path):
    parts = path[len(ROOT) + 1 : -3].split("/")
    return tuple(parts[:-1] if parts[-1] in ("mod", "lib", "main") else parts)


def is_test(path):
    name = os.path.basename(path)
    return name == "tests.rs" or name.endswith("_tests.rs") or name.startswith("tests_")


def expand(use):
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    brace = use.find("{")
    if brace < 0:
        return [use]
    prefix, body = use[:brace], use[brace + 1 : use.rfind("}")]
    parts, depth, current = [], 0, ""
    for char in body:
        depth += (char == "{") - (char == "}")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [prefix + item for part in parts if part for item in expand(part)]


def code_of(text):
    cut = text.find("#[cfg(test)]")
    text = text if cut < 0 else text[:cut]
    return re.sub(r"//[^\n]*", "", text)


def paths_in(code):
    uses = [p for m in USE.finditer(code) for p in expand(re.sub(r"\s+", "", m.group(1)))]
    paths = uses + PATH.findall(code)
    for child in re.findall(r"\bmod\s+(" + IDENT + r")\s*;", code):
        if re.search(r"(?<![:\w])" + child + r"::", code) or re.search(r"\buse\s+" + child + r"\b", code):
            paths.append("self::" + child)
    return paths


def target(module, path, files):
    segments = [s.split(" as ")[0] for s in path.split("::")]
    if segments[0] == "crate":
        absolute = segments[1:]
    else:
        absolute, i = list(module), 0
        while i < len(segments) and segments[i] in ("super", "self"):
            absolute = absolute[:-1] if segments[i] == "super" else absolute
            i += 1
        absolute += segments[i:]
    absolute = [s for s in absolute if s not in ("", "*")]
    for n in range(len(absolute), -1, -1):
        if tuple(absolute[:n]) in files:
            return files[tuple(absolute[:n])]
    return None


def cycles(imports):
    """The groups of files that import each other, directly or through others (Tarjan)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(file):
        index[file] = low[file] = len(index)
        stack.append(file)
        on_stack.add(file)
        for other in sorted(imports.get(file, ())):
            if other not in index:
                visit(other)
                low[file] = min(low[file], low[other])
            elif other in on_stack:
                low[file] = min(low[file], index[other])
        if low[file] == index[file]:
            group = []
            while not group or group[-1] != file:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for file in sorted(imports):
        if file not in index:
            visit(file)
    return groups


def main():
    sources = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(ROOT) for f in fs if f.endswith(".rs")
    )
    files = {module_of(p): p for p in sources}
    imports = {}
    for path in sources:
        if is_test(path):
            continue
        with open(path, encoding="utf-8") as handle:
            code = code_of(handle.read())
        module = module_of(path)
        found = {target(module, p, files) for p in paths_in(code)}
        # A child module may use its parent's items; the parent declares and re-exports it.
        imports[path] = {
            f for f in found
            if f and f != path and module_of(f) != module[:-1] and module_of(f)[:-1] != module
        }
    groups = cycles(imports)
    for group in groups:
        print("files that import each other: " + ", ".join(group)
              + " (move what they share into a file below them)", file=sys.stderr)
    if groups:
        sys.exit(1)
    print(f"one direction between files: {len(imports)} files, no cycle")


main()
