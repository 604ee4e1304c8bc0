"""The workbench's exception tree.

Every error a user can cause derives from ``WorkbenchError``; the CLI turns one
into a single stderr line and a non-zero exit code (no traceback unless
``--debug``). Messages follow ``{path}:{line}: {expected}, found {what}. {fix}``.
"""

from __future__ import annotations

from collections.abc import Iterable

from workbench.ranking import natural_key

SHOWN_MAX = 60
"""The characters of a user's value (an id, a cell, an option's value, a filter) a message shows (``shown``, ``cut``).

Values are cut here, in the base of the exception tree, so that every message quotes them alike; ``workbench.text``
re-exports both functions."""


def shown(value: object, limit: int = SHOWN_MAX) -> str:
    """A user's value quoted for a message (``repr``), cut to its first ``limit`` characters + ``"… (N characters)"``.

    A value that is not text is shown as ``str(value)`` (e.g. a number, a JSON list), cut the same way.

    Example:
        >>> shown("d1"), shown("x" * 100)[-20:]
        ("'d1'", "x'… (100 characters)")
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(value) if isinstance(value, str) else text
    head = text[:limit]
    return f"{head!r}\u2026 ({len(text)} characters)" if isinstance(value, str) else f"{head}\u2026 ({len(text)} characters)"


def cut(text: str, limit: int = SHOWN_MAX) -> str:
    """``text`` itself, or its first ``limit`` characters + ``"… (N characters)"`` when longer (unquoted).

    Example:
        >>> cut("bm25"), cut("y" * 70)[-18:]
        ('bm25', 'y… (70 characters)')
    """
    return text if len(text) <= limit else f"{text[:limit]}\u2026 ({len(text)} characters)"


def shown_list(values: Iterable[object], limit: int = 12) -> str:
    """Values for a message as a list: ``['a', 'b']``, each one ``shown``, the first ``limit`` of them.

    Example:
        >>> shown_list(["year", "x" * 100]), shown_list("abc", 2)
        ("['year', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'… (100 characters)]", "['a', 'b', ... 1 more]")
    """
    items = list(values)
    more = f", ... {len(items) - limit} more" if len(items) > limit else ""
    return "[" + ", ".join(shown(v) for v in items[:limit]) + more + "]"


class WorkbenchError(Exception):
    """Base class of every error the workbench raises on purpose."""


class InputFormatError(WorkbenchError):
    """A file does not follow its format.

    Attributes:
        path: the file, as given by the user.
        line: 1-based line number, or 0 when the problem concerns the whole file.
        problem: what was expected and what was found, and how to fix it.
    """

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {problem}")


class UnknownNameError(WorkbenchError, KeyError):
    """A name (measure, run, pool version, qrels version, ...) is not registered.

    The message lists the known names, computed from the registry.
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known, key=natural_key)  # topic ids 2 before 10
        listed = ", ".join(cut(k) for k in self.known[:30]) + (" ..." if len(self.known) > 30 else "")
        # 2 x SHOWN_MAX: a caller may pass a name it cut already (``cut``), which must not be cut again
        super().__init__(f"unknown {kind} {shown(name, 2 * SHOWN_MAX)}; known: {listed or '(none)'}")

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return str(self.args[0])


class ValidationError(WorkbenchError):
    """A value is outside what the operation accepts (e.g. a grade not in the rubric)."""


class UsageError(ValidationError):
    """The command line is wrong: an option's value is not one of its choices
    (``--format xml``) or not of its type (``--k x``).

    Like an unknown option, a usage error exits with code 2; every other
    ``WorkbenchError`` exits with 1.
    """


class NotASampleError(UsageError):
    """An estimated measure (``Rhat@20``) was asked of qrels that are not a judged sample's: a file, or a stored
    qrels version not published from a sample pool. A usage error (exit 2; the gate's exit 3)."""


class UnknownOptionValueError(UnknownNameError, UsageError):
    """An option names something the data does not hold (``--by nosuch``, ``--filter-key nosuch``).

    The known names come from the data (topic metadata keys), so the option's
    parser cannot refuse it; the command does, before any work, and it is a
    usage error (exit 2) like any bad option value.
    """


class DuplicateNameError(WorkbenchError):
    """A name is already taken (a run, pool version or qrels version is immutable)."""


class MissingTopicsError(WorkbenchError):
    """Topics of the qrels have no results in a run, and the policy is to fail.

    Attributes:
        run: the run name.
        topics: the missing topic ids, sorted.
    """

    def __init__(self, run: str, topics: Iterable[str], hint: str = "") -> None:
        self.run = run
        self.topics = sorted(topics, key=natural_key)
        listed = ", ".join(cut(t) for t in self.topics[:20]) + (" ..." if len(self.topics) > 20 else "")
        msg = f"run {shown(run)} has no results for {len(self.topics)} qrels topic(s): {listed}"
        if hint:
            msg += f". {hint}"
        super().__init__(msg)


class StoreError(WorkbenchError):
    """The store refused an operation (wraps the database driver's error)."""


class StoreLockedError(StoreError):
    """Another process held the store for longer than the wait allowed."""


class PermissionDeniedError(WorkbenchError):
    """The user's role does not allow the operation (e.g. an assessor publishing)."""
