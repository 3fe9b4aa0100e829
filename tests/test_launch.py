"""The launch path without a GPU: `PreparedLaunch` and a call's graph
replay against a stand-in driver.

tests/data/fake_libcuda.c is built here as a libcuda.so.1 that records
what each launch was given; each check runs in a process of its own that
finds it first (LD_LIBRARY_PATH), so cuda.bindings loads it as it would
the driver, and the runtime's ctypes launches (molten/runtime/launch.py)
reach it the same way. Builds with the C compiler; skipped without one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings")

ROOT = Path(__file__).parent.parent
CC = shutil.which("cc") or shutil.which("gcc")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")

PRELUDE = """
import ctypes, types
from collections import OrderedDict
from molten.errors import LaunchError
from molten.runtime import launch as launching, program as steps
from molten.runtime.executable import Executable
from molten.runtime.prepared_launch import PreparedLaunch

fake = ctypes.CDLL("libcuda.so.1")
last = (ctypes.c_uint64 * 16).in_dll(fake, "fake_last")
attribute = (ctypes.c_int * 2).in_dll(fake, "fake_attribute")
def value(name):
    return ctypes.c_int.in_dll(fake, name)

def recorded():
    \"\"\"(function, grid, block, shared, stream, the first three parameters)
    of the last launch.\"\"\"
    return (last[0], tuple(last[1:4]), tuple(last[4:7]), last[7], last[8],
            tuple(last[10:13]))

DEVICE = types.SimpleNamespace(
    device=types.SimpleNamespace(
        properties=types.SimpleNamespace(multiprocessor_count=4)))

def prepared(step, slot_count, function=0x1000, fallback=0x2000):
    \"\"\"The launch of `step` on a 4-SM device; the stand-in records as many
    parameters as its block holds (at least two, at most three).\"\"\"
    value("fake_param_count").value = min(3, max(2, len(step.args)))
    return PreparedLaunch(function, fallback, step, DEVICE, frozenset(), slot_count)
