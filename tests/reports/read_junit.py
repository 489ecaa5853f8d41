"""Reads a JUnit XML file with junitparser (a JUnit consumer, as CI systems are) and prints
what it found as JSON: per suite its declared counts, and the counts of the testcases'
results as the consumer classifies them."""
import json
import sys

from junitparser import Error, Failure, JUnitXml, Skipped

xml = JUnitXml.fromfile(sys.argv[1])
suites = []
for suite in xml:
    counted = {"cases": 0, "failures": 0, "errors": 0, "skipped": 0, "passed": 0}
    for case in suite:
        counted["cases"] += 1
        kinds = {type(result) for result in case.result}
        if Failure in kinds:
            counted["failures"] += 1
        elif Error in kinds:
            counted["errors"] += 1
        elif Skipped in kinds:
            counted["skipped"] += 1
        else:
            counted["passed"] += 1
    suites.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures,
                   "errors": suite.errors, "skipped": suite.skipped, "counted": counted})
print(json.dumps({"suites": suites}))
