"""The arguments of every server command, as typed shapes: decoded once, before the handler runs, so that a
wrong-typed or missing argument is InvalidParams (-32602) naming it, never an AttributeError inside a handler.

A client may send a command's arguments as `[{"uri", ...}]` (the contract), `[uri]`, `[{"textDocument": {"uri"}}]`
or `[uri-or-object, diagnostic data]`; all become one object, then one shape: every command's is in SHAPES (a
test ties them to command_ids.Command).
"""

from __future__ import annotations

import re
from dataclasses import fields

import attrs
import cattrs
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import default_converter

from cutegen.files import resolved
from cutegen.lsp.command_ids import Command
from cutegen.lsp.documents import path_of, uri_of
from cutegen.model import Diagnostic, Severity

MAX_INT = 2 ** 31 - 1  # LSP integers are 32-bit


class InvalidArguments(JsonRpcInvalidParams):
    """Bad input from the client: answered -32602 with this message, nothing logged."""

    def __init__(self, message: str) -> None:
        super().__init__(message=message)


class FieldError(ValueError):
    """A validator's complaint about one field (cattrs reports it without the field's name)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _uri(instance, attribute, value: str) -> None:
    if not value:
        raise FieldError(attribute.name, "must be a file URI or an absolute path, got an empty string")
    if ":" in value.split("/", 1)[0] and not value.startswith("file:"):
        raise FieldError(attribute.name, f"must be a file: URI (CuTeGen works on files on disk), got {value[:80]!r}")
    if value.startswith("file:") and path_of(value) is None:
        raise FieldError(attribute.name, f"must name a file, got {value[:80]!r}")


def _count(instance, attribute, value: int | None) -> None:
    if value is not None and not 0 <= value <= MAX_INT:
        raise FieldError(attribute.name, f"must be an integer in [0, {MAX_INT}], got {value}")


def _some(instance, attribute, value: str) -> None:
    if not value:
        raise FieldError(attribute.name, "must not be empty")


def _diagnostic(instance, attribute, value: dict | None) -> None:
    """The data of a diagnostic this server published (the client echoes it back): its model fields typed. An empty
    object means none (as null does: the agent then takes the file's first error)."""
    if not value:
        return
    known = {f.name for f in fields(Diagnostic)}
    try:
        _DECODE.structure({k: v for k, v in value.items() if k in known}, Diagnostic)
    except cattrs.BaseValidationError as e:
        path, problem = _first_problem(e, attribute.name).split(": ", 1)
        raise FieldError(path, f"is not the data of a CuTeGen diagnostic: {problem}") from None


@attrs.frozen
class FileArgs:
    """A command about one file."""

    uri: str = attrs.field(validator=_uri)
    version: int | None = attrs.field(default=None, validator=_count)


@attrs.frozen
class AgentArgs(FileArgs):
    """diagnose, fix: the file, its version, and the diagnostic the action is about (optional)."""

    diagnostic: dict | None = attrs.field(default=None, validator=_diagnostic)


@attrs.frozen
class LinesArgs(FileArgs):
    """profileLines: the file, and whether to show its latest line profile only (no ncu run; null: run one)."""

    show: bool | None = None


@attrs.frozen
class PatchArgs:
    """applyPatch: the id of a verified patch, the file and the version it was verified against."""

    id: str = attrs.field(validator=_some)
    uri: str = attrs.field(validator=_uri)
    version: int | None = attrs.field(default=None, validator=_count)


@attrs.frozen
class PlaceArgs:
    """layoutPicture: a place in a file (0-based, as LSP counts) and optionally which instantiation."""

    uri: str = attrs.field(validator=_uri)
    line: int = attrs.field(default=0, validator=_count)
    character: int = attrs.field(default=0, validator=_count)
    instantiation: str | None = None


DECODED = (FileArgs, PatchArgs, PlaceArgs)  # what the protocol hands a handler (AgentArgs, LinesArgs are FileArgs)
SHAPES: dict[str, type] = {
    Command.CHECK.value: FileArgs, Command.TEST.value: FileArgs, Command.PROFILE.value: FileArgs,
    Command.OPTIMIZE.value: FileArgs, Command.TUNE.value: FileArgs, Command.RESTORE_BEST.value: FileArgs,
    Command.GENERATE.value: FileArgs, Command.DIAGNOSE.value: AgentArgs, Command.FIX.value: AgentArgs,
    Command.APPLY_PATCH.value: PatchArgs, Command.LAYOUT_PICTURE.value: PlaceArgs,
    Command.PROFILE_LINES.value: LinesArgs, Command.SANITIZE.value: FileArgs,
    Command.VERSIONS.value: FileArgs, Command.SHOW_VERSION.value: PatchArgs, Command.RESTORE_VERSION.value: PatchArgs,
    Command.PROFILE_PROGRAM.value: FileArgs, Command.SANITIZE_PROGRAM.value: FileArgs,  # a file or folder's URI
}


def _strict_converter() -> cattrs.Converter:
    """JSON as it is: 5 is not the string "5", "1" is not the integer 1, true is not 1."""
    c = cattrs.Converter(forbid_extra_keys=False)

    def exact(kind):
        def structure(value, _):
            if type(value) is not kind:
                raise TypeError(f"must be {_KIND_NAMES[kind]}, got {_json_kind(value)}")
            return value
        return structure

    for kind in (str, int, bool):
        c.register_structure_hook(kind, exact(kind))
    c.register_structure_hook(dict, lambda v, _: v if isinstance(v, dict) else _wrong("a JSON object", v))
    c.register_structure_hook(Severity, _choice)  # a str Enum: its own hook, else str's would take it
    return c


def _choice(value, kind):
    try:
        return kind(value)
    except ValueError:
        raise ValueError(f"must be one of {', '.join(repr(m.value) for m in kind)}, got {_json_kind(value)}") from None


_KIND_NAMES = {str: "a string", int: "an integer", bool: "true or false"}
_DECODE = _strict_converter()


def _wrong(expected: str, value):
    raise TypeError(f"must be {expected}, got {_json_kind(value)}")


def _json_kind(value) -> str:
    if value is None:
        return "null"
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)
    return f"{kind} ({str(value)[:40]})" if isinstance(value, (int, float, str)) and not isinstance(value, bool) else kind


