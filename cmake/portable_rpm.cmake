# FIRSTFAULT_PORTABLE_RPM: the shipped programs for RPMs built on this Debian
# host that install on EL9 (glibc 2.34, GCC 11's libgcc_s). Included by the
# top-level CMakeLists.txt after its find_package() calls; it re-points the C++
# libraries' imported targets at static code, so the subdirectories stay as
# they are (but for the plugin's own -static-libgcc, spank/CMakeLists.txt):
#
# - libstdc++ is linked statically (-static-libstdc++): EL9's libstdc++ is
#   GCC 11's and lacks GLIBCXX_3.4.30 that GCC 12 code needs. libgcc_s stays
#   dynamic: GCC 12's static unwinder (libgcc_eh.a) calls _dl_find_object,
#   GLIBC_2.35; libgcc_s.so.1 is in every glibc system, and the GCC_ versions
#   our code needs exist in GCC 11's (tests/packaging/check_rpm_requires.sh).
# - re2 and yaml-cpp: Debian's static archives.
# - spdlog, fmt, cpp-httplib, date's tz and prometheus-cpp's core: Debian
#   ships no archives, so third_party/ holds the upstream sources of the very
#   versions Debian's headers are (third_party/README.md), compiled once into
#   one archive here. (Header-only spdlog, fmt and httplib work too, but
#   compile their code into every file that includes them: 15-19 instead of
#   12 CPU-minutes for the whole build, both with -g.)
#
# Only the RPM build uses it (scripts/package.sh, in its own build directory);
# the ordinary build and the .debs link Debian's shared libraries.

set(FF_THIRD_PARTY ${PROJECT_SOURCE_DIR}/third_party)

# No run path into the build tree, not even there: it would hold the libcurl
# stub below, and every library the programs load is the system's.
set(CMAKE_SKIP_BUILD_RPATH ON)

# Static libstdc++ in every program and in the SPANK plugin; --as-needed drops
# libraries no object uses (e.g. libm, pulled by pkg-config lines).
foreach(kind EXE SHARED MODULE)
  string(APPEND CMAKE_${kind}_LINKER_FLAGS " -static-libstdc++ -Wl,--as-needed")
  if(NOT kind STREQUAL EXE)  # the plugin exports only its own symbols, none of the archives'
    string(APPEND CMAKE_${kind}_LINKER_FLAGS " -Wl,--exclude-libs,ALL")
  endif()
endforeach()

