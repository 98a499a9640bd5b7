include(CMakePackageConfigHelpers)

install(TARGETS talaria_lib EXPORT talariaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS talaria RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Loaded by libtalaria from its own directory on the first Python lint.
install(TARGETS talaria_python_lint LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Loaded by libtalaria from its own directory for MCP over HTTP.
install(TARGETS talaria_http LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Loaded by libtalaria from its own directory for outbound HTTP (the model client).
install(TARGETS talaria_net_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Loaded by libtalaria from its own directory when checkpoints are enabled.
install(TARGETS talaria_checkpoints_module LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The browser's WebSocket transport, loaded by libtalaria from its own directory.
install(TARGETS talaria_browser_ws LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Run by libtalaria from its own directory to trial-load plugins (plugin_loader.h).
install(TARGETS talaria_plugin_trial RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Run by libtalaria from its own directory to read PDFs for web_extract (web/pdf_text.h).
install(TARGETS talaria_pdf_text RUNTIME DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/talaria DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT talariaTargets NAMESPACE talaria::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/talaria)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/talaria-config.cmake.in
  ${PROJECT_BINARY_DIR}/talaria-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/talaria)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/talaria-config-version.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/talaria-config.cmake
  ${PROJECT_BINARY_DIR}/talaria-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/talaria)
