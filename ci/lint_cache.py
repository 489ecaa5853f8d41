#!/usr/bin/python3
"""What ci/lint may skip: each translation unit's key is the SHA-256 of everything clang-tidy's
verdict on it depends on in this repository (the clang-tidy version, not the host CPU its
--version also prints; .clang-tidy; the unit's compile command with the checkout's path taken
out; the unit and every project header it reaches through #include, followed transitively).
ci/lint-cache.txt, kept in the repository, lists the keys of units that were clean; a unit
whose key is listed is not linted again.

  lint_cache.py stale COMPILE_COMMANDS UNIT...  prints the units whose key is not in the cache
  lint_cache.py record COMPILE_COMMANDS UNIT... writes the cache: the keys of these units
"""
import hashlib
import json
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / "ci" / "lint-cache.txt"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.MULTILINE)


def include_dirs(command):
    """The -I folders of a compile command that lie inside the repository."""
    dirs = []
    words = shlex.split(command)
    for i, word in enumerate(words):
        path = word[2:] if word.startswith("-I") and len(word) > 2 else None
        if word in ("-I", "-isystem") and i + 1 < len(words):
            path = words[i + 1]
        if path and pathlib.Path(path).resolve().is_relative_to(ROOT):
            dirs.append(pathlib.Path(path).resolve())
    return dirs


def project_headers(unit, dirs):
    """Every header of the repository `unit` reaches through #include, transitively."""
    seen, pending = set(), [unit]
    while pending:
        source = pending.pop()
        for name in INCLUDE.findall(source.read_text(errors="replace")):
            for base in [source.parent] + dirs:
                candidate = (base / name).resolve()
                if candidate.is_file() and candidate.is_relative_to(ROOT):
                    if candidate not in seen:
                        seen.add(candidate)
                        pending.append(candidate)
                    break
    return sorted(seen)


def keys(compile_commands, units):
    """Each unit's key, by its path relative to the repository."""
    commands = {str(pathlib.Path(entry["file"]).resolve()): entry["command"]
                for entry in json.loads(pathlib.Path(compile_commands).read_text())}
    # The first line only ("Debian LLVM version 14.0.6"): the rest names the host's CPU, which
    # differs between CI machines and would make every key new on each.
    version = subprocess.run(["clang-tidy", "--version"], capture_output=True,
                             text=True).stdout.strip().splitlines()[0]
    config = (ROOT / ".clang-tidy").read_bytes()
    result = {}
    for unit in units:
        path = (ROOT / unit).resolve()
        command = commands.get(str(path))
        if command is None:
            continue  # not compiled by the lint preset: always linted
        digest = hashlib.sha256()
        digest.update(version.encode() + config + command.replace(str(ROOT), "<root>").encode())
        for source in [path] + project_headers(path, include_dirs(command)):
            digest.update(str(source.relative_to(ROOT)).encode() + b"\0" + source.read_bytes())
        result[unit] = digest.hexdigest()
    return result


def main():
    action, compile_commands, units = sys.argv[1], sys.argv[2], sys.argv[3:]
    found = keys(compile_commands, units)
    if action == "stale":
        cached = set(CACHE.read_text().split()) if CACHE.exists() else set()
        for unit in units:
            if found.get(unit) not in cached:
                print(unit)
    elif action == "record":
        CACHE.write_text("".join(f"{found[unit]} {unit}\n" for unit in sorted(found)))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
