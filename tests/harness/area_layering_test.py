#!/usr/bin/python3
"""The harness's areas (harness/src/<area>/, harness/include/faultline/harness/<area>/) include
each other one way only, with no cycle: read from every #include of harness/, each file mapped
to its area. The areas built as libraries of their own below the harness (harness/CMakeLists.txt)
use only the ones below them. Prints the areas from the bottom up with what each uses; exits 1
naming the includes of a cycle or of a library reaching up."""
import collections
import pathlib
import re
import sys

INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)
# The libraries below faultline::harness, each with what it may use.
LIBRARIES = {"base": set(), "control": {"base"}}


def area_of(path, harness):
    """The area of a file of harness/, or None for one outside the areas."""
    for root in (harness / "src", harness / "include/faultline/harness"):
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            continue
        return parts[0] if len(parts) > 1 else None
    return None


def included_file(name, source, harness):
    """The file an include names: public, relative to harness/src, or relative to the file."""
    if name.startswith("faultline/harness/"):
        return harness / "include" / name
    for base in (harness / "src", source.parent):
        candidate = (base / name).resolve()
        if candidate.exists():
            return candidate
    return None


def edges_of(harness):
    edges = collections.defaultdict(lambda: collections.defaultdict(list))
    for source in sorted(harness.rglob("*")):
        if source.suffix not in (".cpp", ".hpp", ".in"):
            continue
        source = source.resolve()
        area = area_of(source, harness)
        for name in INCLUDE.findall(source.read_text()):
            target = included_file(name, source, harness)
            other = area_of(target, harness) if target else None
            if area and other and other != area:
                edges[area][other].append(f"{source.relative_to(harness.parent)}: {name}")
    return edges


def main():
    harness = pathlib.Path(sys.argv[1]).resolve()
    edges = edges_of(harness)
    areas = sorted(set(edges) | {b for uses in edges.values() for b in uses})
    if len(areas) < 5:
        print(f"only {len(areas)} areas found under {harness}: is this the harness?")
        return 1
    level = {}

    def level_of(area, path):
        if area in path:
            cycle = path[path.index(area):] + [area]
            print("a cycle of areas: " + " -> ".join(cycle))
            for a, b in zip(cycle, cycle[1:]):
                print(f"  {a} -> {b}: " + "; ".join(edges[a][b][:3]))
            raise SystemExit(1)
        if area not in level:
            level[area] = 1 + max((level_of(b, path + [area]) for b in edges[area]), default=-1)
        return level[area]

    for area in areas:
        level_of(area, [])
    for area in sorted(areas, key=lambda a: (level[a], a)):
        print(f"{level[area]} {area} -> {', '.join(sorted(edges[area])) or '(nothing)'}")
    for library, allowed in LIBRARIES.items():
        for other in sorted(set(edges[library]) - allowed):
            print(f"the {library} library uses {other}: " + "; ".join(edges[library][other][:3]))
            return 1
    print(f"{len(areas)} areas in {max(level.values()) + 1} levels, every include pointing down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
