"""The printers of the tensor-core ops and their PTX (cp.async, ldmatrix,
mma.sync, sm_90a's wgmma, mbarriers and TMA), and the wgmma device functions
the prelude defines, generated per shape."""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, UnitAttr
from xdsl.ir import Operation

from molten.dialects import cuda
from molten.targets.cuda.body import BodyPrinter, OpPrinter, ptx, statement

WgmmaLike = cuda.WgmmaOp | cuda.WgmmaRegisterAOp


_MMA_KINDS = {Float16Type: "f16", BFloat16Type: "bf16", Float32Type: "tf32"}
"""Each tensor-core operand type as helpers and PTX name it (f32: tf32
fragments, mma.sync m16n8k8)."""


def wgmma_helper_name(op: WgmmaLike) -> str:
    """molten_wgmma_m64n<N>k16_<type>_<A><B>[_zero]: A and B each `k`
    (K-major) or `t` (MN-major), A `r` where it is in registers; `_zero`
    where no accumulators come in (D = A B)."""
    kind = _MMA_KINDS[type(op.operand)]
    a = "r" if isinstance(op, cuda.WgmmaRegisterAOp) else _major(op.trans_a)
    zero = "" if op.c else "_zero"
    return f"molten_wgmma_m64n{op.n.value.data}k16_{kind}_{a}{_major(op.trans_b)}{zero}"


def _major(trans: UnitAttr | None) -> str:
    return "t" if trans is not None else "k"


def _cp_async(printer: BodyPrinter, op: cuda.CpAsyncOp) -> None:
    target = printer.address(op.target, op.target_index)
    source = printer.address(op.source, op.source_index)
    printer.emit(f"molten_cp_async({target}, {source}, {printer.name(op.valid)});")


def _ldmatrix(printer: BodyPrinter, op: cuda.LdMatrixOp) -> None:
    names = printer.declare(op.fragments, "frag")
    helper = "molten_ldmatrix_trans" if op.trans is not None else "molten_ldmatrix"
    address = printer.address(op.ptr, op.index)
    printer.emit(f"{helper}({address}, {', '.join(names)});")


def _mma(printer: BodyPrinter, op: cuda.MmaOp) -> None:
    names = printer.declare(op.d, "acc")
    kind = _MMA_KINDS[type(op.operand)]
    operands = (printer.name(v) for v in (*op.a, *op.b, *op.c))
    printer.emit(f"molten_mma_{kind}({', '.join([*names, *operands])});")


def _split_tf32(printer: BodyPrinter, op: cuda.SplitTf32Op) -> None:
    big, small = printer.declare(op.results, "tf32")
    printer.emit(f"molten_split_tf32({printer.name(op.value)}, {big}, {small});")


def _pack(printer: BodyPrinter, op: cuda.PackOp) -> None:
    kind = _MMA_KINDS[type(op.operand)]
    lo, hi = printer.name(op.lo), printer.name(op.hi)
    printer.define(op.result, f"molten_pack_{kind}({lo}, {hi})", "pair")


def _wgmma_descriptor(printer: BodyPrinter, op: cuda.WgmmaDescriptorOp) -> None:
    address = f"{printer.name(op.ptr)}, {printer.name(op.index)}"
    printer.define(
        op.result,
        f"molten_wgmma_descriptor({address}, {op.leading.value.data}, "
        f"{op.stride.value.data})",
        "desc",
    )


def _wgmma(printer: BodyPrinter, op: cuda.WgmmaOp) -> None:
    if op.c:
        names = printer.declare_in_place(op.d, op.c, "acc")
    else:  # D = A B: the helper only writes them
        names = printer.declare(op.d, "acc")
    arguments = ", ".join([*names, printer.name(op.a), printer.name(op.b)])
    printer.emit(f"{wgmma_helper_name(op)}({arguments});")


def _wgmma_register_a(printer: BodyPrinter, op: cuda.WgmmaRegisterAOp) -> None:
    names = printer.declare_in_place(op.d, op.c, "acc")
    a = (printer.name(r) for r in op.a)
    arguments = ", ".join([*names, *a, printer.name(op.b)])
    printer.emit(f"{wgmma_helper_name(op)}({arguments});")


def _wgmma_wait(printer: BodyPrinter, op: cuda.WgmmaWaitOp) -> None:
    names = printer.declare_in_place(op.results_, op.values, "acc")
    wait = f"molten_wgmma_wait{len(names)}<{op.pending.value.data}>"
    printer.emit(f"{wait}({', '.join(names)});")


