"""What every command-line entry point shares: one-line errors, safe outputs, progress.

A bad flag, value or path ends a command with one line ``PROG: error: ...`` on stderr and
exit status 2, before any output is touched; outputs are written whole (a temporary file
renamed into place) and only when there are results to write.
"""

from __future__ import annotations

import argparse
import csv
import functools
import io
import json
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["build_dir", "Parser", "command", "UsageError", "check_output", "write_text", "write_results", "save_figure",
           "read_csv", "csv_text", "merged_rows", "merge_csv", "progress"]


def build_dir(*parts: str) -> Path:
    """Where generated files go by default: ``$ARITH_BUILD`` (default ``build`` in the
    current folder) joined with ``parts``. ``rm -rf build`` removes every one of them."""
    return Path(os.environ.get("ARITH_BUILD") or "build").joinpath(*parts)


class UsageError(Exception):
    """A problem with the command line: reported in one line, exit status 2."""


#: Renamed flags, by their name: the old spelling, still accepted (not shown by ``--help``).
RENAMED = {"--accumulation": "--accumulator"}


class _Spelled(argparse._StoreAction):
    """A renamed flag's value under either spelling; both, with different values, an error."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = vars(namespace).setdefault("_spelled", {}).setdefault(self.dest, {})
        given[option_string] = values
        if len(set(given.values())) > 1:
            new = next(flag for flag in given if flag in RENAMED)
            parser.error(" and ".join(f"{flag} {value}" for flag, value in given.items())
                         + f" differ ({RENAMED[new]} is the old spelling of {new}): give one")
        setattr(namespace, self.dest, values)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (no usage block) and exit status 2,
    and whose renamed flags (``RENAMED``) take their old spelling too."""

    def error(self, message):
        raise UsageError(f"{self.prog}: error: {message}")

    def add_argument(self, *names, **kwargs):
        old = [RENAMED[name] for name in names if name in RENAMED]
        if not old:
            return super().add_argument(*names, **kwargs)
        action = super().add_argument(*names, action=_Spelled, **kwargs)
        super().add_argument(*old, action=_Spelled, dest=action.dest, type=action.type, default=argparse.SUPPRESS,
                             help=argparse.SUPPRESS)
        return action

    def parse_known_args(self, args=None, namespace=None):
        namespace, rest = super().parse_known_args(args, namespace)
        vars(namespace).pop("_spelled", None)
        return namespace, rest


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def command(prog: str):
    """Decorate ``main(argv)``: bad values (``ValueError``, ``TypeError``), unusable paths
    (``OSError``) and usage errors become one line on stderr and ``SystemExit(2)`` (as an
    ``argparse`` error does, so in-process callers see the same thing)."""
    def decorate(main):
        @functools.wraps(main)
        def wrapper(argv=None) -> int:
            try:
                return main(argv)
            except UsageError as error:
                message = str(error)
            except (ValueError, TypeError, OSError) as error:
                message = f"{prog}: error: {error}"
            print(_one_line(message), file=sys.stderr)
            raise SystemExit(2)
        return wrapper
    return decorate


def check_output(path: Path, flag: str, folder: bool = False) -> Path:
    """Check before any work that ``path`` (a file, or a ``folder``) can be written: it is
    of the right kind if it exists, and its nearest existing ancestor is a writable folder
    (missing folders are made when writing). Raises ``ValueError`` naming ``flag``."""
    path = Path(path)
    if path.exists():
        if folder and not path.is_dir():
            raise ValueError(f"{flag} {path}: is a file, not a folder")
        if not folder and path.is_dir():
            raise ValueError(f"{flag} {path}: is a folder, not a file")
        if not os.access(path, os.W_OK):
            raise ValueError(f"{flag} {path}: not writable")
        _probe(path if folder else path.absolute().parent, flag, path)
        return path
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{flag} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: folder {parent} is not writable")
    _probe(parent, flag, path)
    return path


def _probe(folder: Path, flag: str, path: Path) -> None:
    """Create and remove a file in ``folder``: what the permission bits do not say (root on
    a read-only or virtual file system such as /proc) shows here, before any work."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".probe.")
    except OSError as error:
        raise ValueError(f"{flag} {path}: cannot create files in {folder} ({error.strerror})") from None
    os.close(handle)
    os.unlink(probe)


def write_text(path: Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8) or bytes to ``path`` whole: a temporary file in the same folder,
    renamed into place, so a failure leaves any previous file as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_csv(path: Path) -> list[dict]:
    """The rows of the CSV at ``path``, cells as text (none where there is no file)."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def csv_text(rows, columns) -> str:
    """``rows`` as CSV text under ``columns`` (a row's other cells left out)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def merged_rows(old, new, key) -> list[dict]:
    """``new`` merged into ``old`` by ``key(row)``: a new row replaces the old one of its key
    where it stood, the other old rows stay in their order, new keys follow."""
    merged = {key(r): r for r in old}
    merged.update((key(r), r) for r in new)
    return list(merged.values())


def merge_csv(path: Path, rows, columns, key, *, normalise=None, order=None) -> list[dict]:
    """Merge ``rows`` into the CSV at ``path`` (``merged_rows``) and write it whole; return
    the merged rows. ``normalise`` maps every row, old and new, before the merge; ``order``
    sorts the written rows (default: as merged)."""
    normalise = normalise or (lambda r: r)
    merged = merged_rows(map(normalise, read_csv(path)), map(normalise, rows), key)
    if order is not None:
        merged.sort(key=order)
    write_text(path, csv_text(merged, columns))
    return merged


def write_results(path: Path, rows) -> None:
    """A benchmark's or report's figures as indented JSON, written whole, and say where."""
    write_text(path, json.dumps(rows, indent=2) + "\n")
    print(f"wrote {path}")


def save_figure(fig, path: Path, dpi: int = 110) -> None:
    """A Matplotlib figure as a PNG file, written whole."""
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=dpi)
    write_text(path, image.getvalue())


def progress(total: int, desc: str | None = None, unit: str = "it"):
    """A tqdm bar on stderr with ETA, silent when stderr is not a terminal."""
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty(),
                dynamic_ncols=True, leave=True)