def decode(command: str, arguments, shape: type | None = None):
    """The typed arguments of `command`, or InvalidArguments naming the one that is wrong."""
    shape = shape or SHAPES.get(command, FileArgs)
    raw = _one_object(command, arguments)
    if isinstance(raw.get("uri"), str) and raw["uri"] and ":" not in raw["uri"].split("/", 1)[0]:
        raw["uri"] = uri_of(resolved(raw["uri"]))  # a path: the URI of that file
    try:
        return _DECODE.structure(raw, shape)
    except cattrs.BaseValidationError as e:
        raise InvalidArguments(_named(command, _first_problem(e))) from None


def _one_object(command: str, arguments) -> dict:
    """[{"uri", ...}], [uri], [{"textDocument": {"uri"}}] or [uri-or-object, diagnostic] as one dict."""
    if arguments is None:
        arguments = []
    if not isinstance(arguments, (list, tuple)):
        raise InvalidArguments(_named(command, f"arguments: must be an array, got {_json_kind(arguments)}"))
    if not arguments:
        raise InvalidArguments(_named(command, 'arguments: missing; expected [{"uri": "file:///…", …}]'))
    first = arguments[0]
    if isinstance(first, str):
        raw = {"uri": first}
    elif isinstance(first, dict):
        raw = dict(first)
        document = raw.pop("textDocument", None)
        if "uri" not in raw and isinstance(document, dict) and "uri" in document:
            raw["uri"] = document["uri"]
    else:
        raise InvalidArguments(_named(command, 'arguments[0] (uri): must be a file URI or an object with "uri", '
                                              f"got {_json_kind(first)}"))
    if len(arguments) > 1 and isinstance(arguments[1], dict) and "diagnostic" not in raw:
        raw["diagnostic"] = arguments[1]  # the older [uri, diagnostic data] form
    if "uri" not in raw:
        raise InvalidArguments(_named(command, "arguments[0].uri: missing (the file the command is about)"))
    return raw


def _named(command: str, problem: str) -> str:
    return f"{command}: {problem}" if command else problem


def _first_problem(error: cattrs.BaseValidationError, root: str = "arguments[0]") -> str:
    """'arguments[0].line: must be an integer, got a string (a)' from cattrs' nested exception group."""
    path, leaf = first_leaf(error, root)
    message = str(leaf) if isinstance(leaf, (TypeError, ValueError)) else f"{type(leaf).__name__}: {leaf}"
    if isinstance(leaf, KeyError):
        message = "missing"
    return f"{path}: {message}"


_VALIDATOR = re.compile(r"^[A-Z]\w*\.(\w+) ")  # lsprotocol's 'Position.line should be in range …'


def first_leaf(error: BaseException, path: str) -> tuple[str, BaseException]:
    """The innermost exception of a cattrs error and the path of fields down to it."""
    if not isinstance(error, cattrs.BaseValidationError):
        named = getattr(error, "field", None) or (m.group(1) if (m := _VALIDATOR.match(str(error))) else None)
        return (f"{path}.{named}" if named else path), error
    with_notes, without = error.group_exceptions()
    for sub, note in with_notes:
        name = getattr(note, "name", None)
        index = getattr(note, "index", None)
        step = f".{name}" if name is not None else f"[{index}]" if index is not None else ""
        return first_leaf(sub, path + step)
    for sub in without:  # a validator's ValueError: it names its field itself
        return first_leaf(sub, path)
    return path, error


def converter() -> cattrs.Converter:
    """pygls' converter, also passing the decoded shapes through (pygls structures a command's arguments by the
    handler's annotations: `async def handler(ls, a: FileArgs)`)."""
    c = default_converter()
    for shape in {*SHAPES.values(), FileArgs}:
        c.register_structure_hook(shape, lambda value, kind: value if isinstance(value, DECODED) else decode("", [value], kind))
    return c
