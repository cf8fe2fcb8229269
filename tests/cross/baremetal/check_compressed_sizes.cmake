# cmake -DNM=<nm> -DSIZE=<size> -DSECTION=<name> -DF32=<elf> -DINT8=<elf>
#       -DINT4=<elf> -P check_compressed_sizes.cmake
# The FeedForwardBlock images with f32, 8-bit and 4-bit weights (each incbin'd
# into SECTION): prints each image's SECTION bytes (the packed integers and
# their f32 scales: check_weights_section.cmake checks that every constant is
# in it) and .text bytes (`size -A`), and fails unless
#   - SECTION shrinks f32 > int8 > int4;
#   - both compressed images link the fused kernel coreai_linear_qp_f32 (the
#     weights in the generation-time panels: 64 and 256 outputs pad nothing) and
#     not coreai_shift_scale, the dequantize-to-f32 of the fallback path
#     (nor coreai_linear_f32 / coreai_linear_packed_f32, the f32 layers it
#     would then feed: FeedForwardBlock has no other linear);
#   - the f32 image links none of coreai_linear_qp_f32, coreai_linear_q_f32,
#     coreai_shift_scale;
#   - neither compressed image's workspace (main.c's `workspace`, sized by
#     FEEDFORWARD_WORKSPACE_SIZE; `nm -S`) is larger than the f32 image's:
#     the fused kernel never expands a weight into it.
function(sizes image out_weights out_text)
  execute_process(COMMAND "${SIZE}" -A -d "${image}" OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SIZE} -A ${image} failed")
  endif()
  string(REPLACE "." "\\." section_re "${SECTION}")
  if(NOT sections MATCHES "\n${section_re}[ \t]+([0-9]+)")
    message(FATAL_ERROR "${image} has no section ${SECTION}:\n${sections}")
  endif()
  set(${out_weights} ${CMAKE_MATCH_1} PARENT_SCOPE)
  if(NOT sections MATCHES "\n\\.text[ \t]+([0-9]+)")
    message(FATAL_ERROR "${image} has no section .text:\n${sections}")
  endif()
  set(${out_text} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# fails unless the image's defined text symbols include every name of WANT
# and none of NOT
function(check_symbols image want not)
  execute_process(COMMAND "${NM}" --defined-only "${image}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} ${image} failed")
  endif()
  foreach(name IN LISTS want)
    if(NOT syms MATCHES "[0-9a-f]+ [Tt] ${name}\n")
      message(FATAL_ERROR "${image}: ${name} is not linked")
    endif()
  endforeach()
  foreach(name IN LISTS not)
    if(syms MATCHES "[0-9a-f]+ [Tt] ${name}\n")
      message(FATAL_ERROR "${image}: ${name} is linked")
    endif()
  endforeach()
endfunction()

# the size of the image's static `workspace` array
function(workspace_bytes image out)
  execute_process(COMMAND "${NM}" -S --defined-only "${image}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -S ${image} failed")
  endif()
  if(NOT syms MATCHES "[0-9a-f]+ ([0-9a-f]+) [bBdD] workspace\n")
    message(FATAL_ERROR "${image}: no workspace symbol")
  endif()
  math(EXPR bytes "0x${CMAKE_MATCH_1}")
  set(${out} ${bytes} PARENT_SCOPE)
endfunction()

message(STATUS "weights      ${SECTION} bytes   .text bytes   workspace bytes")
foreach(v IN ITEMS F32 INT8 INT4)
  sizes("${${v}}" w_${v} t_${v})
  workspace_bytes("${${v}}" ws_${v})
  string(TOLOWER "${v}" name)
  message(STATUS "${name}         ${w_${v}}            ${t_${v}}         ${ws_${v}}")
endforeach()
foreach(v IN ITEMS INT8 INT4)
  if(ws_${v} GREATER ws_F32)
    message(FATAL_ERROR "the ${v} image's workspace (${ws_${v}} bytes) is larger than the f32 image's "
                        "(${ws_F32} bytes): a compressed weight is expanded into it")
  endif()
endforeach()
if(NOT w_INT8 LESS w_F32 OR NOT w_INT4 LESS w_INT8)
  message(FATAL_ERROR "${SECTION} does not shrink f32 > int8 > int4: ${w_F32}, ${w_INT8}, ${w_INT4} bytes")
endif()
foreach(v IN ITEMS INT8 INT4)
  check_symbols("${${v}}" coreai_linear_qp_f32 "coreai_shift_scale;coreai_linear_f32;coreai_linear_packed_f32")
endforeach()
check_symbols("${F32}" "" "coreai_linear_qp_f32;coreai_linear_q_f32;coreai_shift_scale")
math(EXPR pct8 "100 * ${w_INT8} / ${w_F32}")
math(EXPR pct4 "100 * ${w_INT4} / ${w_F32}")
message(STATUS "${SECTION}: int8 ${pct8}% and int4 ${pct4}% of f32; coreai_linear_qp_f32 linked, "
               "coreai_shift_scale (fallback) not")