"""


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory) -> Path:
    """A directory holding the stand-in libcuda.so.1."""
    directory = tmp_path_factory.mktemp("fake_driver")
    source = ROOT / "tests" / "data" / "fake_libcuda.c"
    library = directory / "libcuda.so.1"
    subprocess.run(
        [CC, "-O2", "-shared", "-fPIC", "-o", str(library), str(source)], check=True
    )
    return directory


def _run(fake_driver: Path, code: str, **env: str) -> str:
    """Runs `code` after PRELUDE in a process that loads the stand-in driver;
    its standard output."""
    environment = dict(os.environ, **env)
    environment["LD_LIBRARY_PATH"] = os.pathsep.join(
        [str(fake_driver), os.environ.get("LD_LIBRARY_PATH", "")]
    )
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), os.environ.get("PYTHONPATH", "")]
    )
    run = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


@needs_cc
def test_a_launch_passes_its_grid_block_stream_and_parameters(fake_driver):
    """Through ctypes' cuLaunchKernelEx: the function, grid, block, shared
    bytes and the call's pointers, on the call's stream (a new stream goes
    into the configuration; the same one stays); no attributes, no extra."""
    _run(
        fake_driver,
        """
        step = steps.Launch("k", (5, 2, 1), (256, 1, 1), (0, 1, 2),
                            aligned=(0, 2), fallback="k_scalar", shared_bytes=96)
        for slot_count in (3, 4):  # the slots as they are, or gathered
            launch = prepared(step, slot_count)
            assert launch.launch is not None
            assert (launch.gather is None) == (slot_count == 3)
            slots = [0x10000, 0x20000, 0x30000, 7][:slot_count]
            launch(slots, 77)
            assert recorded() == (0x1000, (5, 2, 1), (256, 1, 1), 96, 77,
                                  (0x10000, 0x20000, 0x30000))
            assert last[14] == 0 and last[15] == 0  # no extra, no attributes
            launch([0x40000, 0x20008, 0x50000, 7][:slot_count], 78)
            assert recorded()[4:] == (78, (0x40000, 0x20008, 0x50000))
            launch(slots, 78)
            assert recorded()[4:] == (78, (0x10000, 0x20000, 0x30000))
            launch(slots, 0)  # the default stream
            assert recorded()[4] == 0
        """,
    )


@needs_cc
def test_a_misaligned_pointer_launches_the_scalar_variant(fake_driver):
    """A pointer at an `aligned` position off the vector width launches the
    fallback with its own grid, block and shared bytes; one elsewhere does
    not."""
    _run(
        fake_driver,
        """
        step = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0, 1, 2),
                            aligned=(0, 2), fallback="k_scalar",
                            fallback_grid=(9, 1, 1), fallback_block=(128, 1, 1),
                            fallback_shared_bytes=64)
        launch = prepared(step, 3)
        launch([0x10000, 0x20004, 0x30000], 77)  # position 1: not checked
        assert recorded()[0] == 0x1000
        for slots in ([0x10008, 0x20000, 0x30000], [0x10000, 0x20000, 0x30002]):
            launch(slots, 77)
            assert recorded() == (0x2000, (9, 1, 1), (128, 1, 1), 64, 77,
                                  tuple(slots))
        one = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0,), aligned=(0,),
                           fallback="k_scalar")
        launch = prepared(one, 1)
        launch([0x10000], 77)
        assert recorded()[0] == 0x1000
        launch([0x10004], 77)
        assert recorded()[0] == 0x2000 and recorded()[1] == (5, 1, 1)
        """,
    )


@needs_cc
def test_a_cooperative_launch_sets_the_cooperative_attribute(fake_driver):
    """A cooperative launch is cuLaunchKernelEx with
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE set, on as many whole groups as the
    device holds (4 SMs x 2 blocks, groups of 2: 4 groups)."""
    _run(
        fake_driver,
        """
        step = steps.Launch("k", (64, 1, 1), (512, 1, 1), (0, 1), cooperative=2)
        launch = prepared(step, 2, fallback=None)
        launch([0x10000, 0x20000], 5)
        assert recorded()[:2] == (0x1000, (8, 1, 1))
        assert last[15] == 1 and tuple(attribute) == (2, 1)
        """,
    )


@needs_cc
def test_a_failed_launch_raises_as_cuda_bindings_does(fake_driver):
    """The driver's error becomes the LaunchError `check` makes of it, the
    kernel named, whether the launch went through ctypes or cuda.bindings
    (`launch.enabled = False`), the scalar variant's too."""
    out = _run(
        fake_driver,
        """
        step = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0, 1), aligned=(0, 1),
                            fallback="k_scalar")
        value("fake_result").value = 700
        for enabled in (True, False):
            launching.enabled = enabled
            launch = prepared(step, 2)
            assert (launch.launch is not None) == enabled
            for slots in ([0x10000, 0x20000], [0x10004, 0x20000]):
                try:
                    launch(slots, 77)
                except LaunchError as error:
                    print(error)
        """,
    )
    illegal = "failed: an illegal memory access was encountered"
    assert (
        out.splitlines()
        == [f"launching k {illegal}", f"launching k_scalar {illegal}"] * 2
    )


@needs_cc
def test_without_the_driver_function_launches_go_through_cuda_bindings(
    fake_driver,
):
    """Where the driver has no cuLaunchKernelEx, a launch is cuda.bindings'
    cuLaunchKernel (or cuLaunchCooperativeKernel) as before, with the same
    arguments."""
    _run(
        fake_driver,
        """
        # The name the stand-in cuGetProcAddress does not find:
        (ctypes.c_char * 64).in_dll(fake, "fake_hidden").value = b"cuLaunchKernelEx"
        cooperative = value("fake_last_cooperative")
        step = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0, 1, 2), aligned=(0,),
                            fallback="k_scalar")
        launch = prepared(step, 3)
        assert launch.launch is None
        launch([0x10000, 0x20000, 0x30000], 77)
        assert recorded() == (0x1000, (5, 1, 1), (256, 1, 1), 0, 77,
                              (0x10000, 0x20000, 0x30000))
        assert cooperative.value == 0
        launch([0x10001, 0x20000, 0x30000], 77)
        assert recorded()[0] == 0x2000
        step = steps.Launch("k", (64, 1, 1), (512, 1, 1), (0, 1), cooperative=2)
        launch = prepared(step, 2, fallback=None)
        launch([0x10000, 0x20000], 5)
        assert recorded()[:2] == (0x1000, (8, 1, 1)) and cooperative.value == 1
        """,
    )


