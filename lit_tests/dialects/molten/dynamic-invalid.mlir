// RUN: molten-opt %s --split-input-file --verify-diagnostics > %t
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=NOMODULE < %t

// The rules of named dimensions, one case each: a name matches itself or
// 1, never another name or a fixed size; every ? is named.
// NOMODULE-NOT: builtin.module

// two names in one place
func.func @two_names(%x: tensor<?x8xf32, ["T"]>, %y: tensor<?x8xf32, ["S"]>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.add: lhs tensor<?x8xf32, ["T"]> and rhs tensor<?x8xf32, ["S"]> cannot be broadcast together (dimension -2: T vs S){{$}}
  %0 = molten.add %x, %y : (tensor<?x8xf32, ["T"]>, tensor<?x8xf32, ["S"]>) -> tensor<?x8xf32, ["T"]>
  func.return
}

// -----

// a name against a fixed size other than 1
func.func @name_and_size(%x: tensor<?x8xf32, ["T"]>, %y: tensor<4x8xf32>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.mul: lhs tensor<?x8xf32, ["T"]> and rhs tensor<4x8xf32> cannot be broadcast together (dimension -2: T vs 4){{$}}
  %0 = molten.mul %x, %y : (tensor<?x8xf32, ["T"]>, tensor<4x8xf32>) -> tensor<?x8xf32, ["T"]>
  func.return
}

// -----

// a ? without a name
func.func @unnamed(%x: tensor<?x8xf32>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.exp: operand 'input' tensor<?x8xf32> has a dynamic dimension without a name: each ? is named, in order, by an identifier in the encoding (tensor<?x8xf32, ["T"]>){{$}}
  %0 = molten.exp %x : tensor<?x8xf32>
  func.return
}

// -----

// a reshape that would merge T into another dimension
func.func @reshape_merges_t(%x: tensor<?x8xf32, ["T"]>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.reshape: input tensor<?x8xf32, ["T"]> has T*8 elements but result tensor<?xf32, ["S"]> has S*1{{$}}
  %0 = molten.reshape %x : tensor<?x8xf32, ["T"]> -> tensor<?xf32, ["S"]>
  func.return
}

// -----

// rotating the halves of a dimension that has no fixed size
func.func @rotate_dynamic(%x: tensor<8x?xf32, ["D"]>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.rotate_half: input tensor<8x?xf32, ["D"]> needs an even last dimension to split in halves, a fixed size, not D{{$}}
  %0 = molten.rotate_half %x : tensor<8x?xf32, ["D"]>
  func.return
}

// -----

// matmul contracting two names
func.func @matmul_k(%a: tensor<4x?xf32, ["K"]>, %b: tensor<?x8xf32, ["L"]>) {
// CHECK: {{.*}}dynamic-invalid.mlir:[[# @LINE + 1]]:3: error: molten.matmul: contraction sizes differ: lhs tensor<4x?xf32, ["K"]> has K = K, rhs tensor<?x8xf32, ["L"]> has K = L{{$}}
  %0 = molten.matmul %a, %b : (tensor<4x?xf32, ["K"]>, tensor<?x8xf32, ["L"]>) -> tensor<4x8xf32>
  func.return
}
