"""NVRTC: a graph's `.cu` source to a cubin for one arch, through cuda.core,
cached on disk (`molten.runtime.cache`).

The source is the same translation unit `molten compile` writes; under
`__CUDACC_RTC__` it holds only the kernels. The cache key is cuda.core's
`make_program_cache_key` (source, options, NVRTC version) with a digest of
the CUDA headers the kernels include and Molten's version mixed in. A
compile error is reported with the offending line of the source, the kernel
it belongs to, the ops that kernel fuses and the graph value the line
computes.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from molten.errors import CompileError, RuntimeUnavailableError
from molten.runtime.cache import ProgramCache, cache_enabled

HEADERS = ("cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp")
"""The CUDA headers a generated kernel includes (their content is part of
the cache key)."""


@functools.cache
def cuda_include_dir() -> str:
    """The CUDA toolkit's include directory (for cuda_fp16.h, cuda_bf16.h)."""
    from cuda.pathfinder import find_nvidia_header_directory

    directory = find_nvidia_header_directory("cudart")
    if directory is None or not (Path(directory) / "cuda_fp16.h").exists():
        raise RuntimeUnavailableError(
            "NVRTC needs the CUDA headers (cuda_fp16.h, cuda_bf16.h); none were "
            "found. Install the CUDA toolkit or the nvidia-cuda-runtime wheel, or "
            "set CUDA_HOME"
        )
    return str(directory)


@functools.cache
def _headers_digest() -> bytes:
    digest = hashlib.sha256(version("molten").encode())
    for name in HEADERS:
        path = Path(cuda_include_dir()) / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.digest()


@dataclass(frozen=True)
class SourceMap:
    """What is known about a source beyond its text, to explain an error:
    the graph's name, each kernel's fused ops, the graph value each C++
    variable was derived from, and the op that computes each value."""

    graph: str = "graph"
    fused_ops: dict[str, tuple[str, ...]] = field(default_factory=dict)
    origins: dict[str, dict[str, str]] = field(default_factory=dict)
    value_ops: dict[str, str] = field(default_factory=dict)


def compile_cubin(
    source: str,
    arch: str,
    source_map: SourceMap | None = None,
    *,
    refresh: bool = False,
) -> bytes:
    """The cubin of `source` for `arch` ("sm_90"), from the cache when there;
    `refresh=True` compiles anew and overwrites the entry (for a cached
    cubin the driver refused to load)."""
    try:
        from cuda.core import Program, ProgramOptions
        from cuda.core.utils import make_program_cache_key
    except ImportError as error:
        raise RuntimeUnavailableError.no_cuda_python(error) from error
    source_map = source_map or SourceMap()
    options = ProgramOptions(
        arch=arch,
        std="c++17",
        include_path=[cuda_include_dir()],
        name=f"{source_map.graph}.cu",
    )
    cache = ProgramCache() if cache_enabled() else None
    key = b""
    if cache is not None:
        key = make_program_cache_key(
            code=source,
            code_type="c++",
            options=options,
            target_type="cubin",
            extra_digest=_headers_digest(),
        )
        cubin = None if refresh else cache.get(key)
        if cubin is not None:
            return cubin
    try:
        cubin = bytes(Program(source, "c++", options=options).compile("cubin").code)
    except Exception as error:
        if type(error).__name__ != "NVRTCError":
            raise
        raise CompileError(explain(str(error), source, arch, source_map)) from None
    if cache is not None:
        cache.put(key, cubin)
    return cubin


_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<kind>[a-z ]+): (?P<message>.*)$"
)
_KERNEL_LINE = re.compile(
    r'^extern "C" __global__ void __launch_bounds__\(\d+\) (?P<name>\w+)\('
)
_DEFINITION = re.compile(r"^\s*(?:const )?[\w:]+\*? (?P<name>\w+) =")


def explain(log: str, source: str, arch: str, source_map: SourceMap) -> str:
    """NVRTC's log, each error pointed at its line, kernel and graph value."""
    lines = source.splitlines()
    report = [f"NVRTC could not compile graph '{source_map.graph}' for {arch}:"]
    found = False
    for entry in log.replace("\x00", "").splitlines():
        match = _DIAGNOSTIC.match(entry.strip())
        if match is None or "error" not in match["kind"]:
            continue
        found = True
        number = int(match["line"])
        report.append(f"  line {number}: {match['kind']}: {match['message']}")
        if 1 <= number <= len(lines):
            report.append(f"    {lines[number - 1].strip()}")
            report.extend(_origin(lines, number, source_map))
    if not found:
        report.append(log.replace("\x00", "").strip())
    report.append(
        "This is a bug in Molten's code generation; please report it with the "
        "graph (CompiledGraph.source holds the full source)."
    )
    return "\n".join(report)


def _origin(lines: list[str], number: int, source_map: SourceMap) -> list[str]:
    kernel = next(
        (
            m["name"]
            for line in reversed(lines[:number])
            if (m := _KERNEL_LINE.search(line))
        ),
        None,
    )
    if kernel is None:
        return []
    fused = source_map.fused_ops.get(kernel)
    text = f"    in kernel {kernel}" + (
        f", which fuses {', '.join(fused)}" if fused else ""
    )
    definition = _DEFINITION.match(lines[number - 1])
    value = definition and source_map.origins.get(kernel, {}).get(definition["name"])
    if value:
        text += f"; the line computes the graph value '{value}'"
        op = source_map.value_ops.get(value)
        if op:
            text += f" ({op})"
    return [text]
