"""Prints C++ type names from compiler output in CuTe's own notation.

`cute::Layout<cute::tuple<cute::C<32>, cute::C<8>>, cute::tuple<cute::C<1>, cute::C<32>>>` becomes
`(_32,_8):(_1,_32)`, the form CuTe's print() uses and the form CuTe users think in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class TypeNode:
    name: str
    args: list["TypeNode"] = field(default_factory=list)
    suffix: str = ""  # " *", " &", "const" qualifiers trailing the template


def parse_type(text: str) -> TypeNode:
    node, rest = _parse(text.strip(), 0)
    if rest < len(text.strip()):
        node.suffix += text.strip()[rest:]
    return node


def _parse(s: str, i: int) -> tuple[TypeNode, int]:
    start = i
    while i < len(s) and s[i] not in "<>,":
        i += 1
    node = TypeNode(s[start:i].strip())
    if i < len(s) and s[i] == "<":
        i += 1
        while True:
            child, i = _parse(s, i)
            node.args.append(child)
            if i >= len(s) or s[i] == ">":
                i += 1
                break
            i += 1  # ","
        # qualifiers after the closing '>' (e.g. " *", " &")
        start = i
        while i < len(s) and s[i] not in "<>,":
            i += 1
        node.suffix = s[start:i].strip()
    return node, i


_INT_CONST = re.compile(r"^(?:cute::)?(?:C|Int|constant)$")
_SHORT_CONST = re.compile(r"^(?:cute::)?_(\d+)$")


def to_cute(node: TypeNode) -> str:
    name = node.name.removeprefix("const ").strip()
    bare = name.removeprefix("cute::")
    if _INT_CONST.match(name) and node.args:
        return "_" + node.args[-1].name.removesuffix("L").removesuffix("UL").removesuffix("U")
    m = _SHORT_CONST.match(name)
    if m:
        return "_" + m.group(1)
    if bare in ("tuple", "Shape", "Stride", "Step", "Coord", "Tile") and not node.suffix:
        return "(" + ",".join(to_cute(a) for a in node.args) + ")"
    if bare == "Layout" and len(node.args) == 2:
        return f"{to_cute(node.args[0])}:{to_cute(node.args[1])}"
    if bare in ("ComposedLayout",) and len(node.args) == 3:
        return f"{to_cute(node.args[0])} o {to_cute(node.args[1])} o {to_cute(node.args[2])}"
    if bare == "Swizzle" and len(node.args) == 3:
        return "Sw<" + ",".join(a.name for a in node.args) + ">"
    if bare == "Tensor" and len(node.args) == 2:
        return f"Tensor<{engine(node.args[0])}, {to_cute(node.args[1])}>"
    if bare == "Underscore":
        return "_"
    if name in ("int", "long", "int64_t", "unsigned int", "uint32_t", "int32_t", "long long"):
        return name
    if not node.args:
        return name.removeprefix("cute::")
    return f"{bare}<{', '.join(to_cute(a) for a in node.args)}>{node.suffix}"


def engine(node: TypeNode) -> str:
    """ViewEngine<gmem_ptr<const float *>> → 'gmem const float*'; ArrayEngine<float, 16> → 'rmem float[16]'."""
    bare = node.name.removeprefix("cute::")
    if bare == "ViewEngine" and node.args:
        ptr = node.args[0]
        pbare = ptr.name.removeprefix("cute::")
        if pbare in ("gmem_ptr", "smem_ptr") and ptr.args:
            return f"{pbare[:4]} {_ptr_text(ptr.args[0])}"
        return _ptr_text(ptr)
    if bare == "ArrayEngine" and len(node.args) == 2:
        return f"rmem {node.args[0].name}[{node.args[1].name}]"
    return to_cute(node)


def _ptr_text(node: TypeNode) -> str:
    if node.args:
        return to_cute(node)
    return node.name.replace(" *", "*")


_CUTE_TYPE = re.compile(r"cute::(?:Layout|Tensor|tuple|ComposedLayout)<")


def cute_notation(text: str) -> str:
    """Rewrite every CuTe Layout/Tensor/tuple type inside a message into CuTe notation."""
    out, i = [], 0
    while True:
        m = _CUTE_TYPE.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        end = _matching_close(text, m.end() - 1)
        if end < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        out.append(to_cute(parse_type(text[m.start() : end + 1])))
        i = end + 1


def _matching_close(text: str, open_index: int) -> int:
    depth = 0
    for j in range(open_index, len(text)):
        if text[j] == "<":
            depth += 1
        elif text[j] == ">":
            depth -= 1
            if depth == 0:
                return j
    return -1


def template_bindings(what: str) -> dict[str, str]:
    """'f(...) [with A=int, B=cute::tuple<...>]' → {'A': 'int', 'B': 'cute::tuple<...>'}."""
    m = re.search(r"\[with (.*)\]$", what)
    if not m:
        return {}
    body, out, depth, start = m.group(1), {}, 0, 0
    parts = []
    for j, c in enumerate(body):
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:j])
            start = j + 1
    parts.append(body[start:])
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            out[k.strip()] = v.strip()
    return out


_NOISE = re.compile(r"\b(?:cute|cutlass)::|(?<=\d)UL?\b|(?<=\d)L\b")
_CONST_CUTE = re.compile(r"\bconst (?=(?:cute|cutlass)::)")


def compact_type(text: str) -> str:
    """CuTe/CUTLASS namespaces (and the const on such objects) and integer suffixes dropped: 'const
    cute::Tensor<rmem cutlass::half_t[64UL], …>' → 'Tensor<rmem half_t[64], …>'; `const float *` stays (it can
    be what mismatches). For messages only; the explanation keeps nvcc's spelling."""
    return _NOISE.sub("", _CONST_CUTE.sub("", text)).replace(" &", "&").strip()


def drop_strides(text: str) -> str:
    """'Tensor<rmem float[32], ((_2,_2),_2,_4):((_1,_2),_4,_8)>' → 'Tensor<rmem float[32], ((_2,_2),_2,_4)>': a
    layout's shape only (its rank and extents are what mismatches; the strides are the long part)."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == ":" and text[i - 1 : i] != ":" and text[i + 1 : i + 2] != ":":
            i = _end_of_term(text, i + 1)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _end_of_term(text: str, i: int) -> int:
    depth = 0
    while i < len(text):
        c = text[i]
        if c in "(<[":
            depth += 1
        elif c in ")>]":
            if depth == 0:
                return i
            depth -= 1
        elif c == "," and depth == 0:
            return i
        elif c == " " and depth == 0:
            return i
        i += 1
    return i
