#!/usr/bin/env python3
"""Summarizes a Khronos OpenXR CTS report (the ctsxml reporter's cts.xml) per test case.

    cts_summary.py cts.xml [--messages]

Prints one line per top-level test case (passed / failed / skipped) and a closing count line
'N passed, N failed, N skipped'. Sections of a case appear in the report as 'Case/Section'; a
case failed if any of its sections has a failure or error, and was skipped if it skipped and
nothing failed. --messages adds the first failure message of each failed case. (A case that
records nothing, such as DescribeGraphicsPlugin, is absent from the report; the suite's own
console line counts it.)
Exit status: 0 when no case failed, 1 otherwise, 2 when the report cannot be read.
"""
import sys
import xml.etree.ElementTree as ET
from collections import OrderedDict


def local(tag):
    return tag.rsplit('}', 1)[-1]


def summarize(path):
    root = ET.parse(path).getroot()
    cases = OrderedDict()
    for tc in root.iter('testcase'):
        name = tc.attrib.get('name', '').split('/', 1)[0]
        entry = cases.setdefault(name, {'status': 'passed', 'message': ''})
        for child in tc:
            kind = local(child.tag)
            if kind in ('failure', 'error'):
                if entry['status'] != 'failed':
                    entry['message'] = ' '.join((child.text or child.attrib.get('message', '')).split())[:300]
                entry['status'] = 'failed'
            elif kind == 'skipped' and entry['status'] == 'passed':
                entry['status'] = 'skipped'
                entry['message'] = ' '.join((child.text or '').split())[:200]
    return cases


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cases = summarize(argv[1])
    except (OSError, ET.ParseError) as error:
        print(f'cts_summary: cannot read {argv[1]}: {error}', file=sys.stderr)
        return 2
    messages = '--messages' in argv[2:]
    counts = {'passed': 0, 'failed': 0, 'skipped': 0}
    for name, entry in cases.items():
        counts[entry['status']] += 1
        line = f"{entry['status']:8} {name}"
        if messages and entry['status'] != 'passed' and entry['message']:
            line += f"  -- {entry['message']}"
        print(line)
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")
    return 1 if counts['failed'] else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
