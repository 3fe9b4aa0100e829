"""Registers Molten's dialects and passes with xDSL's tools (`xdsl.universe`)."""

from xdsl.universe import Universe


def _molten_dialect():
    from molten.dialects.molten import Molten

    return Molten


def _kernel_dialect():
    from molten.dialects.kernel import Kernel

    return Kernel


def _cuda_dialect():
    from molten.dialects.cuda import Cuda

    return Cuda


def _molten_decompose():
    from molten.passes.decompose import MoltenDecompose

    return MoltenDecompose


def _transpose_matvec():
    from molten.passes.transpose_matvec import TransposeMatvec

    return TransposeMatvec


def _specialize_dims():
    from molten.passes.specialize_dims import SpecializeDims

    return SpecializeDims


def _factor_row_scale():
    from molten.passes.factor_row_scale import FactorRowScalePass

    return FactorRowScalePass


def _fuse_prologue():
    from molten.passes.fuse_prologue import FusePrologue

    return FusePrologue


def _fuse_attention():
    from molten.passes.fuse_attention import FuseAttention

    return FuseAttention


def _fuse_scan():
    from molten.passes.fuse_scan import FuseScan

    return FuseScan


def _fuse_scatter():
    from molten.passes.fuse_scatter import FuseScatter

    return FuseScatter


def _fuse_reduction():
    from molten.passes.fuse_reduction import FuseReduction

    return FuseReduction


def _fuse_epilogue():
    from molten.passes.fuse_epilogue import FuseEpilogue

    return FuseEpilogue


def _split_size_classes():
    from molten.passes.split_size_classes import SplitSizeClasses

    return SplitSizeClasses


def _merge_size_classes():
    from molten.passes.merge_size_classes import MergeSizeClasses

    return MergeSizeClasses


def _fuse_elementwise():
    from molten.passes.fuse_elementwise import FuseElementwise

    return FuseElementwise


def _kernel_outline():
    from molten.passes.kernel_outline import KernelOutline

    return KernelOutline


def _attach_target():
    from molten.passes.attach_target import AttachTarget

    return AttachTarget


def _kernel_schedule():
    from molten.passes.schedule.kernel_schedule import KernelSchedule

    return KernelSchedule


def _tile():
    from molten.passes.tile import Tile

    return Tile


def _lower_kernel_to_cuda():
    from molten.passes.lower_kernel_to_cuda import LowerKernelToCuda

    return LowerKernelToCuda


def _vectorize():
    from molten.passes.vectorize import Vectorize

    return Vectorize


def _cuda_target():
    from molten.targets.cuda import CudaTarget

    return CudaTarget


def _cuda_header_target():
    from molten.targets.cuda import CudaHeaderTarget

    return CudaHeaderTarget


MOLTEN_UNIVERSE = Universe(
    all_dialects={
        "molten": _molten_dialect,
        "kernel": _kernel_dialect,
        "cuda": _cuda_dialect,
    },
    all_passes={
        "attach-target": _attach_target,
        "molten-decompose": _molten_decompose,
        "transpose-matvec": _transpose_matvec,
        "specialize-dims": _specialize_dims,
        "factor-row-scale": _factor_row_scale,
        "split-size-classes": _split_size_classes,
        "fuse-attention": _fuse_attention,
        "fuse-prologue": _fuse_prologue,
        "fuse-reduction": _fuse_reduction,
        "fuse-scan": _fuse_scan,
        "fuse-scatter": _fuse_scatter,
        "fuse-epilogue": _fuse_epilogue,
        "fuse-elementwise": _fuse_elementwise,
        "merge-size-classes": _merge_size_classes,
        "kernel-outline": _kernel_outline,
        "kernel-schedule": _kernel_schedule,
        "tile": _tile,
        "lower-kernel-to-cuda": _lower_kernel_to_cuda,
        "vectorize": _vectorize,
    },
    all_targets={"cuda": _cuda_target, "cuda-header": _cuda_header_target},
)
