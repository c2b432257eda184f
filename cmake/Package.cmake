# What `cmake --install` adds beside the programs, the catalog and the
# completion scripts (whose install rules are next to their targets), and the
# Debian package of it all:
#
#   cpack --config build/CPackConfig.cmake -G DEB -B OUT_DIR
#
# builds OUT_DIR/workloadmap_VERSION_ARCH.deb installing under /usr (the
# image in deploy/Dockerfile installs the same under /usr/local), the zsh
# completion moved to Debian's directory for it. It needs no network: the
# dependencies come from dpkg-shlibdeps, which reads this machine's package
# database.

# Everything `cmake --install` installs, for builds of just that
# (deploy/Dockerfile): cmake --build build --target dist.
add_custom_target(dist DEPENDS workloadmapd wmctl wm-jq-worker wmctl_completion)

# The Karta CRD, for clusters whose definitions are applied as objects.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/crds/run.ai_kartas.yaml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/workloadmap/crds)

set(WM_PACKAGE_MAINTAINER "workloadmap maintainers <maintainers@users.noreply.a-seed-e842c284.example>"
  CACHE STRING "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME workloadmap)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${WM_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Workload Map resolution service for Kubernetes AI workloads")
set(CPACK_PACKAGE_DESCRIPTION
  "workloadmapd resolves the AI workloads of a Kubernetes cluster (JobSet, PyTorchJob, \
RayCluster, LeaderWorkerSet, KServe, ...) through declarative Workload Map (Karta) \
definitions and serves them over gRPC; wmctl is its command-line client, which also \
resolves manifests and checks definitions offline. Includes the built-in definition \
catalog, the Karta CRD and shell completions for bash, zsh and fish.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# The installed programs are stripped, as in the image.
set(CPACK_STRIP_FILES ON)
# Kubeconfig clusters with publicly signed certificates need the CA bundle;
# in-cluster mode uses the service account's CA.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS ca-certificates)
find_program(WM_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(WM_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  # Debian bookworm's packages of what the programs link, the same list as
  # deploy/Dockerfile's runtime stage (which deploy_test.sh checks against
  # the binaries).
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libabsl20220623, libcurl4, libgrpc++1.51, libgrpc29, \
libjq1, libprotobuf32, libre2-9, libsimdjson14, libyaml-0-2, libyaml-cpp0.7, libc6, \
libgcc-s1, libstdc++6")
endif()
# Debian's zsh reads packaged completions from another directory.
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/DebianZshCompletion.cmake)
set(CPACK_WM_DATADIR ${CMAKE_INSTALL_DATADIR})
include(CPack)