# One static library with the upstream sources Debian has no archive of.
file(GLOB FF_THIRD_PARTY_SOURCES ${FF_THIRD_PARTY}/prometheus-cpp/core/src/*.cc
     ${FF_THIRD_PARTY}/prometheus-cpp/core/src/detail/*.cc ${FF_THIRD_PARTY}/spdlog/src/*.cpp
     ${FF_THIRD_PARTY}/fmt/src/*.cc)
add_library(ff_portable_third_party STATIC ${FF_THIRD_PARTY_SOURCES} ${FF_THIRD_PARTY}/date/src/tz.cpp
            ${FF_THIRD_PARTY}/cpp-httplib/httplib.cc)
target_include_directories(ff_portable_third_party PRIVATE ${FF_THIRD_PARTY}/prometheus-cpp/core/src)
# As Debian builds them: date-tz against the system's zoneinfo (USE_OS_TZDB),
# spdlog compiled with the external fmt; httplib as below.
target_compile_definitions(ff_portable_third_party PRIVATE USE_OS_TZDB=1 ONLY_C_LOCALE=1 HAS_STRING_VIEW=1
                           PROMETHEUS_CPP_CORE_STATIC_DEFINE SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL
                           CPPHTTPLIB_ZLIB_SUPPORT)
target_compile_options(ff_portable_third_party PRIVATE -w)  # upstream code: not ours to warn about
set_target_properties(ff_portable_third_party PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(ff_portable_third_party PRIVATE Threads::Threads)

# ff_portable_use_static(TARGET ARCHIVE...): TARGET, an imported library found
# above, links ARCHIVE... instead of its shared library. A SHARED imported
# target keeps its type, so it names the first archive as its location.
function(ff_portable_use_static target)
  get_target_property(type ${target} TYPE)
  get_target_property(links ${target} INTERFACE_LINK_LIBRARIES)
  if(NOT links)
    set(links "")
  endif()
  # pkg-config targets list their shared library among their link items.
  list(FILTER links EXCLUDE REGEX "\\.so(\\.[0-9.]+)?$")
  if(type STREQUAL "INTERFACE_LIBRARY")
    set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${ARGN} ${links})
  else()
    list(GET ARGN 0 location)
    set(rest ${ARGN})
    list(REMOVE_AT rest 0)
    get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
    foreach(config IN LISTS configs)
      set_property(TARGET ${target} PROPERTY IMPORTED_LOCATION_${config} ${location})
      set_property(TARGET ${target} PROPERTY IMPORTED_SONAME_${config})
    endforeach()
    set_property(TARGET ${target} PROPERTY IMPORTED_LOCATION ${location})
    set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${rest} ${links})
  endif()
endfunction()

find_library(FF_RE2_ARCHIVE NAMES libre2.a REQUIRED)
find_library(FF_YAML_CPP_ARCHIVE NAMES libyaml-cpp.a REQUIRED)
ff_portable_use_static(PkgConfig::RE2 ${FF_RE2_ARCHIVE} Threads::Threads)
ff_portable_use_static(yaml-cpp ${FF_YAML_CPP_ARCHIVE})

# The archive of ff_portable_third_party, named where an imported target needs
# a file; the target itself is linked too, so that it is built first.
set(FF_PORTABLE_ARCHIVE
    ${CMAKE_BINARY_DIR}/${CMAKE_STATIC_LIBRARY_PREFIX}ff_portable_third_party${CMAKE_STATIC_LIBRARY_SUFFIX})
set_target_properties(ff_portable_third_party PROPERTIES ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
ff_portable_use_static(prometheus-cpp::core ${FF_PORTABLE_ARCHIVE} ff_portable_third_party Threads::Threads)
set_property(TARGET prometheus-cpp::core APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
             PROMETHEUS_CPP_CORE_STATIC_DEFINE)
ff_portable_use_static(date::date-tz ${FF_PORTABLE_ARCHIVE} ff_portable_third_party)

# fmt and spdlog (static, not shared: no FMT_SHARED, no SPDLOG_SHARED_LIB).
ff_portable_use_static(fmt::fmt ${FF_PORTABLE_ARCHIVE} ff_portable_third_party)
set_property(TARGET fmt::fmt PROPERTY INTERFACE_COMPILE_DEFINITIONS "")
ff_portable_use_static(spdlog::spdlog ${FF_PORTABLE_ARCHIVE} ff_portable_third_party Threads::Threads fmt::fmt)
set_property(TARGET spdlog::spdlog PROPERTY INTERFACE_COMPILE_DEFINITIONS SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL)

# cpp-httplib without TLS and brotli: the agent serves plain HTTP and needs
# neither libssl nor libbrotli. third_party's httplib.h is Debian's split one,
# byte for byte; httplib.cc is its other half (upstream's split.py).
set_property(TARGET PkgConfig::HTTPLIB PROPERTY INTERFACE_COMPILE_OPTIONS -DCPPHTTPLIB_ZLIB_SUPPORT)
set_property(TARGET PkgConfig::HTTPLIB PROPERTY INTERFACE_LINK_LIBRARIES
             ${FF_PORTABLE_ARCHIVE} ff_portable_third_party Threads::Threads ZLIB::ZLIB)
set_property(TARGET PkgConfig::HTTPLIB PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${FF_THIRD_PARTY}/cpp-httplib)

# libcurl: Debian's exports its symbols with the version CURL_OPENSSL_4, which
# RHEL's unversioned libcurl.so.4 lacks: rpm would require
# libcurl.so.4(CURL_OPENSSL_4)(64bit), which nothing on EL9 provides, and
# EL9's ld.so would stop on a versioned reference into an unversioned library.
# So the programs link against an unversioned stub with libcurl's soname and
# function names (from Debian's libcurl, at configure time); at run time the
# real libcurl.so.4 is loaded. The stub is never installed.
get_target_property(FF_CURL_LINKS PkgConfig::CURL INTERFACE_LINK_LIBRARIES)
list(FILTER FF_CURL_LINKS INCLUDE REGEX "libcurl\\.so")
execute_process(COMMAND nm -D --defined-only ${FF_CURL_LINKS} OUTPUT_VARIABLE FF_CURL_SYMBOLS
                COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCHALL "[0-9a-f]+ T ([A-Za-z_0-9]+)" FF_CURL_SYMBOLS "${FF_CURL_SYMBOLS}")
set(FF_CURL_STUB "// Generated by cmake/portable_rpm.cmake: libcurl's functions, unversioned.\n")
foreach(line IN LISTS FF_CURL_SYMBOLS)
  string(REGEX REPLACE ".* T " "" name "${line}")
  string(APPEND FF_CURL_STUB "extern \"C\" void ${name}() {}\n")
endforeach()
file(WRITE ${CMAKE_BINARY_DIR}/ff_curl_stub/curl_stub.cpp "${FF_CURL_STUB}")
add_library(ff_curl_stub SHARED ${CMAKE_BINARY_DIR}/ff_curl_stub/curl_stub.cpp)
set_target_properties(ff_curl_stub PROPERTIES OUTPUT_NAME curl SOVERSION 4
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/ff_curl_stub)
target_compile_options(ff_curl_stub PRIVATE -w)
set_property(TARGET PkgConfig::CURL PROPERTY INTERFACE_LINK_LIBRARIES ff_curl_stub)

# glibc 2.35/2.36 functions GCC 12's static libstdc++ calls (arc4random),
# defined in every program and the plugin (not in the static libraries, which
# would each carry a copy). Last, so that the targets above do not get it.
add_library(ff_portable_glibc_compat OBJECT ${CMAKE_CURRENT_LIST_DIR}/portable_rpm_glibc_compat.cpp)
set_target_properties(ff_portable_glibc_compat PROPERTIES POSITION_INDEPENDENT_CODE ON)
link_libraries($<$<NOT:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,STATIC_LIBRARY>>:ff_portable_glibc_compat>)
