# QCustomPlot 2.1.0 built from Debian's source package, which scripts/setup.sh unpacks into
# third_party/qcustomplot (git-ignored; Debian 12 ships only a Qt 5 binary). Built without
# ringmaster::options: it is third-party code, not written for Ringmaster's strictness defines.
set(RINGMASTER_QCUSTOMPLOT_DIR "${PROJECT_SOURCE_DIR}/third_party/qcustomplot" CACHE PATH
    "Folder with qcustomplot.cpp/.h from Debian's qcustomplot source package")
if(NOT EXISTS "${RINGMASTER_QCUSTOMPLOT_DIR}/qcustomplot.cpp")
  message(FATAL_ERROR "QCustomPlot source not found in ${RINGMASTER_QCUSTOMPLOT_DIR}: run scripts/setup.sh, "
                      "which fetches Debian's qcustomplot source package and unpacks it there")
endif()
add_library(qcustomplot STATIC
  ${RINGMASTER_QCUSTOMPLOT_DIR}/qcustomplot.cpp
  ${RINGMASTER_QCUSTOMPLOT_DIR}/qcustomplot.h)
set_target_properties(qcustomplot PROPERTIES AUTOMOC ON POSITION_INDEPENDENT_CODE ON)
target_compile_features(qcustomplot PUBLIC cxx_std_17)
target_include_directories(qcustomplot SYSTEM PUBLIC ${RINGMASTER_QCUSTOMPLOT_DIR})
target_link_libraries(qcustomplot PUBLIC Qt6::Widgets Qt6::PrintSupport)