@needs_cc
@pytest.mark.parametrize("per_thread", ["0", "1"])
def test_the_launch_takes_cuda_bindings_default_stream_mode(fake_driver, per_thread):
    """With CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1 cuda.bindings calls
    the per-thread-default-stream entry points; the launch asks for the same
    (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM is 2)."""
    out = _run(
        fake_driver,
        """
        step = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0, 1))
        prepared(step, 2, fallback=None)
        print(ctypes.c_uint64.in_dll(fake, "fake_flags").value)
        """,
        CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=per_thread,
    )
    assert out.split() == [str(2 * int(per_thread))]


@needs_cc
def test_calls_into_the_same_out_replay_their_graph(fake_driver):
    """A call with `out=` at captured addresses launches the captured graph
    on the call's stream (cuGraphLaunch of its exec handle), a failure named
    as cuda.bindings' replay names it; inside someone else's capture it
    runs the program instead."""
    _run(
        fake_driver,
        """
        ran = []
        executable = Executable.__new__(Executable)
        executable.inputs, executable.outputs = ("x", "w"), ("y",)
        executable._graphs, executable._seen = OrderedDict(), OrderedDict()
        executable._cu_streams = {}
        executable.run = lambda slots, handle: ran.append((slots, handle))
        graph = types.SimpleNamespace(replay=None)
        executable._graphs[(77, 1, 2, 3)] = (graph, 0x9999)
        executable._run_captured([1, 2, 3], 77)
        assert (last[0], last[8]) == (0x9999, 77) and ran == []
        value("fake_result").value = 1
        try:
            executable._run_captured([1, 2, 3], 77)
        except LaunchError as error:
            assert str(error) == "replaying a CUDA graph failed: invalid argument"
        else:
            raise AssertionError("no error")
        value("fake_result").value = 0
        value("fake_capturing").value = 1
        calls = value("fake_calls").value
        executable._run_captured([1, 2, 3], 77)
        assert ran == [([1, 2, 3], 77)]
        assert value("fake_calls").value == calls + 1  # the query, no launch
        """,
    )


TORCH_CALLS = """
import sys
from molten.errors import InputError
from molten.runtime import executable as executables
from molten.runtime.program import TensorSpec

class Tensor:
    \"\"\"A stand-in torch tensor: what the torch call path reads.\"\"\"
    def __init__(self, shape, ptr):
        self.shape, self.dtype, self.ptr = tuple(shape), "f32", ptr
        self.requires_grad = False
    def data_ptr(self):
        return self.ptr
    def get_device(self):
        return 0
    def is_contiguous(self):
        return True

made = iter(range(0x90000, 0xA0000, 0x1000))
sys.modules["torch"] = types.SimpleNamespace(
    Tensor=Tensor,
    empty=lambda shape, dtype, device: Tensor(shape, next(made)),
    empty_like=lambda like: Tensor(like.shape, next(made)),
    device=lambda kind, index: (kind, index),
    float32="f32",
    _C=types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 77),
)
DEVICE.device.default_stream = 0  # the general path's stream, for its errors
executables.runtime_device = lambda device_id: types.SimpleNamespace(
    make_current=lambda: None, device=DEVICE.device)

def executable(program, sizes=()):
    \"\"\"`program` as the executable of a graph x (4, 8), w (8,) -> y (4, 8)
    on device 0, its kernels k (0x1000) and k_scalar (0x2000).\"\"\"
    compiled = types.SimpleNamespace(
        name="g", program=program,
        inputs=(TensorSpec("x", (4, 8), "float32"), TensorSpec("w", (8,), "float32")),
        outputs=(TensorSpec("y", (4, 8), "float32"),))
    loaded = types.SimpleNamespace(
        source_map=None, functions={"k": 0x1000, "k_scalar": 0x2000})
    value("fake_param_count").value = 3
    return executables.Executable(compiled, 0, loaded, sizes)

x, w = Tensor((4, 8), 0x10000), Tensor((8,), 0x20000)
"""


