# The project's public identity, in one place: the maintainer (name and e-mail), the homepage, the AppStream
# component id and the screenshot's address. The defaults are placeholders (example.org); a publisher sets
# them once when configuring, e.g.
#   cmake -S . -B build -DRINGMASTER_MAINTAINER="Jane Doe <jane@lab.example>" \
#         -DRINGMASTER_HOMEPAGE=https://lab.example/ringmaster -DRINGMASTER_APPSTREAM_ID=io.github.jdoe.ringmaster
# and they reach the package's control fields (CPack, packaging/CMakeLists.txt), the AppStream metainfo
# (installed as ID.metainfo.xml), debian/copyright's Upstream-Contact and the changelog's sign-off lines,
# which are configured from the *.in files beside this one.
# Run as a script it configures those three files with values given by -D, for the test that checks them:
#   cmake -DRINGMASTER_MAINTAINER=... -DRINGMASTER_HOMEPAGE=... -DRINGMASTER_APPSTREAM_ID=...
#         [-DRINGMASTER_SCREENSHOT_URL=...] -DOUT=DIR -P packaging/identity.cmake

if(NOT CMAKE_SCRIPT_MODE_FILE)
  set(RINGMASTER_MAINTAINER "Ringmaster developers <ringmaster-devel@example.org>" CACHE STRING
      "The package's maintainer, \"Name <e-mail>\" (Debian Maintainer, copyright Upstream-Contact, changelog)")
  set(RINGMASTER_HOMEPAGE "https://example.org/ringmaster" CACHE STRING
      "The project's homepage (Debian Homepage, AppStream homepage)")
  set(RINGMASTER_APPSTREAM_ID "org.example.ringmaster" CACHE STRING
      "The AppStream component id, reverse-DNS (the metainfo is installed as ID.metainfo.xml)")
  set(RINGMASTER_SCREENSHOT_URL "" CACHE STRING
      "The AppStream screenshot's address (empty: RINGMASTER_HOMEPAGE/screenshot-running.png)")
endif()

# Checks the values (one fatal line naming the variable and the form wanted), then configures the metainfo,
# copyright and changelog from SOURCE_DIR into OUT_DIR. Sets RINGMASTER_METAINFO_FILE (the configured
# metainfo's path) in the caller.
function(ringmaster_configure_identity source_dir out_dir)
  if(NOT RINGMASTER_MAINTAINER MATCHES "^[^<>,]+ <[^<>@ ]+@[^<>@ ]+>$")
    message(FATAL_ERROR "RINGMASTER_MAINTAINER is '${RINGMASTER_MAINTAINER}': give \"Name <e-mail>\", e.g. -DRINGMASTER_MAINTAINER=\"Jane Doe <jane@lab.example>\"")
  endif()
  if(NOT RINGMASTER_HOMEPAGE MATCHES "^https?://[^ <>\"]+$")
    message(FATAL_ERROR "RINGMASTER_HOMEPAGE is '${RINGMASTER_HOMEPAGE}': give an http(s) address, e.g. -DRINGMASTER_HOMEPAGE=https://lab.example/ringmaster")
  endif()
  if(NOT RINGMASTER_APPSTREAM_ID MATCHES "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)(\\.[A-Za-z_][A-Za-z0-9_]*)+$")
    message(FATAL_ERROR "RINGMASTER_APPSTREAM_ID is '${RINGMASTER_APPSTREAM_ID}': give a reverse-DNS id of three or more parts (letters, digits, _), e.g. -DRINGMASTER_APPSTREAM_ID=io.github.jdoe.ringmaster")
  endif()
  set(screenshot "${RINGMASTER_SCREENSHOT_URL}")
  if(screenshot STREQUAL "")
    string(REGEX REPLACE "/$" "" screenshot "${RINGMASTER_HOMEPAGE}")
    string(APPEND screenshot "/screenshot-running.png")
  elseif(NOT screenshot MATCHES "^https?://[^ <>\"]+$")
    message(FATAL_ERROR "RINGMASTER_SCREENSHOT_URL is '${screenshot}': give an http(s) address of a PNG, or leave it empty")
  endif()
  # The metainfo is XML: the addresses may hold '&'.
  string(REPLACE "&" "&amp;" RINGMASTER_HOMEPAGE_XML "${RINGMASTER_HOMEPAGE}")
  string(REPLACE "&" "&amp;" RINGMASTER_SCREENSHOT_URL_XML "${screenshot}")
  set(metainfo ${out_dir}/${RINGMASTER_APPSTREAM_ID}.metainfo.xml)
  configure_file(${source_dir}/ringmaster.metainfo.xml.in ${metainfo} @ONLY)
  configure_file(${source_dir}/debian/copyright.in ${out_dir}/copyright @ONLY)
  configure_file(${source_dir}/debian/changelog.in ${out_dir}/changelog @ONLY)
  set(RINGMASTER_METAINFO_FILE ${metainfo} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  foreach(variable RINGMASTER_MAINTAINER RINGMASTER_HOMEPAGE RINGMASTER_APPSTREAM_ID OUT)
    if(NOT DEFINED ${variable})
      message(FATAL_ERROR "identity.cmake: give -D${variable}=... (see the comment at the top)")
    endif()
  endforeach()
  ringmaster_configure_identity(${CMAKE_CURRENT_LIST_DIR} ${OUT})
  message(STATUS "${RINGMASTER_METAINFO_FILE}")
endif()
