"""The text states facts, not a diary: no issue numbers, dates, sessions, stops or numbered
runs in the code's comments and strings, the docs, the README or the CHANGELOG.

A figure's provenance is the machine or adapter, the command, the commit and the load
("measured on lavapipe with `engine-bench ... --runs 30`, commit e414c7e, load 0.2"), never
a day, an issue, a stop or "run 14". What is scanned and what counts:

- scanned: every *.py, *.wgsl, *.sh, Makefile, pyproject.toml and .ci/run of the project
  (not tests/data/, not this file), docs/*.md, README.md, CHANGELOG.md. Data (JSON, CSV,
  the generated reports under docs/latency-*/, tests/data/) keeps its timestamps;
- in Python only the prose is read: comments, and string literals that contain a space
  (docstrings, messages). Names are code (`pytest_sessionfinish`, `scope="session"`), and
  so is a string without a space (`"+00:00"`);
- issue: "issue 12", "issues 30, 31", "issue #15", and a bare "#14". `#N` after "op " or
  "by ", or before an op name ("op #0 CONV_2D", "read by #2", "#2 RESHAPE"), is an op
  index, and "owner/repo#N" or "wgpu-native#305" cites another project's tracker: both
  allowed;
- session: the word, but for code written in the text (`session.run`); other runtimes'
  sessions are named by their type (ONNX Runtime's `InferenceSession`);
- stop: "stop 24", "stops 17-18", and a stop as a unit of work ("end of stop", "the last
  stop"); "stop after N frames", "a signal stops the loop" are verbs, allowed;
- run: "run 14", "runs 1-13", "(run 3)", "run 11 load 2.29"; allowed: options (`--runs 100`,
  `--wg-runs 3`), a count of things ("runs 50 mutants", "runs 4 lanes", "runs 32- or
  64-wide waves"), ratios and decimals ("runs 2.6-5.4x slower"), progress ("run 1 of 3");
- dates: ISO dates (2026-11-27), month names with a day (Nov 27, 27 November), month-day
  after "on", "of", "since", "until", "than on", "measured" (on 11-25), times of day (08:13);
- relative days: today, yesterday, tonight, this/last week, this/that morning, afternoon,
  evening, day.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from tests.helpers.files import ROOT

CODE_DIRS = ("engine", "app", "benchmarks", "tests", "scripts", "shaders")
CODE_SUFFIXES = (".py", ".wgsl", ".sh")
TOP_FILES = ("Makefile", "pyproject.toml", ".ci/run", "README.md", "CHANGELOG.md")
SKIP = ("tests/data/", "tests/test_text.py")

MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|"
          "December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")  # fmt: skip
# The word after "run N" that makes it a count of things, not the name of a run.
RUN_COUNT = r"(?!(?:and|or|on|in|at|of|to|with|gave|was|were|load|the|is|for|from)\b)[a-z]"
PATTERNS = {
    "issue": re.compile(
        r"\bissues? #?\d+|(?<![\w/.-])(?<!op )(?<!by )#\d+(?!\d)(?! ?[A-Z][A-Z0-9_]+\b)",
        re.I,
    ),
    "session": re.compile(r"(?<![._])\bsessions?\b(?![.(_])", re.I),
    "stop": re.compile(
        r"\bstops? \d+|\b(?:end of (?:the |a |this )?|the last |this |that |every later |"
        r"each |previous |later |earlier |next )stops?\b(?! (?:a|the|at|after|when)\b)",
        re.I,
    ),
    # No possessive quantifiers: Python 3.11.0-3.11.3 (Debian's 3.11.2) backtrack into them
    # (gh-101955). "\d+(?!\d)" and the look-ahead-then-backreference keep the number and
    # its range whole, so the look-ahead after them cannot be met by giving digits back.
    "run": re.compile(
        r"(?<![-\w])runs? \d+(?!\d)(?=(?P<range>(?:\s*-\s*\d+(?!\d))?))(?P=range)"
        rf"(?![.,]\d|x|-|%| of \d| {RUN_COUNT})",
        re.I,
    ),
    "date": re.compile(
        rf"\b20\d\d-[01]\d-[0-3]\d\b|\b(?:{MONTHS})\.? \d{{1,2}}(?:st|nd|rd|th)?\b"
        rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:{MONTHS})\b"
        r"|\b(?:on|of|since|until|than on|measured) (?:0?[1-9]|1[0-2])-[0-3]\d\b(?![.\d]|x| ?%| ?[mk]?s\b)"
        r"|(?<![\d:.])[0-2]\d:[0-5]\d(?::[0-5]\d)?\b(?!:)"
    ),
    "relative day": re.compile(
        r"\b(?:today|yesterday|tonight)\b|\b(?:this|last|that) (?:week|morning|afternoon|"
        r"evening|night)\b|\bthat day\b",
        re.I,
    ),
}


def scanned_files() -> list[Path]:
    files = [ROOT / name for name in TOP_FILES if (ROOT / name).exists()]
    files += sorted((ROOT / "docs").glob("*.md"))
    for folder in CODE_DIRS:
        files += sorted(p for p in (ROOT / folder).rglob("*") if p.suffix in CODE_SUFFIXES)
    return [p for p in files if not p.relative_to(ROOT).as_posix().startswith(SKIP)]


def python_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comment and each string literal with a space in it."""
    out = []
    strings = {tokenize.STRING} | {getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT or (tok.type in strings and " " in tok.string):
            out += [(tok.start[0] + i, text) for i, text in enumerate(tok.string.split("\n"))]
    return out


def offences(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = python_prose(text) if path.suffix == ".py" else enumerate(text.splitlines(), 1)
    rel = path.relative_to(ROOT).as_posix()
    found = []
    for number, line in lines:
        for kind, pattern in PATTERNS.items():
            match = pattern.search(line)
            if match:
                found.append(f"{rel}:{number}: {kind}: {match.group(0)!r}: {line.strip()[:100]}")
    return found


def test_no_diary_in_text():
    found = [entry for path in scanned_files() for entry in offences(path)]
    assert not found, f"{len(found)} places read as a diary:\n" + "\n".join(found)


if __name__ == "__main__":  # python -m tests.test_text: the list, without pytest
    print("\n".join(entry for path in scanned_files() for entry in offences(path)))