def _mbarrier_init(printer: BodyPrinter, op: cuda.MbarrierInitOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    printer.emit(f"molten_mbarrier_init({barrier}, {op.count.value.data});")


def _mbarrier_arrive(printer: BodyPrinter, op: cuda.MbarrierArriveOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    if op.cta is not None:
        cta = printer.name(op.cta)
        printer.emit(f"molten_mbarrier_arrive_cluster({barrier}, {cta});")
        return
    if op.expect_tx is None:
        printer.emit(f"molten_mbarrier_arrive({barrier});")
        return
    tx = op.expect_tx.value.data
    printer.emit(f"molten_mbarrier_arrive_expect_tx({barrier}, {tx});")


def _mbarrier_wait(printer: BodyPrinter, op: cuda.MbarrierWaitOp) -> None:
    barrier = printer.address(op.barriers, op.index)
    printer.emit(f"molten_mbarrier_wait({barrier}, {printer.name(op.parity)});")


def _tma_load(printer: BodyPrinter, op: cuda.TmaLoadOp) -> None:
    target = printer.address(op.target, op.target_index)
    barrier = printer.address(op.barriers, op.barrier_index)
    c0, c1 = printer.name(op.c0), printer.name(op.c1)
    tensor_map = f"&{printer.name(op.map)}"
    if op.multicast is None:
        printer.emit(f"molten_tma_load({target}, {tensor_map}, {barrier}, {c0}, {c1});")
        return
    mask = op.multicast.value.data
    printer.emit(
        f"molten_tma_load_multicast({target}, {tensor_map}, {barrier}, "
        f"{c0}, {c1}, {mask});"
    )


def _set_max_registers(printer: BodyPrinter, op: cuda.SetMaxRegistersOp) -> None:
    direction, count = op.direction.data, op.count.value.data
    printer.emit(f'asm volatile("setmaxnreg.{direction}.sync.aligned.u32 {count};");')


TENSOR_CORE_PRINTERS: dict[type[Operation], OpPrinter] = {
    cuda.CpAsyncOp: _cp_async,
    cuda.CpAsyncCommitOp: statement("molten_cp_async_commit();"),
    cuda.CpAsyncWaitOp: lambda printer, op: printer.emit(
        f"molten_cp_async_wait<{op.pending.value.data}>();"
    ),
    cuda.LdMatrixOp: _ldmatrix,
    cuda.MmaOp: _mma,
    cuda.SplitTf32Op: _split_tf32,
    cuda.PackOp: _pack,
    cuda.WgmmaDescriptorOp: _wgmma_descriptor,
    cuda.WgmmaOp: _wgmma,
    cuda.WgmmaRegisterAOp: _wgmma_register_a,
    cuda.WgmmaFenceOp: ptx("wgmma.fence.sync.aligned"),
    cuda.WgmmaCommitOp: ptx("wgmma.commit_group.sync.aligned"),
    cuda.WgmmaWaitOp: _wgmma_wait,
    cuda.FenceProxyAsyncOp: ptx("fence.proxy.async.shared::cta"),
    cuda.MbarrierInitOp: _mbarrier_init,
    cuda.FenceMbarrierInitOp: ptx("fence.mbarrier_init.release.cluster"),
    cuda.MbarrierArriveOp: _mbarrier_arrive,
    cuda.MbarrierWaitOp: _mbarrier_wait,
    cuda.TmaLoadOp: _tma_load,
    cuda.ClusterSyncOp: statement("molten_cluster_sync();"),
    cuda.SetMaxRegistersOp: _set_max_registers,
}


def wgmma_helpers(kernels: list[cuda.KernelOp]) -> list[str]:
    """The device functions the kernels' wgmma ops and waits call: one per
    shape, operand type and majorness, one wait per accumulator count. Each
    wraps one PTX instruction whose accumulators are tied registers ("+f"),
    so the compiler keeps them in place while the tensor cores write them."""
    mmas: dict[str, WgmmaLike] = {}
    waits: set[int] = set()
    for k in kernels:
        for op in k.walk():
            if isinstance(op, WgmmaLike):
                mmas.setdefault(wgmma_helper_name(op), op)
            elif isinstance(op, cuda.WgmmaWaitOp):
                waits.add(len(op.values))
    helpers = []
    for name, op in sorted(mmas.items()):
        count = op.n.value.data // 2
        ptx_type = _MMA_KINDS[type(op.operand)]
        registers = ", ".join(f"%{i}" for i in range(count))
        trans_b = int(op.trans_b is not None)
        if isinstance(op, cuda.WgmmaRegisterAOp):
            a_regs = ", ".join(f"%{count + i}" for i in range(4))
            a_params = ", ".join(f"unsigned a{i}" for i in range(4))
            sources = f"{{{a_regs}}}, %{count + 4}, 1, 1, 1, {trans_b}"
            inputs = ", ".join([*(f'"r"(a{i})' for i in range(4)), '"l"(b)'])
        else:
            a_params = "unsigned long long a"
            trans_a = int(op.trans_a is not None)
            # scale-d 0 where no accumulators come in: D = A B.
            scale_d = int(bool(op.c))
            sources = f"%{count}, %{count + 1}, {scale_d}, 1, 1, {trans_a}, {trans_b}"
            inputs = '"l"(a), "l"(b)'
        output = "+f" if op.c else "=f"
        helpers.append(
            f"__device__ __forceinline__ void {name}("
            + ", ".join(f"float& d{i}" for i in range(count))
            + f", {a_params}, unsigned long long b) {{\n"
            f'  asm volatile("wgmma.mma_async.sync.aligned.m64n{op.n.value.data}k16.'
            f'f32.{ptx_type}.{ptx_type} {{{registers}}}, {sources};"\n'
            "      : "
            + ", ".join(f'"{output}"(d{i})' for i in range(count))
            + f"\n      : {inputs});\n}}"
        )
    for count in sorted(waits):
        helpers.append(
            "template <int Pending>\n"
            f"__device__ __forceinline__ void molten_wgmma_wait{count}("
            + ", ".join(f"float& d{i}" for i in range(count))
            + ") {\n"
            f'  asm volatile("wgmma.wait_group.sync.aligned %{count};"\n'
            "      : "
            + ", ".join(f'"+f"(d{i})' for i in range(count))
            + '\n      : "n"(Pending) : "memory");\n}'
        )
    return helpers
