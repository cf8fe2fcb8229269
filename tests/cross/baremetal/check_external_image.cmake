# cmake -DNM=<nm> -DSIZE=<size> -DIMAGE=<elf> -DLINKED=<elf> -DPREFIX=<model prefix>
#       -DBLOB_SIZE=<bytes> -P check_external_image.cmake
# Fails unless IMAGE (the model generated with --weights-format external) has
# none of the weights: nm lists no PREFIX_g*_c* constant, no section of
# `size -A` holds BLOB_SIZE bytes, and its loaded sections are smaller than
# those of LINKED (the same program with the weights linked) by the blob, less
# at most 4 KiB: the code of the weights check (SHA-256) it has in addition.
function(alloc_bytes image out_var max_var)
  execute_process(COMMAND "${SIZE}" -A -d "${image}" OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SIZE} -A ${image} failed")
  endif()
  string(REPLACE "\n" ";" rows "${sections}")
  set(total 0)
  set(largest 0)
  foreach(row IN LISTS rows)
    if(NOT row MATCHES "^(\\.[A-Za-z0-9_.]+)[ \t]+([0-9]+)[ \t]+([0-9]+)")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    set(bytes "${CMAKE_MATCH_2}")
    set(addr "${CMAKE_MATCH_3}")
    # loaded: at a non-zero address, or the vector table at 0 (the .debug_*,
    # .comment, .ARM.attributes ... are at 0 too); .bss takes no image bytes
    if((addr GREATER 0 OR name STREQUAL ".vectors") AND NOT name STREQUAL ".bss")
      math(EXPR total "${total} + ${bytes}")
      if(bytes GREATER largest)
        set(largest ${bytes})
      endif()
    endif()
  endforeach()
  set(${out_var} ${total} PARENT_SCOPE)
  set(${max_var} ${largest} PARENT_SCOPE)
endfunction()

execute_process(COMMAND "${NM}" "${IMAGE}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${IMAGE} failed")
endif()
if(syms MATCHES "[ \t]${PREFIX}_g[0-9]+_c[0-9]+")
  message(FATAL_ERROR "${IMAGE} links a weights constant: ${CMAKE_MATCH_0}")
endif()
if(syms MATCHES "[ \t]${PREFIX}_weights_check\n" AND NOT syms MATCHES "[Tt] ${PREFIX}_weights_check\n")
  message(FATAL_ERROR "${IMAGE}: ${PREFIX}_weights_check is not code")
endif()
alloc_bytes("${IMAGE}" ext ext_largest)
alloc_bytes("${LINKED}" linked linked_largest)
math(EXPR saved "${linked} - ${ext}")
math(EXPR want "${BLOB_SIZE} - 4096")
if(ext_largest GREATER_EQUAL BLOB_SIZE OR saved LESS want)
  message(FATAL_ERROR "${IMAGE}: ${ext} bytes loaded (largest section ${ext_largest}), the linked image "
    "${linked}: the external image should be at least ${want} bytes smaller")
endif()
message(STATUS "${IMAGE}: ${ext} bytes loaded, ${saved} fewer than with the weights linked (blob ${BLOB_SIZE})")
