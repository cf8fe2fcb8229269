# cmake -DAPP=tinyllm-app -DPROMPT=TEXT -DSTEPS=N -DREFERENCE=DIR -P check_prompt.cmake
# Runs APP --prompt TEXT --steps N and requires its "tokens:" line to hold
# exactly PyTorch's greedy token ids for that prompt (DIR/reference_tokens.txt,
# written by export.py --prompt-reference).
execute_process(COMMAND "${APP}" --prompt "${PROMPT}" --steps "${STEPS}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${APP} --prompt failed (${rc}):\n${out}${err}")
endif()
if(NOT out MATCHES "\ntokens:([0-9 ]*)\n")
  message(FATAL_ERROR "no tokens line in:\n${out}")
endif()
string(STRIP "${CMAKE_MATCH_1}" got)
file(READ "${REFERENCE}/reference_tokens.txt" want)
string(STRIP "${want}" want)
if(NOT got STREQUAL want)
  message(FATAL_ERROR "token ids differ from PyTorch's\n  got:  ${got}\n  want: ${want}")
endif()
message(STATUS "tokens: ${got} (PyTorch's)")
