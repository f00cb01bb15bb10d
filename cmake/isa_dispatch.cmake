# Runtime ISA dispatch of the fast kernels (docs/kernels.md, "ISA dispatch").
#
# The compute kernels of kernels/fast are compiled twice more, for AVX2+FMA and for AVX-512, each
# copy with -DFUSEFUZZ_ISA=<level> (its own C++ namespace, fusefuzz::fast::<level>). A copy also
# instantiates inline code it does not own (Eigen's GEMM, libstdc++, ir/ helpers) with its own
# -m flags; if the linker merged those COMDAT copies with the baseline's, baseline code could end
# up calling an AVX-512 instantiation (an ODR violation that crashes on older CPUs). So each copy
# is linked into ONE relocatable object (`ld -r --force-group-allocation`: COMDAT groups resolved
# inside the copy and dissolved) and then every symbol but its kernel table entry point is made
# local (`objcopy --keep-global-symbol`). Nothing of a copy can be picked by, or pick, another.
set(FUSEFUZZ_ISA_SOURCES activation binary conv conv_depthwise conv_depthwise_blocked
    conv_depthwise_small conv_packed epilogue gemm kernel_table norm pool
    int8/qconv_depthwise int8/qconv_dw_avx2 int8/qconv_dw_channels int8/qconv_dw_regs
    int8/qconv_dw_direct int8/qconv_dw_vbmi int8/qconv_gemm int8/qconv_gemm_oc int8/qgemm_input int8/qrequant)

# The int8 kernels and their reference loops round float32 products exactly as qconv.h says:
# no contraction of `a * b + c` into an FMA (GCC's default -ffp-contract=fast, clang's "on"),
# in every copy and in builds with FUSEFUZZ_MARCH.
file(GLOB _int8_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/fast/int8/*.cc)
set_source_files_properties(${_int8_srcs} PROPERTIES COMPILE_OPTIONS -ffp-contract=off)

set(_dispatch OFF)
if(FUSEFUZZ_ISA_DISPATCH AND FUSEFUZZ_MARCH STREQUAL "" AND
   CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$" AND CMAKE_LINKER AND CMAKE_OBJCOPY)
  execute_process(COMMAND ${CMAKE_LINKER} --help OUTPUT_VARIABLE _ld_help ERROR_QUIET)
  if(_ld_help MATCHES "force-group-allocation")
    set(_dispatch ON)
  else()
    message(STATUS "fast kernels: ${CMAKE_LINKER} lacks --force-group-allocation; no ISA dispatch")
  endif()
endif()

if(_dispatch)
  set(_flags_avx2 -mavx2 -mfma -mbmi -mbmi2)
  set(_flags_avx512 ${_flags_avx2} -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512cd
      -mprefer-vector-width=512)
  set(_srcs)
  foreach(f ${FUSEFUZZ_ISA_SOURCES})
    list(APPEND _srcs ${CMAKE_SOURCE_DIR}/kernels/fast/${f}.cc)
  endforeach()
  foreach(isa avx2 avx512)
    set(lib fusefuzz_fast_${isa})
    add_library(${lib} OBJECT ${_srcs})
    target_link_libraries(${lib} PRIVATE fusefuzz_ir Eigen3::Eigen)
    target_compile_definitions(${lib} PRIVATE FUSEFUZZ_ISA=${isa})
    target_compile_options(${lib} PRIVATE ${_flags_${isa}})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # Statics of inline functions (Eigen's cache sizes, libstdc++'s digit tables) as weak
      # symbols rather than STB_GNU_UNIQUE ones, which objcopy cannot make local.
      target_compile_options(${lib} PRIVATE -fno-gnu-unique)
      # GCC 12 warns about its own AVX-512 intrinsics inlined into Eigen (GCC bug 105593: the
      # _mm512_undefined_* operands of e.g. the packet exp/expm1 and compare-select, either as
      # "maybe" or, once inlined into a packet loop, as plain -Wuninitialized).
      target_compile_options(${lib} PRIVATE -Wno-maybe-uninitialized -Wno-uninitialized)
    endif()
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/fusefuzz_fast_${isa}.o)
    add_custom_command(
      OUTPUT ${obj}
      COMMAND ${CMAKE_LINKER} -r --force-group-allocation -o ${obj}.r.o $<TARGET_OBJECTS:${lib}>
      COMMAND ${CMAKE_OBJCOPY} --keep-global-symbol=fusefuzz_fast_kernels_${isa} ${obj}.r.o ${obj}
      DEPENDS $<TARGET_OBJECTS:${lib}> ${lib}
      COMMAND_EXPAND_LISTS
      COMMENT "Isolating the ${isa} copy of the fast kernels")
    target_sources(fusefuzz_fast PRIVATE ${obj})
    if(FUSEFUZZ_TESTS AND CMAKE_NM)
      # The isolation holds: the copy defines exactly one global symbol, its entry point.
      add_test(NAME fast_isa_isolated_${isa}
               COMMAND sh -c "${CMAKE_NM} -g --defined-only ${obj} | awk '$3 == \"fusefuzz_fast_kernels_${isa}\" {n++; next} {bad = 1; print \"leaked: \" $3} END {exit bad || n != 1}'")
    endif()
  endforeach()
  target_compile_definitions(fusefuzz_fast PRIVATE FUSEFUZZ_ISA_DISPATCH=1)
  message(STATUS "fast kernels: runtime ISA dispatch (sse2, avx2, avx512)")
endif()
