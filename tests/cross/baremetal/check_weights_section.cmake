# cmake -DNM=<nm> -DSIZE=<size> -DIMAGE=<elf> -DSECTION=<name> -DALIGN=<n>
#       -DPREFIX=<model prefix> -DMIN_SIZE=<bytes> -P check_weights_section.cmake
# Fails unless `size -A` lists SECTION in IMAGE with at least MIN_SIZE bytes at
# a multiple of ALIGN, and every data symbol PREFIX_* that nm lists lies in it
# at a multiple of ALIGN (the constants of coreai-gen --weights-format incbin
# --weights-section SECTION --weights-align ALIGN).
execute_process(COMMAND "${SIZE}" -A -d "${IMAGE}" OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SIZE} -A ${IMAGE} failed")
endif()
string(REPLACE "." "\\." section_re "${SECTION}")
if(NOT sections MATCHES "\n${section_re}[ \t]+([0-9]+)[ \t]+([0-9]+)")
  message(FATAL_ERROR "${IMAGE} has no section ${SECTION}:\n${sections}")
endif()
set(sect_size ${CMAKE_MATCH_1})
set(sect_addr ${CMAKE_MATCH_2})
math(EXPR rem "${sect_addr} % ${ALIGN}")
if(sect_size LESS MIN_SIZE OR NOT rem EQUAL 0)
  message(FATAL_ERROR "${SECTION}: ${sect_size} bytes at ${sect_addr} (want >= ${MIN_SIZE}, aligned to ${ALIGN})")
endif()
math(EXPR sect_end "${sect_addr} + ${sect_size}")

execute_process(COMMAND "${NM}" -S "${IMAGE}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${IMAGE} failed")
endif()
string(REGEX MATCHALL "[0-9a-f]+ [0-9a-f]+ [RrDd] ${PREFIX}_[A-Za-z0-9_]*" consts "${syms}")
if(NOT consts)
  message(FATAL_ERROR "${IMAGE}: no ${PREFIX}_* constants")
endif()
set(n 0)
foreach(line IN LISTS consts)
  string(REGEX MATCH "^([0-9a-f]+) ([0-9a-f]+) . (.*)$" _ "${line}")
  set(name "${CMAKE_MATCH_3}")
  math(EXPR addr "0x${CMAKE_MATCH_1}")
  math(EXPR end "0x${CMAKE_MATCH_1} + 0x${CMAKE_MATCH_2}")
  math(EXPR rem "${addr} % ${ALIGN}")
  if(addr LESS sect_addr OR end GREATER sect_end OR NOT rem EQUAL 0)
    message(FATAL_ERROR "${name} at ${addr}..${end}: not in ${SECTION} (${sect_addr}..${sect_end}) "
      "at a multiple of ${ALIGN}")
  endif()
  math(EXPR n "${n} + 1")
endforeach()
message(STATUS "${IMAGE}: ${SECTION} ${sect_size} bytes at ${sect_addr}, ${n} constants in it, ${ALIGN}-aligned")