@needs_cc
def test_a_torch_call_launches_from_its_own_function(fake_driver):
    """A one-kernel call on torch tensors and new outputs runs the function
    written for it (after the first call, which writes it): the kernel on
    the inputs' and the new output's addresses, on torch's stream; the
    scalar variant where one is off the vector width; the driver's error
    as a LaunchError; an array it does not take goes the general way,
    which names what is wrong."""
    out = _run(
        fake_driver,
        TORCH_CALLS
        + textwrap.dedent(
            """
        step = steps.Launch("k", (5, 1, 1), (256, 1, 1), (0, 1, 2),
                            aligned=(0, 1, 2), fallback="k_scalar")
        exe = executable((step,))
        assert exe._torch_call is None
        first = exe(x, w)  # through `bind`, which writes the function
        assert recorded()[4:] == (77, (0x10000, 0x20000, first.ptr))
        assert "start0(*arguments0)" in exe._torch_call.source
        y = exe(x, w)
        assert y.shape == (4, 8) and y.ptr not in (0x10000, 0x20000, first.ptr)
        assert recorded() == (0x1000, (5, 1, 1), (256, 1, 1), 0, 77,
                              (0x10000, 0x20000, y.ptr))
        y = exe(Tensor((4, 8), 0x10008), w)  # aligned to a float, not to 16
        assert recorded()[0] == 0x2000 and recorded()[5][2] == y.ptr
        value("fake_result").value = 700
        try:
            exe(x, w)
        except LaunchError as error:
            assert str(error).startswith("launching k failed: an illegal")
        else:
            raise AssertionError("no error")
        value("fake_result").value = 0
        calls = value("fake_calls").value
        for bad in ((Tensor((4, 9), 0x10000), w), (x,), (x, w, w)):
            try:
                exe(*bad)
            except InputError as error:
                print(error)
            else:
                raise AssertionError("no error")
        assert value("fake_calls").value == calls  # nothing launched
        into = Tensor((4, 8), 0x30000)
        exe.auto_graphs = 0
        assert exe(x, w, out=into) is into
        assert recorded()[0] == 0x1000 and recorded()[5] == (0x10000, 0x20000, 0x30000)
        exe.auto_graphs = 4
        exe._graphs[(77, 0x10000, 0x20000, 0x30000)] = (None, 0x9999)
        assert exe(x, w, out=into) is into
        assert (last[0], last[8]) == (0x9999, 77)  # the capture at out='s address
        try:
            exe(x, w, out=Tensor((4, 8), 0x20000 - 4))  # overlaps w
        except InputError as error:
            print(error)
        """
        ),
    )
    lines = out.splitlines()
    assert lines[0].startswith("input 'x' (4x8 float32) is a Tensor, not a device")
    assert lines[1:3] == [
        f"graph 'g' takes 2 inputs ('x' (4x8 float32), 'w' (8 float32)), got {n}"
        for n in (1, 3)
    ]
    assert lines[3] == lines[0]  # out= overlapping w: the general way too


@needs_cc
def test_a_torch_call_of_several_kernels_or_sizes(fake_driver):
    """The function written for a call launches each kernel on its own
    arguments, a size (a launcher's slot past the arrays) as its value;
    where a launch goes through cuda.bindings, the function runs the
    program (`run`) on the call's slots."""
    _run(
        fake_driver,
        TORCH_CALLS
        + textwrap.dedent(
            """
        program = (steps.Launch("k", (5, 1, 1), (256, 1, 1), (2, 0, 1)),
                   steps.Launch("k", (6, 1, 1), (256, 1, 1), (1, 3, 2)))
        exe = executable(program, sizes=(7,))
        exe(x, w)
        y = exe(x, w)
        source = exe._torch_call.source
        assert "pack0(values0, 0, p2, p0, p1)" in source
        assert "pack1(values1, 0, p1, 7, p2)" in source
        assert recorded()[1] == (6, 1, 1)
        assert recorded()[4:] == (77, (0x20000, 7, y.ptr))
        value("fake_calls").value = 0
        y = exe(x, w)
        assert value("fake_calls").value == 2
        (ctypes.c_char * 64).in_dll(fake, "fake_hidden").value = b"cuLaunchKernelEx"
        launching._functions.clear()
        exe = executable(program, sizes=(7,))
        exe(x, w)
        y = exe(x, w)
        assert "run([p0, p1, p2, 7], stream)" in exe._torch_call.source
        assert recorded()[1] == (6, 1, 1)
        assert recorded()[4:] == (77, (0x20000, 7, y.ptr))
        """
        ),
    )


