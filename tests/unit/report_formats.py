#!/usr/bin/python3
"""Reads the run's SARIF log and OpenMetrics text the way their consumers do, for
tests/unit/reports_formats_test.cpp (Debian's python3-jsonschema and python3-prometheus-client).

  report_formats.py sarif SCHEMA FILE   validates FILE against the SARIF 2.1.0 schema, prints
                                        one JSON line per result: ruleId, level, uri, line
  report_formats.py metrics FILE        parses FILE with the OpenMetrics parser, prints one
                                        JSON line per sample: family, type, unit, name, labels, value
Exit 1 with the validator's or the parser's message when the file is refused."""
import json
import sys


def sarif(schema_path, path):
    import jsonschema
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(path, encoding="utf-8") as f:
        log = json.load(f)
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    if errors:
        for e in errors[:20]:
            print("schema: %s at %s" % (e.message, "/".join(str(p) for p in e.path)), file=sys.stderr)
        return 1
    for run in log["runs"]:
        for r in run["results"]:
            loc = (r.get("locations") or [{}])[0].get("physicalLocation", {})
            print(json.dumps({"ruleId": r["ruleId"], "level": r.get("level"),
                              "uri": loc.get("artifactLocation", {}).get("uri"),
                              "line": loc.get("region", {}).get("startLine"),
                              "column": loc.get("region", {}).get("startColumn")}))
    return 0


def metrics(path):
    from prometheus_client.openmetrics.parser import text_string_to_metric_families
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError (and others) for bad text
        print("openmetrics: %s" % e, file=sys.stderr)
        return 1
    for fam in families:
        for s in fam.samples:
            print(json.dumps({"family": fam.name, "type": fam.type, "unit": fam.unit, "name": s.name,
                              "labels": s.labels, "value": s.value}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "sarif":
        sys.exit(sarif(sys.argv[2], sys.argv[3]))
    if len(sys.argv) == 3 and sys.argv[1] == "metrics":
        sys.exit(metrics(sys.argv[2]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
