// RUN: molten-opt %s --split-input-file | filecheck %s
// RUN: molten-opt %s --split-input-file --print-op-generic | molten-opt --split-input-file | filecheck %s
// RUN: sed -e 's/<@g, 9 <= T <= 32>/<@g, 9 <= T <= 4>/' %s | not molten-opt --split-input-file 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: sed -e 's/<@g, 9 <= T <= 32>/<@g, 0 <= T <= 32>/' %s | not molten-opt --split-input-file 2>&1 | filecheck %s --check-prefix=ZERO

// #molten.sizes: the range of a named size one copy of a graph runs at
// (split-size-classes), bounded or open, round-trips in both forms.

// CHECK:      func.func @g_T9(%x: tensor<?x4xf32, ["T"]>) -> tensor<?x4xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 9 <= T <= 32>} {
// CHECK:      func.func @g_T33(%x: tensor<?x4xf32, ["T"]>) -> tensor<?x4xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 33 <= T>} {

// EMPTY: error: func.func: #molten.sizes: 9 <= T <= 4 is no range of sizes (least >= 1, most >= least or 0: no bound)
// ZERO: error: func.func: #molten.sizes: 0 <= T <= 32 is no range of sizes (least >= 1, most >= least or 0: no bound)

func.func @g_T9(%x: tensor<?x4xf32, ["T"]>) -> tensor<?x4xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 9 <= T <= 32>} {
  func.return %x : tensor<?x4xf32, ["T"]>
}
func.func @g_T33(%x: tensor<?x4xf32, ["T"]>) -> tensor<?x4xf32, ["T"]> attributes {molten.sizes = #molten.sizes<@g, 33 <= T>} {
  func.return %x : tensor<?x4xf32, ["T"]>
}
