# Checks on the C that coreai-gen wrote for tinyllm:
#
#   cmake -DSOURCE=<tinyllm.c> -DHEADER=<tinyllm.h> -P check_generated.cmake
#
# * tinyllm.c calls the rms_norm, rope and sdpa kernels itself (the
#   composite ops took the kernel path, not their op-by-op bodies);
# * tinyllm.h declares tinyllm_prefill and tinyllm_decode, and both take
#   the same state parameters (k_cache, v_cache: same names, types, shapes).
foreach(f IN ITEMS SOURCE HEADER)
  if(NOT EXISTS "${${f}}")
    message(FATAL_ERROR "${${f}} does not exist (build the tinyllm target first)")
  endif()
endforeach()

file(READ "${SOURCE}" source)
foreach(call IN ITEMS coreai_rms_norm_f32 coreai_rope_f32 coreai_sdpa_f32)
  string(REGEX MATCHALL "return ${call}\\(" calls "${source}")
  list(LENGTH calls n)
  if(n EQUAL 0)
    message(FATAL_ERROR "${SOURCE} never calls ${call}()")
  endif()
  message(STATUS "${call}(): called directly by ${n} composite graph(s)")
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
foreach(name IN ITEMS prefill decode)
  string(REGEX MATCH "coreai_status tinyllm_${name}\\(void \\*workspace,[^;]*\\);" decl "${header}")
  if(NOT decl MATCHES "tinyllm_state \\*state")
    message(FATAL_ERROR "tinyllm_${name} does not take the shared tinyllm_state: ${decl}")
  endif()
  message(STATUS "tinyllm_${name} takes the shared tinyllm_state")
endforeach()
