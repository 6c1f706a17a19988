"""Renders the compiler's spelling of a CuTe type in CuTe notation, with the object's kind.

EDG's `aka` spelling strips typedefs but keeps alias templates that CuTe's return types are built from
(`std::conditional_t<true, A, B>`, `cute::tuple_element_t<0UL, T>`, `std::tuple_element<1UL, T>::type`);
`normalize` evaluates those, then `cute_types.to_cute` prints the result the way `cute::print` does.
"""

from __future__ import annotations

import re

from cutegen.diagnostics.cute_types import TypeNode, parse_type, to_cute

_CONDITIONAL = {"std::conditional_t", "std::conditional", "cute::conditional_t", "conditional_t"}
_TUPLE_ELEMENT = {"std::tuple_element_t", "std::tuple_element", "cute::tuple_element_t", "cute::tuple_element"}
_IDENTITY = {
    "std::remove_reference_t", "std::remove_cv_t", "std::remove_const_t", "std::decay_t", "cute::remove_cvref_t",
    "std::remove_cvref_t", "cute::remove_cv_t", "std::type_identity_t", "cute::decay_t",
}
_CONSTANT = {"std::integral_constant", "cute::integral_constant", "cute::constant"}
# EDG's spellings of the dynamic integer types, as a CuTe user writes them
_INTEGERS = {"signed long": "int64_t", "long": "int64_t", "long long": "int64_t", "signed long long": "int64_t",
             "unsigned long": "uint64_t", "signed int": "int"}
_REF_OR_CV = re.compile(r"^(?:const\s+|volatile\s+)+|(?:\s*(?:&&|&|const|volatile))+$")


def normalize(node: TypeNode) -> TypeNode:
    name = _REF_OR_CV.sub("", node.name).strip()
    suffix = _REF_OR_CV.sub("", node.suffix.strip()).strip()
    args = [normalize(a) for a in node.args]
    if name in _CONDITIONAL and len(args) == 3:
        return args[1] if args[0].name in ("true", "1") else args[2]
    if name in _TUPLE_ELEMENT and len(args) == 2 and (name.endswith("_t") or suffix == "::type"):
        index = int(re.sub(r"[uUlL]+$", "", args[0].name) or 0)
        if index < len(args[1].args):
            return args[1].args[index]
    if name in _IDENTITY and len(args) == 1:
        return args[0]
    if name in _CONSTANT and len(args) == 2:
        return TypeNode("cute::C", [args[1]])
    if name == "cute::ScaledBasis" and len(args) == 2:
        return TypeNode(f"{to_cute(args[0])}@{args[1].name}")  # as cute::print writes it: _8@1
    if not args and name in _INTEGERS:
        return TypeNode(_INTEGERS[name], [], suffix)
    return TypeNode(name, args, suffix)


def _bare(node: TypeNode) -> str:
    return node.name.removeprefix("cute::")


def kind_of(node: TypeNode) -> str | None:
    """'Layout', 'ComposedLayout', 'Tensor', 'TiledCopy', ... for a CuTe type; None for any other type."""
    bare = _bare(node)
    if not node.name.startswith("cute::"):
        return None
    if bare in ("tuple", "Shape", "Stride", "Tile", "Coord", "Step"):
        return "Tuple"
    if bare in ("C", "Int", "constant"):
        return "Int"
    return bare


def element_type(node: TypeNode) -> str:
    """`float *` → 'float', `cute::bfloat16_t` → 'bfloat16_t', `const cute::half_t *` → 'const half_t'."""
    text = node.name if not node.args else to_cute(node)
    text = text.replace("cute::", "").replace("cutlass::", "")
    return re.sub(r"\s*\*$", "", text).strip()


def engine_text(engine: TypeNode) -> str:
    """'gmem float', 'smem bfloat16_t', 'rmem float' (an owning register array or a view of one)."""
    bare = _bare(engine)
    if bare == "ArrayEngine" and engine.args:
        return f"rmem {element_type(engine.args[0])}"
    if bare == "ViewEngine" and engine.args:
        return _iterator_text(engine.args[0])
    return to_cute(engine)


def _iterator_text(ptr: TypeNode) -> str:
    bare = _bare(ptr)
    if bare in ("gmem_ptr", "smem_ptr", "rmem_ptr") and ptr.args:
        inner = ptr.args[0]
        if _bare(inner) in ("gmem_ptr", "smem_ptr", "rmem_ptr", "swizzle_ptr"):
            return _iterator_text(inner)
        return f"{bare[:4]} {element_type(inner)}"
    if bare == "swizzle_ptr" and len(ptr.args) == 2:
        return f"{_iterator_text(ptr.args[1])} {to_cute(ptr.args[0])}"
    if bare in ("ArithmeticTupleIterator", "counting_iterator"):
        return "coord"
    if not ptr.args and ptr.name.endswith("*"):
        return f"rmem {element_type(ptr)}"
    return to_cute(ptr)


def layout_text(node: TypeNode) -> str:
    """The object's value in CuTe notation (for a Tensor: memory space, element type, layout)."""
    kind = kind_of(node)
    if kind == "Tensor" and len(node.args) == 2:
        return f"{engine_text(node.args[0])} {to_cute(node.args[1])}"
    if kind == "TiledCopy" and len(node.args) == 3:
        atom, tv, tiler = node.args
        return f"{_atom_text(atom)} TV={to_cute(tv)} Tiler={to_cute(tiler)}"
    if kind == "TiledMMA" and len(node.args) == 3:
        atom, atoms, perm = node.args
        return f"{_atom_text(atom)} Atoms={to_cute(atoms)} Permutation={to_cute(perm)}"
    if kind in ("ThrCopy", "ThrMMA") and node.args:
        return f"slice of {layout_text(node.args[0])}"
    return to_cute(node)


def _atom_text(atom: TypeNode) -> str:
    """Copy_Atom<Copy_Traits<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>>, bfloat16_t>
    → 'SM80_CP_ASYNC_CACHEGLOBAL<uint128_t> bfloat16_t'."""
    parts = []
    for arg in atom.args:
        if _bare(arg) in ("Copy_Traits", "MMA_Traits") and arg.args:
            arg = arg.args[0]
        parts.append(element_type(arg) if not arg.args else to_cute(arg).replace("cute::", ""))
    return " ".join(parts) or to_cute(atom)


def render(type_text: str) -> tuple[str | None, str]:
    """(kind, text in CuTe notation) of a type spelled by the compiler; kind None for a non-CuTe type."""
    node = normalize(parse_type(type_text))
    return kind_of(node), layout_text(node)
