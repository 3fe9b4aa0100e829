// RUN: molten-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t

// One case per verifier rule of the cuda dialect. Each CHECK line matches the
// whole located diagnostic, `file:LINE:COL: error: message`, of the op right
// after it (an op nested in a kernel is at column 3, a kernel or launcher at
// column 1). The !cuda.ptr type is verified as it is parsed, so a bad element
// type is an error while parsing, reported at the op that holds the type:
// --parsing-diagnostics reports it and goes on with the next case. The NOMODULE
// check makes sure that every case fails: no module is printed.
// NOMODULE-NOT: builtin.module

// -- cuda.load and cuda.store ------------------------------------------------

// a load whose result is not the pointer's element type
cuda.kernel @load_mismatch(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: cuda.load: a !cuda.ptr<f32> gives f32, not f16{{$}}
// CHECK-NEXT: {{^}}  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f16{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f16
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// the same through a shared pointer, bf16 against f16
cuda.kernel @load_mismatch_shared(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %s = cuda.shared_alloc 32 : !cuda.ptr<bf16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.load: a !cuda.ptr<bf16, shared> gives bf16, not f16{{$}}
  %v = cuda.load %s[%i] : !cuda.ptr<bf16, shared> -> f16
  cuda.return
}

// -----

// a store of an f32 value through an f16 pointer (the f32 -> f16 truncf is
// missing)
cuda.kernel @store_mismatch(%x: !cuda.ptr<f16>) block 32 {
  %i = cuda.thread_idx x
  %c = arith.constant 1.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: cuda.store: a f32 cannot be stored through !cuda.ptr<f16>{{$}}
// CHECK-NEXT: {{^}}  cuda.store %c, %x[%i] : f32, !cuda.ptr<f16>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  cuda.store %c, %x[%i] : f32, !cuda.ptr<f16>
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// a store of an f16 value into shared f32 memory
cuda.kernel @store_mismatch_shared(%x: !cuda.ptr<f16>) block 32 {
  %i = cuda.thread_idx x
  %s = cuda.shared_alloc 32 : !cuda.ptr<f32, shared>
  %h = cuda.load %x[%i] : !cuda.ptr<f16> -> f16
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.store: a f16 cannot be stored through !cuda.ptr<f32, shared>{{$}}
  cuda.store %h, %s[%i] : f16, !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// a vector access of three elements (not a power of two)
cuda.kernel @load_three(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.load: 3 elements of f32 at once; a vector access is a power of two of elements, at most 16 bytes{{$}}
  %a, %b, %c = cuda.load %x[%i] : !cuda.ptr<f32> -> f32, f32, f32
  cuda.return
}

// -----

// a vector access wider than 16 bytes
cuda.kernel @store_eight_f32(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %c = arith.constant 1.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.store: 8 elements of f32 at once; a vector access is a power of two of elements, at most 16 bytes{{$}}
  cuda.store %c, %c, %c, %c, %c, %c, %c, %c, %x[%i] : f32, f32, f32, f32, f32, f32, f32, f32, !cuda.ptr<f32>
  cuda.return
}

// -----

// a vector load whose results are not all of the element type
cuda.kernel @load_mixed(%x: !cuda.ptr<f16>) block 32 {
  %i = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.load: a !cuda.ptr<f16> gives f16, not f16, f32{{$}}
  %a, %b = cuda.load %x[%i] : !cuda.ptr<f16> -> f16, f32
  cuda.return
}

// -----

// a store whose operand and type counts differ
cuda.kernel @store_counts(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %c = arith.constant 1.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cuda.store: 3 operands before the index but 2 types{{$}}
  cuda.store %c, %c, %x[%i] : f32, !cuda.ptr<f32>
  cuda.return
}

// -----

// -- cuda.shared_alloc -------------------------------------------------------

// an empty shared array
cuda.kernel @shared_alloc_zero(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shared_alloc: size must be >= 1{{$}}
  %s = cuda.shared_alloc 0 : !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// a negative size (the custom form takes no sign: the generic form)
cuda.kernel @shared_alloc_negative(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shared_alloc: size must be >= 1{{$}}
  %s = "cuda.shared_alloc"() <{size = -4 : i64}> : () -> !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// shared memory typed as a global pointer
cuda.kernel @shared_alloc_global(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shared_alloc: the result must be a shared pointer{{$}}
  %s = cuda.shared_alloc 32 : !cuda.ptr<f32>
  cuda.return
}

// -----

// -- cuda.shfl_xor -----------------------------------------------------------

// an offset that is not a power of two
cuda.kernel @shfl_xor_three(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shfl_xor: offset must be 1, 2, 4, 8 or 16{{$}}
  %w = cuda.shfl_xor %v, 3 : f32
  cuda.return
}

// -----

// an offset of a whole warp
cuda.kernel @shfl_xor_32(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shfl_xor: offset must be 1, 2, 4, 8 or 16{{$}}
  %w = cuda.shfl_xor %v, 32 : f32
  cuda.return
}

// -----

// an offset of 0 and a negative one (generic form)
cuda.kernel @shfl_xor_zero(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shfl_xor: offset must be 1, 2, 4, 8 or 16{{$}}
  %w = "cuda.shfl_xor"(%v) <{offset = 0 : i64}> : (f32) -> f32
  cuda.return
}

// -----

cuda.kernel @shfl_xor_negative(%x: !cuda.ptr<f32>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f32> -> f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shfl_xor: offset must be 1, 2, 4, 8 or 16{{$}}
  %w = "cuda.shfl_xor"(%v) <{offset = -16 : i64}> : (f32) -> f32
  cuda.return
}

// -----

// an f16 value: shuffles are of f32 or integers
cuda.kernel @shfl_xor_f16(%x: !cuda.ptr<f16>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<f16> -> f16
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shfl_xor: shuffles an f32 or an integer (i64, i32, i8, ui8), not f16{{$}}
  %w = cuda.shfl_xor %v, 1 : f16
  cuda.return
}

// -----

// -- cuda.kernel -------------------------------------------------------------

// a block of no thread
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:1: error: cuda.kernel: block must be in [1, 1024]{{$}}
// CHECK-NEXT: {{^}}cuda.kernel @block_zero(%x: !cuda.ptr<f32>) block 0 {{[{]$}}
// CHECK-NEXT: {{^}}^{{$}}
cuda.kernel @block_zero(%x: !cuda.ptr<f32>) block 0 {
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// a block over the hardware limit of 1024 threads
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: block must be in [1, 1024]{{$}}
cuda.kernel @block_1025(%x: !cuda.ptr<f32>) block 1025 {
  cuda.return
}

// -----

// a shared pointer as a parameter
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: parameter !cuda.ptr<f32, shared> is not a global pointer{{$}}
cuda.kernel @shared_param(%x: !cuda.ptr<f32>, %s: !cuda.ptr<f32, shared>) block 32 {
  cuda.return
}

// -----

// a launcher's size before its pointers
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: pointers come first, then one index size per name in `dims`{{$}}
cuda.host_func @size_first(%T: index, %x: !cuda.ptr<f32>) outputs 1 dims ["T"] {
  cuda.return
}

// -----

// a launcher's size that `dims` does not name
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: pointers come first, then one index size per name in `dims`{{$}}
cuda.host_func @unnamed_size(%x: !cuda.ptr<f32>, %T: index) outputs 1 {
  cuda.return
}

// -----

// a shape naming a dimension the launcher does not take
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:90: error: dimension S is not one of `dims` (T){{$}}
cuda.host_func @other_name(%x: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] shapes [[S, 8]] {
  cuda.return
}

// -----

// a grid computed from an argument that is not a size
cuda.kernel @k(%x: !cuda.ptr<f32>, %T: index) block 32 {
  cuda.return
}
cuda.host_func @grid_of_pointer(%x: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: `grid_of` lists the positions of index arguments{{$}}
  cuda.launch @k grid [65535, 1, 1] block [32, 1, 1] (%x, %T) grid_of [0] scale [1, 32] : !cuda.ptr<f32>, index
  cuda.return
}

// -----

// a grid computed with a zero divisor
cuda.kernel @k(%x: !cuda.ptr<f32>, %T: index) block 32 {
  cuda.return
}
cuda.host_func @zero_divisor(%x: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: a grid's `scale` is [scale, divisor] or [scale, divisor, times, axis], each >= 1 but the axis (0 or 1){{$}}
  cuda.launch @k grid [65535, 1, 1] block [32, 1, 1] (%x, %T) grid_of [1] scale [1, 0] : !cuda.ptr<f32>, index
  cuda.return
}

// -----

// an f32 parameter
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: parameter f32 is not a global pointer{{$}}
cuda.kernel @f32_param(%x: !cuda.ptr<f32>, %alpha: f32) block 32 {
  cuda.return
}

// -----

// block arguments that are not the function type's inputs (generic form: the
// custom form takes the function type from the arguments)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: block arguments must match the function type{{$}}
"cuda.kernel"() <{sym_name = "args_mismatch", function_type = (!cuda.ptr<f32>) -> (), block = #builtin.int<32>}> ({
^bb0(%x: !cuda.ptr<f16>):
  "cuda.return"() : () -> ()
}) : () -> ()

// -----

// one argument fewer than the function type
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: block arguments must match the function type{{$}}
"cuda.kernel"() <{sym_name = "args_missing", function_type = (!cuda.ptr<f32>, !cuda.ptr<f32>) -> (), block = #builtin.int<32>}> ({
^bb0(%x: !cuda.ptr<f32>):
  "cuda.return"() : () -> ()
}) : () -> ()

// -----

// a function type with results
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: returns nothing (outputs are pointers){{$}}
"cuda.kernel"() <{sym_name = "with_results", function_type = (!cuda.ptr<f32>) -> (!cuda.ptr<f32>), block = #builtin.int<32>}> ({
^bb0(%x: !cuda.ptr<f32>):
  "cuda.return"() : () -> ()
}) : () -> ()

// -----

// more shared memory than a block may have: 128 KiB and 99 KiB of f32 plus
// one element, padded to 16 bytes, 16 bytes over 227 KiB
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: 232464 bytes of shared memory exceed the 232448 a block may have{{$}}
cuda.kernel @shared_over_227k(%x: !cuda.ptr<f32>) block 32 {
  %a = cuda.shared_alloc 32768 : !cuda.ptr<f32, shared>
  %b = cuda.shared_alloc 25345 : !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// 2 bytes under the limit unpadded (3 f16, then 116220), but each buffer
// takes whole 16 bytes (so that the next starts aligned): 16 bytes over
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: 232464 bytes of shared memory exceed the 232448 a block may have{{$}}
cuda.kernel @shared_over_227k_padded(%x: !cuda.ptr<f32>) block 32 {
  %a = cuda.shared_alloc 3 : !cuda.ptr<f16, shared>
  %b = cuda.shared_alloc 116220 : !cuda.ptr<f16, shared>
  cuda.return
}

// -----

// -- cuda.host_func ----------------------------------------------------------

// no output
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:1: error: cuda.host_func: outputs must count trailing pointer params{{$}}
// CHECK-NEXT: {{^}}cuda.host_func @no_outputs(%x: !cuda.ptr<f32>) outputs 0 {{[{]$}}
// CHECK-NEXT: {{^}}^{{$}}
cuda.host_func @no_outputs(%x: !cuda.ptr<f32>) outputs 0 {
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// a shape for each parameter
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: shapes must give every pointer param's{{$}}
cuda.host_func @too_few_shapes(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 shapes [[4]] {
  cuda.return
}

// -----

// an update of an input the launcher does not take
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: updates names inputs it writes in place, each once (positions below 1); got [1]{{$}}
cuda.host_func @updates_past_inputs(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 updates [1] {
  cuda.return
}

// -----

// an atomic add of one byte (CUDA has none)
cuda.kernel @byte_add(%x: !cuda.ptr<i8>) block 32 {
  %i = cuda.thread_idx x
  %v = cuda.load %x[%i] : !cuda.ptr<i8> -> i8
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.atomic_add: CUDA has no atomic add of i8 (one byte){{$}}
  cuda.atomic_add %v, %x[%i] : i8, !cuda.ptr<i8>
  cuda.return
}

// -----

// more outputs than parameters
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: outputs must count trailing pointer params{{$}}
cuda.host_func @too_many_outputs(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 3 {
  cuda.return
}

// -----

// a shared pointer as a parameter
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: parameter !cuda.ptr<bf16, shared> is not a global pointer{{$}}
cuda.host_func @shared_param(%x: !cuda.ptr<f32>, %y: !cuda.ptr<bf16, shared>) outputs 1 {
  cuda.return
}

// -----

// a scalar parameter that is not a size
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: parameter f32 is not a global pointer{{$}}
cuda.host_func @f32_param(%n: f32, %y: !cuda.ptr<f32>) outputs 1 {
  cuda.return
}

// -----

// block arguments that are not the function type's inputs
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: block arguments must match the function type{{$}}
"cuda.host_func"() <{sym_name = "args_mismatch", function_type = (!cuda.ptr<f32>, !cuda.ptr<f32>) -> (), outputs = #builtin.int<1>}> ({
^bb0(%x: !cuda.ptr<f32>):
  "cuda.return"() : () -> ()
}) : () -> ()

// -----

// a function type with results
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: returns nothing (outputs are pointers){{$}}
"cuda.host_func"() <{sym_name = "with_results", function_type = (!cuda.ptr<f32>) -> (f32), outputs = #builtin.int<1>}> ({
^bb0(%x: !cuda.ptr<f32>):
  "cuda.return"() : () -> ()
}) : () -> ()

// -----

// -- cuda.launch -------------------------------------------------------------

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a grid of two sizes
cuda.host_func @grid_rank(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: cuda.launch: grid must be three sizes >= 1{{$}}
// CHECK-NEXT: {{^}}  cuda.launch @k grid [1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  cuda.launch @k grid [1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a grid of four sizes
cuda.host_func @grid_rank_four(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: grid must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// an empty grid dimension
cuda.host_func @grid_zero(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: grid must be three sizes >= 1{{$}}
  cuda.launch @k grid [0, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a block of two sizes
cuda.host_func @block_rank(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: block must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a block with a zero size
cuda.host_func @block_zero(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: block must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1] block [0, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a block with a negative size
cuda.host_func @block_negative(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: block must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, -2] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// an `aligned` position past the arguments
cuda.host_func @aligned_out_of_range(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: `aligned` lists argument positions, ascending, each once{{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x, %y) aligned [0, 2] else @k : !cuda.ptr<f32>, !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// `aligned` without a kernel to fall back to (generic form)
cuda.host_func @aligned_alone(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: `aligned` and its `else` kernel come together{{$}}
  "cuda.launch"(%x, %y) <{callee = @k, grid = array<i64: 1, 1, 1>, block = array<i64: 32, 1, 1>, aligned = array<i64: 0>}> : (!cuda.ptr<f32>, !cuda.ptr<f32>) -> ()
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.kernel @k_scalar(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a fallback kernel whose parameters differ from the arguments
cuda.host_func @fallback_mismatch(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: the arguments do not match @k_scalar's parameters (!cuda.ptr<f32>){{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x, %y) aligned [0] else @k_scalar : !cuda.ptr<f32>, !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>) block 256 {
  cuda.return
}

// a grid and block of an `else` kernel, with no `else` kernel
cuda.host_func @fallback_shape_alone(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: the `else` kernel's own grid and block come together, after it{{$}}
  cuda.launch @k grid [1, 1, 1] block [128, 1, 1] (%x) grid [2, 1, 1] block [256, 1, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>) block 256 {
  cuda.return
}

// an `else` kernel's grid of two sizes
cuda.host_func @fallback_grid_rank(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: the `else` kernel's grid must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1] block [128, 1, 1] (%x) aligned [0] else @k_simt grid [2, 1] block [256, 1, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>) block 256 {
  cuda.return
}

// an `else` kernel's block with a zero size
cuda.host_func @fallback_block_zero(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: the `else` kernel's block must be three sizes >= 1{{$}}
  cuda.launch @k grid [1, 1, 1] block [128, 1, 1] (%x) aligned [0] else @k_simt grid [2, 1, 1] block [256, 0, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>) block 256 {
  cuda.return
}

// an `else` kernel's own block over its launch bound (checked against the
// `else` kernel's bound, with its own block)
cuda.host_func @fallback_block_over_bound(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: 512 threads per block exceed @k_simt's launch bound of 256{{$}}
  cuda.launch @k grid [1, 1, 1] block [128, 1, 1] (%x) aligned [0] else @k_simt grid [2, 1, 1] block [256, 2, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>) block 256 {
  cuda.return
}

// the first kernel's block over its launch bound, though within the `else`
// kernel's (which has its own block)
cuda.host_func @block_over_bound_with_fallback(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: 256 threads per block exceed @k's launch bound of 128{{$}}
  cuda.launch @k grid [1, 1, 1] block [256, 1, 1] (%x) aligned [0] else @k_simt grid [2, 1, 1] block [256, 1, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}

// an `else` kernel that is a launcher, not a kernel
cuda.host_func @fallback_not_kernel(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: @fallback_not_kernel is not a cuda.kernel{{$}}
  cuda.launch @k grid [1, 1, 1] block [128, 1, 1] (%x) aligned [0] else @fallback_not_kernel grid [2, 1, 1] block [128, 1, 1] : !cuda.ptr<f32>
  cuda.return
}

// -----

// -- cuda.copy ---------------------------------------------------------------

// a copy of no element
cuda.host_func @copy_zero(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.copy: size must be >= 1{{$}}
  cuda.copy %y, %x, 0 : !cuda.ptr<f32>
  cuda.return
}

// -----

// a negative size (generic form)
cuda.host_func @copy_negative(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.copy: size must be >= 1{{$}}
  "cuda.copy"(%y, %x) <{size = -3 : i64}> : (!cuda.ptr<f32>, !cuda.ptr<f32>) -> ()
  cuda.return
}

// -----

// a copy between buffers of two element types (generic form: the custom
// form has one type for both)
cuda.host_func @copy_mismatch(%x: !cuda.ptr<f16>, %y: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'source' at position 1 does not verify:{{$}}
// CHECK-NEXT: {{^}}attribute !cuda.ptr<f32> expected from variable 'T', but got !cuda.ptr<f16>{{$}}
  "cuda.copy"(%y, %x) <{size = 4 : i64}> : (!cuda.ptr<f32>, !cuda.ptr<f16>) -> ()
  cuda.return
}

// -----

// -- ops outside their parent ------------------------------------------------

// a launch from a kernel (no dynamic parallelism)
cuda.kernel @launch_in_kernel(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.launch' expects parent op 'cuda.host_func'{{$}}
  cuda.launch @launch_in_kernel grid [1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  cuda.return
}

// -----

// a launch from a func.func
cuda.kernel @k(%p: !cuda.ptr<f32>) block 32 {
  cuda.return
}
func.func @launch_in_func(%x: !cuda.ptr<f32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.launch' expects parent op 'cuda.host_func'{{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x) : !cuda.ptr<f32>
  func.return
}

// -----

// a device buffer allocated in a kernel
cuda.kernel @alloc_in_kernel(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.alloc' expects parent op 'cuda.host_func'{{$}}
  %t = cuda.alloc 4 : !cuda.ptr<f32>
  cuda.return
}

// -----

// a buffer allocated in a loop of a launcher: the parent is scf.for
cuda.host_func @alloc_in_loop(%x: !cuda.ptr<f32>) outputs 1 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:5: error: 'cuda.alloc' expects parent op 'cuda.host_func'{{$}}
    %t = cuda.alloc 4 : !cuda.ptr<f32>
  }
  cuda.return
}

// -----

// a free in a kernel
cuda.kernel @free_in_kernel(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.free' expects parent op 'cuda.host_func'{{$}}
  cuda.free %x : !cuda.ptr<f32>
  cuda.return
}

// -----

// a free in a func.func
func.func @free_in_func(%x: !cuda.ptr<f32>) {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.free' expects parent op 'cuda.host_func'{{$}}
  cuda.free %x : !cuda.ptr<f32>
  func.return
}

// -----

// a copy in a kernel
cuda.kernel @copy_in_kernel(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.copy' expects parent op 'cuda.host_func'{{$}}
  cuda.copy %y, %x, 4 : !cuda.ptr<f32>
  cuda.return
}

// -----

// cuda.return ending a func.func
func.func @return_in_func() {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.return' expects parent op to be one of 'cuda.kernel', 'cuda.host_func'{{$}}
  cuda.return
}

// -----

// cuda.return at the top level
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: 'cuda.return' expects parent op to be one of 'cuda.kernel', 'cuda.host_func'{{$}}
cuda.return

// -----

// cuda.return before the end of the kernel
cuda.kernel @return_not_last(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: 'cuda.return' must be the last operation in its parent block{{$}}
  cuda.return
  %i = cuda.thread_idx x
}

// -----

// a kernel body without cuda.return
cuda.kernel @no_return(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: Operation cuda.thread_idx terminates block in single-block region but is not a terminator{{$}}
  %i = cuda.thread_idx x
}

// -----

// -- !cuda.ptr ---------------------------------------------------------------

// f64 elements, in a kernel's signature (reported at the kernel)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: !cuda.ptr: element type f64 is not a tensor's (f32, f16, bf16, i64, i32, i8, ui8 or i1) or, in shared memory, an mbarrier's (ui64){{$}}
cuda.kernel @ptr_f64(%x: !cuda.ptr<f64>) block 32 {
  cuda.return
}

// -----

// a shared i16 array (reported at the op whose type it is)
cuda.kernel @ptr_i16_shared(%x: !cuda.ptr<f32>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.shared_alloc: !cuda.ptr: element type i16 is not a tensor's (f32, f16, bf16, i64, i32, i8, ui8 or i1) or, in shared memory, an mbarrier's (ui64){{$}}
  %s = cuda.shared_alloc 4 : !cuda.ptr<i16, shared>
  cuda.return
}

// -----

// a pointer to an index, in a func.func's signature
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: func.func: !cuda.ptr: element type index is not a tensor's (f32, f16, bf16, i64, i32, i8, ui8 or i1) or, in shared memory, an mbarrier's (ui64){{$}}
func.func @ptr_index(%x: !cuda.ptr<index>) {
  func.return
}

// -----

// a memory space other than global and shared (a syntax error, at the space)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:41: error: Expected `global`, or `shared`.{{$}}
func.func @ptr_local(%x: !cuda.ptr<f32, local>) {
  func.return
}

// -----

// -- blocks that wait for each other -------------------------------------------

// a group barrier counting in floats
cuda.kernel @float_counters(%c: !cuda.ptr<f32>) block 32 {
  %t = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.group_barrier: the counters are a !cuda.ptr<f32>, not a !cuda.ptr<i32>{{$}}
  cuda.group_barrier %c[%t], %t : !cuda.ptr<f32>
  cuda.return
}

// -----

// a last arrival counted in floats
cuda.kernel @float_arrivals(%c: !cuda.ptr<f32>) block 32 {
  %t = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.last_arrival: the counters are a !cuda.ptr<f32>, not a !cuda.ptr<i32>{{$}}
  %last = cuda.last_arrival %c[%t], %t : !cuda.ptr<f32>
  cuda.return
}

// -----

// a last arrival among threads that are not whole warps
cuda.kernel @arrivals_among_part_warps(%c: !cuda.ptr<i32>) block 64 {
  %t = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.last_arrival: among 48 threads: a named barrier takes whole warps, 32 to 1024 threads{{$}}
  %last = cuda.last_arrival %c[%t], %t among 48 : !cuda.ptr<i32>
  cuda.return
}

// -----

// a coherent load of four elements at once
cuda.kernel @coherent_vector(%p: !cuda.ptr<f32>) block 32 {
  %t = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.load: a coherent load reads one element of global memory{{$}}
  %a, %b, %c, %d = cuda.load coherent %p[%t] : !cuda.ptr<f32> -> f32, f32, f32, f32
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// a cooperative grid that is not whole groups of blocks
cuda.host_func @partial_group(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: a cooperative grid is whole groups of 4 blocks along x{{$}}
  cuda.launch @k grid [6, 1, 1] block [32, 1, 1] (%x) cooperative [4] : !cuda.ptr<f32>
  cuda.return
}

// -----

cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}

// zeroing no elements
cuda.host_func @zero_nothing(%x: !cuda.ptr<f32>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.zero: size must be >= 1{{$}}
  cuda.zero %x, 0 : !cuda.ptr<f32>
  cuda.return
}

// -----

// -- tensor cores: cuda.cp_async, cuda.cp_async_wait, cuda.ldmatrix, cuda.mma --

// an asynchronous copy into global memory
cuda.kernel @cp_async_to_global(%a: !cuda.ptr<f16>, %b: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
  %true = arith.constant true
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: cuda.cp_async: copies from global to shared memory of one element type, not from !cuda.ptr<f16> to !cuda.ptr<f16>{{$}}
// CHECK-NEXT: {{^}}  cuda.cp_async %b[%t], %a[%t], %true : !cuda.ptr<f16>, !cuda.ptr<f16>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  cuda.cp_async %b[%t], %a[%t], %true : !cuda.ptr<f16>, !cuda.ptr<f16>
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// an asynchronous copy from shared memory
cuda.kernel @cp_async_from_shared(%a: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
  %true = arith.constant true
  %s = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
  %u = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.cp_async: copies from global to shared memory of one element type, not from !cuda.ptr<f16, shared> to !cuda.ptr<f16, shared>{{$}}
  cuda.cp_async %s[%t], %u[%t], %true : !cuda.ptr<f16, shared>, !cuda.ptr<f16, shared>
  cuda.return
}

// -----

// an asynchronous copy between element types (f32 to f16: a copy converts
// nothing)
cuda.kernel @cp_async_types(%a: !cuda.ptr<f32>) block 32 {
  %t = cuda.thread_idx x
  %true = arith.constant true
  %s = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.cp_async: copies from global to shared memory of one element type, not from !cuda.ptr<f32> to !cuda.ptr<f16, shared>{{$}}
  cuda.cp_async %s[%t], %a[%t], %true : !cuda.ptr<f16, shared>, !cuda.ptr<f32>
  cuda.return
}

// -----

// an index where the i1 flag goes (generic form: the custom form takes its
// type from the op)
cuda.kernel @cp_async_flag_index(%a: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
  %s = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'valid' at position 4 does not verify:{{$}}
// CHECK-NEXT: {{^}}Expected attribute i1 but got index{{$}}
  "cuda.cp_async"(%s, %t, %a, %t, %t) : (!cuda.ptr<f16, shared>, index, !cuda.ptr<f16>, index, index) -> ()
  cuda.return
}

// -----

// waiting with 8 groups in flight (cp.async.wait_group takes 0 to 7)
cuda.kernel @cp_async_wait_8(%a: !cuda.ptr<f16>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.cp_async_wait: pending is 0 to 7{{$}}
  cuda.cp_async_wait 8
  cuda.return
}

// -----

// a negative count (the custom form takes no sign: the generic form)
cuda.kernel @cp_async_wait_negative(%a: !cuda.ptr<f16>) block 32 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.cp_async_wait: pending is 0 to 7{{$}}
  "cuda.cp_async_wait"() <{pending = -1 : i64}> : () -> ()
  cuda.return
}

// -----

// ldmatrix from global memory
cuda.kernel @ldmatrix_global(%a: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.ldmatrix: reads f16, bf16 or f32 shared memory, not !cuda.ptr<f16>{{$}}
  %r0, %r1, %r2, %r3 = cuda.ldmatrix %a[%t] : !cuda.ptr<f16>
  cuda.return
}

// -----

// ldmatrix of 32-bit elements, transposed (it transposes 16-bit ones)
cuda.kernel @ldmatrix_f32(%a: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
  %s = cuda.shared_alloc 256 : !cuda.ptr<f32, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.ldmatrix: transposes 16-bit elements only, not f32{{$}}
  %r0, %r1, %r2, %r3 = cuda.ldmatrix trans %s[%t] : !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// ldmatrix giving f32 values, not i32 fragments (generic form: the custom
// form takes the result types from the op)
cuda.kernel @ldmatrix_f32_results(%a: !cuda.ptr<f16>) block 32 {
  %t = cuda.thread_idx x
  %s = cuda.shared_alloc 256 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: result 'r0' at position 0 does not verify:{{$}}
// CHECK-NEXT: {{^}}Expected attribute i32 but got f32{{$}}
  %r0, %r1, %r2, %r3 = "cuda.ldmatrix"(%s, %t) : (!cuda.ptr<f16, shared>, index) -> (f32, f32, f32, f32)
  cuda.return
}

// -----

// an mma of f64 operands
cuda.kernel @mma_f64(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mma: multiplies f16, bf16 or tf32 (f32) operands, not f64{{$}}
  %d0, %d1, %d2, %d3 = cuda.mma f64 a [%i, %i, %i, %i] b [%i, %i] c [%z, %z, %z, %z]
  cuda.return
}

// -----

// a tf32 split of an f16 value
cuda.kernel @split_tf32_f16(%y: !cuda.ptr<f32>) block 32 {
  %h = arith.constant 1.000000e+00 : f16
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.split_tf32: Unexpected attribute f16{{$}}
  %big, %small = cuda.split_tf32 %h : f16
  cuda.return
}

// -----

// three A registers
cuda.kernel @mma_three_a(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mma: m16n8k16 (m16n8k8 on tf32) takes four A registers, two B registers and four f32 accumulators, and gives four{{$}}
  %d0, %d1, %d2, %d3 = cuda.mma f16 a [%i, %i, %i] b [%i, %i] c [%z, %z, %z, %z]
  cuda.return
}

// -----

// four B registers
cuda.kernel @mma_four_b(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mma: m16n8k16 (m16n8k8 on tf32) takes four A registers, two B registers and four f32 accumulators, and gives four{{$}}
  %d0, %d1, %d2, %d3 = cuda.mma bf16 a [%i, %i, %i, %i] b [%i, %i, %i, %i] c [%z, %z, %z, %z]
  cuda.return
}

// -----

// two accumulators
cuda.kernel @mma_two_c(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mma: m16n8k16 (m16n8k8 on tf32) takes four A registers, two B registers and four f32 accumulators, and gives four{{$}}
  %d0, %d1, %d2, %d3 = cuda.mma bf16 a [%i, %i, %i, %i] b [%i, %i] c [%z, %z]
  cuda.return
}

// -----

// f16 accumulators (a syntax error in the custom form, whose accumulators
// are f32: at the operand)
cuda.kernel @mma_f16_accumulators(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f16
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:70: error: operand is used with type f32, but has been previously used or defined with type f16{{$}}
  %d0, %d1, %d2, %d3 = cuda.mma f16 a [%i, %i, %i, %i] b [%i, %i] c [%z, %z, %z, %z]
  cuda.return
}

// -----

// the same in the generic form: reported by the verifier
cuda.kernel @mma_f16_accumulators_generic(%y: !cuda.ptr<f32>) block 32 {
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f16
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'c' at positions 6 to 9 does not verify:{{$}}
// CHECK-NEXT: {{^}}f16 should be of base attribute f32{{$}}
  %d0, %d1, %d2, %d3 = "cuda.mma"(%i, %i, %i, %i, %i, %i, %z, %z, %z, %z) <{operand = f16, operandSegmentSizes = array<i32: 4, 2, 4>}> : (i32, i32, i32, i32, i32, i32, f16, f16, f16, f16) -> (f32, f32, f32, f32)
  cuda.return
}

// -----

// A registers of 16 bits, not fragments of two packed elements (generic form)
cuda.kernel @mma_i16_registers(%y: !cuda.ptr<f32>) block 32 {
  %h = arith.constant 0 : i16
  %i = arith.constant 0 : i32
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'a' at positions 0 to 3 does not verify:{{$}}
// CHECK-NEXT: {{^}}Expected attribute i32 but got i16{{$}}
  %d0, %d1, %d2, %d3 = "cuda.mma"(%h, %h, %h, %h, %i, %i, %z, %z, %z, %z) <{operand = f16, operandSegmentSizes = array<i32: 4, 2, 4>}> : (i16, i16, i16, i16, i32, i32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  cuda.return
}

// -----

// -- wgmma (sm_90a): cuda.wgmma_descriptor, cuda.wgmma, cuda.wgmma_reg_a, cuda.wgmma_wait

// a wgmma of f32 operands
cuda.kernel @wgmma_f32(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 3]]:3: error: cuda.wgmma: multiplies f16 or bf16 operands, not f32{{$}}
// CHECK-NEXT: {{^}}  %d0, %d1, %d2, %d3 = cuda.wgmma f32 n 8 %d, %d [%z, %z, %z, %z] : f32, f32, f32, f32{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
  %d0, %d1, %d2, %d3 = cuda.wgmma f32 n 8 %d, %d [%z, %z, %z, %z] : f32, f32, f32, f32
  cuda.return
}
// CHECK-NEXT: {{^// -{5}$}}

// -----

// an N that is not a multiple of 8 (with the n / 2 accumulators it would take)
cuda.kernel @wgmma_n12(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma: N is a multiple of 8 from 8 to 256, not 12{{$}}
  %d0, %d1, %d2, %d3, %d4, %d5 = cuda.wgmma f16 n 12 %d, %d [%z, %z, %z, %z, %z, %z] : f32, f32, f32, f32, f32, f32
  cuda.return
}

// -----

// an N past 256 (generic form)
cuda.kernel @wgmma_n264(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<bf16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<bf16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma: N is a multiple of 8 from 8 to 256, not 264{{$}}
  %d0, %d1, %d2, %d3 = "cuda.wgmma"(%d, %d, %z, %z, %z, %z) <{operand = bf16, n = 264 : i64}> : (ui64, ui64, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  cuda.return
}

// -----

// n 16 with the 4 accumulators of n 8 (m64n16k16 takes 8 a thread)
cuda.kernel @wgmma_accumulators(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma: m64n16k16 takes and gives 8 f32 accumulators a thread, not 4 and 4{{$}}
  %d0, %d1, %d2, %d3 = cuda.wgmma f16 n 16 %d, %d [%z, %z, %z, %z] : f32, f32, f32, f32
  cuda.return
}

// -----

// as many accumulators as n 8 takes, but twice as many results (generic
// form: the custom form has one list of types, the results')
cuda.kernel @wgmma_results(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma: m64n8k16 takes and gives 4 f32 accumulators a thread, not 4 and 8{{$}}
  %d0, %d1, %d2, %d3, %d4, %d5, %d6, %d7 = "cuda.wgmma"(%d, %d, %z, %z, %z, %z) <{operand = f16, n = 8 : i64}> : (ui64, ui64, f32, f32, f32, f32) -> (f32, f32, f32, f32, f32, f32, f32, f32)
  cuda.return
}

// -----

// no accumulators in (D = A B), but fewer results than n 8 gives
cuda.kernel @wgmma_fresh_results(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma: m64n8k16 takes and gives 4 f32 accumulators a thread, not 2 and 2{{$}}
  %d0, %d1 = cuda.wgmma f16 n 8 %d, %d [] : f32, f32
  cuda.return
}

// -----

// A from registers: three fragment registers, not four
cuda.kernel @wgmma_reg_a_three(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
  %p = cuda.pack f16 %z, %z
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_reg_a: A is four fragment registers a thread, not 3{{$}}
  %d0, %d1, %d2, %d3 = cuda.wgmma_reg_a f16 n 8 trans_b [%p, %p, %p], %d [%z, %z, %z, %z] : f32, f32, f32, f32
  cuda.return
}

// -----

// A from registers on f32 operands
cuda.kernel @wgmma_reg_a_f32(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.000000e+00 : f32
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %d = cuda.wgmma_descriptor %s[%c0] leading 8192 stride 1024 : !cuda.ptr<f16, shared>
  %p = cuda.pack f16 %z, %z
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_reg_a: multiplies f16 or bf16 operands, not f32{{$}}
  %d0, %d1, %d2, %d3 = cuda.wgmma_reg_a f32 n 8 [%p, %p, %p, %p], %d [%z, %z, %z, %z] : f32, f32, f32, f32
  cuda.return
}

// -----

// f32 values where the descriptors go (generic form: the custom form takes
// their type from the op)
cuda.kernel @wgmma_f32_descriptors(%y: !cuda.ptr<f32>) block 128 {
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 2]]:3: error: operand 'a' at position 0 does not verify:{{$}}
// CHECK-NEXT: {{^}}Expected attribute ui64 but got f32{{$}}
  %d0, %d1, %d2, %d3 = "cuda.wgmma"(%z, %z, %z, %z, %z, %z) <{operand = f16, n = 8 : i64}> : (f32, f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  cuda.return
}

// -----

// a descriptor of global memory (wgmma reads its operands from shared memory)
cuda.kernel @descriptor_global(%a: !cuda.ptr<f16>) block 128 {
  %c0 = arith.constant 0 : index
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_descriptor: describes f16 or bf16 shared memory, not !cuda.ptr<f16>{{$}}
  %d = cuda.wgmma_descriptor %a[%c0] leading 16 stride 1024 : !cuda.ptr<f16>
  cuda.return
}

// -----

// a descriptor of an f32 buffer
cuda.kernel @descriptor_f32(%a: !cuda.ptr<f16>) block 128 {
  %c0 = arith.constant 0 : index
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f32, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_descriptor: describes f16 or bf16 shared memory, not !cuda.ptr<f32, shared>{{$}}
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 1024 : !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// a leading byte offset that is not a multiple of 16 (the descriptor holds
// it in 16-byte units)
cuda.kernel @descriptor_leading_8(%a: !cuda.ptr<f16>) block 128 {
  %c0 = arith.constant 0 : index
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_descriptor: leading is a multiple of 16 bytes below 2^18, not 8{{$}}
  %d = cuda.wgmma_descriptor %s[%c0] leading 8 stride 1024 : !cuda.ptr<f16, shared>
  cuda.return
}

// -----

// a negative leading byte offset (the custom form takes no sign: the
// generic form)
cuda.kernel @descriptor_leading_negative(%a: !cuda.ptr<f16>) block 128 {
  %c0 = arith.constant 0 : index
  %s = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_descriptor: leading is a multiple of 16 bytes below 2^18, not -16{{$}}
  %d = "cuda.wgmma_descriptor"(%s, %c0) <{leading = -16 : i64, stride = 1024 : i64}> : (!cuda.ptr<f16, shared>, index) -> ui64
  cuda.return
}

// -----

// a stride of 2^18 bytes (past the descriptor's 14-bit field of 16-byte units)
cuda.kernel @descriptor_stride_2_18(%a: !cuda.ptr<bf16>) block 128 {
  %c0 = arith.constant 0 : index
  %s = cuda.shared_alloc 4096 : !cuda.ptr<bf16, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_descriptor: stride is a multiple of 16 bytes below 2^18, not 262144{{$}}
  %d = cuda.wgmma_descriptor %s[%c0] leading 16 stride 262144 : !cuda.ptr<bf16, shared>
  cuda.return
}

// -----

// waiting with 9 groups in flight (wgmma.wait_group takes 0 to 7)
cuda.kernel @wgmma_wait_9(%y: !cuda.ptr<f32>) block 128 {
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_wait: pending is 0 to 7{{$}}
  %e0, %e1 = cuda.wgmma_wait 9 [%z, %z] : f32, f32
  cuda.return
}

// -----

// a wait giving three accumulators for two (generic form)
cuda.kernel @wgmma_wait_counts(%y: !cuda.ptr<f32>) block 128 {
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_wait: gives one accumulator for each it takes{{$}}
  %e0, %e1, %e2 = "cuda.wgmma_wait"(%z, %z) <{pending = 0 : i64}> : (f32, f32) -> (f32, f32, f32)
  cuda.return
}

// -----

// the same in the custom form, whose types are the results'
cuda.kernel @wgmma_wait_counts_custom(%y: !cuda.ptr<f32>) block 128 {
  %z = arith.constant 0.000000e+00 : f32
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.wgmma_wait: gives one accumulator for each it takes{{$}}
  %e0, %e1, %e2 = cuda.wgmma_wait 0 [%z, %z] : f32, f32, f32
  cuda.return
}

// -----

// mbarriers that are not i64 in shared memory
cuda.kernel @barrier_f32(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %b = cuda.shared_alloc 2 : !cuda.ptr<f32, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mbarrier_init: the barriers are a !cuda.ptr<f32, shared>, not a !cuda.ptr<ui64, shared>{{$}}
  cuda.mbarrier_init %b[%c0], 1 : !cuda.ptr<f32, shared>
  cuda.return
}

// -----

// an mbarrier expecting no arrivals
cuda.kernel @barrier_zero(%y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %b = cuda.shared_alloc 2 : !cuda.ptr<ui64, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mbarrier_init: count is 1 to 2^20 - 1{{$}}
  cuda.mbarrier_init %b[%c0], 0 : !cuda.ptr<ui64, shared>
  cuda.return
}

// -----

// ui64 pointers in global memory (only mbarriers, in shared memory, are ui64)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.kernel: !cuda.ptr: element type ui64 is not a tensor's (f32, f16, bf16, i64, i32, i8, ui8 or i1) or, in shared memory, an mbarrier's (ui64){{$}}
cuda.kernel @global_ui64(%y: !cuda.ptr<ui64>) block 128 {
  cuda.return
}

// -----

// a TMA box of bf16 into f16 shared memory
cuda.kernel @tma_types(%map: !cuda.tensor_map<bf16>, %y: !cuda.ptr<f32>) block 128 {
  %c0 = arith.constant 0 : index
  %t = cuda.shared_alloc 4096 : !cuda.ptr<f16, shared>
  %b = cuda.shared_alloc 1 : !cuda.ptr<ui64, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.tma_load: loads a !cuda.tensor_map<bf16> into shared memory of its element type, not into !cuda.ptr<f16, shared>{{$}}
  cuda.tma_load %map, %t[%c0], %b[%c0], [%c0, %c0] : !cuda.tensor_map<bf16>, !cuda.ptr<f16, shared>, !cuda.ptr<ui64, shared>
  cuda.return
}

// -----

// a named barrier of part of a warp
cuda.kernel @named_barrier_threads(%x: !cuda.ptr<f32>) block 128 {
  %c1 = arith.constant 1 : index
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.named_barrier: threads must be a positive multiple of 32{{$}}
  cuda.named_barrier %c1, 48
  cuda.return
}

// -----

// a register count setmaxnreg does not take
cuda.kernel @registers_41(%y: !cuda.ptr<f32>) block 128 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.set_max_registers: count is a multiple of 8 from 24 to 256, not 41{{$}}
  cuda.set_max_registers "dec" 41
  cuda.return
}

// -----

// a tensor map as a launcher's parameter (kernels take them; the launcher
// encodes them)
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:1: error: cuda.host_func: parameter !cuda.tensor_map<bf16> is not a global pointer{{$}}
cuda.host_func @map_param(%m: !cuda.tensor_map<bf16>) outputs 1 {
  cuda.return
}

// -----

// a TMA box wider than a 128-byte swizzled row
cuda.host_func @box_wide(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.make_tensor_map: a box is up to 256 rows of 128 bytes (128-byte swizzle), not 64x128{{$}}
  %m = cuda.make_tensor_map %x [100, 256] box [64, 128] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.return
}

// -----

// rows of 100 bf16 (200 bytes: not whole 16-byte units)
cuda.host_func @rows_odd(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.make_tensor_map: a row of 100 elements is not a whole number of 16 bytes, as TMA needs{{$}}
  %m = cuda.make_tensor_map %x [64, 100] box [64, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<bf16>
  cuda.return
}

// -----

// a map of f16 elements of a bf16 matrix
cuda.host_func @map_types(%x: !cuda.ptr<bf16>, %y: !cuda.ptr<bf16>) outputs 1 {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.make_tensor_map: maps a global matrix of the map's element type, not a !cuda.ptr<bf16> as a !cuda.tensor_map<f16>{{$}}
  %m = cuda.make_tensor_map %x [64, 64] box [64, 64] : !cuda.ptr<bf16> -> !cuda.tensor_map<f16>
  cuda.return
}

// -----

// a multicast mask of no block, and expect_tx at another block's barrier
cuda.kernel @bad_cluster(%map: !cuda.tensor_map<bf16>) block 128 cluster 2 {
  %c0 = arith.constant 0 : index
  %t = cuda.shared_alloc 4096 : !cuda.ptr<bf16, shared>
  %b = cuda.shared_alloc 1 : !cuda.ptr<ui64, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.tma_load: multicast is a mask of the cluster's blocks, 1 to 2^16 - 1{{$}}
  cuda.tma_load %map, %t[%c0], %b[%c0], [%c0, %c0] multicast 0 : !cuda.tensor_map<bf16>, !cuda.ptr<bf16, shared>, !cuda.ptr<ui64, shared>
  cuda.return
}

// -----

cuda.kernel @bad_remote_expect(%map: !cuda.tensor_map<bf16>) block 128 cluster 2 {
  %c0 = arith.constant 0 : index
  %b = cuda.shared_alloc 1 : !cuda.ptr<ui64, shared>
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.mbarrier_arrive: expect_tx is told to this block's barrier, not another block's (cta){{$}}
  cuda.mbarrier_arrive %b[%c0] cta %c0 expect_tx 64 : !cuda.ptr<ui64, shared>
  cuda.return
}

// -----

// a variant's sizes from a pointer
cuda.kernel @k(%x: !cuda.ptr<f32>, %T: index) block 32 {
  cuda.return
}
cuda.host_func @when_pointer(%x: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: `when` is [position of an index argument, least, most] with 1 <= least <= most (most 0: no bound){{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x, %T) when [0, 1, 8] : !cuda.ptr<f32>, index
  cuda.return
}

// -----

// an `else` kernel's computed grid where the launch's is not
cuda.kernel @k(%x: !cuda.ptr<f32>, %T: index) block 32 {
  cuda.return
}
cuda.kernel @k_simt(%x: !cuda.ptr<f32>, %T: index) block 64 {
  cuda.return
}
cuda.host_func @else_scale_alone(%x: !cuda.ptr<f32>, %T: index) outputs 1 dims ["T"] {
  // CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: `else_scale` follows the `else` kernel's own grid, of a launch whose grid is computed (`grid_of`){{$}}
  cuda.launch @k grid [1, 1, 1] block [32, 1, 1] (%x, %T) aligned [0] else @k_simt grid [2, 1, 1] block [64, 1, 1] else_scale [1, 32] : !cuda.ptr<f32>, index
  cuda.return
}

// -----

// cuda.launch: a grid past what dim3's x holds (it would be cut to 0)
cuda.kernel @k(%x: !cuda.ptr<f32>) block 32 {
  cuda.return
}
cuda.host_func @h(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 shapes [[4], [4]] {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: grid [4294967296, 1, 1] has 4294967296 along x; CUDA launches at most 2147483647{{$}}
  cuda.launch @k grid [4294967296, 1, 1] block [32, 1, 1] (%y) : !cuda.ptr<f32>
  cuda.return
}

// -----

// cuda.launch: a block deeper along z than CUDA's 64
cuda.kernel @k(%x: !cuda.ptr<f32>) block 128 {
  cuda.return
}
cuda.host_func @h(%x: !cuda.ptr<f32>, %y: !cuda.ptr<f32>) outputs 1 shapes [[4], [4]] {
// CHECK: {{.*}}invalid.mlir:[[# @LINE + 1]]:3: error: cuda.launch: block [1, 1, 128] has 128 along z; CUDA launches at most 64{{$}}
  cuda.launch @k grid [1, 1, 1] block [1, 1, 128] (%y) : !cuda.ptr<f32>
  cuda.return
}
