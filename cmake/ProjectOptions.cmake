# Interface targets that carry the project's compile flags, so every target opts in explicitly
# and the launcher can take the warnings without the sanitizers (a static binary cannot carry
# the ASan runtime) and keep -fno-exceptions private to itself.

add_library(dsh_warnings INTERFACE)
target_compile_options(dsh_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Werror
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
