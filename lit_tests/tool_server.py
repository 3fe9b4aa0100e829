"""A fork server for the tools lit's RUN lines start (molten-opt, filecheck).

Each RUN line starts two or three Python processes, and each paid for its
imports (xDSL's dialects, Molten's, numpy: about 0.6 CPU-seconds for
molten-opt, 0.2 for filecheck) before doing its work: 128 molten-opt and
131 filecheck processes, over half of lit's time. This server imports the
tools once; every call is a child forked from it that runs the tool's own
console script (the file pip installed) as `__main__`, exactly as a new
process would run it, on the caller's stdin, stdout and stderr (passed over
the socket), in its working directory, with its environment and arguments,
and exits with the script's status.

The caller is a small client (`client_source`, written to a folder put first
on lit's PATH under each tool's name), which hands the server its three
standard streams and waits for the status. `MOLTEN_LIT_FORK=0` runs the
installed tools as before (lit.cfg.py), so does a server that fails to start.

Run by lit.cfg.py: `python tool_server.py SOCKET NAME=SCRIPT...`.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import signal
import socket
import struct
import sys
import traceback

IDLE_SECONDS = 900
"""The server ends after this long without a call, or once lit has ended."""


def client_source(python: str, sock: str, tool: str) -> str:
    """The client installed as `tool`: only the standard library's socket,
    os, sys, json and struct, without site-packages (-I -S), so that it
    starts in a few milliseconds."""
    return f"""#!{python} -IS
import json, os, socket, struct, sys
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect({sock!r})
    body = json.dumps({{"tool": {tool!r}, "argv": sys.argv[1:],
        "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
    socket.send_fds(s, [struct.pack("!I", len(body))], [0, 1, 2])
    s.sendall(body)
    reply = b""
    while len(reply) < 4:
        more = s.recv(4 - len(reply))
        if not more:
            break
        reply += more
except OSError as error:
    sys.exit(f"{tool} (lit's fork server, lit_tests/tool_server.py): {{error}}")
if len(reply) < 4:
    sys.exit(f"{tool} (lit's fork server, lit_tests/tool_server.py) ended the call")
sys.exit(struct.unpack("!i", reply)[0])
"""


def _warm(tools: dict[str, str]) -> None:
    """Imports what the tools import when they run: the scripts' modules,
    then every Molten pass and target and the xDSL passes the pipelines
    name (each child would otherwise import them again)."""
    if "filecheck" in tools:
        import filecheck.main  # noqa: F401
    from xdsl.universe import Universe

    import molten.tools.molten_opt  # noqa: F401
    from molten.pipeline import DEFAULT_PIPELINE

    multiverse = Universe.get_multiverse()
    names = {spec.split("{")[0] for spec in DEFAULT_PIPELINE.split(",")}
    for name, load in multiverse.all_passes.items():
        if name in names or load.__module__.startswith("molten"):
            load()
    for name in ("cuda", "cuda-header"):
        multiverse.all_targets[name]()
    for load in multiverse.all_dialects.values():
        if load.__module__.startswith("molten"):
            load()


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise EOFError("the client closed the connection")
        data += more
    return data


def _stream(fd: int, like, line_buffering: bool):
    """A text stream over `fd` as the interpreter makes sys.stdin, stdout
    or stderr at start (`like` is the server's own): its encoding and error
    handler, newline "\\n", not closing the fd."""
    mode = "r" if fd == 0 else "w"
    stream = open(  # noqa: SIM115 (one per call, closed with the child)
        fd,
        mode,
        encoding=like.encoding,
        errors=like.errors,
        newline="\n",
        closefd=False,
    )
    if mode == "w":
        stream.reconfigure(line_buffering=line_buffering)
    return stream


def _std_streams() -> None:
    """sys.stdin, stdout and stderr anew over fds 0, 1 and 2 (now the
    caller's): stdout line-buffered on a terminal only, stderr always."""
    made = (
        _stream(0, sys.__stdin__, False),
        _stream(1, sys.__stdout__, os.isatty(1)),
        _stream(2, sys.__stderr__, True),
    )
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made


def _exit_status(code) -> int:
    """The status the interpreter exits with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _serve_one(conn: socket.socket, tools: dict[str, str]) -> None:
    """In the forked child: runs one call and reports its status."""
    size_bytes, fds, _, _ = socket.recv_fds(conn, 4, 3)
    if len(size_bytes) < 4:
        size_bytes += _recv_exact(conn, 4 - len(size_bytes))
    (size,) = struct.unpack("!I", size_bytes)
    call = json.loads(_recv_exact(conn, size))
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(call["cwd"])
    os.environ.clear()
    os.environ.update(call["env"])
    _std_streams()
    script = tools[call["tool"]]
    sys.argv = [script, *call["argv"]]
    sys.path[0] = os.path.dirname(script)  # as for `python script`
    try:
        runpy.run_path(script, run_name="__main__")
        status = 0
    except SystemExit as exit_:
        status = _exit_status(exit_.code)
    except BaseException:
        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = status or 120  # as the interpreter does on a failed flush
    conn.sendall(struct.pack("!i", status))


def main(argv: list[str]) -> int:
    sock_path, *pairs = argv
    tools = dict(pair.split("=", 1) for pair in pairs)
    _warm(tools)
    server = socket.socket(socket.AF_UNIX)
    server.bind(sock_path + ".tmp")
    server.listen(64)
    os.rename(sock_path + ".tmp", sock_path)  # ready once the name exists
    server.settimeout(1.0)
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    gc.collect()
    gc.freeze()  # the children share these pages unwritten
    idle = 0.0
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            idle += 1.0
            if idle >= IDLE_SECONDS or os.getppid() != parent:
                return 0
            continue
        idle = 0.0
        if os.fork() == 0:
            server.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            conn.settimeout(None)
            try:
                _serve_one(conn, tools)
            finally:
                os._exit(0)
        conn.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
