// A fresh directory for one test, under $TMPDIR (or /tmp), removed with
// everything in it when destroyed.
#ifndef VGPU_TESTS_UNIT_TEMP_DIR_H_
#define VGPU_TESTS_UNIT_TEMP_DIR_H_

#include <cppunit/extensions/HelperMacros.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace vgpu {

class TempDir {
 public:
  // <$TMPDIR or /tmp>/<prefix>-XXXXXX; the test fails when it cannot be made.
  explicit TempDir(const std::string& prefix = "vgpu-test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    CPPUNIT_ASSERT_MESSAGE("cannot make a directory like " + tmpl, !path_.empty());
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

  // Writes `text` to the file `name` in it (mode 0755 when `executable`);
  // returns the file's path.
  std::string Write(const std::string& name, const std::string& text, bool executable = false) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    if (executable) chmod(file.c_str(), 0755);
    return file;
  }

  // The file `name` in it, or "" when there is none.
  std::string Read(const std::string& name) const {
    std::ifstream in(path_ + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
};

}  // namespace vgpu

#endif  // VGPU_TESTS_UNIT_TEMP_DIR_H_
