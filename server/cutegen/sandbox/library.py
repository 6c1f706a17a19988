"""The gate's second look, at the built host library of a candidate, before it is loaded anywhere: what the
binary does, however the source spelled it.

- Imported symbols (`nm -D --undefined-only`) must be on an allow-list: the CUDA runtime and driver entry points
  a kernel library needs, libc memory, string, math and formatted output, the C++ ABI and libstdc++ basics.
  No process, file, socket, dynamic-loading or environment functions (`system`, `fopen`, `socket`, `dlopen`,
  `getenv`, `std::filesystem`, file streams, ...), unless the user's own version imports them too.
- Static initializers: the `.init_array` entries may only be the compiler's own (CUDA's fatbinary registration,
  the translation unit's C++ initialization, the C runtime's frame_dummy), not a `constructor` function.
- No raw system-call instructions (`syscall`, `sysenter`, `int $0x80`) in its executable code.

binutils (nm, readelf, objdump, c++filt) come with the host compiler nvcc needs; without them nothing built is
run (the caller says so).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable

from cutegen.sandbox.gate import Refusal, Use

TOOLS = ("nm", "readelf", "objdump", "c++filt")
_C_ALLOWED = frozenset("""
memcpy memmove memset memcmp memchr strlen strnlen strcmp strncmp strcpy strncpy strcat strncat strchr strrchr strstr
strtol strtoll strtoul strtoull strtod strtof atoi atol atof malloc calloc realloc free aligned_alloc posix_memalign
memalign abort exit qsort bsearch rand srand time clock clock_gettime nanosleep usleep __assert_fail __stack_chk_fail
__errno_location __tls_get_addr __cxa_thread_atexit_impl __memcpy_chk __memset_chk __memmove_chk __strcpy_chk
printf fprintf vprintf vfprintf puts putchar fputs fputc fwrite fflush snprintf sprintf vsnprintf vsprintf sscanf
__printf_chk __fprintf_chk __sprintf_chk __snprintf_chk __vsnprintf_chk __vfprintf_chk __vprintf_chk __isoc99_sscanf
__isoc23_sscanf __isoc23_strtol __isoc23_strtoll __isoc23_strtoul __isoc23_strtoull stdout stderr
pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock pthread_once pthread_key_create pthread_key_delete
pthread_getspecific pthread_setspecific pthread_self
__gxx_personality_v0 _Unwind_Resume __gmon_start__ _ITM_registerTMCloneTable _ITM_deregisterTMCloneTable
""".split())
_C_PREFIXES = ("cuda", "__cuda", "__cxa_", "_Unwind_", "__nv_")
_DRIVER = re.compile(r"cu[A-Z]\w*$")  # the driver API: cuTensorMapEncodeTiled, cuLaunchKernelEx, ...
_MATH = re.compile(r"(?:__)?(?:a?sinh?|a?cosh?|a?tanh?|atan2|sincos|exp|exp2|expm1|log|log2|log10|log1p|pow|sqrt|cbrt|"
                   r"hypot|fabs|floor|ceil|round|lround|llround|trunc|fmod|remainder|remquo|fmin|fmax|fdim|fma|erfc?|"
                   r"tgamma|lgamma|ldexp|frexp|modf|nearbyint|rint|lrint|llrint|copysign|nan|nextafter|ilogb|logb|"
                   r"scalbl?n|significand)[fl]?(?:_finite)?$")
_CXX_ALLOWED = re.compile(r"(?:std::|operator new|operator delete|typeinfo for |typeinfo name for |vtable for |"
                          r"VTT for |__cxxabiv1::|__gnu_cxx::|guard variable for |construction vtable for )")
_CXX_DENIED = re.compile(r"filesystem|fstream|filebuf|__basic_file|std::thread|std::jthread|std::system|"
                         r"popen|std::getenv")
_OWN_INIT = re.compile(r"(?:frame_dummy|_GLOBAL__sub_I_\S+|\S*__sti____cudaRegisterAll\S*)$")
_SYSCALL_INSN = re.compile(r"\t(syscall|sysenter|int\s+\$0x80)\b")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def review(library: str, *, allowed: frozenset[str] = frozenset(),
           find_line: Callable[[str], int] = lambda name: 0) -> Refusal | None:
    """None when the library keeps to the allow-lists; else the refusal, naming each symbol (and, where
    `find_line(name)` finds it in the candidate, its line). `allowed`: symbols the user's own version imports."""
    found: list[Use] = []
    for symbol, readable in imports(library):
        if symbol not in allowed and not _allowed(symbol, readable):
            found.append(Use("imported symbol", readable, find_line(_short(readable))))
    for name in init_functions(library):
        if not _OWN_INIT.match(name):
            found.append(Use("static initializer", name, find_line(name)))
    for function in syscall_sites(library):
        found.append(Use("system call instruction", f"in {function}", find_line(function)))
    return Refusal(tuple(found), when="after building") if found else None


