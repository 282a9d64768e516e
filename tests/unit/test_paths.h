// Where the unit tests find what `make check` points them at (see
// AM_TESTS_ENVIRONMENT in tests/Makefile.am), with fallbacks for running
// unit_tests by hand from the tests build directory.
#ifndef VGPU_TESTS_UNIT_TEST_PATHS_H_
#define VGPU_TESTS_UNIT_TEST_PATHS_H_

#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <string>

#include "devices/chip_catalog.h"

namespace vgpu {

// The stub vendor libraries (tests/stubs): $VGPU_TEST_STUB_DIR, else ./stubs.
inline std::string StubDir() {
  const char* dir = std::getenv("VGPU_TEST_STUB_DIR");
  return dir != nullptr ? dir : "stubs";
}

// The shipped chip catalog: $VGPU_TEST_CATALOG_DIR, else $srcdir/../etc/chips.d.
inline std::string CatalogDir() {
  if (const char* dir = std::getenv("VGPU_TEST_CATALOG_DIR")) return dir;
  const char* srcdir = std::getenv("srcdir");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/../etc/chips.d";
}

// The shipped chip catalog (CatalogDir()); the test fails when it does not load.
inline ChipCatalog ShippedCatalog() {
  Result<ChipCatalog> c = ChipCatalog::LoadDirectories(CatalogDir());
  CPPUNIT_ASSERT_MESSAGE(c.message(), c.ok());
  return *c;
}

}  // namespace vgpu

#endif  // VGPU_TESTS_UNIT_TEST_PATHS_H_
