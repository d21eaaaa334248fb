# Install rules: the CLI and its runners side by side in bin/ (the provider finds landlock-run and
# dsh-netproxy beside its own executable, else in the configured bindir, src/local/runners.cpp), one static library
# libdsh-sandbox.a with the public headers, an exported CMake package (find_package(dsh-sandbox)
# gives dsh::sandbox), a pkg-config file, the JSON Schemas, man pages, shell completions, and a
# Debian package built by CPack. docs/install.md says how to use each.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)

# The components are separate static libraries in the tree (docs/architecture.md); a consumer
# gets them as one archive, with fmt and nlohmann_json compiled in (both header-only here, and no
# public header includes either), so the package depends on nothing but the C++ runtime.
set(dsh_library_components
    dsh_base dsh_seam dsh_profiles landlock_run_seccomp dsh_local dsh_exec dsh_policy dsh_plan
    dsh_consumer)
set(dsh_library_objects)
foreach(component IN LISTS dsh_library_components)
  list(APPEND dsh_library_objects $<TARGET_OBJECTS:${component}>)
endforeach()
add_library(dsh_sandbox STATIC ${dsh_library_objects})
add_library(dsh::sandbox ALIAS dsh_sandbox)
add_dependencies(dsh_sandbox ${dsh_library_components})
set_target_properties(dsh_sandbox PROPERTIES
  OUTPUT_NAME dsh-sandbox EXPORT_NAME sandbox LINKER_LANGUAGE CXX
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
target_include_directories(dsh_sandbox INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(dsh_sandbox INTERFACE cxx_std_20)
target_link_libraries(dsh_sandbox INTERFACE Threads::Threads)

# The version `dsh-sandbox --version` prints: the project version, plus `git describe` of the
# checkout when there is one (read at configure time, offline; a tarball build has none).
set(DSH_VERSION_DESCRIBE "")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE DSH_VERSION_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.h.in
               ${PROJECT_BINARY_DIR}/generated/cli/version.h @ONLY)
target_include_directories(dsh-sandbox PRIVATE ${PROJECT_BINARY_DIR}/generated)

# Man pages and completions, from the one table in man/ (man/generate.py; python3 is a build
# dependency already).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(dsh_man_outputs ${PROJECT_BINARY_DIR}/man/dsh-sandbox.1 ${PROJECT_BINARY_DIR}/man/landlock-run.1
                    ${PROJECT_BINARY_DIR}/completions/dsh-sandbox.bash
                    ${PROJECT_BINARY_DIR}/completions/_dsh-sandbox)
add_custom_command(
  OUTPUT ${dsh_man_outputs}
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/man/generate.py
          ${PROJECT_SOURCE_DIR}/man/cli.json ${PROJECT_BINARY_DIR} ${PROJECT_VERSION}
  DEPENDS ${PROJECT_SOURCE_DIR}/man/generate.py ${PROJECT_SOURCE_DIR}/man/cli.json
  COMMENT "Generating man pages and shell completions")
add_custom_target(dsh_man ALL DEPENDS ${dsh_man_outputs})

# The programs: every target declared with dsh_program (cmake/ProjectOptions.cmake), the one list
# both `cmake --install` and the .deb take. Building the CLI builds the runners it starts, and
# `dsh_programs` builds just the list (what scripts/demo.sh needs, without the tests).
get_property(dsh_programs GLOBAL PROPERTY DSH_PROGRAMS)
dsh_require_programs_declared("${dsh_programs}")
set(dsh_runners ${dsh_programs})
list(REMOVE_ITEM dsh_runners dsh-sandbox)
add_dependencies(dsh-sandbox ${dsh_runners})
add_custom_target(dsh_programs)
add_dependencies(dsh_programs ${dsh_programs})
# The installed names, one a line, for the packaging tests to check the install against.
set(dsh_program_names)
foreach(program IN LISTS dsh_programs)
  list(APPEND dsh_program_names $<TARGET_FILE_NAME:${program}>)
endforeach()
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/dsh-programs.txt
     CONTENT "$<JOIN:${dsh_program_names},\n>\n")
install(TARGETS ${dsh_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                    WORLD_READ WORLD_EXECUTE)
install(TARGETS dsh_sandbox EXPORT dsh-sandbox-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dsh DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
set(dsh_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dsh-sandbox)
install(EXPORT dsh-sandbox-targets NAMESPACE dsh:: DESTINATION ${dsh_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dsh-sandboxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/dsh-sandboxConfig.cmake INSTALL_DESTINATION ${dsh_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/dsh-sandboxConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/dsh-sandboxConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/dsh-sandboxConfigVersion.cmake
        DESTINATION ${dsh_cmake_dir})
file(RELATIVE_PATH DSH_PC_PREFIX_FROM_PCDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/dsh-sandbox.pc.in
               ${PROJECT_BINARY_DIR}/pkgconfig/dsh-sandbox.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/dsh-sandbox.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/schema/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dsh-sandbox/schema)
install(FILES ${PROJECT_BINARY_DIR}/man/dsh-sandbox.1 ${PROJECT_BINARY_DIR}/man/landlock-run.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_BINARY_DIR}/completions/dsh-sandbox.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME dsh-sandbox)
install(FILES ${PROJECT_BINARY_DIR}/completions/_dsh-sandbox
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)

# The Debian package: `cpack -G DEB` in the build tree, then `apt install ./dsh-sandbox_*.deb`.
# Installed under /usr, owned by root (dpkg unpacks as root): the trusted place docs/trust.md asks
# of the CLI and the launcher. bwrap is the first backend of the chain; Landlock needs no package.
set(CPACK_PACKAGE_NAME dsh-sandbox)
set(CPACK_PACKAGE_VENDOR dsh-sandbox)
set(CPACK_PACKAGE_CONTACT "dsh-sandbox maintainers <dsh-sandbox@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "process sandbox for commands the caller did not write")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap")
# dsh-netproxy is linked dynamically (libidn2, libstdc++): dpkg-shlibdeps adds those packages.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/dsh-sandbox")
# Stripped programs, their debug symbols split into dsh-sandbox-dbgsym_*.ddeb (files under
# /usr/lib/debug/.build-id/, found by gdb through each program's build ID). CPack splits what is
# unstripped, so CPACK_STRIP_FILES stays off; the static library, which has no build ID to file
# its symbols under, loses its debug sections in the staging tree instead (strip_archives.cmake).
set(CPACK_STRIP_FILES OFF)
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/strip_archives.cmake)
set(CPACK_DSH_STRIP ${CMAKE_STRIP})
include(CPack)
