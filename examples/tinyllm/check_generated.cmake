# Checks on the C that coreai-gen wrote for tinyllm:
#
#   cmake -DSOURCE=<tinyllm.c> -DHEADER=<tinyllm.h> -P check_generated.cmake
#
# * tinyllm.c has a graph function per composite op (rms_norm, rope, sdpa);
# * tinyllm.h declares tinyllm_state_init, and tinyllm_prefill and
#   tinyllm_main, both taking the symbols query_len and seq_len and the same
#   state struct (k_cache, v_cache).
foreach(f IN ITEMS SOURCE HEADER)
  if(NOT EXISTS "${${f}}")
    message(FATAL_ERROR "${${f}} does not exist (build the tinyllm target first)")
  endif()
endforeach()

file(READ "${SOURCE}" source)
# With symbolic extents this coreai-gen runs a composite op from its body (a
# kernel call needs fixed shapes): each is still its own graph function.
foreach(op IN ITEMS rms_norm rope scaled_dot_product_attention)
  string(REGEX MATCHALL ": composite \"${op}\", " graphs "${source}")
  list(LENGTH graphs n)
  if(n EQUAL 0)
    message(FATAL_ERROR "${SOURCE} has no composite ${op} graph")
  endif()
  message(STATUS "${op}: ${n} composite graph(s)")
endforeach()

file(READ "${HEADER}" header)
# One state struct with both caches ...
string(REGEX MATCH "typedef struct tinyllm_state {[^}]*} tinyllm_state;" state_struct "${header}")
if(state_struct STREQUAL "")
  message(FATAL_ERROR "${HEADER} declares no tinyllm_state struct")
endif()
foreach(member IN ITEMS k_cache v_cache)
  if(NOT state_struct MATCHES "float ${member}\\[4096\\];")
    message(FATAL_ERROR "tinyllm_state has no member float ${member}[4096]:\n${state_struct}")
  endif()
endforeach()
# ... taken by both entrypoints.
if(NOT header MATCHES "coreai_status tinyllm_state_init\\(tinyllm_state \\*state\\);")
  message(FATAL_ERROR "${HEADER} declares no tinyllm_state_init(tinyllm_state *state)")
endif()
foreach(name IN ITEMS prefill main)
  string(REGEX MATCH "coreai_status tinyllm_${name}\\(void \\*workspace,[^;]*\\);" decl "${header}")
  if(NOT decl MATCHES "int64_t query_len" OR NOT decl MATCHES "int64_t seq_len" OR
     NOT decl MATCHES "tinyllm_state \\*state")
    message(FATAL_ERROR "tinyllm_${name} does not take query_len, seq_len and the shared tinyllm_state: ${decl}")
  endif()
  message(STATUS "tinyllm_${name} takes the shared tinyllm_state")
endforeach()
