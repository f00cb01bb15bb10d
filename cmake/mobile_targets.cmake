# The XNNPACK and Arm NN targets (targets/xnnpack/, targets/armnn/). Neither Debian package ships
# a CMake or pkg-config file, so headers and libraries are found by name; the package versions
# (shown in the hello's "engine") come from dpkg. A missing package leaves its target out with a
# message naming the package; BuiltinTargetCommand then refuses `xnnpack:MODE` / `armnn:MODE`
# with the same advice, and the tests that need the programs are not registered.
set(FUSEFUZZ_MOBILE_TARGETS "")

function(fusefuzz_deb_version pkg out)
  execute_process(COMMAND dpkg-query -W -f=\${Version} ${pkg} OUTPUT_VARIABLE v
                  RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR v STREQUAL "")
    set(v "unknown")
  endif()
  set(${out} ${v} PARENT_SCOPE)
endfunction()

find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_library(XNNPACK_LIBRARY XNNPACK)
find_path(PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_library(PTHREADPOOL_LIBRARY pthreadpool)
set(missing "")
if(NOT XNNPACK_INCLUDE_DIR OR NOT XNNPACK_LIBRARY)
  list(APPEND missing libxnnpack-dev)
endif()
if(NOT PTHREADPOOL_INCLUDE_DIR OR NOT PTHREADPOOL_LIBRARY)
  list(APPEND missing libpthreadpool-dev)
endif()
if(missing)
  list(JOIN missing " " missing)
  message(STATUS "XNNPACK target NOT built (targets/xnnpack/): missing Debian package(s) "
                 "${missing} (ci/setup installs them); its tests are skipped")
else()
  fusefuzz_deb_version(libxnnpack0 xnnpack_version)
  # The translation and runs (engine.h), shared with the in-process fuzz targets (fuzz/).
  add_library(fusefuzz_xnnpack_engine STATIC targets/xnnpack/engine.cc targets/xnnpack/builder.cc
              targets/xnnpack/builder_int8.cc)
  target_include_directories(fusefuzz_xnnpack_engine SYSTEM PUBLIC ${XNNPACK_INCLUDE_DIR}
                             ${PTHREADPOOL_INCLUDE_DIR})
  target_link_libraries(fusefuzz_xnnpack_engine PUBLIC fusefuzz_targets ${XNNPACK_LIBRARY}
                        ${PTHREADPOOL_LIBRARY})
  target_compile_definitions(fusefuzz_xnnpack_engine PRIVATE
                             FUSEFUZZ_XNNPACK_VERSION="${xnnpack_version}")
  add_executable(fusefuzz-xnnpack-target targets/xnnpack/xnnpack_target_main.cc
                 targets/xnnpack/repro_writer.cc targets/xnnpack/xnn_recorder.cc
                 targets/xnnpack/xnn_wrappers.cc)
  # The reproducer writer records the adapter's xnn_* calls (targets/xnnpack/xnn_recorder.h).
  foreach(call create_subgraph define_add2 define_average_pooling_2d
          define_channelwise_quantized_tensor_value define_clamp define_convert
          define_convolution_2d define_depthwise_convolution_2d define_divide define_elu
          define_fully_connected define_global_average_pooling_2d define_hardswish
          define_leaky_relu define_max_pooling_2d define_multiply2 define_prelu
          define_quantized_tensor_value define_sigmoid define_static_constant_pad
          define_static_reshape define_subtract define_tensor_value)
    target_link_options(fusefuzz-xnnpack-target PRIVATE -Wl,--wrap=xnn_${call})
  endforeach()
  target_include_directories(fusefuzz-xnnpack-target SYSTEM PRIVATE ${XNNPACK_INCLUDE_DIR}
                             ${PTHREADPOOL_INCLUDE_DIR})
  target_link_libraries(fusefuzz-xnnpack-target PRIVATE fusefuzz_xnnpack_engine CLI11::CLI11)
  list(APPEND FUSEFUZZ_MOBILE_TARGETS xnnpack)
  message(STATUS "XNNPACK ${xnnpack_version} target enabled (fusefuzz-xnnpack-target)")
endif()

if(EXISTS ${CMAKE_SOURCE_DIR}/targets/armnn/armnn_target_main.cc)
  find_path(ARMNN_INCLUDE_DIR armnn/ArmNN.hpp)
  find_library(ARMNN_LIBRARY armnn)
  # The reference backend is a plug-in Arm NN loads at run time: without it Optimize finds no
  # backend and returns a null network.
  find_file(ARMNN_CPUREF_BACKEND Arm_CpuRef_backend.so
            PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/armnn22 NO_DEFAULT_PATH)
  set(missing "")
  if(NOT ARMNN_INCLUDE_DIR OR NOT ARMNN_LIBRARY)
    list(APPEND missing libarmnn-dev)
  endif()
  if(NOT ARMNN_CPUREF_BACKEND)
    list(APPEND missing libarmnn-cpuref-backend22)
  endif()
  if(missing)
    list(JOIN missing " " missing)
    message(STATUS "Arm NN target NOT built (targets/armnn/): missing Debian package(s) "
                   "${missing} (ci/setup installs them); its tests are skipped")
  else()
    fusefuzz_deb_version(libarmnn22 armnn_version)
    # The translation and runs (engine.h), shared with the in-process fuzz targets (fuzz/).
    add_library(fusefuzz_armnn_engine STATIC targets/armnn/engine.cc
                targets/armnn/network_builder.cc targets/armnn/quant_layers.cc
                targets/armnn/repro_writer.cc)
    target_include_directories(fusefuzz_armnn_engine SYSTEM PUBLIC ${ARMNN_INCLUDE_DIR})
    target_link_libraries(fusefuzz_armnn_engine PUBLIC fusefuzz_targets ${ARMNN_LIBRARY})
    target_compile_definitions(fusefuzz_armnn_engine PRIVATE
                               FUSEFUZZ_ARMNN_VERSION="${armnn_version}")
    add_executable(fusefuzz-armnn-target targets/armnn/armnn_target_main.cc)
    target_link_libraries(fusefuzz-armnn-target PRIVATE fusefuzz_armnn_engine CLI11::CLI11)
    list(APPEND FUSEFUZZ_MOBILE_TARGETS armnn)
    message(STATUS "Arm NN ${armnn_version} target enabled (fusefuzz-armnn-target, CpuRef)")
  endif()
endif()

# OpenCV DNN (targets/opencv/): Debian's libopencv-dnn-dev ships no opencv4.pc (only the large
# libopencv-dev bundle does), so the header and the two libraries are found by name.
if(EXISTS ${CMAKE_SOURCE_DIR}/targets/opencv/opencv_target_main.cc)
  find_path(OPENCV_DNN_INCLUDE_DIR opencv2/dnn.hpp PATH_SUFFIXES opencv4)
  find_library(OPENCV_DNN_LIBRARY opencv_dnn)
  find_library(OPENCV_CORE_LIBRARY opencv_core)
  if(NOT OPENCV_DNN_INCLUDE_DIR OR NOT OPENCV_DNN_LIBRARY OR NOT OPENCV_CORE_LIBRARY)
    message(STATUS "OpenCV target NOT built (targets/opencv/): missing Debian package "
                   "libopencv-dnn-dev (ci/setup installs it); its tests are skipped")
  else()
    fusefuzz_deb_version(libopencv-dnn406 opencv_version)
    # The hello and the runs (engine.h, opencv_net.h), shared with the in-process fuzz targets.
    add_library(fusefuzz_opencv_engine STATIC targets/opencv/engine.cc targets/opencv/opencv_net.cc
                targets/opencv/faithful.cc targets/opencv/int8_check.cc)
    target_include_directories(fusefuzz_opencv_engine SYSTEM PUBLIC ${OPENCV_DNN_INCLUDE_DIR})
    target_link_libraries(fusefuzz_opencv_engine PUBLIC fusefuzz_targets ${OPENCV_DNN_LIBRARY}
                          ${OPENCV_CORE_LIBRARY})
    target_compile_definitions(fusefuzz_opencv_engine PRIVATE
                               FUSEFUZZ_OPENCV_VERSION="${opencv_version}")
    add_executable(fusefuzz-opencv-target targets/opencv/opencv_target_main.cc
                   targets/opencv/repro_writer.cc)
    target_link_libraries(fusefuzz-opencv-target PRIVATE fusefuzz_opencv_engine CLI11::CLI11)
    list(APPEND FUSEFUZZ_MOBILE_TARGETS opencv)
    message(STATUS "OpenCV ${opencv_version} target enabled (fusefuzz-opencv-target)")
  endif()
endif()

# MLIR 22 (targets/mlir/): a compiler run as child processes (mlir-opt, mlir-runner), so the
# program needs no MLIR headers; it needs the tools at run time, and CMake builds it only when
# they are there (Debian mlir-22-tools and libmlir-22).
find_program(MLIR22_OPT mlir-opt PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
find_file(MLIR22_RUNNER_UTILS libmlir_runner_utils.so.22.1 PATHS /usr/lib/llvm-22/lib NO_DEFAULT_PATH)
if(NOT MLIR22_OPT OR NOT MLIR22_RUNNER_UTILS)
  message(STATUS "MLIR target NOT built (targets/mlir/): missing Debian package(s) "
                 "mlir-22-tools libmlir-22 (ci/setup installs them); its tests are skipped")
else()
  fusefuzz_deb_version(mlir-22-tools mlir_version)
  add_executable(fusefuzz-mlir-target targets/mlir/mlir_target_main.cc targets/mlir/pipeline.cc
                 targets/mlir/repro_writer.cc targets/mlir/tosa_emitter.cc targets/mlir/tosa_nodes.cc
                 targets/mlir/tosa_ops.cc targets/mlir/tosa_quant.cc
                 targets/mlir/tosa_qconv.cc targets/mlir/tosa_qchain.cc)
  target_link_libraries(fusefuzz-mlir-target PRIVATE fusefuzz_targets CLI11::CLI11)
  target_compile_definitions(fusefuzz-mlir-target PRIVATE FUSEFUZZ_MLIR_VERSION="${mlir_version}")
  list(APPEND FUSEFUZZ_MOBILE_TARGETS mlir)
  message(STATUS "MLIR ${mlir_version} target enabled (fusefuzz-mlir-target)")
endif()

# The programs live beside fusefuzz; BuiltinTargetCommand finds them there, and names the
# missing package for an engine that was not built.
list(JOIN FUSEFUZZ_MOBILE_TARGETS "," mobile_built)
target_compile_definitions(fusefuzz_targets PRIVATE
                           FUSEFUZZ_PROGRAMS_DIR="${CMAKE_BINARY_DIR}"
                           FUSEFUZZ_MOBILE_BUILT="${mobile_built}")
