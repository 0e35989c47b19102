# cmake/warnings.cmake — one set of compiler warnings for every glassbox target: glassbox_warnings(<target>).
# GLASSBOX_WERROR=ON (CI builds with it) makes them errors, so a new warning fails the build instead of scrolling
# past in hundreds of lines.
option(GLASSBOX_WERROR "Treat compiler warnings as errors (CI builds with it)" OFF)

function(glassbox_warnings target)
  set(flags -Wall -Wextra)
  # GCC 12 reports -Wrestrict inside std::string's operator+ at -O2 and above, a known false positive (GCC bug
  # 105651, fixed in GCC 13): that one warning is off for that compiler only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND flags -Wno-restrict)
  endif()
  # Under ThreadSanitizer GCC 12 reports -Wmaybe-uninitialized for std::optional<Span>::emplace in StepScope (the
  # instrumentation changes what its flow analysis sees; GCC's manual warns that sanitizers give spurious warnings):
  # off in that build only, where the same code is warning-free in every other configuration.
  if(GLASSBOX_TSAN AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND flags -Wno-maybe-uninitialized)
  endif()
  if(GLASSBOX_WERROR)
    list(APPEND flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${flags}>")
endfunction()
