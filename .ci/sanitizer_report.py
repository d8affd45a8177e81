"""Fail CI on any AddressSanitizer/LeakSanitizer report that involves omlc's
compiled code.

The interpreter itself does not free everything at exit, so LeakSanitizer
reports leaks of Python's own objects too; only records whose stack passes
through an ``omlc/_core`` extension are the project's. Usage:
``python .ci/sanitizer_report.py LOGFILE...`` (ASAN_OPTIONS=log_path=...).
"""
import os
import re
import sys


def records(text):
    return [r for r in re.split(r"\n\s*\n", text) if r.strip()]


def ours(record):
    return "omlc/_core/" in record or "4omlc_5_core" in record


def main(paths):
    bad = []
    # An unmatched shell glob arrives as its pattern: no log, no report.
    paths = [p for p in paths if os.path.exists(p)]
    for path in paths:
        with open(path, errors="replace") as fh:
            text = fh.read()
        if "ERROR: AddressSanitizer" in text:
            bad.append(f"{path}: AddressSanitizer error\n{text[:4000]}")
        bad += [f"{path}:\n{r}" for r in records(text) if ours(r) and "leak of" in r]
    for b in bad:
        print(b, end="\n\n")
    print(f"sanitizer: {len(bad)} report(s) in omlc's compiled code "
          f"({len(paths)} log file(s) read)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
