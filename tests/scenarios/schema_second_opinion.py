#!/usr/bin/env python3
"""A second validator for the scenario schema: Python's jsonschema (draft 7) and `faultline
validate` must agree. Every shipped scenario is valid under both; every test file the standard
validator refuses, faultline refuses too (faultline checks more than the schema: roles,
buffers, profiles, so the reverse need not hold); the example in docs/scenarios.md is valid.

Usage: schema_second_opinion.py FAULTLINE SOURCE_DIR WORK_DIR
"""
import json
import pathlib
import subprocess
import sys

import jsonschema

# Folders of scenarios/ that hold no scenario files.
NOT_SCENARIOS = {"schema", "devices", "suites", "excludes", "sut"}


def faultline_accepts(faultline, path):
    run = subprocess.run([faultline, "validate", str(path)], capture_output=True, text=True)
    return run.returncode == 0, (run.stdout + run.stderr).strip()


def main():
    faultline, source = sys.argv[1], pathlib.Path(sys.argv[2])
    schema = json.loads((source / "scenarios/schema/scenario.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    problems = []
    shipped = [path for path in sorted((source / "scenarios").rglob("*.json"))
               if path.relative_to(source / "scenarios").parts[0] not in NOT_SCENARIOS]
    for path in shipped:
        errors = list(validator.iter_errors(json.loads(path.read_text())))
        if errors:
            problems.append(f"{path}: jsonschema refuses a shipped scenario: {errors[0].message}")
    test_files = sorted((source / "tests/harness/scenario/malformed").glob("*.json"))
    refused_by_both = 0
    for path in test_files:
        try:
            document = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue  # not JSON: no schema to ask
        errors = list(validator.iter_errors(document))
        if not errors:
            continue  # valid by the schema; faultline's own checks refuse it
        accepted, said = faultline_accepts(faultline, path)
        if accepted:
            problems.append(f"{path}: jsonschema refuses it ({errors[0].message}) but "
                            f"faultline validate accepts it: {said}")
        else:
            refused_by_both += 1
    # The example of docs/scenarios.md is a file a user can copy: both validators take it.
    example = (source / "docs/scenarios.md").read_text().split("```json\n", 1)[1].split("```", 1)[0]
    example_path = pathlib.Path(sys.argv[3]) / "docs-example.json"
    example_path.write_text(example)
    errors = list(validator.iter_errors(json.loads(example)))
    accepted, said = faultline_accepts(faultline, example_path)
    if errors or not accepted:
        problems.append(f"docs/scenarios.md's example is not a valid scenario: "
                        f"{errors[0].message if errors else said}")
    if len(shipped) < 20 or refused_by_both < 10:
        problems.append(f"too few files checked: {len(shipped)} shipped scenarios, "
                        f"{refused_by_both} malformed files refused by both")
    for problem in problems:
        print(problem)
    print(f"{len(shipped)} shipped scenarios valid under jsonschema; {refused_by_both} malformed "
          f"files refused by both validators")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
