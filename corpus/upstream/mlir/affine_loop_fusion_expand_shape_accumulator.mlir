// MLIR 22.1.8 (Debian mlir-22-tools): affine-loop-fusion miscompiles a convolution. Its
// accumulation nest updates the accumulator in place (load, add, store to %expand_shape, a view
// of the zero-filled %alloc_0); the pass fuses it into the transpose that reads the accumulator
// by recomputing the update there while keeping the original nest, so every sum is added twice
// (docs/upstream-bugs.md, MLIR; it looks like llvm/llvm-project#210490).
// Found by fusefuzz (mlir:fp32, minimized to one 1x1 Conv); this is the IR just before
// affine-loop-fusion. Both runs print the float32 bit patterns of the output [1,2,4,5]; the
// last element must be 1065353216 (1.0f), the fused run prints 1073741824 (2.0f).
//
// M=/usr/lib/llvm-22; L=$M/lib/libmlir_runner_utils.so.22.1,$M/lib/libmlir_c_runner_utils.so.22.1
// LOWER='expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts'
// $M/bin/mlir-opt THIS.mlir "--pass-pipeline=builtin.module($LOWER)" \
//   | $M/bin/mlir-runner -e main -entry-point-result=void -shared-libs=$L      # last: 1065353216
// $M/bin/mlir-opt THIS.mlir "--pass-pipeline=builtin.module(func.func(affine-loop-fusion),$LOWER)" \
//   | $M/bin/mlir-runner -e main -entry-point-result=void -shared-libs=$L      # last: 1073741824
module {
  memref.global "private" constant @__constant_1x1x4x5xf32 : memref<1x1x4x5xf32> = dense<[[[[0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00]]]]> {alignment = 64 : i64}
  memref.global "private" constant @__constant_2x1x1x1xf32 : memref<2x1x1x1xf32> = dense<[[[[0.000000e+00]]], [[[1.000000e+00]]]]> {alignment = 64 : i64}
  memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<0.000000e+00> {alignment = 64 : i64}
  func.func @graph(%arg0: memref<1x1x4x5xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x2x4x5xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = memref.get_global @__constant_2x1x1x1xf32 : memref<2x1x1x1xf32>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x4x5x1xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 5 {
          affine.for %arg4 = 0 to 1 {
            %1 = affine.load %arg0[%arg1, %arg4, %arg2, %arg3] : memref<1x1x4x5xf32, strided<[?, ?, ?, ?], offset: ?>>
            affine.store %1, %alloc[%arg1, %arg2, %arg3, %arg4] : memref<1x4x5x1xf32>
          }
        }
      }
    }
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<4x5x2xf32>
    affine.for %arg1 = 0 to 4 {
      affine.for %arg2 = 0 to 5 {
        affine.for %arg3 = 0 to 2 {
          affine.store %cst, %alloc_0[%arg1, %arg2, %arg3] : memref<4x5x2xf32>
        }
      }
    }
    %expand_shape = memref.expand_shape %alloc_0 [[0, 1], [2], [3]] output_shape [1, 4, 5, 2] : memref<4x5x2xf32> into memref<1x4x5x2xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 4 {
        affine.for %arg3 = 0 to 5 {
          affine.for %arg4 = 0 to 2 {
            affine.for %arg5 = 0 to 1 {
              affine.for %arg6 = 0 to 1 {
                affine.for %arg7 = 0 to 1 {
                  %1 = affine.load %alloc[%arg1, %arg2 + %arg5, %arg3 + %arg6, %arg7] : memref<1x4x5x1xf32>
                  %2 = affine.load %0[%arg4, %arg5, %arg6, %arg7] : memref<2x1x1x1xf32>
                  %3 = affine.load %expand_shape[%arg1, %arg2, %arg3, %arg4] : memref<1x4x5x2xf32>
                  %4 = arith.mulf %1, %2 : f32
                  %5 = arith.addf %3, %4 : f32
                  affine.store %5, %expand_shape[%arg1, %arg2, %arg3, %arg4] : memref<1x4x5x2xf32>
                }
              }
            }
          }
        }
      }
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<1x2x4x5xf32>
    affine.for %arg1 = 0 to 1 {
      affine.for %arg2 = 0 to 2 {
        affine.for %arg3 = 0 to 4 {
          affine.for %arg4 = 0 to 5 {
            %1 = affine.load %expand_shape[%arg1, %arg3, %arg4, %arg2] : memref<1x4x5x2xf32>
            affine.store %1, %alloc_1[%arg1, %arg2, %arg3, %arg4] : memref<1x2x4x5xf32>
          }
        }
      }
    }
    return %alloc_1 : memref<1x2x4x5xf32>
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %0 = memref.get_global @__constant_1x1x4x5xf32 : memref<1x1x4x5xf32>
    %cast = memref.cast %0 : memref<1x1x4x5xf32> to memref<1x1x4x5xf32, strided<[?, ?, ?, ?], offset: ?>>
    %1 = call @graph(%cast) : (memref<1x1x4x5xf32, strided<[?, ?, ?, ?], offset: ?>>) -> memref<1x2x4x5xf32>
    %collapse_shape = memref.collapse_shape %1 [[0, 1], [2], [3]] : memref<1x2x4x5xf32> into memref<2x4x5xf32>
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<2x4x5xi32>
    affine.for %arg0 = 0 to 2 {
      affine.for %arg1 = 0 to 4 {
        affine.for %arg2 = 0 to 5 {
          %2 = affine.load %collapse_shape[%arg0, %arg1, %arg2] : memref<2x4x5xf32>
          %3 = arith.bitcast %2 : f32 to i32
          affine.store %3, %alloc[%arg0, %arg1, %arg2] : memref<2x4x5xi32>
        }
      }
    }
    %expand_shape = memref.expand_shape %alloc [[0, 1], [2], [3]] output_shape [1, 2, 4, 5] : memref<2x4x5xi32> into memref<1x2x4x5xi32>
    %cast_0 = memref.cast %expand_shape : memref<1x2x4x5xi32> to memref<*xi32>
    call @printMemrefI32(%cast_0) : (memref<*xi32>) -> ()
    return
  }
}

