// CppUnit runner for every suite registered with
// CPPUNIT_TEST_SUITE_REGISTRATION in the unit test files.
//
// Usage: unit_tests [TEST_NAME...]   (no name: all registered tests; a name
// is a suite ("vgpu::ChipCatalogTest") or a test
// ("vgpu::ChipCatalogTest::testAddReplacesSameId")).
//
// Contract: prints each test as it runs and the details of every failure;
// the LAST line of output is exactly "unit: N passed, M failed" where M is
// failures plus errors and N the tests run minus M. Exit status 0 iff M == 0.
#include <cppunit/BriefTestProgressListener.h>
#include <cppunit/CompilerOutputter.h>
#include <cppunit/TestResult.h>
#include <cppunit/TestResultCollector.h>
#include <cppunit/TestRunner.h>
#include <cppunit/extensions/TestFactoryRegistry.h>

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  CppUnit::TestResult controller;
  CppUnit::TestResultCollector collector;
  CppUnit::BriefTestProgressListener progress;
  controller.addListener(&collector);
  controller.addListener(&progress);

  CppUnit::Test* all = CppUnit::TestFactoryRegistry::getRegistry().makeTest();
  CppUnit::TestRunner runner;
  runner.addTest(all);  // the runner owns it from here
  try {
    if (argc <= 1) {
      runner.run(controller);
    } else {
      for (int i = 1; i < argc; ++i) runner.run(controller, argv[i]);
    }
  } catch (const std::exception& e) {
    // An unknown test name: std::invalid_argument from findTest().
    std::cout << "unit_tests: " << e.what() << "\n";
    std::cout << "unit: 0 passed, 1 failed" << std::endl;
    return 1;
  }

  std::cout.flush();
  CppUnit::CompilerOutputter outputter(&collector, std::cout);
  outputter.write();

  int failed = collector.testFailuresTotal();  // failures + errors
  int passed = collector.runTests() - failed;
  std::cout << "unit: " << passed << " passed, " << failed << " failed" << std::endl;
  return failed == 0 ? 0 : 1;
}
