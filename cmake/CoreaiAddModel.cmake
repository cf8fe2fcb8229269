# CoreaiAddModel.cmake - generate C from a Core AI model file at build time.
#
#   coreai_add_model(<target>
#                    MODEL <file>                 # model file (XML, format v1), or
#                    PYTHON_SCRIPT <script.py>    # a script that converts a PyTorch model
#                    [PYTHON_ARGS <arg>...]       #   extra arguments for the script
#                    [PYTHON_DEPENDS <file>...]   #   files the script reads (model code, data)
#                    [PREFIX <c_name>]            # C prefix; default: the file's basename
#                    [OUTPUT_DIR <dir>]           # default: ${CMAKE_CURRENT_BINARY_DIR}/coreai/<target>
#                    [RUNNER]                     # also build <target>-run (.npy in, .npy out)
#                    [OPTIMIZE <ON|OFF>]          # -O3 in Debug / empty configurations;
#                                                 #   default: COREAI_MODEL_OPTIMIZE (ON)
#                    [WEIGHTS_FORMAT <c|incbin|external>] # how the constants are linked;
#                                                 #   default: incbin for GCC/Clang on ELF, else c
#                    [WEIGHTS_CHUNKS <n>]         # incbin: number of blob files; default
#                                                 #   from the weights file's size
#                    [GENERATOR_OPTIONS <opt>...])# extra `coreai-gen generate` options
#
# Runs `coreai-gen generate` to write <dir>/<prefix>.h, <prefix>.c and
# <prefix>_weights.c, and adds the STATIC library <target> built from them,
# linked with coreai::runtime, with <dir> as a PUBLIC include directory:
#
#   coreai_add_model(feedforward MODEL feedforward.xml RUNNER)
#   add_executable(app main.c)                    # #include "feedforward.h"
#   target_link_libraries(app PRIVATE feedforward)
#
# The model library is optimized whatever the configuration: in Debug and in
# an empty build type (no flags at all) it gets -O3 (GCC, Clang), the level
# of CMake's Release flags, after the configuration's flags (-g and asserts
# stay), because an unoptimized model is many times slower (20x for
# examples/feedforward at -O0) and rarely what is being debugged. Release,
# RelWithDebInfo and MinSizeRel keep their own flags. OPTIMIZE OFF, or
# -DCOREAI_MODEL_OPTIMIZE=OFF for every model (and for the runtime when it is
# built from source in the same build), leaves the configuration's flags alone.
#
# WEIGHTS_FORMAT incbin, the default with GCC or Clang for an ELF target
# (Linux, arm-none-eabi), has coreai-gen write the constants as one binary
# blob, <prefix>_weights.bin, which <prefix>_weights.c links with the
# assembler's .incbin instead of C initializers: it compiles in about a second
# whatever the weights' size. <prefix>_weights.c is compiled with
# -Wa,-I,<dir> so that the assembler finds the blob, and depends on it (a
# changed blob rebuilds it and relinks). Choose the section and alignment with
# GENERATOR_OPTIONS --weights-section NAME --weights-align N (default
# .rodata.coreai_weights, 64). WEIGHTS_FORMAT c (the default with any other
# compiler, or for Mach-O and PE targets) writes C initializers, which every C
# compiler takes but which take minutes and gigabytes of compiler memory for
# tens of MB of weights.
#
# Large incbin weights are split at constant boundaries into chunks of at most
# 64 MiB, <prefix>_weights.bin/.c, <prefix>_weights_1.bin/.c, ..., each
# assembled on its own, so that no assembler holds more than a chunk (about
# 70 MB with GNU as, 210 MB with Clang). The build must list the files before
# coreai-gen runs, so their number comes from the model's weights file at
# configure time: 1 up to 48 MiB, else ceil(size / 48 MiB) + 1 (room for
# packed copies and for constants that do not fill a chunk); coreai-gen
# writes exactly that many (empty ones when fewer are needed, larger chunks
# when more would be). WEIGHTS_CHUNKS <n> sets the number (e.g. with
# PYTHON_SCRIPT, whose weights do not exist at configure time: 1 otherwise).
#
# WEIGHTS_FORMAT external links no weights at all: <target> is built from
# <prefix>.c alone, every entrypoint takes a `const void *weights` argument,
# and <prefix>.h declares the blob's <PREFIX>_WEIGHTS_SIZE, _ALIGNMENT and
# _SHA256 and <prefix>_weights_check(). The blob <prefix>_weights.bin is
# written to <dir> and copied next to the library after each link
# ($<TARGET_FILE_DIR:<target>>); the target property COREAI_WEIGHTS_FILE
# names the copy in <dir> (for install(FILES ...)). The application maps or
# loads it, checks it once, and passes its address; <target>-run takes it as
# --weights FILE.
#
# The code is regenerated when the model file, its weights file or the
# generator changes. The generator reports its inputs in a depfile; because
# that file only exists after the first build, the weights file named by the
# model's <weights href="..."> is also read here, at configure time, and the
# model file is a configure dependency so that a changed href is seen.
#
# With PYTHON_SCRIPT the conversion itself runs at build time: the script is
# run as `COREAI_PYTHON_EXECUTABLE <script> --output <dir>/model/<prefix>.xml
# [PYTHON_ARGS]` with this package's python/ directory on PYTHONPATH, and must
# write the model file there (AIProgram.save() puts the weights beside it).
# It reruns when the script, PYTHON_DEPENDS or the coreai / coreai_torch
# sources change; the C is then regenerated from what it wrote.
#
# Which coreai-gen runs:
#   1. COREAI_GEN_EXECUTABLE, if set (cross builds: a host build of the tool);
#   2. the coreai-gen target of this build, if there is one;
#   3. the imported coreai::coreai-gen of an installed coreai-codegen package;
#   4. coreai-gen found on PATH (find_program).

