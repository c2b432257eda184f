# CPack pre-build script (cmake/Package.cmake): moves wmctl's zsh completion
# in the Debian package's staging tree from share/zsh/site-functions, where
# `cmake --install` puts it (upstream zsh's path, and /usr/local's on every
# system), to share/zsh/vendor-completions, the one directory of Debian's
# zsh fpath for packaged completions (Debian's zsh does not read
# /usr/share/zsh/site-functions).
set(share "${CPACK_TEMPORARY_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}/${CPACK_WM_DATADIR}/zsh")
if(NOT EXISTS "${share}/site-functions/_wmctl")
  message(FATAL_ERROR "no ${share}/site-functions/_wmctl to move")
endif()
file(MAKE_DIRECTORY "${share}/vendor-completions")
file(RENAME "${share}/site-functions/_wmctl" "${share}/vendor-completions/_wmctl")
file(GLOB left "${share}/site-functions/*")
if(NOT left)
  file(REMOVE_RECURSE "${share}/site-functions")
endif()
