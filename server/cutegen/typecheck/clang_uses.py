"""The header templates a file instantiates, spelled so that a precompiled header can instantiate them first.

A parse of the Level-1 fp32 GEMM spends 17 of its 18 s instantiating `gemm_dlpack::matmul_2d<false, false>` and
the CuTe kernel beneath it, all of it header code: the same on every edit of the file's few lines. After a
clean parse, the parser lists each function template specialization the file's own code names whose template
lives in a header (`uses`); checker.py builds a second, "warm" PCH of the header set followed by

    namespace __cutegen_warm { inline void use() { (void)static_cast<F0*>(&ns::f<A, B>); ... } }

(taking the address odr-uses the specialization, so with -fpch-instantiate-templates its body, and everything
it instantiates, is instantiated inside the PCH), and later parses read the instantiations from it.

Spelled from the specialization itself: its namespace path, each template argument (a type's canonical
spelling; a bool as true/false; another integer or an enum as a cast of its value) and its function type (the
cast picks one overload). Anything that cannot be spelled outside the file -- a type declared in it, a lambda,
a pack, a class member, a template template argument -- is left out: that specialization is just not warm.
"""

from __future__ import annotations

MAX_USES = 64  # spelled uses per file: past that a body is mostly its own code, not one header entry point
_UNSPELLABLE = ("(lambda", "(anonymous", "(unnamed", "<dependent", "__cutegen_warm")


def uses(ci, tu, main_file: str) -> list[str]:
    """The file's uses of header function templates, each as `(void)static_cast<...>(&...)`, in first-seen
    order. `tu` must come from an Index created with excludeDecls=True (its children are the file's own decls)."""
    found: dict[str, None] = {}
    for top in tu.cursor.get_children():
        if not _in(top, main_file):
            continue
        for c in top.walk_preorder():
            if c.kind not in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.CALL_EXPR):
                continue
            ref = c.referenced
            spelled = _spell(ci, ref, main_file) if ref is not None else None
            if spelled is not None:
                found.setdefault(spelled, None)
                if len(found) >= MAX_USES:
                    return list(found)
    return list(found)


def _in(cursor, main_file: str) -> bool:
    f = cursor.location.file
    return f is not None and f.name == main_file


def _spell(ci, ref, main_file: str) -> str | None:
    if ref.kind != ci.CursorKind.FUNCTION_DECL or _in(ref, main_file):
        return None
    n = ref.get_num_template_arguments()
    if n <= 0:
        return None
    scope = _scope(ci, ref)
    template = ref.specialized_template
    args = _arguments(ci, ref, template, n, main_file)
    if scope is None or args is None:
        return None
    function_type = ref.type.get_canonical().spelling
    text = f"(void)static_cast<__cutegen_fn_t<{function_type}>>(&{scope}{ref.spelling}<{', '.join(args)}>);"
    return None if any(u in text for u in _UNSPELLABLE) else text


def _scope(ci, ref) -> str | None:
    """`::ns::inner::` for a function in namespaces (an anonymous one cannot be named; a class member is not
    handled)."""
    parts = []
    parent = ref.semantic_parent
    while parent is not None and parent.kind != ci.CursorKind.TRANSLATION_UNIT:
        if parent.kind != ci.CursorKind.NAMESPACE or not parent.spelling:
            return None
        parts.append(parent.spelling)
        parent = parent.semantic_parent
    return "::" + "".join(f"{p}::" for p in reversed(parts))


def _arguments(ci, ref, template, n: int, main_file: str) -> list[str] | None:
    params = [c for c in template.get_children() if c.kind in (
        ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
        ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER)] if template is not None else []
    if len(params) < n:
        return None  # a pack, or a template the bindings cannot see into
    out = []
    for i in range(n):
        kind = ref.get_template_argument_kind(i)
        if kind == ci.TemplateArgumentKind.TYPE:
            t = ref.get_template_argument_type(i).get_canonical()
            if _declared_in(ci, t, main_file):
                return None
            out.append(t.spelling)
        elif kind == ci.TemplateArgumentKind.INTEGRAL and params[i].kind == ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER:
            value, ptype = ref.get_template_argument_value(i), params[i].type.get_canonical()
            if ptype.kind == ci.TypeKind.BOOL:
                out.append("true" if value else "false")
            elif ptype.kind == ci.TypeKind.INT:
                out.append(str(value))
            elif ptype.kind == ci.TypeKind.ENUM or ptype.kind in _INTEGERS(ci):
                out.append(f"static_cast<{ptype.spelling}>({value})")
            else:
                return None
        else:
            return None
    return out


def _declared_in(ci, t, main_file: str, depth: int = 0) -> bool:
    """Whether type `t`, or a type it is built from (pointee, template argument), is declared in the file:
    the warm header, which holds only the header set, cannot name it."""
    if depth > 8:
        return True  # too deep to check: treat as unspellable
    if t.kind in (ci.TypeKind.POINTER, ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        return _declared_in(ci, t.get_pointee(), main_file, depth + 1)
    decl = t.get_declaration()
    if decl is not None and decl.kind != ci.CursorKind.NO_DECL_FOUND and _in(decl, main_file):
        return True
    return any(_declared_in(ci, t.get_template_argument_type(j), main_file, depth + 1)
               for j in range(max(t.get_num_template_arguments(), 0)))


def _INTEGERS(ci) -> tuple:
    k = ci.TypeKind
    return (k.CHAR_U, k.UCHAR, k.USHORT, k.UINT, k.ULONG, k.ULONGLONG, k.CHAR_S, k.SCHAR, k.SHORT, k.INT, k.LONG,
            k.LONGLONG)


def warm_header(header: str, lines: list[str]) -> str:
    """The header set, then one never-called function whose body odr-uses each specialization."""
    body = "\n".join(f"  {line}" for line in lines)
    return (f"{header}namespace __cutegen_warm {{\ntemplate <class F> using __cutegen_fn_t = F*;\n"
            f"inline void use() {{\n{body}\n}}\n}}  // namespace __cutegen_warm\n")
