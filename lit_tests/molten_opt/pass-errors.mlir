// RUN: not molten-opt %s -p 'molten-decompose{keep=matmul}' 2>&1 | filecheck %s --check-prefix=KEEP
// RUN: molten-opt %s -p 'molten-decompose{keep=matmul,softmax}' --verify-diagnostics | filecheck %s --check-prefix=KEEP-VERIFY
// RUN: not molten-opt %s -p frobnicate 2>&1 | filecheck %s --check-prefix=UNKNOWN

// A failing pass is an error naming the input file (no op to point at), with
// a non-zero exit, or on stdout with exit 0 under --verify-diagnostics; an
// unknown pass is a usage error.

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = molten.softmax %x axis = 1 : tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// KEEP-NOT:  builtin.module
// KEEP:      {{^.*}}pass-errors.mlir: error: molten-decompose: keep=matmul names no composite op (composites: attention, layer_norm, rms_norm, rope, softmax){{$}}
// KEEP-NOT:  {{Traceback|internal error|builtin.module}}

// KEEP-VERIFY:      {{^.*}}pass-errors.mlir: error: molten-decompose: keep=matmul names no composite op (composites: attention, layer_norm, rms_norm, rope, softmax){{$}}
// KEEP-VERIFY-NOT:  builtin.module

// UNKNOWN:      {{^}}molten-opt: error: Unrecognized passes: ['frobnicate']{{$}}
// UNKNOWN-NOT:  {{Traceback|internal error}}