include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "coreai_add_model() needs CMake 3.20 or newer (DEPFILE with Makefiles)")
endif()

# Policies recorded with the function below (function() keeps the settings in
# force where it is defined):
#   CMP0116: Ninja rewrites DEPFILE paths relative to the build tree, so an
#            absolute depfile from coreai-gen matches the build statement.
cmake_policy(PUSH)
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)
endif()

# The Python with PyTorch >= 2.8 (COREAI_PYTHON_EXECUTABLE). Default: in this
# source tree, its virtual environment .venv/bin/python (scripts/demo and
# scripts/check create it); else the Python 3 that find_package(Python3)
# finds (an activated virtual environment first); else python3 on PATH.
# A value set by the user stays; one that was the default follows the default
# (a .venv/ created after the first configure, and trees configured when the
# default was /usr/bin/python3 with Debian's python3-torch 1.13).
get_filename_component(_coreai_venv_python "${CMAKE_CURRENT_LIST_DIR}/../.venv/bin/python" ABSOLUTE)
if(NOT COREAI_PYTHONPATH AND EXISTS "${_coreai_venv_python}")
  set(_coreai_default_python "${_coreai_venv_python}")
else()
  find_package(Python3 QUIET COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    set(_coreai_default_python "${Python3_EXECUTABLE}")
  else()
    set(_coreai_default_python python3)
  endif()
endif()
get_property(_coreai_python_type CACHE COREAI_PYTHON_EXECUTABLE PROPERTY TYPE)
if(NOT DEFINED _COREAI_PYTHON_DEFAULT AND _coreai_python_type STREQUAL "FILEPATH"
   AND COREAI_PYTHON_EXECUTABLE STREQUAL "/usr/bin/python3")
  # cached by an older version, whose default this was (not a -D on the command line)
  set(_COREAI_PYTHON_DEFAULT "/usr/bin/python3")
endif()
if(NOT DEFINED COREAI_PYTHON_EXECUTABLE OR COREAI_PYTHON_EXECUTABLE STREQUAL "${_COREAI_PYTHON_DEFAULT}")
  set(COREAI_PYTHON_EXECUTABLE "${_coreai_default_python}" CACHE FILEPATH
      "Python interpreter (with torch >= 2.8) for coreai_add_model(... PYTHON_SCRIPT) scripts and the tests"
      FORCE)
endif()
set(_COREAI_PYTHON_DEFAULT "${_coreai_default_python}" CACHE INTERNAL "the default COREAI_PYTHON_EXECUTABLE")
# coreai / coreai_torch sources: python/ of this source tree, or of the
# installed package (the package config sets COREAI_PYTHONPATH first).
if(NOT COREAI_PYTHONPATH)
  get_filename_component(COREAI_PYTHONPATH "${CMAKE_CURRENT_LIST_DIR}/../python" ABSOLUTE)
endif()

option(COREAI_MODEL_OPTIMIZE
       "Compile the runtime and coreai_add_model() libraries with -O3 even when the configuration is Debug or empty"
       ON)

set(COREAI_GEN_EXECUTABLE "" CACHE FILEPATH
    "coreai-gen to run for coreai_add_model() (empty: the coreai-gen target of the build, an installed one, or PATH)")

# Sets out_var to TRUE when the C compiler can link weights with the GNU
# assembler's .incbin: GCC or Clang, for an ELF target (not Mach-O, PE or
# WebAssembly; an unknown executable format, as with a bare-metal toolchain
# whose checks build static libraries, counts as ELF).
function(_coreai_incbin_supported out_var)
  set(ok FALSE)
  if(CMAKE_C_COMPILER_ID MATCHES "^(GNU|Clang)$" AND NOT APPLE AND NOT WIN32 AND NOT CYGWIN
     AND NOT CMAKE_SYSTEM_NAME MATCHES "^(Emscripten|WASI)$"
     AND (NOT CMAKE_EXECUTABLE_FORMAT OR CMAKE_EXECUTABLE_FORMAT STREQUAL "ELF"))
    set(ok TRUE)
  endif()
  set(${out_var} ${ok} PARENT_SCOPE)
endfunction()

# Reads <weights href="..."> from the model file; sets out_var to the
# absolute weights path, or to "" when the model has no weights element.
function(_coreai_model_weights model out_var)
  set(${out_var} "" PARENT_SCOPE)
  # <weights> is the first child of the root, so the head of the file is enough
  # (a model with large inline constants can be big).
  file(READ "${model}" xml LIMIT 65536)
  string(FIND "${xml}" "<graph" graph_at)
  if(graph_at GREATER -1)
    string(SUBSTRING "${xml}" 0 ${graph_at} xml)
  endif()
  # Drop comments so that a commented-out <weights> does not count.
  string(REGEX REPLACE "<!--([^-]|-[^-])*-->" "" xml "${xml}")
  string(REGEX MATCH "<weights[ \t\r\n][^>]*>" element "${xml}")
  if(element STREQUAL "")
    return()
  endif()
  if(element MATCHES "[ \t\r\n]href[ \t\r\n]*=[ \t\r\n]*\"([^\"]*)\"")
    set(href "${CMAKE_MATCH_1}")
  elseif(element MATCHES "[ \t\r\n]href[ \t\r\n]*=[ \t\r\n]*'([^']*)'")
    set(href "${CMAKE_MATCH_1}")
  else()
    return() # the generator reports the schema violation
  endif()
  # The five predefined XML entities (&amp; last).
  string(REPLACE "&lt;" "<" href "${href}")
  string(REPLACE "&gt;" ">" href "${href}")
  string(REPLACE "&quot;" "\"" href "${href}")
  string(REPLACE "&apos;" "'" href "${href}")
  string(REPLACE "&amp;" "&" href "${href}")
  if(href STREQUAL "")
    return()
  endif()
  get_filename_component(model_dir "${model}" DIRECTORY)
  get_filename_component(weights "${href}" ABSOLUTE BASE_DIR "${model_dir}")
  set(${out_var} "${weights}" PARENT_SCOPE)
endfunction()

# Adds the build-time conversion for PYTHON_SCRIPT; sets ARG_MODEL (and a
# default ARG_PREFIX) in the caller.
macro(_coreai_python_export target)
  get_filename_component(_script "${ARG_PYTHON_SCRIPT}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${_script}")
    message(FATAL_ERROR "coreai_add_model(${target}): PYTHON_SCRIPT not found: ${_script}")
  endif()
  if(NOT DEFINED ARG_PREFIX)
    get_filename_component(ARG_PREFIX "${_script}" NAME_WLE)
    string(MAKE_C_IDENTIFIER "${ARG_PREFIX}" ARG_PREFIX)
  endif()
  if(DEFINED ARG_OUTPUT_DIR)
    get_filename_component(_model_dir "${ARG_OUTPUT_DIR}/model" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(_model_dir "${CMAKE_CURRENT_BINARY_DIR}/coreai/${target}/model")
  endif()
  file(MAKE_DIRECTORY "${_model_dir}")
  set(ARG_MODEL "${_model_dir}/${ARG_PREFIX}.xml")
  # Plain glob (no CONFIGURE_DEPENDS, which would make every build re-check):
  # edits are tracked; a new module file needs a reconfigure.
  file(GLOB_RECURSE _py_sources
       "${COREAI_PYTHONPATH}/coreai/*.py" "${COREAI_PYTHONPATH}/coreai_torch/*.py")
  set(_py_depends)
  foreach(_dep IN LISTS ARG_PYTHON_DEPENDS)
    get_filename_component(_dep "${_dep}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND _py_depends "${_dep}")
  endforeach()
  add_custom_command(
    OUTPUT "${ARG_MODEL}"
    COMMAND "${CMAKE_COMMAND}" -E env "PYTHONPATH=${COREAI_PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
            "${COREAI_PYTHON_EXECUTABLE}" "${_script}" --output "${ARG_MODEL}" ${ARG_PYTHON_ARGS}
    DEPENDS "${_script}" ${_py_depends} ${_py_sources}
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "Converting PyTorch model with ${ARG_PYTHON_SCRIPT} (${target})"
    VERBATIM)
  set_source_files_properties("${ARG_MODEL}" PROPERTIES GENERATED TRUE)
endmacro()

function(coreai_add_model target)
  set(options RUNNER)
  set(one_value MODEL PYTHON_SCRIPT PREFIX OUTPUT_DIR OPTIMIZE WEIGHTS_FORMAT WEIGHTS_CHUNKS)
  set(multi_value GENERATOR_OPTIONS PYTHON_ARGS PYTHON_DEPENDS)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "${options}" "${one_value}" "${multi_value}")

  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "coreai_add_model(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}\n"
      "Usage: coreai_add_model(<target> MODEL <file> [PREFIX <c_name>] [OUTPUT_DIR <dir>] "
      "[RUNNER] [OPTIMIZE <ON|OFF>] [WEIGHTS_FORMAT <c|incbin|external>] [GENERATOR_OPTIONS <option>...])")
  endif()
  foreach(kw IN LISTS ARG_KEYWORDS_MISSING_VALUES)
    if(NOT kw MATCHES "^(GENERATOR_OPTIONS|PYTHON_ARGS|PYTHON_DEPENDS)$")
      message(FATAL_ERROR "coreai_add_model(${target}): ${kw} needs a value")
    endif()
  endforeach()
  if(DEFINED ARG_MODEL AND DEFINED ARG_PYTHON_SCRIPT)
    message(FATAL_ERROR "coreai_add_model(${target}): give MODEL or PYTHON_SCRIPT, not both")
  endif()
  if(NOT DEFINED ARG_MODEL AND NOT DEFINED ARG_PYTHON_SCRIPT)
    message(FATAL_ERROR "coreai_add_model(${target}): MODEL <file> or PYTHON_SCRIPT <script> is required")
  endif()
  if((ARG_PYTHON_ARGS OR ARG_PYTHON_DEPENDS) AND NOT DEFINED ARG_PYTHON_SCRIPT)
    message(FATAL_ERROR "coreai_add_model(${target}): PYTHON_ARGS and PYTHON_DEPENDS need PYTHON_SCRIPT")
  endif()
  _coreai_incbin_supported(incbin_ok)
  if(NOT DEFINED ARG_WEIGHTS_FORMAT)
    if(incbin_ok)
      set(ARG_WEIGHTS_FORMAT incbin)
    else()
      set(ARG_WEIGHTS_FORMAT c)
    endif()
  endif()
  if(NOT ARG_WEIGHTS_FORMAT MATCHES "^(c|incbin|external)$")
    message(FATAL_ERROR "coreai_add_model(${target}): WEIGHTS_FORMAT '${ARG_WEIGHTS_FORMAT}' is not c, incbin or "
      "external")
  endif()
  if(ARG_GENERATOR_OPTIONS MATCHES "(^|;)--weights-format(;|$)")
    message(FATAL_ERROR "coreai_add_model(${target}): give the weights format as WEIGHTS_FORMAT, not in "
      "GENERATOR_OPTIONS (the build must know which files coreai-gen writes)")
  endif()
  if(DEFINED ARG_WEIGHTS_CHUNKS AND (NOT ARG_WEIGHTS_FORMAT STREQUAL "incbin" OR
                                     NOT ARG_WEIGHTS_CHUNKS MATCHES "^[1-9][0-9]*$" OR ARG_WEIGHTS_CHUNKS GREATER 4096))
    message(FATAL_ERROR "coreai_add_model(${target}): WEIGHTS_CHUNKS '${ARG_WEIGHTS_CHUNKS}' needs WEIGHTS_FORMAT "
      "incbin and a number from 1 to 4096")
  endif()
  if(ARG_GENERATOR_OPTIONS MATCHES "(^|;)--weights-chunks(;|$)")
    message(FATAL_ERROR "coreai_add_model(${target}): give the number of weights chunks as WEIGHTS_CHUNKS, not in "
      "GENERATOR_OPTIONS (the build must know which files coreai-gen writes)")
  endif()
  if(ARG_WEIGHTS_FORMAT STREQUAL "incbin" AND NOT incbin_ok)
    message(FATAL_ERROR "coreai_add_model(${target}): WEIGHTS_FORMAT incbin needs GCC or Clang and an ELF "
      "target (this is ${CMAKE_C_COMPILER_ID} for ${CMAKE_SYSTEM_NAME}); use WEIGHTS_FORMAT c")
  endif()
  if(DEFINED ARG_PYTHON_SCRIPT)
    _coreai_python_export(${target})
  endif()
  if(TARGET "${target}")
    message(FATAL_ERROR "coreai_add_model(${target}): a target named '${target}' already exists")
  endif()

  # ---- the model file ----
  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(model_exists FALSE)
  if(DEFINED ARG_PYTHON_SCRIPT)
    # written by the build: the depfile reports its weights after the first run
  elseif(EXISTS "${model}" AND NOT IS_DIRECTORY "${model}")
    set(model_exists TRUE)
  else()
    get_source_file_property(model_generated "${model}" GENERATED)
    if(NOT model_generated)
      message(FATAL_ERROR "coreai_add_model(${target}): model file not found: ${model}")
    endif()
  endif()

  # ---- names and places ----
  if(DEFINED ARG_PREFIX)
    set(prefix "${ARG_PREFIX}")
    if(NOT prefix MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "coreai_add_model(${target}): PREFIX '${prefix}' is not a C identifier")
    endif()
  else()
    get_filename_component(prefix "${model}" NAME_WLE)
    string(MAKE_C_IDENTIFIER "${prefix}" prefix)
  endif()
  if(DEFINED ARG_OUTPUT_DIR)
    get_filename_component(out_dir "${ARG_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/coreai/${target}")
  endif()
  file(MAKE_DIRECTORY "${out_dir}")
  set(out_h "${out_dir}/${prefix}.h")
  set(out_c "${out_dir}/${prefix}.c")
  set(out_w "${out_dir}/${prefix}_weights.c")
  set(out_bin "${out_dir}/${prefix}_weights.bin")
  set(format_options --weights-format ${ARG_WEIGHTS_FORMAT})
  if(ARG_WEIGHTS_FORMAT STREQUAL "incbin")
    set(out_weights "${out_w}" "${out_bin}") # and the chunks, below
  elseif(ARG_WEIGHTS_FORMAT STREQUAL "external")
    set(out_weights "${out_bin}")
  else()
    set(out_weights "${out_w}")
  endif()
  set(depfile "${out_dir}/${prefix}.d")

  # ---- the generator ----
  if(COREAI_GEN_EXECUTABLE)
    set(gen "${COREAI_GEN_EXECUTABLE}")
    set(gen_depends "${COREAI_GEN_EXECUTABLE}")
  elseif(TARGET coreai-gen)
    set(gen "$<TARGET_FILE:coreai-gen>")
    set(gen_depends coreai-gen)
  elseif(TARGET coreai::coreai-gen)
    set(gen "$<TARGET_FILE:coreai::coreai-gen>")
    set(gen_depends "$<TARGET_FILE:coreai::coreai-gen>")
  else()
    find_program(COREAI_GEN_PROGRAM coreai-gen DOC "coreai-gen found on PATH for coreai_add_model()")
    if(NOT COREAI_GEN_PROGRAM)
      message(FATAL_ERROR "coreai_add_model(${target}): coreai-gen not found. Build it in this "
        "project, find_package(coreai-codegen), put it on PATH, or set COREAI_GEN_EXECUTABLE.")
    endif()
    set(gen "${COREAI_GEN_PROGRAM}")
    set(gen_depends "${COREAI_GEN_PROGRAM}")
  endif()

  # ---- configure-time dependencies (the depfile covers them after the first build) ----
  set(model_depends "${model}")
  set(weights "")
  if(model_exists)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${model}")
    _coreai_model_weights("${model}" weights)
    if(weights AND EXISTS "${weights}")
      list(APPEND model_depends "${weights}")
    endif()
  endif()

  # ---- incbin: the chunk files (see above) ----
  set(chunk_sources "${out_w}")
  set(chunk_bins "${out_bin}")
  if(ARG_WEIGHTS_FORMAT STREQUAL "incbin")
    set(chunks 1)
    if(DEFINED ARG_WEIGHTS_CHUNKS)
      set(chunks ${ARG_WEIGHTS_CHUNKS})
    elseif(weights AND EXISTS "${weights}")
      file(SIZE "${weights}" weights_bytes)
      set(per_chunk 50331648) # 48 MiB
      if(weights_bytes GREATER per_chunk)
        math(EXPR chunks "(${weights_bytes} + ${per_chunk} - 1) / ${per_chunk} + 1")
      endif()
    endif()
    list(APPEND format_options --weights-chunks ${chunks})
    if(chunks GREATER 1)
      math(EXPR last "${chunks} - 1")
      foreach(k RANGE 1 ${last})
        list(APPEND chunk_sources "${out_dir}/${prefix}_weights_${k}.c")
        list(APPEND chunk_bins "${out_dir}/${prefix}_weights_${k}.bin")
      endforeach()
      list(APPEND out_weights ${chunk_sources} ${chunk_bins})
      list(REMOVE_DUPLICATES out_weights)
    endif()
  endif()

  file(RELATIVE_PATH model_rel "${CMAKE_SOURCE_DIR}" "${model}")
  if(model_rel MATCHES "^\\.\\./")
    set(model_rel "${model}")
  endif()
  # The stamp comes first: coreai-gen leaves unchanged sources untouched (so
  # nothing recompiles), and the always-rewritten stamp keeps make from
  # rerunning the rule on every build.
  set(stamp "${out_dir}/${prefix}.stamp")
  add_custom_command(
    OUTPUT "${stamp}" "${out_c}" "${out_h}" ${out_weights}
    COMMAND ${gen} generate "${model}" -o "${out_dir}" --prefix "${prefix}"
            --depfile "${depfile}" --stamp "${stamp}" ${format_options} ${ARG_GENERATOR_OPTIONS}
    DEPENDS ${model_depends} ${gen_depends}
    DEPFILE "${depfile}"
    COMMENT "Generating C for Core AI model ${model_rel} (${target})"
    VERBATIM)

  if(ARG_WEIGHTS_FORMAT STREQUAL "external")
    add_library(${target} STATIC "${out_c}" "${out_h}")
    # the blob next to the library: NAME.c holds its SHA-256, so a new blob
    # relinks the library and copies it again
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND "${CMAKE_COMMAND}" -E copy_if_different "${out_bin}" "$<TARGET_FILE_DIR:${target}>/${prefix}_weights.bin"
      VERBATIM)
    set_target_properties(${target} PROPERTIES COREAI_WEIGHTS_FILE "${out_bin}")
  elseif(ARG_WEIGHTS_FORMAT STREQUAL "incbin")
    add_library(${target} STATIC "${out_c}" ${chunk_sources} "${out_h}")
    # the assembler finds a chunk by its bare name (the source stays
    # reproducible), and a changed chunk rebuilds its object even when the
    # unchanged source keeps its mtime
    foreach(src bin IN ZIP_LISTS chunk_sources chunk_bins)
      set_source_files_properties("${src}" PROPERTIES
        COMPILE_OPTIONS "-Wa,-I,${out_dir}"
        OBJECT_DEPENDS "${bin}")
    endforeach()
  else()
    add_library(${target} STATIC "${out_c}" "${out_w}" "${out_h}")
  endif()
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${target} PUBLIC coreai::runtime)
  if(TARGET coreai_warnings)
    target_link_libraries(${target} PRIVATE coreai_warnings)
  endif()
  if(COREAI_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
  if(NOT DEFINED ARG_OPTIMIZE)
    set(ARG_OPTIMIZE "${COREAI_MODEL_OPTIMIZE}")
  endif()
  if(ARG_OPTIMIZE)
    target_compile_options(${target} PRIVATE
      $<$<AND:$<COMPILE_LANG_AND_ID:C,GNU,Clang,AppleClang>,$<OR:$<CONFIG:Debug>,$<CONFIG:>>>:-O3>)
  endif()
  set_target_properties(${target} PROPERTIES
    COREAI_MODEL "${model}"
    COREAI_PREFIX "${prefix}"
    COREAI_OUTPUT_DIR "${out_dir}"
    COREAI_WEIGHTS_FORMAT "${ARG_WEIGHTS_FORMAT}")

  if(ARG_RUNNER)
    if(NOT TARGET coreai::runner)
      message(FATAL_ERROR "coreai_add_model(${target}): RUNNER needs the coreai::runner target")
    endif()
    set(COREAI_PREFIX "${prefix}")
    set(runner_main "${out_dir}/${target}-run.c")
    configure_file("${CMAKE_CURRENT_FUNCTION_LIST_DIR}/coreai_runner_main.c.in" "${runner_main}" @ONLY)
    add_executable(${target}-run "${runner_main}")
    target_link_libraries(${target}-run PRIVATE ${target} coreai::runner)
    if(TARGET coreai_warnings)
      target_link_libraries(${target}-run PRIVATE coreai_warnings)
    endif()
  endif()
endfunction()

cmake_policy(POP)
