# cmake -DNM=<nm> -DIMAGE=<linked image> -P check_no_alloc.cmake
# Fails when the image defines or references an allocator function: the
# runtime and the generated code must not allocate, and nothing they pull in
# from newlib may either.
execute_process(COMMAND "${NM}" "${IMAGE}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} ${IMAGE} failed: ${err}")
endif()
string(REGEX MATCHALL "[^\n]*[ \t](_?_?(malloc|calloc|realloc|free|memalign|aligned_alloc|posix_memalign|sbrk)(_r)?|_(malloc|calloc|realloc|free)_r|__malloc_[a-z_]+)\n"
       bad "${syms}\n")
string(REGEX MATCHALL "\n[0-9a-f]+ [Tt] " text "\n${syms}")
list(LENGTH text n_text)
if(bad)
  string(REPLACE ";" "" bad "${bad}")
  message(FATAL_ERROR "${IMAGE} has allocator symbols:\n${bad}")
endif()
message(STATUS "${IMAGE}: ${n_text} functions, no malloc / calloc / realloc / free / sbrk")
