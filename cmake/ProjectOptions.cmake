# Interface targets that carry the project's compile flags, so every target opts in explicitly
# and the launcher can take the warnings without the sanitizers (a static binary cannot carry
# the ASan runtime) and keep -fno-exceptions private to itself.

add_library(dsh_warnings INTERFACE)
# -Werror only with DSH_WERROR: warnings stop the build only where the project's own scripts and
# CI build it (scripts/lib.sh turns it on); a consumer's newer compiler may warn about correct
# code, and must still be able to build and install.
target_compile_options(dsh_warnings INTERFACE
  -Wall -Wextra -Wpedantic $<$<BOOL:${DSH_WERROR}>:-Werror>
  -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough
  -Wno-missing-field-initializers)

add_library(dsh_sanitizers INTERFACE)
if(DSH_SANITIZE)
  # GCC 12's -Wmaybe-uninitialized misfires on std::regex and std::function once the sanitizers
  # instrument them; the plain build keeps the warning.
  target_compile_options(dsh_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
    -Wno-maybe-uninitialized)
  target_link_options(dsh_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

# Aggregates grow optional fields with default member initializers; omitting them is intended,
# so -Wmissing-field-initializers (part of -Wextra) is off.

# What every library, tool and test target of the project links (not the launcher).
add_library(dsh_options INTERFACE)
target_link_libraries(dsh_options INTERFACE dsh_warnings dsh_sanitizers)

# Every program a run may start (the CLI, and each runner it places in a confined argv) is
# declared with dsh_program: it is built into bin/ of the build tree, beside the CLI, where the
# provider looks for its runners, and cmake/Install.cmake installs exactly this list into bin/
# (cmake --install and the .deb alike), so a program cannot be runnable from the build tree and
# missing from an install.
define_property(GLOBAL PROPERTY DSH_PROGRAMS BRIEF_DOCS "programs installed into bin/"
                FULL_DOCS "targets declared with dsh_program, in declaration order")
# Each gets a build ID: the .deb files a program's split debug symbols under it.
function(dsh_program target)
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  target_link_options(${target} PRIVATE -Wl,--build-id=sha1)
  set_property(GLOBAL APPEND PROPERTY DSH_PROGRAMS ${target})
endfunction()

# Fails the configure when an executable is built into bin/ without dsh_program: it would run
# from the build tree and be missing from every install.
function(dsh_require_programs_declared programs)
  set(directories ${PROJECT_SOURCE_DIR})
  while(directories)
    list(POP_FRONT directories directory)
    get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
    list(APPEND directories ${subdirectories})
    get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      get_target_property(output ${target} RUNTIME_OUTPUT_DIRECTORY)
      if(type STREQUAL "EXECUTABLE" AND output STREQUAL "${PROJECT_BINARY_DIR}/bin" AND
         NOT target IN_LIST programs)
        message(FATAL_ERROR "${target} is built into bin/ but not declared with dsh_program, so "
                            "no install would contain it: declare it with dsh_program(${target})")
      endif()
    endforeach()
  endwhile()
endfunction()