@needs_cc
def test_a_compiled_graph_and_a_sized_one_call_the_function(fake_driver):
    """`CompiledGraph(x, w)` calls its executable's function itself; a
    graph over T calls that of the executable of the arrays' sizes, found
    by their shapes once a call of those sizes wrote it (it leaves the
    shapes unchecked: they found it). Arrays of other shapes go the
    general way, which names what is wrong."""
    out = _run(
        fake_driver,
        TORCH_CALLS
        + textwrap.dedent(
            """
            from dataclasses import replace

            import molten
            from molten import ops
            from molten.ir import DataflowGraph, TensorShape
            from molten.runtime import sized

            def graph(tokens):
                g = DataflowGraph("g")
                gx = g.add_input("x", TensorShape([tokens, 8]), "float32")
                gw = g.add_input("w", TensorShape([8]), "float32")
                g.add_output(ops.rms_norm(gx, gw))
                return molten.ZeroCompiler(arch="sm_90").compile(g)

            compiled = graph(4)
            (step,) = compiled.program
            exe = executable((replace(step, kernel="k", fallback="k_scalar"),))
            compiled._executables[None] = exe
            compiled(x, w)
            assert exe._torch_call is not None
            exe._torch_call = lambda inputs: ("the function", inputs)
            assert compiled(x, w) == ("the function", (x, w))

            over_t = graph("T")
            loaded = types.SimpleNamespace(source_map=None, functions={
                name: 0x1000 for s in over_t.program
                for name in (s.kernel, s.fallback)})
            sized.LoadedKernels = lambda compiled, device: loaded
            sized.runtime_device = executables.runtime_device
            calls = sized.SizedExecutable(over_t, 0)
            over_t._executables[None] = calls
            for tokens in (4, 5):
                xt = Tensor((tokens, 8), 0x10000)
                over_t(xt, w)  # writes the function of T
                found = calls._by_shapes[(xt.shape, w.shape)]
                assert "shape" not in found._torch_call_of_shapes.source
                y = over_t(xt, w)
                assert y.shape == (tokens, 8)
                assert recorded()[4:] == (77, (0x10000, 0x20000, y.ptr))
            try:
                over_t(Tensor((4, 8), 0x10000), Tensor((9,), 0x20000))
            except InputError as error:
                print(error)
            """
        ),
    )
    assert out.splitlines() == ["input 'w' has shape (9,); expected (8,)"]


@needs_cc
def test_the_launch_structures_match_cuda_h(tmp_path):
    """CUlaunchConfig and CUlaunchAttribute as ctypes lays them out here are
    cuda.h's: sizes and offsets from a C program built against the header."""
    from molten.runtime.launch import LaunchAttribute, LaunchConfig

    try:
        from molten.runtime.nvrtc import cuda_include_dir

        include = Path(cuda_include_dir())
    except Exception:  # no CUDA headers: nothing to compare with
        pytest.skip("no CUDA headers")
    if not (include / "cuda.h").exists():
        pytest.skip("no cuda.h")
    program = tmp_path / "layout.c"
    program.write_text(
        textwrap.dedent(
            """
            #include <stddef.h>
            #include <stdio.h>
            #include <cuda.h>
            int main(void) {
                printf("%zu %zu %zu %zu %zu %zu %zu\\n", sizeof(CUlaunchConfig),
                       offsetof(CUlaunchConfig, sharedMemBytes),
                       offsetof(CUlaunchConfig, hStream),
                       offsetof(CUlaunchConfig, attrs),
                       offsetof(CUlaunchConfig, numAttrs),
                       sizeof(CUlaunchAttribute),
                       offsetof(CUlaunchAttribute, value));
                return 0;
            }
            """
        )
    )
    binary = tmp_path / "layout"
    subprocess.run([CC, f"-I{include}", "-o", str(binary), str(program)], check=True)
    got = subprocess.run([binary], capture_output=True, text=True, check=True)
    ours = [
        LaunchConfig,
        LaunchConfig.sharedMemBytes.offset,
        LaunchConfig.hStream.offset,
        LaunchConfig.attrs.offset,
        LaunchConfig.numAttrs.offset,
        LaunchAttribute,
        LaunchAttribute.value.offset,
    ]
    import ctypes

    ours = [o if isinstance(o, int) else ctypes.sizeof(o) for o in ours]
    assert got.stdout.split() == [str(n) for n in ours]