def imports(library: str) -> list[tuple[str, str]]:
    """(symbol without version, demangled) of each undefined dynamic symbol, weak ones included."""
    out = _run(["nm", "-D", "--undefined-only", library])
    names = sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()})
    mangled = [n for n in names if n.startswith("_Z")]
    readable = dict(zip(mangled, _run(["c++filt"], "\n".join(mangled)).splitlines())) if mangled else {}
    return [(n, readable.get(n, n)) for n in names]


def init_functions(library: str) -> list[str]:
    """The functions the dynamic loader runs when the library is loaded: its .init_array and .preinit_array
    entries, by symbol name (relocations give their addresses)."""
    sections = {}
    for m in re.finditer(r"\]\s+(\.(?:pre)?init_array)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)",
                         _run(["readelf", "-SW", library])):
        start = int(m.group(2), 16)
        sections[m.group(1)] = (start, start + int(m.group(3), 16))
    if not sections:
        return []
    symbols = _function_addresses(library)
    out = []
    for line in _run(["readelf", "-rW", library]).splitlines():
        fields = line.split()
        if len(fields) < 4 or not re.fullmatch(r"[0-9a-f]{8,16}", fields[0]):
            continue
        offset = int(fields[0], 16)
        if not any(a <= offset < b for a, b in sections.values()):
            continue
        if fields[2] == "R_X86_64_RELATIVE" or fields[2].endswith("_RELATIVE"):
            address = int(fields[-1], 16)
            out.append(symbols.get(address, f"an unnamed function at {address:#x}"))
        else:
            out.append(fields[4] if len(fields) > 4 else fields[2])  # a pointer to another library's function
    return out


def syscall_sites(library: str) -> list[str]:
    """Functions of the library's executable code that contain a raw system-call instruction."""
    out, function = [], "?"
    for line in _run(["objdump", "-d", "--no-show-raw-insn", library]).splitlines():
        m = re.match(r"[0-9a-f]+ <(.+)>:$", line)
        if m:
            function = m.group(1)
        elif _SYSCALL_INSN.search(line) and function not in out:
            out.append(function)
    return out


def _allowed(symbol: str, readable: str) -> bool:
    if symbol.startswith("_Z"):
        return bool(_CXX_ALLOWED.match(readable)) and not _CXX_DENIED.search(readable)
    return (symbol in _C_ALLOWED or symbol.startswith(_C_PREFIXES) or bool(_DRIVER.match(symbol))
            or bool(_MATH.match(symbol)))


def _short(readable: str) -> str:
    """The name the source would spell: `std::filesystem::remove(...)` → `filesystem`, `fopen64` → `fopen`."""
    if "filesystem" in readable:
        return "filesystem"
    for word in ("ifstream", "ofstream", "fstream", "filebuf", "thread"):
        if word in readable:
            return word
    base = readable.split("(")[0].split("::")[-1]
    return re.sub(r"^__(?:isoc\d+_)?|64$|_chk$", "", base)


def _function_addresses(library: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for line in _run(["nm", "--defined-only", library]).splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            out.setdefault(int(fields[0], 16), fields[2])
    return out


def _run(argv: list[str], stdin: str | None = None) -> str:
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60).stdout
