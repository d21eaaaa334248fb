# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): drops the debug sections of the static
# libraries in the staging tree. The programs' debug symbols go to the -dbgsym package, filed
# under their build IDs; an archive has none, and its DWARF is most of an unstripped package.
file(GLOB_RECURSE dsh_archives "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.a")
foreach(archive IN LISTS dsh_archives)
  execute_process(COMMAND ${CPACK_DSH_STRIP} --strip-debug ${archive} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "strip --strip-debug ${archive} failed (${result})")
  endif()
endforeach()
